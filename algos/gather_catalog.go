package algos

import "context"

// rootedLayout is the layout of gather and scatter: n (bytes) is the
// root's buffer of p blocks, as in nccl-tests, so count is rounded down to
// a multiple of p and each rank's block is count/p elements.
func rootedLayout(count, p int) (block, full int) {
	full = count - count%p
	return full / p, full
}

// The gather collective. Call.Send is every rank's block (count/p
// elements) and Call.Buf the root's buffer of p blocks, rank r's at block
// r; Buf is not used on other ranks and may be nil. The bus factor is
// (p-1)/p, as for allgather: the root receives (p-1)/p of n.
func init() {
	Register(&Collective{
		Name:      "gather",
		BusFactor: func(p int) float64 { return float64(p-1) / float64(p) },
		Layout: func(count, p int) (int, int, int) {
			block, full := rootedLayout(count, p)
			return block, full, full
		},
		Rooted: true,
		Algorithms: []*Algorithm{
			{Name: "binomial_tree", Summary: "subtrees gathered up a binomial tree; ceil(lg p)α + ((p-1)/p)nβ",
				Run: func(ctx context.Context, l Link, c Call) error {
					return BinomialGather(ctx, l, c.Send, c.Buf, c.DType, c.Root)
				}},
			{Name: "linear", SMPI: "ompi_basic_linear", Summary: "Open MPI's: every rank sends to the root, which receives in rank order; (p-1)(α+(n/p)β)",
				Run: func(ctx context.Context, l Link, c Call) error {
					return LinearGather(ctx, l, c.Send, c.Buf, c.DType, c.Root)
				}},
			{Name: "flat", Summary: "nexar's gather: every rank sends to the root, all receives posted at once; (p-1)(α+(n/p)β)",
				Run: func(ctx context.Context, l Link, c Call) error {
					return FlatGather(ctx, l, c.Send, c.Buf, c.DType, c.Root)
				}},
		},
	})
}
