package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// synthetic simulates samples of allreduce algorithms on m, with seeded
// multiplicative noise of up to ±noise.
func synthetic(t *testing.T, m sim.Model, worlds []int, noise float64, seed uint64) []Sample {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []Sample
	for _, p := range worlds {
		for _, alg := range []string{"ring", "recursive_doubling", "halving_doubling", "binomial_tree"} {
			for b := 8; b <= 4<<20; b *= 8 {
				s := Sample{Collective: "allreduce", Algorithm: alg, World: p, Bytes: b, DType: device.F32, Op: device.Sum}
				s.Time = simulated(t, s, m)
				s.Time *= 1 + noise*(2*rng.Float64()-1)
				s.Source = fmt.Sprintf("synthetic:%d", len(out)+1)
				out = append(out, s)
			}
		}
	}
	return out
}

// simulated is the time of s on m.
func simulated(t *testing.T, s Sample, m sim.Model) float64 {
	t.Helper()
	x, err := newSimulator(s, &fitModels[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.time(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCalibrateAlphaBeta: samples simulated on a known alpha-beta network
// (the worked example of cost-models.md), with ±3% noise, give back its
// parameters.
func TestCalibrateAlphaBeta(t *testing.T) {
	const alpha, bw, rbw = 5e-6, 12.5e9, 25e9
	truth := sim.AlphaBeta{Latency: sim.FromSeconds(alpha), Bandwidth: bw, ReduceBandwidth: rbw}
	samples := synthetic(t, truth, []int{4, 8}, 0.03, 1)
	f, err := Calibrate(samples, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after %d iterations; %v; notes %q", f.Describe(), f.Iterations, f.Summary(), f.Notes)
	for i, want := range []float64{alpha, 1 / bw, 1 / rbw} {
		// 3% noise on 96 points pins each parameter within a few percent.
		if got := f.Values[i]; math.Abs(got/want-1) > 0.05 {
			t.Errorf("%s = %g, want %g", f.Model.Params[i].Symbol, got, want)
		}
	}
	if s := f.Summary(); s.Median > 0.03 {
		t.Errorf("median error %.3f above the noise", s.Median)
	}
}

// TestCalibrateLogGP: noise-free samples of a known LogGP network are
// reproduced by the fitted model, and its per-byte cost G recovered.
// (L, o and g trade off against each other on these algorithms, so the
// test holds them only to reproducing the times.)
func TestCalibrateLogGP(t *testing.T) {
	truth := sim.LogGP{Latency: sim.FromSeconds(3e-6), Overhead: sim.FromSeconds(1e-6), Gap: sim.FromSeconds(2e-6), Bandwidth: 5e9, ReduceBandwidth: 20e9}
	samples := synthetic(t, truth, []int{4, 8}, 0, 2)
	f, err := Calibrate(samples, "loggp", Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Summary()
	t.Logf("%s after %d iterations; %v; notes %q", f.Describe(), f.Iterations, s, f.Notes)
	if s.Median > 0.01 || s.Worst[0].RelErr() > 0.05 {
		t.Errorf("fit does not reproduce the times: %v, worst %.3f", s, s.Worst[0].RelErr())
	}
	if g := f.Values[3]; math.Abs(g*5e9-1) > 0.02 {
		t.Errorf("G = %g s/B, want %g", g, 1/5e9)
	}
}

// TestWriteScenario: the calibrated scenario parses, carries the fitted
// model, and its sweeps name every sample's point.
func TestWriteScenario(t *testing.T) {
	truth := sim.AlphaBeta{Latency: sim.FromSeconds(20e-6), Bandwidth: 1e9, ReduceBandwidth: 4e9}
	samples := synthetic(t, truth, []int{3, 4}, 0, 3)
	samples = append(samples, Sample{Collective: "allreduce", Algorithm: "pipelined_ring(segment=64KiB)", Params: map[string]int{"segment": 65536},
		World: 4, Bytes: 1 << 20, DType: device.F32, Time: 2e-3})
	f, err := Calibrate(samples, "alpha-beta", Options{MaxIter: 5})
	if err != nil {
		t.Fatal(err)
	}
	s, b := writeAndParse(t, f)
	ab, ok := s.Network.Sim.(sim.AlphaBeta)
	if !ok {
		t.Fatalf("network model %T, want sim.AlphaBeta", s.Network.Sim)
	}
	if got, want := ab.Latency.Seconds(), f.Values[0]; math.Abs(got-want) > 1e-12 {
		t.Errorf("latency %g, want %g", got, want)
	}
	if got, want := 1/ab.Bandwidth, f.Values[1]; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("beta %g, want %g", got, want)
	}
	if len(s.Sweeps) != 2 || len(s.Sweeps[0].Algorithms) != 4 || s.Sweeps[1].Params["segment"][0].Value != 65536 {
		t.Errorf("sweeps:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "# Calibrated by nexar-go's calibrate") {
		t.Errorf("no provenance comment:\n%s", b.String())
	}
}

func TestCalibrateErrors(t *testing.T) {
	if _, err := Calibrate(nil, "alpha-beta", Options{}); err == nil {
		t.Error("no samples: no error")
	}
	s := []Sample{{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, DType: device.F32, Time: 1e-5}}
	if _, err := Calibrate(s, "flow", Options{}); err == nil || !strings.Contains(err.Error(), "cannot calibrate") {
		t.Errorf("flow model: %v", err)
	}
	s[0].Algorithm = "nonesuch"
	if _, err := Calibrate(s, "alpha-beta", Options{}); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("unknown algorithm: %v", err)
	}
	s[0].Algorithm, s[0].Time = "ring", 0
	if _, err := Calibrate(s, "alpha-beta", Options{}); err == nil {
		t.Error("zero time: no error")
	}
}

// TestCalibrateCollinear: ring-only samples weigh beta and gamma alike
// (2(p-1)/p n beta + (p-1)/p n gamma), so only 2 beta + gamma is
// determined: the fit holds gamma at 0, puts the whole term on beta, and
// says so.
func TestCalibrateCollinear(t *testing.T) {
	const alpha, beta, gamma = 10e-6, 1e-9, 0.5e-9
	truth := sim.AlphaBeta{Latency: sim.FromSeconds(alpha), Bandwidth: 1 / beta, ReduceBandwidth: 1 / gamma}
	var ring []Sample
	for _, s := range synthetic(t, truth, []int{8}, 0.01, 4) {
		if s.Algorithm == "ring" {
			ring = append(ring, s)
		}
	}
	f, err := Calibrate(ring, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %q", f.Describe(), f.Notes)
	if f.Values[2] != 0 || math.Abs(f.Values[1]/(beta+gamma/2)-1) > 0.03 || math.Abs(f.Values[0]/alpha-1) > 0.03 {
		t.Errorf("fit %v, want alpha %g, beta %g (beta + gamma/2), gamma 0", f.Values, alpha, beta+gamma/2)
	}
	if len(f.Notes) == 0 || !strings.Contains(f.Notes[0], "beta and gamma change every prediction alike") || !f.Estimates[2].Held {
		t.Errorf("notes %q", f.Notes)
	}
}

// writeAndParse writes f's scenario and parses it back.
func writeAndParse(t *testing.T, f *Fit) (*scenario.Scenario, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteScenario(&b, "calibrated"); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("calibrated.toml", b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return s, &b
}
