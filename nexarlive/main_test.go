package nexarlive

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/verify"
)

var full = flag.Bool("full", false, "run the full loopback sweep (every allreduce algorithm, 8 B..64 MiB, 4 ranks; minutes)")

// The command starts its workers as its own executable: in the test, the
// test binary, which runs the command instead of the tests when
// NEXAR_LIVE_TEST_MAIN is set (and sets it for the children it starts).
func TestMain(m *testing.M) {
	// A fuzzing worker is this binary too, started with the variable set:
	// it fuzzes.
	if os.Getenv("NEXAR_LIVE_TEST_MAIN") != "" && !slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv("NEXAR_LIVE_TEST_MAIN", "1")
	os.Exit(m.Run())
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// checkRun checks a finished run's outputs: every point of world np
// measured, nothing wrong, a prediction for each.
func checkRun(t *testing.T, out string, np, points int) {
	t.Helper()
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != points {
		t.Errorf("%d results, want %d", len(rs), points)
	}
	for _, r := range rs {
		if r.Wrong != 0 || r.World != np || r.Time <= 0 {
			t.Errorf("%s/%s p=%d %d B: wrong %d, time %g", r.Collective, r.Algorithm, r.World, r.Bytes, r.Wrong, r.Time)
		}
	}
	cmp, err := os.ReadFile(filepath.Join(out, verify.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(cmp), "\n"); lines != points+1 {
		t.Errorf("compare.csv has %d lines, want %d", lines, points+1)
	}
	if _, err := os.Stat(filepath.Join(out, verify.ComparePlotFile)); err != nil {
		t.Error(err)
	}
}

// TestRunAllreduce is the CI variant of the loopback check: every
// allreduce algorithm at 8 B, 1020 B, 64 KiB and 1 MiB, on 2, 3 and 4
// rank processes; no element may be wrong. The full sweep (8 B..64 MiB)
// runs with -full.
func TestRunAllreduce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, np := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI("run", "--np", strconv.Itoa(np), "../live/examples/loopback-ci.toml",
				"--out", out, "--warmup", "1", "--iters", "2", "--timeout", "30s")
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			for _, want := range []string{"Collective test starting: allreduce (algorithm ring", "# Out of bounds values : 0 OK", "     float     sum      -1"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			checkRun(t, out, np, 10*4)
			if np == 4 {
				checkCalibrate(t, out)
			}
		})
	}
}

// checkCalibrate calibrates the model on a run's results and predicts
// them with it.
func checkCalibrate(t *testing.T, out string) {
	t.Helper()
	results := filepath.Join(out, live.ResultsFile)
	cal := filepath.Join(out, "calibrated.toml")
	code, stdout, stderr := runCLI("calibrate", "--model", "alpha-beta", results, "--out", cal)
	if code != exitOK || !strings.Contains(stdout, "alpha-beta model fitted to 40 samples") {
		t.Fatalf("calibrate: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("calibrate:\n%s", stdout)
	if _, err := scenario.Load(cal); err != nil {
		t.Fatalf("calibrated scenario: %v", err)
	}
	code, stdout, stderr = runCLI("compare", cal, results, "--out", filepath.Join(out, "cal"))
	if code != exitOK || !strings.Contains(stdout, "40 points: median |predicted/measured - 1|") {
		t.Fatalf("compare: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "cal", verify.ComparePlotFile)); err != nil {
		t.Error(err)
	}
}

// TestCalibrateLogs calibrates from the sample benchmark logs of package
// calibrate and writes scenarios nexar-sim reads.
func TestCalibrateLogs(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"../calibrate/testdata/nccl-allreduce.log"}, "alpha  = 2.5 µs"},
		{[]string{"--world", "4", "../calibrate/testdata/osu-allreduce.log"}, "(1.2 GB/s)"},
		{[]string{"--model", "loggp", "--world", "2", "--dtype", "u8", "../calibrate/testdata/osu-bcast-full.log"}, "loggp model fitted to 9 samples"},
	} {
		out := filepath.Join(dir, "c.toml")
		code, stdout, stderr := runCLI(append([]string{"calibrate", "--out", out}, c.args...)...)
		if code != exitOK || !strings.Contains(stdout, c.want) {
			t.Errorf("%q: exit %d, want %q in\n%s%s", c.args, code, c.want, stdout, stderr)
			continue
		}
		if _, err := scenario.Load(out); err != nil {
			t.Errorf("%q: %v", c.args, err)
		}
	}
	code, _, stderr := runCLI("calibrate", "../calibrate/testdata/osu-allreduce.log")
	if code != exitUsage || !strings.Contains(stderr, "give the world size") {
		t.Errorf("OSU log without --world: exit %d, %s", code, stderr)
	}
}

