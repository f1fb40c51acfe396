package algos_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

// Row "gather, scatter | binomial_tree (p = 2^k)": lg p α + ((p-1)/p)nβ,
// n the root's buffer; derived for every p as ceil(lg p)α + ((p-1)/p)nβ
// (see BinomialGather and BinomialScatter).
func rootedBinomialCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, _ := rootedABG(m)
	return rootedClg(p)*a + (p-1)/p*n*b
}

// rootedLinearCost is the derived cost of the linear (and nexar's flat)
// gather and scatter: the root's port carries p-1 blocks of n/p bytes one
// after another, (p-1)(α + (n/p)β).
func rootedLinearCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, _ := rootedABG(m)
	return (p - 1) * (a + n/p*b)
}

// rootedCostCases returns the table of coll's algorithms: the binomial
// tree on powers of two (the reference's row) and on other p (derived),
// and the linear and flat ones on both.
func rootedCostCases(coll string) []rootedCostCase {
	var cases []rootedCostCase
	for _, p := range []int{2, 3, 4, 5, 6, 7, 8, 12, 13, 16, 31, 33, 64} {
		for _, per := range []int{1, 256, 1 << 16} { // f32 elements per block
			n := 4 * p * per
			cases = append(cases,
				rootedCostCase{coll: coll, alg: "binomial_tree", p: p, n: n, want: rootedBinomialCost},
				rootedCostCase{coll: coll, alg: "linear", p: p, n: n, want: rootedLinearCost},
				rootedCostCase{coll: coll, alg: "flat", p: p, n: n, want: rootedLinearCost},
			)
		}
	}
	return cases
}

func TestGatherCost(t *testing.T) { checkRootedCosts(t, worked, rootedCostCases("gather")) }
