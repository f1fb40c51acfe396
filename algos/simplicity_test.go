package algos_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
)

func TestCompareSimplicity(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"ring", "pipelined_ring(segment=2MiB)", -1},           // fewer declared parameters
		{"ring", "halving_doubling", -1},                       // catalogue order
		{"recursive_doubling", "halving_doubling", 1},          // catalogue order, not names'
		{"pipelined_ring", "pipelined_ring(segment=2MiB)", -1}, // sets fewer
		{"pipelined_ring(segment=512KiB)", "pipelined_ring(segment=2MiB)", -1},
		{"pipelined_ring(segment=8MiB)", "pipelined_ring(segment=2MiB)", 1},
		{"lr", "ring", -1},                     // SMPI's name of ring: the same place, then by name
		{"my_own", "hierarchical(group=4)", 1}, // unknown after known
		{"a_unknown", "b_unknown", -1},
		{"ring", "ring", 0},
	} {
		got := algos.CompareSimplicity("allreduce", tc.a, tc.b)
		if (got < 0) != (tc.want < 0) || (got > 0) != (tc.want > 0) {
			t.Errorf("CompareSimplicity(%q, %q) = %d, want sign %d", tc.a, tc.b, got, tc.want)
		}
		if back := algos.CompareSimplicity("allreduce", tc.b, tc.a); (back < 0) != (tc.want > 0) {
			t.Errorf("CompareSimplicity(%q, %q) = %d: not antisymmetric", tc.b, tc.a, back)
		}
	}
}

func TestCompetes(t *testing.T) {
	for _, tc := range []struct {
		coll, variant string
		want          bool
	}{
		{"allreduce", "ring", true},
		{"allreduce", "pipelined_ring(segment=2MiB)", true},
		{"allreduce", "auto", false},
		{"allreduce", "compressed_topk(ppm=1000)", false},
		{"allreduce", "compressed_randomk", false},
		{"allreduce", "someone_elses", true},
		{"no_such_collective", "ring", true},
	} {
		if got := algos.Competes(tc.coll, tc.variant); got != tc.want {
			t.Errorf("Competes(%q, %q) = %v, want %v", tc.coll, tc.variant, got, tc.want)
		}
	}
}

// Sorting variants by simplicity: the order in which ties are broken.
func ExampleCompareSimplicity() {
	v := []string{"pipelined_ring(segment=2MiB)", "recursive_doubling", "ring", "pipelined_ring(segment=512KiB)", "halving_doubling"}
	slices.SortFunc(v, func(a, b string) int { return algos.CompareSimplicity("allreduce", a, b) })
	fmt.Println(v)
	// Output:
	// [ring halving_doubling recursive_doubling pipelined_ring(segment=512KiB) pipelined_ring(segment=2MiB)]
}