// TestRunAllreduceFull: go test ./cmd/nexar-live -run Full -full.
func TestRunAllreduceFull(t *testing.T) {
	if !*full {
		t.Skip("the full sweep runs with -full")
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--np", "4", "../live/examples/loopback-allreduce.toml",
		"--out", out, "--warmup", "2", "--iters", "5")
	t.Log(stdout)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkRun(t, out, 4, 10*9)
}

// TestWorkerTorchrun starts two workers the way torchrun would, with
// RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and credentials made by
// 'nexar-live ca'.
func TestWorkerTorchrun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	code, stdout, stderr := runCLI("ca", "--job", "torch", "--ranks", "2", filepath.Join(dir, "ca"))
	if code != exitOK {
		t.Fatalf("ca: exit %d: %s", code, stderr)
	}
	env := strings.Fields(strings.TrimPrefix(strings.TrimSpace(stdout), "export "))
	if len(env) != 3 {
		t.Fatalf("ca printed %q, want three variables", stdout)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port)
	pc.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var wg sync.WaitGroup
	outputs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for r := range 2 {
		cmd := exec.Command(exe, "worker", "../live/examples/loopback-ci.toml", "--out", out, "--warmup", "1", "--iters", "1", "--timeout", "30s")
		cmd.Env = append(append(os.Environ(), env...), "RANK="+strconv.Itoa(r), "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+port)
		cmd.Stdout, cmd.Stderr = &outputs[r], &outputs[r]
		wg.Go(func() { errs[r] = cmd.Run() })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v\n%s", r, err, outputs[r].String())
		}
	}
	if !strings.Contains(outputs[0].String(), "launched by torchrun") {
		t.Errorf("rank 0's output does not name torchrun:\n%s", outputs[0].String())
	}
	if outputs[1].Len() != 0 {
		t.Errorf("rank 1 printed:\n%s", outputs[1].String())
	}
	checkRun(t, out, 2, 40)
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitUsage, "Usage:"},
		{[]string{"bogus"}, exitUsage, `unknown command "bogus"`},
		{[]string{"run", "../live/examples/loopback-ci.toml", "--out", "x"}, exitUsage, "missing --np"},
		{[]string{"run", "--np", "4"}, exitUsage, "want one scenario file"},
		{[]string{"run", "--np", "5", "../live/examples/loopback-ci.toml", "--out", "x"}, exitUsage, "no sweep has world size 5"},
		{[]string{"run", "--np", "2", "--iters", "0", "../live/examples/loopback-ci.toml", "--out", "x"}, exitUsage, "--iters 0"},
		{[]string{"run", "--np", "2", "--emulate", "latency=1ms", "../live/examples/loopback-ci.toml", "--out", "x"}, exitUsage, "latency and bandwidth are required"},
		{[]string{"run", "--np", "2", "--emulate", "latency=1ms,bandwidth=1GB/s", "--eager-threshold", "4KiB", "../live/examples/loopback-ci.toml", "--out", "x"}, exitUsage, "--emulate's network (QUIC only) does not have"},
		{[]string{"worker", "../live/examples/loopback-ci.toml"}, exitUsage, "missing --out"},
		{[]string{"run", "--np", "2", "--emulate", "latency=1ms,bandwidth=1GB/s", "--profile", "x", "../live/examples/loopback-ci.toml", "--out", "x"}, exitUsage, "--profile writes a profile per rank process"},
		{[]string{"help", "run"}, exitOK, "Usage: nexar-live run"},
		{[]string{"run", "-h"}, exitOK, "Usage: nexar-live run"},
	} {
		code, stdout, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%q: exit %d, output\n%s%s\nwant exit %d and %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat("x"); err == nil {
		t.Error("a refused run created its output directory")
		os.RemoveAll("x")
	}
}

