package calibrate

import (
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestImplausible: samples simulated on networks whose values no machine
// has give fits that Implausible names, and a plausible network none.
func TestImplausible(t *testing.T) {
	cases := []struct {
		name  string
		truth sim.AlphaBeta
		want  []string // a warning containing each; none if empty
	}{
		{"plausible", sim.AlphaBeta{Latency: sim.FromSeconds(5e-6), Bandwidth: 12.5e9, ReduceBandwidth: 25e9}, nil},
		{"slow reductions", sim.AlphaBeta{Latency: sim.FromSeconds(100e-6), Bandwidth: 1e9, ReduceBandwidth: 168e6},
			[]string{"reduce_bandwidth (gamma) = 168 MB/s is below 1 GB/s"}},
		{"bandwidth above memory", sim.AlphaBeta{Latency: sim.FromSeconds(1e-8), Bandwidth: 20e12, ReduceBandwidth: 100e12},
			[]string{"bandwidth (beta) = 2e+04 GB/s is above the memory's bandwidth"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Calibrate(synthetic(t, c.truth, []int{4, 8}, 0, 1), "alpha-beta", Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Implausible(DefaultBounds(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.want) == 0 && len(got) > 0 {
				t.Fatalf("warnings for a plausible fit (%s):\n%s", f.Describe(), strings.Join(got, "\n"))
			}
			for _, w := range c.want {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("fit %s: want a warning with %q, got\n%s", f.Describe(), w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// TestImplausibleLatency: a latency above the fastest sample that
// depends on it, or at zero, is named; a bound given lower than a fitted
// bandwidth names that bound.
func TestImplausibleLatency(t *testing.T) {
	truth := sim.AlphaBeta{Latency: sim.FromSeconds(5e-6), Bandwidth: 12.5e9, ReduceBandwidth: 25e9}
	samples := synthetic(t, truth, []int{4}, 0, 1)
	base, err := Calibrate(samples, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	fastest := samples[0].Time
	for _, s := range samples {
		fastest = min(fastest, s.Time)
	}
	cases := []struct {
		name    string
		latency float64
		bounds  Bounds
		want    string
	}{
		{"above the fastest sample", 2 * fastest, DefaultBounds(), "is above the whole time of allreduce/"},
		{"zero", 0, DefaultBounds(), "a latency is more than zero"},
		{"bound given", 5e-6, Bounds{MaxBandwidth: 1e9, MaxWhy: "1 GB/s, given"}, "12.5 GB/s is above the memory's bandwidth, 1 GB/s, given"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := *base
			f.Values = append([]float64(nil), base.Values...)
			f.Estimates = append([]Estimate(nil), base.Estimates...)
			f.Values[0], f.Estimates[0].Value = c.latency, c.latency
			pred, err := Predict(f.Samples, &f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			f.Predicted = pred
			got, err := f.Implausible(c.bounds, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("want a warning with %q, got\n%s", c.want, strings.Join(got, "\n"))
			}
		})
	}
}

// TestDefaultModels: every model for nexar-live's samples, which record
// their transport, the simplest first; for logs, those that assume
// neither realnet nor one shared machine.
func TestDefaultModels(t *testing.T) {
	log := []Sample{{Collective: "allreduce"}}
	if got, want := strings.Join(DefaultModels(log), ","), "alpha-beta,alpha-beta-protocol,loggp"; got != want {
		t.Errorf("logs: %s, want %s", got, want)
	}
	live := []Sample{{Collective: "allreduce", Transport: &algos.Thresholds{Bulk: 64 << 10}}}
	if got, want := strings.Join(DefaultModels(live), ","), "alpha-beta,alpha-beta-protocol,loggp,realnet,shared-host"; got != want {
		t.Errorf("nexar-live: %s, want %s", got, want)
	}
}
