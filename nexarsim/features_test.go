package nexarsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sweep"
)

// study is a small scenario with competing algorithms, variants, two
// dtypes, a rooted collective with host data and auto.
const study = `name = "study"
seed = 7

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "recursive_doubling", "pipelined_ring", "auto"]
world = [2, 3, 5, 8, 12]
bytes = [0, "1KiB..16MiB x4"]
dtype = ["f32", "bf16"]
params = { segment = ["256KiB", "1MiB"] }

[[sweep]]
collective = "broadcast"
algorithms = ["binomial_tree", "pipelined_chain", "scatter_allgather"]
world = [4, 7]
bytes = ["1KiB", "64KiB"]
root = 3
data = "host"
`

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	code, _, stderr := nexarSim(args...)
	if code != 0 {
		t.Fatalf("nexar-sim %q: exit %d\n%s", args, code, stderr)
	}
	return stderr
}

// TestJobsByteIdentical runs one scenario with one job and with eight and
// compares every output but the figures byte for byte.
func TestJobsByteIdentical(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "study.toml", study)
	for _, jobs := range []string{"1", "8"} {
		runOK(t, "run", file, "--out", filepath.Join(dir, "j"+jobs), "--jobs", jobs, "--no-plots", "-q")
	}
	for _, name := range []string{"results.csv", "results.json", "crossovers.csv", "tuning.toml", "manifest.json"} {
		a, b := readFile(t, filepath.Join(dir, "j1", name)), readFile(t, filepath.Join(dir, "j8", name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between --jobs 1 and --jobs 8", name)
		}
	}
	rows, err := sweep.ReadCSV(bytes.NewReader(readFile(t, filepath.Join(dir, "j1", "results.csv"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*6*5*9+3*2*2 { // 2 dtypes x 6 variants x 5 worlds x 9 sizes, and the broadcast
		t.Errorf("%d rows", len(rows))
	}
}

// TestShardsMerge splits a run in three and merges it back: the same
// outputs as the whole run, byte for byte.
func TestShardsMerge(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "study.toml", study)
	whole := filepath.Join(dir, "whole")
	runOK(t, "run", file, "--out", whole, "--no-plots", "-q")
	var shards []string
	for i := 1; i <= 3; i++ {
		out := filepath.Join(dir, fmt.Sprintf("shard%d", i))
		stderr := runOK(t, "run", file, "--out", out, "--shard", fmt.Sprintf("%d/3", i))
		if !strings.Contains(stderr, fmt.Sprintf("shard %d/3", i)) {
			t.Errorf("shard %d: %s", i, stderr)
		}
		entries, _ := os.ReadDir(out)
		if len(entries) != 2 { // a shard writes its rows and its manifest only
			t.Errorf("shard %d wrote %d files", i, len(entries))
		}
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	// In any order.
	runOK(t, "merge", "--out", merged, "--no-plots", "-q", shards[2], shards[0], shards[1])
	for _, name := range []string{"results.csv", "results.json", "crossovers.csv", "tuning.toml"} {
		if !bytes.Equal(readFile(t, filepath.Join(whole, name)), readFile(t, filepath.Join(merged, name))) {
			t.Errorf("merged %s differs from the whole run's", name)
		}
	}

	other := writeFile(t, dir, "other.toml", strings.Replace(study, "seed = 7", "seed = 8", 1))
	runOK(t, "run", other, "--out", filepath.Join(dir, "other2"), "--shard", "2/3", "-q")
	runOK(t, "run", file, "--out", filepath.Join(dir, "half1"), "--shard", "1/2", "-q")
	for _, tt := range []struct {
		dirs []string
		want string
	}{
		{[]string{shards[0], shards[1]}, "missing shard(s) 3/3"},
		{[]string{shards[0], shards[1], shards[1]}, "are both shard 2/3"},
		{[]string{shards[0], filepath.Join(dir, "other2"), shards[2]}, "not shards of one run"},
		{[]string{shards[0], filepath.Join(dir, "half1")}, "not shards of one run"},
		{[]string{shards[0], dir}, "not the output of nexar-sim run"},
	} {
		out := filepath.Join(dir, "bad")
		code, _, stderr := nexarSim(append([]string{"merge", "--out", out}, tt.dirs...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("merge %v: exit %d, %s; want 2 and %q", tt.dirs, code, stderr, tt.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a failed merge wrote %s", out)
		}
	}
}

// TestTraceFlag writes the timeline of a ring allreduce at p = 8, as JSON.
func TestTraceFlag(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "--trace", "allreduce:ring:8:8MiB", "--trace", "1", "-q", "--no-plots", "--trace-format", "json")
	data := readFile(t, filepath.Join(out, "trace_allreduce_ring_p8_8388608B_f32.json"))
	var f struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Cat string `json:"cat"`
			Pid int    `json:"pid"`
		} `json:"traceEvents"`
		OtherData map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	sends := map[int]int{}
	for _, e := range f.TraceEvents {
		if e.Ph == "X" && e.Cat == "send" {
			sends[e.Pid]++
		}
	}
	for r := range 8 {
		if sends[r] != 14 {
			t.Errorf("rank %d: %d send spans, want 2(p-1) = 14", r, sends[r])
		}
	}
	if f.OtherData["time"] != "1.5380064ms" || !strings.Contains(f.OtherData["title"], "allreduce/ring world=8 bytes=8388608") {
		t.Errorf("metadata %v", f.OtherData)
	}
	// Point 1 is ring at world 2 and 1024 bytes.
	if _, err := os.Stat(filepath.Join(out, "trace_allreduce_ring_p2_1024B_f32.json")); err != nil {
		t.Error(err)
	}
	m, _ := readManifest(out)
	if !slices.Contains(m.Files, "trace_allreduce_ring_p2_1024B_f32.json") {
		t.Errorf("manifest files %v", m.Files)
	}
}

// TestResume continues a run from a checkpoint cut short mid-line, as an
// interruption leaves it, and gets the whole run's results.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "study.toml", study)
	whole := filepath.Join(dir, "whole")
	runOK(t, "run", file, "--out", whole, "--no-plots", "-q")
	csvData := readFile(t, filepath.Join(whole, "results.csv"))
	m, _ := readManifest(whole)

	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o777)
	lines := strings.SplitAfter(string(csvData), "\n")
	partial := strings.Join(lines[:41], "") + lines[41][:10] // header, 40 rows, part of one
	ck := fmt.Sprintf("%s hash=%s shard=1/1\n", checkpointMagic, m.Hash) + partial
	writeFile(t, out, checkpointFile, ck)
	stderr := runOK(t, "run", file, "--out", out, "--no-plots", "--resume")
	if !strings.Contains(stderr, "resuming after 40 of") {
		t.Errorf("stderr: %s", stderr)
	}
	if !bytes.Equal(readFile(t, filepath.Join(out, "results.csv")), csvData) {
		t.Error("the resumed run's results differ from the whole run's")
	}
	if _, err := os.Stat(filepath.Join(out, checkpointFile)); !os.IsNotExist(err) {
		t.Error("the checkpoint is left after a finished run")
	}
	// A checkpoint of another scenario is refused, named, and left as it
	// was, with the outputs.
	foreign := checkpointMagic + " hash=abc shard=1/1\n" + partial
	writeFile(t, out, checkpointFile, foreign)
	code, _, stderr := nexarSim("run", file, "--out", out, "--no-plots", "--resume")
	if code != exitUsage || !strings.Contains(stderr, "is of another scenario (hash abc, this run's "+m.Hash[:12]+"): its rows are not this run's points") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if string(readFile(t, filepath.Join(out, checkpointFile))) != foreign || !bytes.Equal(readFile(t, filepath.Join(out, "results.csv")), csvData) {
		t.Error("a refused --resume changed the checkpoint or the outputs")
	}
}

// TestPlotAndStaleFiles redraws figures from a results file, and checks
// that a run removes the files of an earlier run that it does not write,
// and nothing else.
func TestPlotAndStaleFiles(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "study.toml", study)
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "-q")
	for _, name := range []string{"crossover_broadcast.png", "latency_allreduce_bf16.svg", "auto_allreduce_f32.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	writeFile(t, out, "notes.txt", "mine")
	// The same scenario without its broadcast sweep.
	only := writeFile(t, dir, "only.toml", strings.Split(study, "[[sweep]]\ncollective = \"broadcast\"")[0])
	runOK(t, "run", only, "--out", out, "-q")
	if _, err := os.Stat(filepath.Join(out, "crossover_broadcast.png")); !os.IsNotExist(err) {
		t.Errorf("the broadcast figures of the earlier run are left (%v)", err)
	}
	if string(readFile(t, filepath.Join(out, "notes.txt"))) != "mine" {
		t.Error("a file the run did not write was touched")
	}

	figs := filepath.Join(dir, "figs")
	stderr := runOK(t, "plot", filepath.Join(out, "results.csv"), "--out", figs)
	if !strings.Contains(stderr, "latency_allreduce_f32.png") {
		t.Errorf("plot: %s", stderr)
	}
	for _, name := range []string{"busbw_allreduce_bf16.png", "crossover_allreduce_f32.svg"} {
		if _, err := os.Stat(filepath.Join(figs, name)); err != nil {
			t.Error(err)
		}
	}
	bad := writeFile(t, dir, "bad.csv", "collective,world\nallreduce,x\n")
	if code, _, stderr := nexarSim("plot", bad, "--out", filepath.Join(dir, "bad")); code != 2 || !strings.Contains(stderr, "bad.csv") {
		t.Errorf("plot of a bad file: exit %d: %s", code, stderr)
	}
	if code, _, stderr := nexarSim("plot", filepath.Join(out, "results.csv"), "--out", figs, "--ceiling", "fast"); code != 2 || !strings.Contains(stderr, "--ceiling") {
		t.Errorf("bad ceiling: exit %d: %s", code, stderr)
	}
}

// TestDerivedTableWithinBudget runs the default scenario, then runs it
// again with the tuning table it derived, and checks that auto is within
// 5% of the best algorithm at every sweep point.
func TestDerivedTableWithinBudget(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	runOK(t, "run", defaultScenario, "--out", first, "--no-plots", "-q")
	src := string(readFile(t, defaultScenario))
	table, _ := filepath.Abs(filepath.Join(first, "tuning.toml"))
	tuned := writeFile(t, dir, "tuned.toml", strings.Replace(src, "\nseed = 1\n", fmt.Sprintf("\nseed = 1\ntuning = %q\n", table), 1))
	second := filepath.Join(dir, "second")
	runOK(t, "run", tuned, "--out", second, "--no-plots", "-q")

	read := func(dir string) []sweep.Row {
		rows, err := sweep.ReadCSV(bytes.NewReader(readFile(t, filepath.Join(dir, "results.csv"))))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	best := map[string]float64{}
	key := func(r sweep.Row) string { return fmt.Sprint(r.Collective, r.World, r.Bytes, r.DType) }
	for _, r := range read(first) {
		if r.Algorithm != "auto" {
			if b, ok := best[key(r)]; !ok || r.Time < b {
				best[key(r)] = r.Time
			}
		}
	}
	autos, over := 0, 0
	defaults := read(first)
	for i, r := range read(second) {
		if r.Algorithm != "auto" {
			continue
		}
		autos++
		if b := best[key(r)]; r.Time > b*1.05 {
			t.Errorf("world %d, %d bytes: auto with the derived table %g s, best %g s", r.World, r.Bytes, r.Time, b)
		}
		if d := defaults[i]; d.Time > best[key(d)]*1.05 {
			over++
		}
	}
	if autos == 0 {
		t.Fatal("the default scenario runs no auto")
	}
	t.Logf("auto within 5%% of the best at all %d points with the derived table; nexar's default table is not at %d", autos, over)
}

// TestScenariosDir checks that every scenario in scenarios/ validates and
// says in a header comment what it studies, and runs the small ones.
func TestScenariosDir(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	// The studies of one scenario a preset (NCCL's choice, 1 to 64 nodes).
	choice, err := filepath.Glob("../scenarios/nccl-choice/*.toml")
	if err != nil || len(choice) == 0 {
		t.Fatalf("no scenarios/nccl-choice: %v", err)
	}
	for _, f := range append(files, choice...) {
		s, points, ok := load(f, os.Stderr)
		if !ok {
			t.Errorf("%s does not validate", f)
			continue
		}
		if text := string(readFile(t, f)); !strings.HasPrefix(text, "# ") || !strings.Contains(text, ".png") {
			t.Errorf("%s: no header comment saying what it studies and what its figures show", f)
		}
		// Run the small ones: the default scenario runs in the tests above,
		// the large studies take seconds each, and worlds of hundreds of
		// GPUs minutes. A training step (a [workload] without sweeps) is
		// minutes too: its closed forms are package workload's tests.
		runs, world := 0, 0
		for _, p := range points {
			runs += max(p.Repeat, 1)
			world = max(world, p.World)
		}
		if len(points) == 0 && s.Workload != nil {
			t.Logf("%s: %q, a training step (not run here)", f, s.Name)
			continue
		}
		if runs > 300 || world > 128 || testing.Short() {
			t.Logf("%s: %q, %d points, %d runs, worlds up to %d (not run here)", f, s.Name, len(points), runs, world)
			continue
		}
		out := t.TempDir()
		runOK(t, "run", f, "--out", out, "--no-plots", "-q")
		t.Logf("%s: %q, %d points: ran", f, s.Name, len(points))
	}
}
