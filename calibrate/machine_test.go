package calibrate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/device"
)

// machineSamples are allreduce samples of world ranks at sizes, timed 0.
func machineSamples(world int, sizes ...int) []Sample {
	var ss []Sample
	for _, b := range sizes {
		ss = append(ss, Sample{Collective: "allreduce", Algorithm: "ring", Assumed: true, World: world, Bytes: b, DType: device.F32, Op: device.Sum, Source: "test"})
	}
	return ss
}

// TestPredictMachine: a benchmark's samples run NCCL's choice ("auto"
// under the nccl policy), what the log says NCCL chose where it says, and
// sizes above the limit are extrapolated from the algorithm that runs
// them, simulated at the limit and half of it.
func TestPredictMachine(t *testing.T) {
	ctx := context.Background()
	m := Machine{Preset: "dgx-h100"}
	ss := machineSamples(8, 1024, 64<<10, 1<<20)
	info := &NCCLInfo{Choices: []NCCLChoice{{Collective: "allreduce", Bytes: 64 << 10, Algorithm: "nccl_ring_ll128", Channels: 4}}}
	ss[1].NCCL = info
	pr, err := PredictMachine(ctx, m, ss, PredictOptions{MaxSimulated: 256 << 10, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pr[0].Ran, "nccl_ring_ll(") || pr[0].Extrapolated {
		t.Errorf("1 KiB: %+v, want NCCL's ring over LL, simulated", pr[0])
	}
	if pr[1].Ran != "nccl_ring_ll128(channels=4)" || pr[1].Extrapolated {
		t.Errorf("64 KiB: %+v, want the log's choice", pr[1])
	}
	if !pr[2].Extrapolated {
		t.Fatalf("1 MiB: %+v, want extrapolated", pr[2])
	}
	// The extrapolation is the line through the algorithm's times at the
	// limit and half of it.
	at := machineSamples(8, 128<<10, 256<<10)
	for i := range at {
		at[i].Algorithm, at[i].Assumed = pr[2].Ran, false
	}
	two, err := PredictMachine(ctx, m, at, PredictOptions{MaxSimulated: -1, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := two[1].Time + float64(1<<20-256<<10)*(two[1].Time-two[0].Time)/float64(128<<10)
	if math.Abs(pr[2].Time/want-1) > 1e-12 {
		t.Errorf("1 MiB extrapolated: %g s, want %g", pr[2].Time, want)
	}
	if a := Agree(ss, []float64{1, 1, 1}); !math.IsNaN(a.BusBW) || !math.IsNaN(a.Time) {
		t.Errorf("samples of no time: %+v", a) // zero times are left out
	}
}

// TestPredictMachineNCCLEnv: NCCL_ALGO and NCCL_PROTO a run set limit
// what "auto" runs, as they limited NCCL; a value NCCL 2.30 would refuse
// (an older release's "CollNet") leaves the choice free.
func TestPredictMachineNCCLEnv(t *testing.T) {
	ctx := context.Background()
	m := Machine{Preset: "dgx-h100"}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"NCCL_ALGO": "Tree"}, "nccl_tree_"},
		{map[string]string{"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}, "nccl_tree_simple("},
		{map[string]string{"NCCL_PROTO": "LL"}, "nccl_ring_ll("},
		{map[string]string{"NCCL_ALGO": "CollNet"}, "nccl_"},
	} {
		ss := machineSamples(16, 1<<20)
		ss[0].NCCL = &NCCLInfo{Env: c.env}
		pr, err := PredictMachine(ctx, m, ss, PredictOptions{MaxSimulated: -1, Jobs: 2})
		if err != nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		if !strings.HasPrefix(pr[0].Ran, c.want) {
			t.Errorf("%v: ran %s, want %s...", c.env, pr[0].Ran, c.want)
		}
	}
}

// TestFitMachine fits a machine to samples simulated on the same preset
// with other NICs: it finds their bandwidth and latency again, and holds
// NVLink's, which no sample inside one node shows.
func TestFitMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates two nodes of A100 a dozen times")
	}
	ctx := context.Background()
	truth := Machine{Preset: "dgx-a100", Keys: map[string]any{"nic_bandwidth": "20GB/s", "nic_latency": "2us"}}
	ss := machineSamples(16, 1024, 4096, 16<<10, 4<<20, 8<<20)
	opt := PredictOptions{MaxSimulated: 4 << 20, Jobs: 2}
	pr, err := PredictMachine(ctx, truth, ss, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ss {
		ss[i].Time = pr[i].Time
	}
	fit, err := FitMachine(ctx, Machine{Preset: "dgx-a100"}, ss, MachineFitOptions{PredictOptions: opt})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]MachineParam{}
	for _, p := range fit.Params {
		got[p.Key] = p
	}
	if p := got["nic_bandwidth"]; p.Held || math.Abs(p.Value/20e9-1) > 0.03 {
		t.Errorf("nic_bandwidth %+v, want about 20 GB/s", p)
	}
	if p := got["nic_latency"]; p.Held || math.Abs(p.Value/2e-6-1) > 0.15 {
		t.Errorf("nic_latency %+v, want about 2 us", p)
	}
	if p := got["nvlink_bandwidth"]; !p.Held || p.Value != 300e9 {
		t.Errorf("nvlink_bandwidth %+v, want held at the preset's", p)
	}
	if !(fit.AfterFit.BusBW < 0.02) || !(fit.AfterFit.Time < 0.02) {
		t.Errorf("after the fit: %s", fit.AfterFit)
	}
	var b strings.Builder
	if err := fit.WriteScenario(&b, "fitted"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`preset = "dgx-a100"`, `policy = "nccl"`, `nic_bandwidth = "`, `algorithms = ["auto"]`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the scenario has no %s:\n%s", want, b.String())
		}
	}
}
