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
		{[]string{logs + "nccl-multinode-allreduce.log"}, []string{"allreduce on 16 ranks (ranks 0-15 listed), 32 samples", "(182.9 GB/s)", "the model does not follow 12 of 32 samples"}},
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
