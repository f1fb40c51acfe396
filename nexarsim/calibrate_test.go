package nexarsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
)

// TestCalibrate: nexar-sim calibrates from benchmark logs alone, as
// nexar-live does, and the scenario it writes runs.
func TestCalibrate(t *testing.T) {
	dir := t.TempDir()
	logs := "../calibrate/testdata/"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", "alpha-beta", logs + "nccl-multinode-allreduce.log"}, []string{"allreduce on 16 ranks (ranks 0-15 listed), 32 samples", "(182.9 GB/s)", "the model does not follow 12 of 32 samples"}},
		// By default, the model of least held-out error: NCCL's protocols
		// follow a model with one.
		{[]string{logs + "nccl-multinode-allreduce.log"}, []string{"chose alpha-beta-protocol: the least median error on points it did not fit", "alpha-beta-protocol model fitted to 32 samples"}},
		{[]string{logs + "osu-pt2pt-v5.log"}, []string{"pt2pt on 2 ranks", "alpha  = 1.6 µs", "(11.49 GB/s)"}},
		{[]string{"--algorithm", "ring,recursive_doubling,binomial_tree", logs + "nccl-several-runs.log"}, []string{"algorithms assumed for the logs, best first:\n", "  ring      ", "  binomial_tree   "}},
		{[]string{"--hold", "latency=2us", logs + "nccl-srun-label.log"}, []string{"alpha  = 2 µs", "held: given", "fitted; up to"}},
		{[]string{"--model", "alpha-beta,alpha-beta-protocol", "--folds", "4", logs + "nccl-several-runs.log"},
			[]string{"models by their error on points they did not fit (4-fold cross-validation), best first:\n  alpha-beta ", "  alpha-beta-protocol  held out: median"}},
		{[]string{logs + "osu-suite.log"}, []string{"note, line 28: OSU MPI Multiple Bandwidth / Message Rate Test v7.3 skipped: a message-rate test", "barrier on 4 ranks (line 80: mpirun -np 4 osu_barrier)"}},
	} {
		out := filepath.Join(dir, "c.toml")
		os.Remove(out)
		code, stdout, stderr := nexarSim(append([]string{"calibrate", "--out", out}, c.args...)...)
		if code != exitOK {
			t.Errorf("%q: exit %d\n%s%s", c.args, code, stdout, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: no %q in\n%s", c.args, w, stdout)
			}
		}
		if _, err := scenario.Load(out); err != nil {
			t.Errorf("%q: %v", c.args, err)
		}
	}
	code, stdout, stderr := nexarSim("validate", filepath.Join(dir, "c.toml"))
	if code != exitOK {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestCalibrateRefuses: a fit the samples cannot determine exits 2 with
// the reason and writes nothing; so does bad input.
func TestCalibrateRefuses(t *testing.T) {
	dir := t.TempDir()
	oneSize := writeFile(t, dir, "one.log", "$ mpirun -np 8 ./all_reduce_perf -b 1M -e 1M\n"+
		"#       size         count      type   redop    root     time   algbw   busbw #wrong\n"+
		"     1048576        262144     float     sum      -1   120.00    8.74   15.29      0\n"+
		"     1048576        262144     float     sum      -1   121.50    8.63   15.10      0\n")
	out := filepath.Join(dir, "c.toml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{oneSize}, "every sample is of one size (1 MiB, allreduce on 8 ranks): latency and bandwidth change its time alike"},
		{[]string{"../calibrate/testdata/osu-allreduce.log"}, "OSU logs do not say how many ranks ran"},
		{[]string{"--hold", "latency=fast", oneSize}, `--hold latency: `},
		{[]string{"--hold", "lat=5us", oneSize}, "--hold lat: the alpha-beta model has no such parameter (want latency, bandwidth, reduce_bandwidth)"},
		{[]string{"--model", "flow", oneSize}, `cannot calibrate model "flow"`},
	} {
		code, stdout, stderr := nexarSim(append([]string{"calibrate", "--out", out}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s%s", c.args, code, c.want, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: %s written", c.args, out)
		}
	}
	// Holding what the samples cannot give makes the fit.
	code, stdout, stderr := nexarSim("calibrate", "--out", out, "--hold", "bandwidth=20GB/s", oneSize)
	if code != exitOK || !strings.Contains(stdout, "held: given") {
		t.Errorf("held: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestCalibratePreset predicts a log on a GPU preset from its description
// (--no-fit), says what it read of NCCL's lines, and refuses the machine's
// flags without a preset.
func TestCalibratePreset(t *testing.T) {
	dir := t.TempDir()
	log := writeFile(t, dir, "all_reduce_perf.log", `# nThread 1 nGpus 1 minBytes 1024 maxBytes 65536 step: 8(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1 on node01 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  2 on node01 device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  3 on node02 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  4 on node02 device  1 [0x2a] NVIDIA H100 80GB HBM3
node01:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    22.00    0.05    0.07      0    22.00    0.05    0.07      0
        8192          2048     float     sum      -1    24.00    0.34    0.51      0    24.00    0.34    0.51      0
       65536         16384     float     sum      -1    30.00    2.18    3.28      0    30.00    2.18    3.28      0
`)
	code, stdout, stderr := nexarSim("calibrate", "--preset", "dgx-h100", "--no-fit", "-v", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"its lines say: NCCL 2.26.2, 2 host(s), NVIDIA H100 80GB HBM3", "predicted on dgx-h100 from its description alone",
		"time below 64 KiB 12.6% (2 sizes)", "nccl_ring_ll(channels=1)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	if code, _, stderr := nexarSim("calibrate", "--set", "nics_per_node=8", log); code != exitUsage || !strings.Contains(stderr, "need --preset") {
		t.Errorf("--set without --preset: exit %d, %s", code, stderr)
	}
	if code, _, stderr := nexarSim("calibrate", "--preset", "no-such", "--no-fit", log); code != exitUsage || !strings.Contains(stderr, "unknown preset") {
		t.Errorf("an unknown preset: exit %d, %s", code, stderr)
	}
}
