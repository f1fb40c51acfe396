package calibrate

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/units"
)

// peakBusBW is the highest bus bandwidth of a log's allreduce samples,
// in bytes per second, as nccl-tests computes it.
func peakBusBW(ss []Sample) float64 {
	peak := 0.0
	for _, s := range ss {
		p := float64(s.World)
		peak = math.Max(peak, float64(s.Bytes)/s.Time*2*(p-1)/p)
	}
	return peak
}

// TestBandwidthNearPeak: on a multi-node allreduce log where large
// messages dominate (16 ranks, 8 B to 16 GiB, times that follow NCCL's
// three protocols), the fitted bandwidth lies within 5% of the log's
// peak busbw, where plain least squares lands well under it.
func TestBandwidthNearPeak(t *testing.T) {
	log, err := ReadFile(filepath.Join("testdata", "nccl-multinode-allreduce.log"), "", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss := log.Samples()
	peak := peakBusBW(ss)
	fit, err := Calibrate(ss, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Calibrate(ss, "alpha-beta", Options{LeastSquares: true})
	if err != nil {
		t.Fatal(err)
	}
	robust, ls := 1/fit.Values[1], 1/plain.Values[1]
	t.Logf("peak busbw %.2f GB/s; fitted bandwidth %.2f GB/s (%.3f of the peak), plain least squares %.2f GB/s (%.3f); %v",
		peak/1e9, robust/1e9, robust/peak, ls/1e9, ls/peak, fit.Summary())
	if math.Abs(robust/peak-1) > 0.05 {
		t.Errorf("fitted bandwidth %.2f GB/s is %.1f%% off the peak busbw %.2f GB/s", robust/1e9, 100*(robust/peak-1), peak/1e9)
	}
	if ls/peak > 0.95 {
		t.Errorf("plain least squares gives %.3f of the peak: the log no longer tells the fits apart", ls/peak)
	}
	if !hasNote(fit.Notes, "the model does not follow") || !hasNote(fit.Notes, "gamma) is held at inf: beta and gamma change every prediction alike") {
		t.Errorf("notes %q", fit.Notes)
	}
}

func hasNote(notes []string, part string) bool {
	for _, n := range notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// ringSamples are ring allreduce samples on 8 ranks at sizes, simulated
// on m.
func ringSamples(t *testing.T, m sim.Model, sizes ...int) []Sample {
	var out []Sample
	for _, b := range sizes {
		s := Sample{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: b, DType: device.F32, Op: device.Sum, Source: "test"}
		s.Time = simulated(t, s, m)
		out = append(out, s)
	}
	return out
}

// TestRefusals: a fit the samples cannot determine is refused with the
// reason, and holding the parameter they lack makes it.
func TestRefusals(t *testing.T) {
	m := sim.AlphaBeta{Latency: sim.FromSeconds(5e-6), Bandwidth: 12.5e9}
	for _, c := range []struct {
		name  string
		sizes []int
		want  string
		hold  string
	}{
		{"one size", []int{1 << 20, 1 << 20, 1 << 20}, "every sample is of one size (1 MiB, allreduce on 8 ranks): latency and bandwidth change its time alike", "bandwidth"},
		{"latency regime", []int{8, 64, 512, 1024}, "bandwidth (beta) accounts for at most 0.2% of any sample's time: the samples (8 B to 1 KiB) all lie where latency dominates", "bandwidth"},
	} {
		ss := ringSamples(t, m, c.sizes...)
		_, err := Calibrate(ss, "alpha-beta", Options{})
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
			continue
		}
		t.Logf("%s: %v", c.name, err)
		truth := map[string]float64{"latency": 5e-6, "bandwidth": 1 / 12.5e9}
		f, err := Calibrate(ss, "alpha-beta", Options{Hold: map[string]float64{c.hold: truth[c.hold]}})
		if err != nil {
			t.Errorf("%s, %s held: %v", c.name, c.hold, err)
			continue
		}
		other := "latency"
		if c.hold == "latency" {
			other = "bandwidth"
		}
		j := f.Model.Param(other)
		if math.Abs(f.Values[j]/truth[other]-1) > 0.01 {
			t.Errorf("%s, %s held: %s = %g, want %g", c.name, c.hold, other, f.Values[j], truth[other])
		}
		if !f.Estimates[f.Model.Param(c.hold)].Held {
			t.Errorf("%s: %s not reported held", c.name, c.hold)
		}
	}
}

// TestBandwidthRegime: samples that all lie where bandwidth dominates
// determine the bandwidth; the latency is held where the fit put it and
// named, rather than the fit refused.
func TestBandwidthRegime(t *testing.T) {
	m := sim.AlphaBeta{Latency: sim.FromSeconds(5e-6), Bandwidth: 12.5e9}
	f, err := Calibrate(ringSamples(t, m, 256<<20, 1<<30, 4<<30), "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	lat, bw := f.Estimates[f.Model.Param("latency")], f.Estimates[f.Model.Param("bandwidth")]
	want := "accounts for at most 0.2% of any sample's time: every sample lies where bandwidth dominates"
	if !lat.Held || !strings.Contains(lat.Why, want) || !hasNote(f.Notes, "latency (alpha) is held at") {
		t.Errorf("latency %+v, notes %q: want it held, saying %q", lat, f.Notes, want)
	}
	if bw.Held || math.Abs(bw.Value*12.5e9-1) > 0.01 {
		t.Errorf("bandwidth %s (held %v), want 12.5 GB/s fitted", formatRateHuman(bw.Value), bw.Held)
	}
	// A log of the same shape, as nccl-tests' bandwidth checks run it (64
	// MiB to 8 GiB, 100 GB/s of busbw): read and fitted, not refused.
	log, err := ReadFile("testdata/nccl-bandwidth-only.log", "", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err = Calibrate(log.Samples(), "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	lat, bw = f.Estimates[f.Model.Param("latency")], f.Estimates[f.Model.Param("bandwidth")]
	// busbw 100 GB/s is the ring's link bandwidth.
	if !lat.Held || bw.Held || math.Abs(bw.Value*100e9-1) > 0.01 {
		t.Errorf("the log: latency %s (held %v), bandwidth %s (held %v): want the latency held, 100 GB/s fitted",
			units.FormatSeconds(lat.Value), lat.Held, formatRateHuman(bw.Value), bw.Held)
	}
}

// TestZeroBytesLeftOut: zero-byte samples do not stay in as points the
// model predicts at 0 s.
func TestZeroBytesLeftOut(t *testing.T) {
	m := sim.AlphaBeta{Latency: sim.FromSeconds(5e-6), Bandwidth: 12.5e9}
	ss := ringSamples(t, m, 8, 4096, 1<<20, 16<<20)
	ss = append(ss, Sample{Collective: "allreduce", Algorithm: "ring", World: 8, DType: device.F32, Time: 6e-6, Source: "log:9"})
	f, err := Calibrate(ss, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Samples) != 4 || !hasNote(f.Notes, "1 sample(s) of 0 bytes left out (log:9)") {
		t.Errorf("%d samples fitted, notes %q", len(f.Samples), f.Notes)
	}
	if math.Abs(f.Values[1]*12.5e9-1) > 1e-3 {
		t.Errorf("beta %g", f.Values[1])
	}
}

// TestNoReduction: on samples that reduce nothing, gamma is held and the
// fit says why.
func TestNoReduction(t *testing.T) {
	m := sim.AlphaBeta{Latency: sim.FromSeconds(5e-6), Bandwidth: 12.5e9}
	var ss []Sample
	for _, b := range []int{64, 4096, 1 << 20, 16 << 20} {
		s := Sample{Collective: "allgather", Algorithm: "ring", World: 4, Bytes: b, DType: device.U8, Source: "test"}
		s.Time = simulated(t, s, m)
		ss = append(ss, s)
	}
	f, err := Calibrate(ss, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Estimates[2].Held || !hasNote(f.Notes, "reduce_bandwidth (gamma) is held at inf: no sample reduces data") {
		t.Errorf("estimates %+v notes %q", f.Estimates, f.Notes)
	}
}

// TestPointToPointSamples: OSU's latency and bandwidth logs give alpha
// and beta; on the corpus's 5.6 logs (made with 1.6 µs and 11.5 GB/s)
// the fit finds them.
func TestPointToPointSamples(t *testing.T) {
	truth := sim.AlphaBeta{Latency: sim.FromSeconds(2e-6), Bandwidth: 20e9}
	var ss []Sample
	for _, bench := range []string{PingPong, Stream, BiStream} {
		for _, b := range []int{0, 8, 1024, 65536, 4 << 20} {
			s := Sample{Collective: PointToPoint, Algorithm: bench, World: 2, Bytes: b, DType: device.U8, Source: "test"}
			if err := checkSample(&s); err != nil {
				t.Fatal(err)
			}
			s.Time = simulated(t, s, truth)
			ss = append(ss, s)
		}
	}
	// On alpha-beta a window of messages takes one alpha each: osu_bw
	// sees n/(alpha + n beta) and a little of the acknowledgement.
	if want := 2e-6 + 4096/20e9; math.Abs(ss[0].Time-2e-6) > 1e-12 || math.Abs(ss[2].Time/(2e-6+1024/20e9)-1) > 1e-9 || want <= 0 {
		t.Errorf("latency samples %g %g", ss[0].Time, ss[2].Time)
	}
	f, err := Calibrate(ss, "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Values[0]/2e-6-1) > 1e-3 || math.Abs(f.Values[1]*20e9-1) > 1e-3 {
		t.Errorf("fit %s", f.Describe())
	}

	log, err := ReadFile(filepath.Join("testdata", "osu-pt2pt-v5.log"), "", LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err = Calibrate(log.Samples(), "alpha-beta", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("osu-pt2pt-v5.log: %s; %v", f.Describe(), f.Summary())
	if math.Abs(f.Values[0]/1.6e-6-1) > 0.05 || math.Abs(1/f.Values[1]/11.5e9-1) > 0.05 {
		t.Errorf("osu-pt2pt-v5.log: %s, want about 1.6 µs and 11.5 GB/s", f.Describe())
	}
}

// TestFitCandidates: of several algorithms assumed for a log, the one
// that ran fits best.
func TestFitCandidates(t *testing.T) {
	truth := sim.AlphaBeta{Latency: sim.FromSeconds(10e-6), Bandwidth: 5e9}
	var ss []Sample
	for _, p := range []int{4, 16} {
		for _, b := range []int{8, 1024, 65536, 1 << 20, 16 << 20} {
			s := Sample{Collective: "allreduce", Algorithm: "recursive_doubling", World: p, Bytes: b, DType: device.F32, Source: "test"}
			s.Time = simulated(t, s, truth)
			s.Algorithm, s.Assumed = "ring", true
			ss = append(ss, s)
		}
	}
	cs, err := FitCandidates(ss, "alpha-beta", []string{"ring", "recursive_doubling", "halving_doubling", "pipelined_chain"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		t.Logf("%s: median %.3f err %v", c.Algorithm, c.Median, c.Err)
	}
	if cs[0].Algorithm != "recursive_doubling" || cs[0].Median > 1e-3 || cs[1].Ties {
		t.Errorf("best %s (median %.3f), want recursive_doubling alone", cs[0].Algorithm, cs[0].Median)
	}
	if last := cs[len(cs)-1]; last.Fit != nil || last.Err == nil || !strings.Contains(last.Err.Error(), `no sample of a log has a collective with algorithm "pipelined_chain"`) {
		t.Errorf("pipelined_chain: %+v", last)
	}
	// On one world size, latency plus bytes times a constant fits alike
	// whatever the algorithm: they tie, and keep the order given.
	one := ringSamples(t, truth, 8, 1024, 65536, 1<<20, 16<<20)
	for i := range one {
		one[i].Assumed = true
	}
	cs, err = FitCandidates(one, "alpha-beta", []string{"halving_doubling", "ring"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Algorithm != "halving_doubling" || !cs[1].Ties {
		t.Errorf("one world: %s then %s (ties %v), want halving_doubling tied with ring", cs[0].Algorithm, cs[1].Algorithm, cs[1].Ties)
	}
}