// TestVerifyEmulated verifies the crossover of a table for 3 ranks on an
// emulated network of the table's latency and bandwidth: the measured
// crossover must lie within the sizes, within a factor of the predicted
// one.
func TestVerifyEmulated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in real time")
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("verify", "../verify/testdata/tuning-p3.toml", "--np", "3", "--emulate", "latency=2ms,bandwidth=20MB/s",
		"--out", out, "--span", "3", "--warmup", "1", "--iters", "3")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	i := strings.Index(stdout, "Crossovers of")
	if i < 0 {
		t.Fatalf("no crossover table:\n%s", stdout)
	}
	t.Logf("%s", stdout[i:])
	data, err := os.ReadFile(filepath.Join(out, verify.CrossoverFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("verify.csv:\n%s", data)
	}
	f := strings.Split(lines[1], ",")
	ratio, err := strconv.ParseFloat(f[len(f)-1], 64)
	// QUIC over the emulated network pays more per message than the
	// model's alpha (Go's timers, QUIC's pacing: see live/README.md),
	// which moves the crossover up by up to about 2.5x here; the test
	// holds it to a factor of 4, within the sizes measured. Under load
	// the two variants' times near the crossover differ by less than the
	// repeats' own spread, which moves the measured point by an octave:
	// the bound then holds for the band of sizes the run's jitter cannot
	// tell apart (crossoverBand), which must reach into the factor of 4.
	pred, _ := strconv.Atoi(f[4])
	lo, hi := crossoverBand(t, filepath.Join(out, "p3", "results.csv"), f[2], f[3])
	t.Logf("measured crossover %.4gx the table's; within the jitter, between %d and %d bytes", ratio, lo, hi)
	if err != nil || f[9] != "" || math.IsNaN(ratio) || hi < pred/4 || lo > 4*pred {
		t.Errorf("verify.csv row %q: want a crossover within a factor 4 of the table's (%d bytes), or a jitter band [%d, %d] reaching into it", lines[1], pred, lo, hi)
	}
	if _, err := os.Stat(filepath.Join(out, verify.CrossoverPlotFile)); err != nil {
		t.Error(err)
	}
}

// TestPeer sets a results file beside the Open MPI log format of
// scripts/ompi-allreduce.
func TestPeer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "results.csv")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := results.NewWriter(f, results.LiveColumns(false, false), results.LiveDecimals)
	for _, r := range []results.Row{
		{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 1 << 20, DType: "f32", Time: 4.82e-3, BusBW: 0.326},
		{Collective: "allreduce", Algorithm: "auto", World: 4, Bytes: 1 << 20, DType: "f32", Time: 5e-3, BusBW: 0.315},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, stderr := runCLI("peer", "--name", "ompi", file, "../verify/testdata/ompi-allreduce.log")
	if code != exitOK || !strings.Contains(stdout, "ompi time") || !strings.Contains(stdout, "    0.50") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// writeTuning writes a tuning table with the given [transport] table body.
func writeTuning(t *testing.T, transport string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "tuning.toml")
	text := "version = 1\n\n[[collective.allreduce.rule]]\nalgorithm = \"ring\"\n\n[transport]\n" + transport + "\n"
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTuningFlag checks the threshold --tuning gives every rank's
// realnet.Config, and that an explicit --bulk-threshold wins over it.
func TestTuningFlag(t *testing.T) {
	never := writeTuning(t, `bulk_threshold = "never"`)
	zero := writeTuning(t, "bulk_threshold = 0")
	eager := writeTuning(t, "bulk_threshold = 4096\neager_threshold = 2048")
	for _, c := range []struct {
		args      []string
		want      int
		wantEager int
	}{
		{nil, 64 << 10, 0},
		{[]string{"--tuning", never}, -1, 0},
		{[]string{"--tuning", zero}, 1, 0},
		{[]string{"--tuning", writeTuning(t, "bulk_threshold = 4096")}, 4096, 0},
		{[]string{"--tuning", never, "--bulk-threshold", "8KiB"}, 8 << 10, 0},
		{[]string{"--bulk-threshold", "8KiB", "--tuning", never}, 8 << 10, 0},
		{[]string{"--eager-threshold", "16KiB"}, 64 << 10, 16 << 10},
		{[]string{"--tuning", eager}, 4096, 2048},
		{[]string{"--tuning", eager, "--eager-threshold", "off"}, 4096, 0},
		{[]string{"--eager-threshold", "1KiB", "--tuning", eager}, 4096, 1024},
		{[]string{"--bulk-threshold", "0"}, 1, 0},
		{[]string{"--bulk-threshold", "off", "--eager-threshold", "2KiB"}, -1, 2048},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var m measureFlags
		m.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := m.config()
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got := cfg.Thresholds; got.Bulk != c.want || got.Eager != c.wantEager {
			t.Errorf("%q: thresholds %v, want bulk %d, eager %d", c.args, got, c.want, c.wantEager)
		}
		// The workers, given the launcher's arguments, use the same
		// (without reading the tuning table again).
		wargs := m.workerArgs(cfg.Thresholds)
		if slices.Contains(wargs, "--tuning") {
			t.Errorf("%q: the workers' arguments %q name the tuning table", c.args, wargs)
		}
		wfs := flag.NewFlagSet("w", flag.ContinueOnError)
		var w measureFlags
		w.register(wfs)
		if err := wfs.Parse(wargs); err != nil {
			t.Fatal(err)
		}
		if wcfg, err := w.config(); err != nil || wcfg.Thresholds != cfg.Thresholds {
			t.Errorf("%q: the workers' thresholds %v (%v), want %v", c.args, wcfg.Thresholds, err, cfg.Thresholds)
		}
	}
}

// TestThresholdFlagsRefused: sizes the flags do not take are refused as
// they are parsed.
func TestThresholdFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--bulk-threshold", "lots"},
		{"--bulk-threshold", "-2"},
		{"--eager-threshold", "1MiB"},
		{"--eager-threshold", "1.5B"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		var m measureFlags
		m.register(fs)
		if err := fs.Parse(args); err == nil {
			t.Errorf("%q: accepted, thresholds %v", args, m.thresholds)
		}
	}
}

