package nexarsim

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/results"
)

// TestRunTable: 'nexar-sim run' prints nccl-tests' table on stdout, one
// block per sweep, algorithm and world, a line per row of results.csv
// with its time, and nothing else (calibrate reads it back as an
// nccl-tests log); progress stays on stderr; -q and --quiet print
// nothing on stdout.
func TestRunTable(t *testing.T) {
	for _, tt := range []struct {
		name  string
		args  []string
		table bool
	}{
		{"flags", []string{"-b", "1K", "-e", "64K", "-f", "4", "--world", "4", "--no-plots"}, true},
		{"two worlds", []string{"-b", "1K", "-e", "4K", "-f", "4", "--world", "2,4", "--no-plots"}, true},
		{"-q", []string{"-b", "1K", "-e", "4K", "-f", "4", "--world", "4", "--no-plots", "-q"}, false},
		{"--quiet", []string{"-b", "1K", "-e", "4K", "-f", "4", "--world", "4", "--no-plots", "--quiet"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := nexarSim(append([]string{"run", "--out", out}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !tt.table {
				if stdout != "" {
					t.Errorf("stdout with %s: %q", tt.args[len(tt.args)-1], stdout)
				}
				return
			}
			if strings.Contains(stderr, "Collective test starting") {
				t.Errorf("the table went to stderr:\n%s", stderr)
			}
			if strings.Contains(stdout, "nexar-sim: ") {
				t.Errorf("progress on stdout:\n%s", stdout)
			}
			checkTable(t, stdout, filepath.Join(out, "results.csv"))
		})
	}
}

// checkTable checks that table, read as nccl-tests' log, has a block per
// collective, algorithm and world and a line per row of the results.csv
// at csvPath, with its time to nccl-tests' precision.
func checkTable(t *testing.T, table, csvPath string) {
	t.Helper()
	rs, err := results.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	log, err := calibrate.ReadNCCLTests("stdout", strings.NewReader(table), calibrate.LogOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, table)
	}
	ss := log.Samples()
	if len(ss) != len(rs.Rows) {
		t.Fatalf("%d lines in the table, %d rows in results.csv:\n%s", len(ss), len(rs.Rows), table)
	}
	blocks := map[string]bool{}
	for _, r := range rs.Rows {
		blocks[fmt.Sprintf("%s/%s/%d", r.Collective, r.Algorithm, r.World)] = true
	}
	if n := strings.Count(table, "# Collective test starting: "); n != len(blocks) {
		t.Errorf("%d blocks, want %d (one per collective, algorithm and world):\n%s", n, len(blocks), table)
	}
	want := map[string]float64{}
	for _, r := range rs.Rows {
		want[fmt.Sprintf("%s/%d/%d", r.Algorithm, r.World, r.Bytes)] = r.Time
	}
	for _, s := range ss {
		w, ok := want[fmt.Sprintf("%s/%d/%d", s.Algorithm, s.World, s.Bytes)]
		// nccl-tests prints times to 0.01 µs below 10 µs, and 4
		// significant digits at least above.
		if !ok || math.Abs(s.Time-w) > max(w*1e-3, 1e-8) {
			t.Errorf("table: %s at %d ranks, %d B: %g s; results.csv %g s", s.Algorithm, s.World, s.Bytes, s.Time, w)
		}
	}
}
