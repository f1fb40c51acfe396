package nexarsim

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
)

// rewrite writes the rows of the results.csv at path again with the
// columns and decimals given, as another writer would have written them,
// with the rows changed by edit.
func rewrite(t *testing.T, path string, cols []string, decimals int, edit func(*results.Row)) {
	t.Helper()
	tab, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := results.NewWriter(&b, cols, decimals)
	w.WriteHeader()
	for _, r := range tab.Rows {
		edit(&r)
		w.Write(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// measured makes a row what nexar-live writes: nothing wrong, the
// thresholds nexar-live runs with.
func measured(r *results.Row) { r.Wrong, r.BulkThreshold, r.EagerThreshold = 0, 64<<10, 0 }

// TestMergeResults: merge reads a shard's results.csv as every reader of
// results.csv does (by column name, earlier versions' names too), and
// refuses nexar-live's, whose measurements are no shard of a simulation
// (a nexar-live output has no manifest) and whose columns nexar-sim's
// results.csv would drop, saying so.
func TestMergeResults(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	var shards []string
	for _, sh := range []string{"1/2", "2/2"} {
		out := filepath.Join(dir, "shard"+sh[:1])
		runOK(t, "run", file, "--out", out, "--shard", sh, "-q")
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	runOK(t, append([]string{"merge", "--out", merged, "--no-plots", "-q"}, shards...)...)
	want := readFile(t, filepath.Join(merged, resultsFile))

	// Accepted: the columns in another order, busbw under the name of an
	// earlier version.
	reordered := slices.Clone(results.SimColumns)
	slices.Reverse(reordered)
	rewrite(t, filepath.Join(shards[0], resultsFile), reordered, results.SimDecimals, func(*results.Row) {})
	path := filepath.Join(shards[0], resultsFile)
	os.WriteFile(path, bytes.Replace(readFile(t, path), []byte("busbw_GB_per_s"), []byte("busbw_gbps"), 1), 0o644)
	again := filepath.Join(dir, "again")
	runOK(t, append([]string{"merge", "--out", again, "--no-plots", "-q"}, shards...)...)
	if got := readFile(t, filepath.Join(again, resultsFile)); !bytes.Equal(got, want) {
		t.Errorf("merged from a shard of other columns:\n%s\nwant:\n%s", got, want)
	}

	// Refused: a nexar-live output, and a shard whose results.csv has
	// nexar-live's columns.
	live := filepath.Join(dir, "live")
	os.Mkdir(live, 0o777)
	os.WriteFile(filepath.Join(live, resultsFile), readFile(t, filepath.Join(shards[1], resultsFile)), 0o644)
	rewrite(t, filepath.Join(live, resultsFile), results.LiveColumns(false, true), results.LiveDecimals, measured)
	rewrite(t, filepath.Join(shards[1], resultsFile), results.LiveColumns(false, false), results.LiveDecimals, measured)
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{shards[0], live}, live + ": not the output of nexar-sim run (open " + filepath.Join(live, manifestFile) + ": no such file or directory): " +
			filepath.Join(live, resultsFile) + " holds nexar-live's measurements (it has nexar-live's wrong, bulk_threshold and eager_threshold columns), " +
			"which are no shard of a simulation: merge joins the shards of one nexar-sim run (run --shard I/N); plot and calibrate read the file as it is"},
		{shards, filepath.Join(shards[1], resultsFile) + " has the wrong column, which nexar-sim does not write and the merged results.csv would not keep"},
	} {
		out := filepath.Join(dir, "bad")
		code, _, stderr := nexarSim(append([]string{"merge", "--out", out, "-q"}, c.dirs...)...)
		if code != 2 || stderr != "nexar-sim merge: "+c.want+"\n" {
			t.Errorf("merge %q: exit %d, %s\nwant 2 and %s", c.dirs, code, stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a refused merge wrote %s", out)
		}
	}
}

// TestResumeResults: run --resume refuses an output directory whose
// results.csv is nexar-live's, which a simulation does not continue and a
// run would replace, and leaves it as it was; a directory of nexar-sim's
// without a checkpoint runs from the first point, as before.
func TestResumeResults(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "--no-plots", "-q")
	stderr := runOK(t, "run", file, "--out", out, "--no-plots", "--resume")
	if !strings.Contains(stderr, "nexar-sim: no checkpoint in "+out+"; starting from the first point") {
		t.Errorf("--resume of a finished run:\n%s", stderr)
	}

	path := filepath.Join(out, resultsFile)
	rewrite(t, path, results.LiveColumns(false, true), results.LiveDecimals, measured)
	before := readFile(t, path)
	code, _, stderr := nexarSim("run", file, "--out", out, "--no-plots", "--resume")
	want := "nexar-sim run: --resume: " + out + " has no checkpoint of nexar-sim's to continue, and " + path +
		" holds nexar-live's measurements (it has nexar-live's wrong, bulk_threshold and eager_threshold columns): " +
		"a simulation does not continue them, and a run into " + out + " would replace them; give another --out\n"
	if code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("--resume into nexar-live's output: exit %d, %s\nwant 2 and %s", code, stderr, want)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Errorf("a refused --resume changed %s", path)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagePrefix) {
			t.Errorf("a refused --resume left %s", e.Name())
		}
	}
}
