package algos

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/units"
)

// Competes reports whether the variant called variant ("ring",
// "pipelined_ring(segment=2MiB)") of collective may be called the best at
// a point: not "auto", which is a policy that runs one of the others, and
// not a lossy algorithm (Algorithm.Lossy), which computes something else.
// A name the catalogue does not know competes (a user's algorithm, a
// measured file's). Crossover maps, auto's slowdown, crossovers.csv and
// tuning tables all ask it, so that none of them names a winner another
// would refuse.
func Competes(collective, variant string) bool {
	base := VariantBase(variant)
	if base == "auto" {
		return false
	}
	a := lookupAlgorithm(collective, base)
	return a == nil || !a.Lossy()
}

// VariantBase is the algorithm of a variant name: "pipelined_ring" of
// "pipelined_ring(segment=2MiB)".
func VariantBase(variant string) string {
	if i := strings.IndexByte(variant, '('); i >= 0 {
		return variant[:i]
	}
	return variant
}

// CompareSimplicity orders two variant names of collective by the
// declared order of simplicity, the one rule by which a tie between equal
// times is broken everywhere a winner is named (crossover maps,
// crossovers.csv, tuning tables, auto's slowdown): the simpler variant
// wins. It returns a negative number when a is simpler than b.
//
// The order: first the algorithm that declares fewer parameters
// (Algorithm.Params: ring before pipelined_ring), then the one earlier in
// the catalogue (Collective.Algorithms, the order 'nexar-sim list'
// shows), then the variant that sets fewer parameters, then the smaller
// parameter values, taken in the order the name gives them. Names the
// catalogue does not know come after those it knows, then by name; the
// name itself decides only between variants no rule above tells apart.
func CompareSimplicity(collective, a, b string) int {
	if a == b {
		return 0
	}
	ka, kb := simplicityKey(collective, a), simplicityKey(collective, b)
	if c := cmp.Or(
		cmp.Compare(ka.unknown, kb.unknown),
		cmp.Compare(ka.declared, kb.declared),
		cmp.Compare(ka.index, kb.index),
		cmp.Compare(len(ka.values), len(kb.values)),
	); c != 0 {
		return c
	}
	for i := range ka.values {
		if c := compareParamValue(ka.values[i], kb.values[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

// simplicity is what CompareSimplicity reads from a variant name.
type simplicity struct {
	unknown  int // 1 when the catalogue does not know the algorithm
	declared int // parameters the algorithm declares
	index    int // its place in the catalogue
	values   []string
}

func simplicityKey(collective, variant string) simplicity {
	base := VariantBase(variant)
	k := simplicity{unknown: 1}
	if c, err := Lookup(collective); err == nil {
		for i, a := range c.Algorithms {
			if a.Name == base || a.SMPI == base || slices.Contains(a.Aliases, base) {
				k = simplicity{declared: len(a.Params), index: i}
				break
			}
		}
	}
	if rest, ok := strings.CutPrefix(variant, base+"("); ok {
		rest = strings.TrimSuffix(rest, ")")
		for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ';' }) {
			_, v, _ := strings.Cut(part, "=")
			k.values = append(k.values, strings.TrimSpace(v))
		}
	}
	return k
}

// compareParamValue compares two parameter values as numbers where both
// read as a size ("2MiB") or a whole number, else as text.
func compareParamValue(a, b string) int {
	na, errA := paramNumber(a)
	nb, errB := paramNumber(b)
	if errA == nil && errB == nil {
		return cmp.Compare(na, nb)
	}
	return cmp.Compare(a, b)
}

func paramNumber(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	return units.ParseBytes(s)
}

// lookupAlgorithm is the catalogue's algorithm of collective called name,
// or nil when either is unknown.
func lookupAlgorithm(collective, name string) *Algorithm {
	c, err := Lookup(collective)
	if err != nil {
		return nil
	}
	a, err := c.Algorithm(name)
	if err != nil {
		return nil
	}
	return a
}
