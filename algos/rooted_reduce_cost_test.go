package algos_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

// Row "reduce | binomial_tree (p = 2^k)": lg p (α + nβ + nγ).
func reduceBinomialCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, g := rootedABG(m)
	return rootedLg(p) * (a + n*b + n*g)
}

func TestRootedReduceCost(t *testing.T) {
	var cases []rootedCostCase
	for _, p := range []int{2, 4, 8, 16, 32, 64} {
		for _, n := range []int{4, 4096, 1 << 20} {
			cases = append(cases, rootedCostCase{coll: "reduce", alg: "binomial_tree", p: p, n: n, want: reduceBinomialCost},
				rootedCostCase{coll: "reduce", alg: "binomial_tree_farthest", p: p, n: n, want: reduceBinomialCost})
		}
	}
	checkRootedCosts(t, worked, cases)
}

// TestRootedReduceCostFreeReduction: with reduction free (γ = 0) the
// reduce is the binomial broadcast run backwards, ceil(lg p)(α + nβ), for
// every p: the root's port takes ceil(lg p) messages one after another.
func TestRootedReduceCostFreeReduction(t *testing.T) {
	free := sim.AlphaBeta{Latency: worked.Latency, Bandwidth: worked.Bandwidth}
	var cases []rootedCostCase
	for _, p := range []int{2, 3, 5, 6, 7, 12, 13, 33} {
		for _, n := range []int{4, 4096, 1 << 20} {
			cases = append(cases, rootedCostCase{coll: "reduce", alg: "binomial_tree", p: p, n: n, want: bcastBinomialCost},
				rootedCostCase{coll: "reduce", alg: "binomial_tree_farthest", p: p, n: n, want: bcastBinomialCost})
		}
	}
	checkRootedCosts(t, free, cases)
}

// TestRootedReduceCostBounds: for p not a power of two, BinomialReduce's
// doc bounds its time by ceil(lg p)(α + nβ) + nγ below and
// ceil(lg p)(α + nβ + nγ) above, whatever the root and whichever of α, nβ
// and nγ dominates.
func TestRootedReduceCostBounds(t *testing.T) {
	models := []sim.AlphaBeta{
		worked,
		{Latency: worked.Latency, Bandwidth: 12.5e9, ReduceBandwidth: 1e9},        // slow reduction
		{Latency: 50 * sim.Microsecond, Bandwidth: 100e9, ReduceBandwidth: 200e9}, // latency-bound
	}
	for _, m := range models {
		a, b, g := rootedABG(m)
		for _, p := range []int{3, 5, 6, 7, 11, 12, 13, 33} {
			for _, n := range []int{4, 4096, 1 << 20} {
				fp, fn := float64(p), float64(n)
				lo := rootedClg(fp)*(a+fn*b) + fn*g
				hi := rootedClg(fp) * (a + fn*b + fn*g)
				for _, root := range []int{0, 1, p / 2, p - 1} {
					got := rootedTime(t, m, "reduce", "binomial_tree", p, n/4, root, nil)
					if got < lo*(1-1e-9) || got > hi*(1+1e-9) {
						t.Errorf("model %+v, p=%d n=%d root=%d: %.9g s outside [%.9g, %.9g]", m, p, n, root, got, lo, hi)
					}
				}
			}
		}
	}
}
