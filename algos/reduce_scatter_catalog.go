package algos

import "context"

// gatherLayout is the layout of collectives whose count, as nccl-tests
// counts it, is the whole (gathered or reduced) buffer of p equal blocks:
// count is rounded down to a multiple of p.
func gatherLayout(count, p int) (whole, block int) {
	used := count - count%p
	return used, used / p
}

// scatterBusFactor is (p-1)/p, nccl-tests' bus factor for allgather,
// reduce_scatter and alltoall: the fraction of the data that must cross a
// rank's link.
func scatterBusFactor(p int) float64 { return float64(p-1) / float64(p) }

func init() {
	Register(&Collective{
		Name:      "reduce_scatter",
		BusFactor: scatterBusFactor,
		// Each rank sends count (rounded down to a multiple of p)
		// elements and receives its block of count/p.
		Layout: func(count, p int) (int, int, int) {
			whole, block := gatherLayout(count, p)
			return whole, block, whole
		},
		Reduces: true,
		Algorithms: []*Algorithm{
			{Name: "ring", SMPI: "ompi_ring", Summary: "partials travel around a ring, each rank adding its block; p-1 steps, bandwidth-optimal",
				Run: func(ctx context.Context, l Link, c Call) error {
					return ReduceScatterRing(ctx, l, c.Send, c.Buf, c.DType, c.Op)
				}},
			{Name: "recursive_halving", SMPI: "ompi_basic_recursivehalving", Summary: "Open MPI's and MPICH's: exchange half the remaining blocks with partners at halving distances; lg p rounds, extra ranks fold in off powers of two",
				Run: func(ctx context.Context, l Link, c Call) error {
					return ReduceScatterRecursiveHalving(ctx, l, c.Send, c.Buf, c.DType, c.Op)
				}},
			{Name: "dissemination", Summary: "recursive halving in dissemination form (transposed Bruck): ceil(lg p) rounds, any p, no fold",
				Run: func(ctx context.Context, l Link, c Call) error {
					return ReduceScatterDissemination(ctx, l, c.Send, c.Buf, c.DType, c.Op)
				}},
			{Name: "pairwise", SMPI: "mpich_pair", Summary: "in step s send block r+s to its owner, reduce block r from rank r-s; p-1 steps",
				Run: func(ctx context.Context, l Link, c Call) error {
					return ReduceScatterPairwise(ctx, l, c.Send, c.Buf, c.DType, c.Op)
				}},
			AutoAlgorithm("reduce_scatter", wholeSize),
		},
	})
}
