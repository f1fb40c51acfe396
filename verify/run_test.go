package verify

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
)

// TestCompareRun: at the end of a run, CompareRun writes compare.csv, a
// row per result, and compare.png, and prints the model's error to the
// table; a scenario whose model cannot predict a point is a warning.
func TestCompareRun(t *testing.T) {
	s, err := scenario.Parse("ab.toml", []byte(`name = "ab"
[network]
model = "alpha-beta"
latency = "10us"
bandwidth = "1GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [1024, 4096]
`))
	if err != nil {
		t.Fatal(err)
	}
	var rs []results.Row
	for _, n := range []int{1024, 4096} {
		rs = append(rs, results.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: n, DType: "f32", Op: "sum",
			Time: 1e-4, TimeMin: 9e-5, TimeMax: 2e-4})
	}
	dir := t.TempDir()
	var table bytes.Buffer
	warnings, err := CompareRun(s, dir, &table, rs)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("warnings %q, %v", warnings, err)
	}
	f, err := os.Open(filepath.Join(dir, CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 3 || strings.Join(recs[0], ",") != strings.Join(CompareHeader, ",") {
		t.Errorf("compare.csv %q, %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ComparePlotFile)); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(table.String(), `# Model "alpha-beta" of ab.toml: 2 points: median |predicted/measured - 1|`) {
		t.Errorf("table: %q", table.String())
	}
	rs[0].Collective = "no_such_collective"
	warnings, err = CompareRun(s, t.TempDir(), nil, rs)
	if err != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "no comparison with the model: ") {
		t.Errorf("unknown collective: warnings %q, %v", warnings, err)
	}
	if warnings, err := CompareRun(nil, t.TempDir(), nil, rs); err != nil || warnings != nil {
		t.Errorf("no scenario: warnings %q, %v", warnings, err)
	}
}
