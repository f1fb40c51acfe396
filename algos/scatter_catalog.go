package algos

import "context"

// The scatter collective. Call.Send is the root's buffer of p blocks
// (count/p elements each; not used on other ranks, where it may be nil)
// and Call.Buf every rank's block, which receives block r on rank r. n
// (bytes) is the root's buffer, as in nccl-tests, and the bus factor is
// (p-1)/p: the root sends (p-1)/p of n.
func init() {
	Register(&Collective{
		Name:      "scatter",
		BusFactor: func(p int) float64 { return float64(p-1) / float64(p) },
		Layout: func(count, p int) (int, int, int) {
			block, full := rootedLayout(count, p)
			return full, block, full
		},
		Rooted: true,
		Algorithms: []*Algorithm{
			{Name: "binomial_tree", Summary: "subtrees scattered down a binomial tree; ceil(lg p)α + ((p-1)/p)nβ",
				Run: func(ctx context.Context, l Link, c Call) error {
					return BinomialScatter(ctx, l, c.Send, c.Buf, c.DType, c.Root)
				}},
			{Name: "linear", SMPI: "ompi_basic_linear", Summary: "Open MPI's: the root sends every rank its block, one send after the other; (p-1)(α+(n/p)β)",
				Run: func(ctx context.Context, l Link, c Call) error {
					return LinearScatter(ctx, l, c.Send, c.Buf, c.DType, c.Root)
				}},
			{Name: "flat", Summary: "nexar's scatter: the root posts every block's send at once; (p-1)(α+(n/p)β)",
				Run: func(ctx context.Context, l Link, c Call) error {
					return FlatScatter(ctx, l, c.Send, c.Buf, c.DType, c.Root)
				}},
		},
	})
}
