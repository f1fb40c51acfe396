package sweep_test

import (
	"strconv"
	"testing"

	"github.com/nexar-go/nexar-go/sweep"
)

// TestSymmetryRows: a sweep's points take the shortcut of
// sim.Config.Symmetry by default where it is proved, and their rows equal
// those of symmetry = "off" but for naming the group.
func TestSymmetryRows(t *testing.T) {
	const sw = `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "binomial_tree"]
world = [8, 12]
bytes = ["1MiB"]
`
	auto, off := plan(t, sw), plan(t, sw+"symmetry = \"off\"\n")
	// At 12 ranks the ring's chunks of 1 MiB differ in size from rank to
	// rank, and halving-doubling folds ranks: both run in full, as the
	// trees do everywhere.
	want := map[string]string{"ring/8": "cyclic", "halving_doubling/8": "xor"}
	for i := range auto {
		a, err := sweep.RunPoint(auto[i])
		if err != nil {
			t.Fatal(err)
		}
		o, err := sweep.RunPoint(off[i])
		if err != nil {
			t.Fatal(err)
		}
		key := a.Algorithm + "/" + strconv.Itoa(a.World)
		if a.Symmetry != want[key] || o.Symmetry != "" {
			t.Errorf("%s: symmetry %q (off: %q), want %q", key, a.Symmetry, o.Symmetry, want[key])
		}
		a.Symmetry = ""
		if a != o {
			t.Errorf("%s: row %+v, with symmetry off %+v", key, a, o)
		}
	}
}
