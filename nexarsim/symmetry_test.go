package nexarsim

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSymmetry: nexar-sim says on stderr how many points took the
// shortcut of one rank for all, and results.csv is the same with
// symmetry = "off", which says nothing.
func TestRunSymmetry(t *testing.T) {
	const sc = `name = "sym"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "binomial_tree"]
world = [8, 16]
bytes = ["1MiB", "4MiB"]
`
	dir := t.TempDir()
	var csvs [2][]byte
	for i, extra := range []string{"", "symmetry = \"off\"\n"} {
		file := writeFile(t, dir, "sym.toml", sc+extra)
		out := filepath.Join(dir, "out"+extra[:min(len(extra), 3)])
		stderr := runOK(t, "run", file, "--out", out, "--no-plots")
		const line = "nexar-sim: 8 of 12 point(s) simulated one rank for all, which the simulator proved exact (groups: cyclic 4, xor 4)"
		if got := strings.Contains(stderr, line); got != (extra == "") {
			t.Errorf("symmetry %q: the line %q on stderr: %v\n%s", extra, line, got, stderr)
		}
		csvs[i] = readFile(t, filepath.Join(out, "results.csv"))
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Error("results.csv differs with symmetry off")
	}
}

func TestSymmetryLine(t *testing.T) {
	if got := symmetryLine(nil); got != "" {
		t.Errorf("no rows: %q", got)
	}
}
