package algos

import "context"

func init() {
	Register(&Collective{
		Name:      "allgather",
		BusFactor: scatterBusFactor,
		// Each rank sends its block of count/p elements (count rounded
		// down to a multiple of p) and receives all count.
		Layout: func(count, p int) (int, int, int) {
			whole, block := gatherLayout(count, p)
			return block, whole, whole
		},
		Algorithms: []*Algorithm{
			{Name: "ring", SMPI: "NTSLR", Summary: "blocks travel around a ring; p-1 steps, bandwidth-optimal",
				Run: func(ctx context.Context, l Link, c Call) error {
					return AllgatherRing(ctx, l, c.Send, c.Buf, c.DType)
				}},
			{Name: "recursive_doubling", SMPI: "rdb", Summary: "MPICH's: exchange everything gathered with partners at doubling distances; lg p rounds, forwarding inside groups off powers of two",
				Run: func(ctx context.Context, l Link, c Call) error {
					return AllgatherRecursiveDoubling(ctx, l, c.Send, c.Buf, c.DType)
				}},
			{Name: "bruck", SMPI: "bruck", Summary: "send what you have to rank r-d at doubling distances d; ceil(lg p) rounds, any p",
				Run: func(ctx context.Context, l Link, c Call) error {
					return AllgatherBruck(ctx, l, c.Send, c.Buf, c.DType)
				}},
			AutoAlgorithm("allgather", wholeSize),
		},
	})
}
