package nexarsim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/workload"
)

const stepScenario = `name = "%s"
seed = 1

[network]
model = "alpha-beta"
latency = "%s"
bandwidth = "25GB/s"
ranks_per_node = 4

[workload]
layout = ["dp4-tp2-pp1", "dp2-tp2-pp2"]
micro_batches = 2
bucket = ["256KiB", "4MiB"]

[[workload.layer]]
name = "block"
count = 4
params = 1048576
activation = "1MiB"
forward = "200us"
tp_collectives = 2

[workload.algorithms]
dp = ["ring", "recursive_doubling"]
`

func TestStepCommand(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.toml", strings.Replace(strings.Replace(stepScenario, "%s", "fast", 1), "%s", "2us", 1))
	b := writeFile(t, dir, "b.toml", strings.Replace(strings.Replace(stepScenario, "%s", "slow", 1), "%s", "50us", 1))
	out := filepath.Join(dir, "out")
	code, _, stderr := nexarSim("step", a, b, "--out", out, "--trace", "slow:5", "--trace-ranks", "0-3", "--jobs", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(out, "step.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := workload.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 16 || rows[0].Network != "fast" || rows[15].Network != "slow" || rows[15].Point != 7 {
		t.Fatalf("%d rows, first %+v, last %+v", len(rows), rows[0], rows[15])
	}
	for _, r := range rows {
		if r.Step <= 0 || r.Compute <= 0 || r.Step+1e-12 < r.Compute {
			t.Errorf("row %+v: step below its compute", r)
		}
	}
	// The slow network's latency shows in its exposed communication.
	if rows[8].Exposed <= rows[0].Exposed {
		t.Errorf("exposed %g on the slow network, %g on the fast", rows[8].Exposed, rows[0].Exposed)
	}
	for _, name := range []string{"exposed.csv", "best_bucket.csv", "ranks.csv", "trace_step_slow_p5.pftrace",
		"step_buckets_fast.png", "step_buckets_slow.svg", "step_breakdown_slow.png", "report.html"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// One job or two, the same bytes.
	out1 := filepath.Join(dir, "out1")
	if code, _, stderr := nexarSim("step", a, b, "--out", out1, "--jobs", "1", "--no-plots", "-q"); code != exitOK {
		t.Fatalf("--jobs 1: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"step.csv", "exposed.csv", "best_bucket.csv"} {
		x, _ := os.ReadFile(filepath.Join(out, name))
		y, _ := os.ReadFile(filepath.Join(out1, name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between --jobs 2 and --jobs 1", name)
		}
	}
	best, _ := os.ReadFile(filepath.Join(out, "best_bucket.csv"))
	if n := strings.Count(string(best), "\n"); n != 1+8 {
		t.Errorf("best_bucket.csv has %d lines, want a header and 8 groups:\n%s", n, best)
	}
}

func TestStepCommandUsage(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.toml", strings.Replace(strings.Replace(stepScenario, "%s", "x", 1), "%s", "2us", 1))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"step", a}, "missing --out DIR"},
		{[]string{"step", "--out", dir}, "no scenario file given"},
		{[]string{"step", a, a, "--out", dir}, `name "x" is also`},
		{[]string{"step", a, "--out", dir, "--trace", "9"}, "--trace 9: no point 9"},
		{[]string{"step", writeFile(t, dir, "s.toml", good), "--out", dir}, "no [workload] table"},
		{[]string{"run", a, "--out", dir}, "run its training step with nexar-sim step"},
	} {
		code, _, stderr := nexarSim(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, _ := nexarSim("validate", a)
	if code != exitOK || !strings.Contains(stdout, "[workload]: layers, 8 step point(s), sweeping layout, bucket, algorithms.dp (nexar-sim step)") {
		t.Errorf("validate: %d %q", code, stdout)
	}
}
