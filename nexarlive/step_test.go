package nexarlive

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/live/step"
	"github.com/nexar-go/nexar-go/verify"
	"github.com/nexar-go/nexar-go/workload"
)

// stepTestScenario is a tiny training step: 3 layers of 1 ms forward and
// 2 ms backward, data parallel over 3 ranks and pipelined over 3 stages,
// two buckets.
const stepTestScenario = `name = "tiny-step"
seed = 1

[network]
model = "alpha-beta"
latency = "200us"
bandwidth = "200MB/s"

[workload]
layout = ["dp3-tp1-pp1", "dp1-tp1-pp3"]
micro_batches = 2
bucket = ["32KiB", "1MiB"]
first_bucket = 0

[[workload.layer]]
name = "block"
count = 3
params = 65536
activation = "16KiB"
forward = "1ms"
`

// stepTestModel is a calibrated scenario as nexar-live calibrate writes
// one: a [network] and the sweep it was fitted to.
const stepTestModel = `name = "calibrated"
seed = 1

[network]
model = "alpha-beta"
latency = "300us"
bandwidth = "100MB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [3]
bytes = [1024]
`

// TestStep runs nexar-live step on 3 rank processes: a row of step.csv
// and of compare.csv for every point, each step at least its compute,
// the compute at least the stated one, a prediction for each.
func TestStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.toml")
	model := filepath.Join(dir, "model.toml")
	if err := os.WriteFile(file, []byte(stepTestScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte(stepTestModel), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI("step", "--np", "3", file, "--out", out, "--warmup", "1", "--iters", "2", "--timeout", "30s", "--model", model)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("%s", stdout)
	for _, want := range []string{"predicted by the simulator on " + model, "4 points: median |predicted/measured - 1| = "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	f, err := os.Open(filepath.Join(out, step.File))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := workload.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows in step.csv, want 4", len(rows))
	}
	// Each rank's stated compute: dp3 runs every layer of both
	// micro-batches (3 layers x 2 x 3 ms), a stage of pp3 one layer. The
	// emulated compute makes up for late wakes (computeEmulator), so its
	// measured total may fall short of the stated one by the waits it
	// takes for non-blocking (under 20 us each): 1% is room enough.
	stated := map[string]float64{"dp3-tp1-pp1": 0.018 * 0.99, "dp1-tp1-pp3": 0.006 * 0.99}
	for i, r := range rows {
		if r.Point != i || r.World != 3 || r.Network != "tiny-step" {
			t.Errorf("row %d: point %d, world %d, network %q", i, r.Point, r.World, r.Network)
		}
		if !(r.Step > 0) || r.Step < r.Compute || r.Compute < stated[r.Layout] || r.Messages <= 0 {
			t.Errorf("point %d (%s, bucket %d): step %g s, compute %g s (stated %g s), %d messages", r.Point, r.Layout, r.Bucket, r.Step, r.Compute, stated[r.Layout], r.Messages)
		}
		if r.PP == 1 && !(r.ExposedBy[workload.DP] > 0) || r.PP == 3 && !(r.Bubble > 0) {
			t.Errorf("point %d (%s): exposed dp %g s, bubble %g s", r.Point, r.Layout, r.ExposedBy[workload.DP], r.Bubble)
		}
	}
	cf, err := os.Open(filepath.Join(out, verify.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(cf).ReadAll()
	cf.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || strings.Join(recs[0], ",") != strings.Join(verify.StepCompareColumns, ",") {
		t.Fatalf("compare.csv: %d lines, header %q", len(recs), recs[0])
	}
	for _, rec := range recs[1:] {
		pred, _ := strconv.ParseFloat(rec[5], 64)
		meas, _ := strconv.ParseFloat(rec[6], 64)
		ratio, _ := strconv.ParseFloat(rec[7], 64)
		if !(pred > 0) || !(meas > 0) || math.Abs(ratio-pred/meas) > 1e-6 {
			t.Errorf("compare.csv row %q", rec)
		}
	}
	// report.html beside them, with the model's error over the steps.
	if page, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(page), "<h2>Model error</h2>") ||
		!strings.Contains(string(page), "4 point(s): median error") {
		t.Errorf("report.html: %v", err)
	}
	// --reuse predicts the same rows again, on the scenario's network.
	code, stdout2, stderr := runCLI("step", "--np", "3", file, "--out", out, "--reuse")
	if code != exitOK || !strings.Contains(stdout2, "predicted by the simulator on "+file+"'s [network]") || !strings.Contains(stdout2, "4 points: median") {
		t.Errorf("--reuse: exit %d\n%s\n%s", code, stdout2, stderr)
	}
	times, err := os.ReadFile(filepath.Join(out, step.TimesFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(times), "\n"); n != 1+4*2 {
		t.Errorf("step_times.csv has %d lines, want 9", n)
	}
}

// TestStepUsage: a scenario without a [workload], or without layouts of
// the run's size, is refused before anything starts.
func TestStepUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.toml")
	if err := os.WriteFile(file, []byte(stepTestScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"step", "--np", "3", "../live/examples/loopback-ci.toml", "--out", dir}, "no [workload] table"},
		{[]string{"step", "--np", "4", file, "--out", dir}, "no layout of the [workload] has 4 ranks"},
		{[]string{"step", file, "--out", dir}, "missing --np"},
		{[]string{"step", "--np", "3", file}, "missing --out"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}
