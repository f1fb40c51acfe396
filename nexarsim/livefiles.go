package nexarsim

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/results"
)

// foreignColumns returns the columns of t that nexar-sim does not write
// (results.SimColumns): nexar-live's (wrong, device, the thresholds), or
// columns of no writer's.
func foreignColumns(t *results.Table) []string {
	var out []string
	for _, c := range t.Columns {
		if !slices.Contains(results.SimColumns, c) {
			out = append(out, c)
		}
	}
	return out
}

// liveResults returns the columns only nexar-live writes that dir's
// results.csv has, and its path: nil when dir has no results.csv, one
// that does not read, or one of nexar-sim's.
func liveResults(dir string) ([]string, string) {
	path := filepath.Join(dir, resultsFile)
	t, err := results.ReadFile(path)
	if err != nil {
		return nil, path
	}
	var live []string
	for _, c := range foreignColumns(t) {
		if slices.Contains(results.LiveColumns(true, true), c) {
			live = append(live, c)
		}
	}
	return live, path
}

// notMerged says why merge does not join dir, which has no manifest
// (err): a nexar-live output is not a shard.
func notMerged(dir string, err error) error {
	if live, path := liveResults(dir); live != nil {
		return fmt.Errorf("%s: not the output of nexar-sim run (%v): %s holds nexar-live's measurements (it has nexar-live's %s), "+
			"which are no shard of a simulation: merge joins the shards of one nexar-sim run (run --shard I/N); plot and calibrate read the file as it is",
			dir, err, path, columnList(live))
	}
	return fmt.Errorf("%s: not the output of nexar-sim run: %v", dir, err)
}

// notResumed says why run --resume does not continue in dir, which has
// no checkpoint: nil unless its results.csv is nexar-live's, which a run
// into dir would replace.
func notResumed(dir string) error {
	live, path := liveResults(dir)
	if live == nil {
		return nil
	}
	return fmt.Errorf("%s has no checkpoint of nexar-sim's to continue, and %s holds nexar-live's measurements (it has nexar-live's %s): "+
		"a simulation does not continue them, and a run into %s would replace them; give another --out", dir, path, columnList(live), dir)
}

// columnList names columns in a message: "wrong column", "wrong and
// device columns".
func columnList(cols []string) string {
	if len(cols) == 1 {
		return cols[0] + " column"
	}
	return strings.Join(cols[:len(cols)-1], ", ") + " and " + cols[len(cols)-1] + " columns"
}
