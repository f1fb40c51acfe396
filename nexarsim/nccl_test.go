package nexarsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sweep"
)

// TestRunFromFlags runs a sweep of nccl-tests' flags, with no scenario
// file: the run writes the scenario it made, which runs again to the same
// results.
func TestRunFromFlags(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := nexarSim("run", "-b", "1K", "-e", "1M", "-f", "4", "--world", "8", "--out", out, "-q", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sweep.ReadCSV(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int]bool{}
	for _, r := range rows {
		if r.World != 8 || r.Collective != "allreduce" {
			t.Errorf("row %+v", r)
		}
		sizes[r.Bytes] = true
	}
	if len(sizes) != 6 {
		t.Errorf("sizes %v, want 1KiB..1MiB x4", sizes)
	}
	again := t.TempDir()
	if code, _, stderr := nexarSim("run", filepath.Join(out, flagsScenarioFile), "--out", again, "-q", "--no-plots"); code != exitOK {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	data2, err := os.ReadFile(filepath.Join(again, "results.csv"))
	if err != nil || string(data2) != string(data) {
		t.Errorf("the written scenario gives other results (%v)", err)
	}
}

// TestRunFromPublishedFlags: a command line as nccl-tests users publish
// it, getopt's glued values and GPU-only flags included, runs; -t and -g
// make a process's ranks, --world its processes (mpirun -np).
func TestRunFromPublishedFlags(t *testing.T) {
	for _, c := range []struct {
		args  []string
		world int
		note  string
	}{
		{[]string{"-b8", "-e64K", "-f8", "-g", "4", "-G", "1", "-z", "0"}, 4, "-G, -z change nothing here"},
		{[]string{"-b", "8", "-e", "64K", "-f", "8", "--world", "2", "-t", "2", "-g", "2"}, 8, "--world 2 processes make [8] ranks"},
		{[]string{"-b", "8", "-e", "64K", "-f", "8", "-g", "1", "-z", "0"}, 1, "-z change nothing here"},
	} {
		out := t.TempDir()
		args := append([]string{"run"}, c.args...)
		code, _, stderr := nexarSim(append(args, "--algorithms", "ring", "--out", out, "-q", "--no-plots")...)
		if code != exitOK || !strings.Contains(stderr, c.note) {
			t.Fatalf("%q: exit %d, want a note %q: %s", c.args, code, c.note, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sweep.ReadCSV(strings.NewReader(string(data)))
		if err != nil || len(rows) != 5 {
			t.Fatalf("%q: %d rows (%v), want 5", c.args, len(rows), err)
		}
		for _, r := range rows {
			if r.World != c.world {
				t.Errorf("%q: row of %d ranks, want %d", c.args, r.World, c.world)
			}
		}
	}
}

func TestFlagsUsage(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--out", dir}, "no scenario file given; or describe a sweep with nccl-tests' flags"},
		{[]string{"run", file, "-b", "8", "--out", dir}, "leave out -b"},
		{[]string{"run", "-b", "8", "--out", dir}, "missing --world"},
		{[]string{"run", "-b", "8", "-e", "8", "--world", "0", "--out", dir}, "want at least 1 rank"},
		{[]string{"run", "-b", "6", "-e", "6", "--world", "4", "--out", dir}, "-b/-e/-f/-i: 6: not a multiple of the f32 element size"},
		{[]string{"run", "-b", "8", "-e", "8", "-f", "2", "-i", "4", "--world", "4", "--out", dir}, "both given"},
	} {
		code, _, stderr := nexarSim(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %s; want %d with %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	if code, stdout, _ := nexarSim("--version"); code != exitOK || !strings.HasPrefix(stdout, "nexar-sim (nexar-go") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

func TestShardFromSlurm(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		env  func(string) string
		want shard
		err  string
	}{
		{env(), shard{1, 1}, ""},
		{env("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "8", "SLURM_ARRAY_TASK_MIN", "0"), shard{1, 8}, ""},
		{env("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_COUNT", "8", "SLURM_ARRAY_TASK_MIN", "1"), shard{8, 8}, ""},
		{env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "8", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "2"), shard{3, 8}, ""},
		{env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4"), shard{4, 4}, ""},
		{env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4"), shard{}, "is not one of 4 tasks"},
		{env("SLURM_ARRAY_TASK_ID", "x", "SLURM_ARRAY_TASK_COUNT", "4"), shard{}, "not a whole number"},
	} {
		got, err := shardFromSlurm(tc.env)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("got %v, %v; want %v, %q", got, err, tc.want, tc.err)
		}
	}
	// A run in a job array takes its shard, which --shard overrides.
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "2")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "0")
	out := t.TempDir()
	if code, _, stderr := nexarSim("run", "-b", "1K", "-e", "4K", "-f", "2", "--world", "4", "--algorithms", "ring", "--out", out, "--no-plots"); code != exitOK || !strings.Contains(stderr, "shard 2/2") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := nexarSim("run", "-b", "1K", "-e", "4K", "-f", "2", "--world", "4", "--algorithms", "ring", "--out", t.TempDir(), "--shard", "1/1", "--no-plots"); code != exitOK || strings.Contains(stderr, "shard") {
		t.Errorf("--shard 1/1 in an array: exit %d: %s", code, stderr)
	}
}

// TestRunFromPresetFlags predicts nccl-tests on a GPU preset from the
// flags alone: the world is every GPU of the nodes, "auto" runs NCCL's
// choice, alltoall NCCL's posted-at-once sends; flags that describe
// another network are refused.
func TestRunFromPresetFlags(t *testing.T) {
	for _, c := range []struct{ coll, alg string }{{"all_gather", "auto"}, {"alltoall", "linear"}} {
		out := t.TempDir()
		code, _, stderr := nexarSim("run", "--preset", "dgx-h100", "--nodes", "1", "--collective", c.coll, "-b", "1K", "-e", "64K", "-f", "8", "--out", out, "-q", "--no-plots")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.coll, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sweep.ReadCSV(strings.NewReader(string(data)))
		if err != nil || len(rows) != 3 {
			t.Fatalf("%s: %d rows, %v", c.coll, len(rows), err)
		}
		for _, r := range rows {
			if r.World != 8 || r.Algorithm != c.alg || !(r.Time > 0) {
				t.Errorf("%s: row %+v", c.coll, r)
			}
		}
		text, err := os.ReadFile(filepath.Join(out, flagsScenarioFile))
		if err != nil || !strings.Contains(string(text), `preset = "dgx-h100"`) || !strings.Contains(string(text), `policy = "nccl"`) {
			t.Errorf("%s: the written scenario:\n%s", c.coll, text)
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--preset", "dgx-h100", "--latency", "1us", "--out", dir}, "--latency with --preset"},
		{[]string{"run", "--nodes", "2", "--world", "8", "--out", dir}, "--nodes needs --preset"},
		{[]string{"run", "--preset", "no-such", "--out", dir}, `unknown preset "no-such"`},
		{[]string{"run", "--preset", "dgx-h100", "--nodes", "0", "--out", dir}, "want a number of nodes"},
		{[]string{"run", "--preset", "dgx-h100", "--policy", "other", "--out", dir}, `--policy: unknown policy "other"`},
	} {
		code, _, stderr := nexarSim(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %s; want %d with %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
