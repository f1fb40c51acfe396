package calibrate

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// loopbackPaths is realnet's two paths with figures of the loopback
// order: QUIC 40 µs and 100 MB/s, TCP 15 µs and 1 GB/s, bulk from 64 KiB.
var loopbackPaths = sim.TwoPaths{
	QUIC:       sim.AlphaBeta{Latency: sim.FromSeconds(40e-6), Bandwidth: 100e6},
	Bulk:       sim.AlphaBeta{Latency: sim.FromSeconds(15e-6), Bandwidth: 1e9},
	Thresholds: algos.Thresholds{Bulk: 64 << 10}, ReduceBandwidth: 2e9,
}

// checkValues compares a fit's values with want, within tol relative.
func checkValues(t *testing.T, f *Fit, want []float64, tol float64) {
	t.Helper()
	for i, w := range want {
		if got := f.Values[i]; math.Abs(got/w-1) > tol {
			t.Errorf("%s = %g, want %g", f.Model.Params[i].Symbol, got, w)
		}
	}
}

// TestCalibrateRealnet: samples simulated on realnet's two paths, with
// ±2% noise, give back each path's latency and bandwidth, and the fit
// says that the bulk threshold was held.
func TestCalibrateRealnet(t *testing.T) {
	samples := synthetic(t, loopbackPaths, []int{2, 4}, 0.02, 5)
	f, err := Calibrate(samples, "realnet", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %v; notes %q", f.Describe(), f.Summary(), f.Notes)
	checkValues(t, f, []float64{40e-6, 1 / 100e6, 15e-6, 1e-9, 1 / 2e9}, 0.1)
	for _, e := range f.Estimates {
		if e.Held {
			t.Errorf("%s held: %s", e.Name, e.Why)
		}
	}
	if st := f.Settings[0]; st.Name != "bulk_threshold" || st.Value != 64<<10 || st.Given ||
		!hasNote(f.Notes, "bulk_threshold is held at 64 KiB: nexar-live's default") {
		t.Errorf("settings %+v, notes %q", f.Settings, f.Notes)
	}
	if !reflect.DeepEqual(f.SimModel().(sim.TwoPaths).Thresholds.Bulk, 64<<10) {
		t.Errorf("model %+v", f.SimModel())
	}
}

// TestCalibrateProtocol: alpha-beta with a protocol recovers each
// regime's latency and bandwidth (as factors above the eager limit: the
// rendezvous payload at twice the latency and ten times the bandwidth).
func TestCalibrateProtocol(t *testing.T) {
	truth := buildProtocol([]float64{30e-6, 1e-8, 5e-10, 2, 10}, []int{64 << 10})
	samples := synthetic(t, truth, []int{2, 4}, 0.01, 6)
	f, err := Calibrate(samples, "alpha-beta-protocol", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %v; notes %q", f.Describe(), f.Summary(), f.Notes)
	checkValues(t, f, []float64{30e-6, 1e-8, 5e-10, 2, 10}, 0.1)
}

// TestCalibrateSharedHost: samples of ranks behind a shared backplane
// (here 1.5 GB/s against ports of 1 GB/s: it binds wherever two or more
// messages are in flight, and the ring and the tree then move their bytes
// at one rate) give back the backplane beside the protocol's parameters;
// alpha-beta-protocol, which has no shared limit, fits them worse.
func TestCalibrateSharedHost(t *testing.T) {
	want := []float64{30e-6, 1e-9, 5e-10, 2, 1, 1 / 1.5e9}
	samples := synthetic(t, buildSharedHost(want, []int{64 << 10}), []int{2, 4}, 0.01, 10)
	f, err := Calibrate(samples, "shared-host", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %v; notes %q", f.Describe(), f.Summary(), f.Notes)
	checkValues(t, f, want, 0.1)
	g, err := Calibrate(samples, "alpha-beta-protocol", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := f.Summary().Median, g.Summary().Median; a > 0.01 || b < 2*a {
		t.Errorf("median error: shared-host %.3f, alpha-beta-protocol %.3f", a, b)
	}
	var buf strings.Builder
	if err := f.WriteScenario(&buf, "shared"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`model = "flow"`, `topology = "crossbar"`, "backplane_bandwidth = ", "eager_limit = 65536"} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("scenario lacks %q:\n%s", key, buf.String())
		}
	}
}

// TestEagerModeHoldsQUIC: in realnet's eager mode no message takes QUIC,
// so its parameters are held, required as they are, and the fit says why.
func TestEagerModeHoldsQUIC(t *testing.T) {
	truth := loopbackPaths
	truth.Thresholds.Eager = 64 << 10
	samples := synthetic(t, truth, []int{2, 4}, 0, 7)
	f, err := Calibrate(samples, "realnet", Options{Hold: map[string]float64{"eager_threshold": 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range f.Estimates[:2] {
		if !e.Held || !strings.Contains(e.Why, "no sample's prediction depends on it") {
			t.Errorf("%s: held %v (%s)", f.Model.Params[i].Name, e.Held, e.Why)
		}
	}
	if a, b := f.Values[2], f.Values[3]; math.Abs(a/15e-6-1) > 0.05 || math.Abs(b/1e-9-1) > 0.05 {
		t.Errorf("bulk path %g s, %g s/B; want 15e-6, 1e-9", a, b)
	}
	if st := f.Settings[1]; !st.Given || st.Value != 64<<10 {
		t.Errorf("eager threshold %+v", st)
	}
}

// TestSettingHold: a setting held at what it cannot be is refused.
func TestSettingHold(t *testing.T) {
	samples := synthetic(t, loopbackPaths, []int{2}, 0, 8)
	for _, c := range []struct {
		model, name string
		v           float64
	}{{"realnet", "bulk_threshold", -3}, {"realnet", "eager_threshold", -1}, {"alpha-beta-protocol", "eager_limit", 0}, {"realnet", "bulk_threshold", 1.5}} {
		if _, err := Calibrate(samples, c.model, Options{Hold: map[string]float64{c.name: c.v}}); err == nil || !strings.Contains(err.Error(), c.name+" held at") {
			t.Errorf("%s %s = %g: %v", c.model, c.name, c.v, err)
		}
	}
}

// TestSelectModel: on samples of realnet's two paths, the models are
// ranked by their error on points they did not fit: realnet's and the
// protocol's follow them, one alpha and one beta does not.
func TestSelectModel(t *testing.T) {
	samples := synthetic(t, loopbackPaths, []int{2, 4}, 0.02, 9)
	cs, err := SelectModel(samples, []string{"alpha-beta", "realnet", "alpha-beta-protocol"}, Options{Folds: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		t.Logf("%s: held out %.1f%% (mean %.1f%%), err %v", c.Model, 100*c.HeldOut, 100*c.HeldOutMean, c.Err)
	}
	if last := cs[len(cs)-1]; cs[0].Model != "realnet" || cs[0].HeldOut > 0.02 || last.Model != "alpha-beta" || last.HeldOut < 2*cs[0].HeldOut {
		t.Errorf("ranking %+v", cs)
	}
	if cs[0].Fit == nil || cs[0].Fit.Model.Name != "realnet" {
		t.Errorf("best fit %+v", cs[0].Fit)
	}
	// A held parameter no candidate has is an error; one that some have
	// applies to those.
	if _, err := SelectModel(samples, []string{"alpha-beta", "realnet"}, Options{Hold: map[string]float64{"gap": 1e-6}}); err == nil {
		t.Error("hold of a parameter no candidate has: no error")
	}
	cs, err = SelectModel(samples, []string{"alpha-beta", "realnet"}, Options{Hold: map[string]float64{"bulk_threshold": 32 << 10}, Folds: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Model == "realnet" && (c.Fit == nil || c.Fit.Settings[0].Value != 32<<10) {
			t.Errorf("realnet with bulk_threshold held at 32 KiB: %+v", c)
		}
	}
}

// TestFolds: every sample is in one fold, and every fold has samples of
// every algorithm.
func TestFolds(t *testing.T) {
	samples := synthetic(t, loopbackPaths, []int{2}, 0, 10)
	folds := foldsOf(samples, 5)
	seen := map[int]bool{}
	for _, f := range folds {
		algs := map[string]bool{}
		for _, i := range f {
			if seen[i] {
				t.Errorf("sample %d in two folds", i)
			}
			seen[i] = true
			algs[samples[i].Algorithm] = true
		}
		if len(algs) != 4 {
			t.Errorf("fold of %d samples has algorithms %v", len(f), algs)
		}
	}
	if len(seen) != len(samples) {
		t.Errorf("%d of %d samples in folds", len(seen), len(samples))
	}
}

// TestWriteProtocolScenarios: the calibrated scenarios of the protocol
// models parse back to the fitted model.
func TestWriteProtocolScenarios(t *testing.T) {
	for _, c := range []struct {
		model string
		truth sim.Model
		hold  map[string]float64
	}{
		{"realnet", loopbackPaths, nil},
		{"realnet", func() sim.Model { m := loopbackPaths; m.Thresholds.Eager = 32 << 10; return m }(), map[string]float64{"eager_threshold": 32 << 10}},
		{"realnet", func() sim.Model { m := loopbackPaths; m.Thresholds.Bulk = -1; return m }(), map[string]float64{"bulk_threshold": -1}},
		{"alpha-beta-protocol", buildProtocol([]float64{30e-6, 1e-8, 5e-10, 2, 10}, []int{64 << 10}), nil},
	} {
		samples := synthetic(t, c.truth, []int{2}, 0, 11)
		f, err := Calibrate(samples, c.model, Options{MaxIter: 5, Hold: c.hold})
		if err != nil {
			t.Fatal(err)
		}
		s, b := writeAndParse(t, f)
		// The scenario's model times every sample as the fit does (its
		// values are written to the nanosecond and byte per second).
		for i, x := range samples {
			got := simulated(t, x, s.Network.Sim)
			if math.Abs(got/f.Predicted[i]-1) > 1e-4 {
				t.Errorf("%s: %s: scenario's model gives %g s, the fit's %g s\n%s", c.model, x, got, f.Predicted[i], b.String())
				break
			}
		}
	}
}

// TestMergeRepeats: a point measured three times is one sample at the
// median; points that differ in anything are not merged.
func TestMergeRepeats(t *testing.T) {
	a := Sample{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, Time: 3, Source: "a:2"}
	b := a
	b.World = 4
	merged, note := MergeRepeats([]Sample{a, b, {Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, Time: 1, Source: "b:2"},
		{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, Time: 2, Source: "c:2"}})
	if len(merged) != 2 || merged[0].Time != 2 || merged[0].Source != "a:2 and 2 more" || merged[1].World != 4 ||
		note != "1 of 2 points were measured several times (up to 3): each is fitted at its median time" {
		t.Errorf("merged %+v, note %q", merged, note)
	}
	if _, note := MergeRepeats([]Sample{a, b}); note != "" {
		t.Errorf("no repeats: note %q", note)
	}
}