// TestRunTuning runs 2 rank processes above the default bulk threshold
// with a tuning table that keeps every message on QUIC, with one that
// sends every message on the bulk path, and with one that turns the eager
// path on: all complete, nothing wrong, and results.csv records the
// thresholds each table gave. A bad table is refused before any rank starts.
func TestRunTuning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(sc, []byte(`name = "tuning"
seed = 1
[network]
model = "alpha-beta"
latency = "100us"
bandwidth = "500MB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = ["64KiB", "1MiB"]
data = "host"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table string
		want  live.Thresholds // as results.csv records them
	}{
		{`"never"`, live.Thresholds{Bulk: -1}},
		{"0", live.Thresholds{Bulk: 1}},
		{"0\neager_threshold = 4096", live.Thresholds{Bulk: 1, Eager: 4096}},
	} {
		t.Run(c.table, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI("run", "--np", "2", sc, "--out", out, "--tuning", writeTuning(t, "bulk_threshold = "+c.table),
				"--warmup", "1", "--iters", "2", "--timeout", "30s")
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			checkRun(t, out, 2, 2)
			rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if tr := r.Transport(); tr == nil || *tr != c.want {
					t.Errorf("results.csv records thresholds %+v, want %+v", r.Transport(), c.want)
				}
			}
		})
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("version = 1\n[transport]\nbulk_threshold = -5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bad-out")
	code, stdout, stderr := runCLI("run", "--np", "2", sc, "--out", out, "--tuning", bad)
	if code != exitUsage || !strings.Contains(stderr, bad+":") || strings.Contains(stdout+stderr, "rank ") {
		t.Errorf("bad tuning table: exit %d\n%s%s\nwant exit %d naming %s", code, stdout, stderr, exitUsage, bad)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run created its output directory")
	}
}

// TestRunComparesWithRecordedThresholds: a run with --bulk-threshold 4KiB
// on a scenario whose realnet model says 64 KiB writes a compare.csv that
// predicts with 4 KiB, the threshold its ranks used: what a scenario that
// says 4 KiB predicts, not what 64 KiB predicts.
func TestRunComparesWithRecordedThresholds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	scenarioAt := func(bulk string) string {
		f := filepath.Join(dir, bulk+".toml")
		// 2 ranks' ring allreduce of 32 KiB sends messages of 16 KiB: on
		// the bulk path from 4 KiB, on QUIC below 64 KiB.
		if err := os.WriteFile(f, []byte(`name = "thresholds"
seed = 1
[network]
model = "realnet"
bulk_threshold = "`+bulk+`"
[network.transport]
quic_latency = "30us"
quic_bandwidth = "1.65Gbit/s"
bulk_latency = "10us"
bulk_bandwidth = "1.09GB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = ["32KiB"]
data = "host"
`), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	sc64 := scenarioAt("64KiB")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI("run", "--np", "2", sc64, "--out", out, "--bulk-threshold", "4KiB",
		"--warmup", "1", "--iters", "2", "--timeout", "30s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Transport() == nil || *rs[0].Transport() != (live.Thresholds{Bulk: 4 << 10}) {
		t.Fatalf("results.csv: %+v, want one row recording a bulk threshold of 4 KiB", rs)
	}
	f, err := os.Open(filepath.Join(out, verify.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][7] != "predicted_s" {
		t.Fatalf("compare.csv: %q, %v", recs, err)
	}
	got := recs[1][7]
	// The predictions made directly: the row as a scenario that says 4 KiB
	// (or 64 KiB) predicts it, whatever it recorded.
	direct := func(bulk string) string {
		s, err := scenario.Load(scenarioAt(bulk))
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		r.BulkThreshold, r.EagerThreshold = 0, 0 // recorded none
		cs, err := verify.Predict(s, []results.Row{r.Row})
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatFloat(cs[0].Predicted, 'f', results.SimDecimals, 64)
	}
	if at4, at64 := direct("4KiB"), direct("64KiB"); got != at4 || at4 == at64 {
		t.Errorf("compare.csv predicts %s s; a scenario at 4 KiB predicts %s s, one at 64 KiB %s s", got, at4, at64)
	}
}

// TestCalibrateRecordedThresholds: an emulated run (QUIC only) records
// its thresholds, and calibrate holds the protocol model's eager limit
// at them and says so; two files whose thresholds disagree are refused,
// naming both, unless --hold gives the value.
func TestCalibrateRecordedThresholds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in real time")
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(sc, []byte(`name = "recorded"
[network]
model = "alpha-beta"
latency = "200us"
bandwidth = "200MB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling"]
world = [2]
bytes = [8, "1KiB", "8KiB", "64KiB", "256KiB"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI("run", "--np", "2", sc, "--out", out, "--emulate", "latency=200us,bandwidth=200MB/s",
		"--warmup", "1", "--iters", "3", "--no-compare")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	results := filepath.Join(out, live.ResultsFile)
	// The emulated network's times are mostly its timers' lateness, which
	// need not leave the bandwidth determined: it is held, this test is
	// about the thresholds.
	code, stdout, stderr = runCLI("calibrate", "--model", "alpha-beta-protocol", "--hold", "bandwidth=200MB/s", results)
	if want := regexp.MustCompile(`(?m)^ *= *never +eager_limit +given: recorded by the run \(` + regexp.QuoteMeta(results) + `\)$`); code != exitOK || !want.MatchString(stdout) {
		t.Fatalf("calibrate: exit %d, want %q in\n%s%s", code, want, stdout, stderr)
	}
	t.Logf("calibrate:\n%s", stdout)
	// The same times, as if measured with a bulk threshold of 16 KiB.
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(string(b), ",-1,0\n", ",16384,0\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI("calibrate", "--model", "alpha-beta-protocol", results, other)
	if code != exitUsage || !strings.Contains(stderr, "different transport thresholds") || !strings.Contains(stderr, results+":2") ||
		!strings.Contains(stderr, other+":2") || !strings.Contains(stderr, "--hold eager_limit=SIZE") {
		t.Errorf("disagreeing files: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("calibrate", "--model", "alpha-beta-protocol", "--hold", "eager_limit=1MiB", "--hold", "bandwidth=200MB/s", results, other)
	if code != exitOK || !strings.Contains(stdout, "note: eager_limit=1 MiB given overrides the values the runs recorded, which disagree") {
		t.Errorf("disagreeing files, --hold: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRunNCCL runs every NCCL algorithm (package algos/nccl) of every
// collective on 3 and 4 real rank processes, two ranks a node, at small
// and medium sizes: no element may be wrong.
func TestRunNCCL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, np := range []int{3, 4} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI("run", "--np", strconv.Itoa(np), "../live/examples/loopback-nccl.toml",
				"--out", out, "--warmup", "1", "--iters", "2", "--timeout", "60s")
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			checkRun(t, out, np, 9*3+3*2+3*2+2*2+2*2)
			out = t.TempDir()
			code, stdout, stderr = runCLI("run", "--np", strconv.Itoa(np), "../live/examples/loopback-nccl-nvls.toml",
				"--out", out, "--warmup", "1", "--iters", "2", "--timeout", "60s")
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			checkRun(t, out, np, 2*2)
		})
	}
}
