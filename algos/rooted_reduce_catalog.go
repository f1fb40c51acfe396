package algos

import "context"

// The reduce collective. Call.Buf is every rank's input and the root's
// output (other ranks' buffers hold partial results afterwards); n (bytes)
// is its size, as in nccl-tests, and the bus factor is 1.
func init() {
	Register(&Collective{
		Name:      "reduce",
		BusFactor: func(int) float64 { return 1 },
		Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
		Reduces:   true,
		Rooted:    true,
		Algorithms: []*Algorithm{
			{Name: "binomial_tree", SMPI: "binomial", Summary: "binomial tree, nearest subtree first (MPICH's); lg p (α+nβ+nγ) at p = 2^k",
				Run: func(ctx context.Context, l Link, c Call) error {
					return BinomialReduce(ctx, l, c.Buf, c.DType, c.Op, c.Root)
				}},
			{Name: "binomial_tree_farthest", Summary: "binomial tree, farthest subtree first; lg p (α+nβ+nγ) at p = 2^k",
				Run: func(ctx context.Context, l Link, c Call) error {
					return BinomialFarthestReduce(ctx, l, c.Buf, c.DType, c.Op, c.Root)
				}},
			AutoAlgorithm("reduce", wholeSize),
		},
	})
}
