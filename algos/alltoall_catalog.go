package algos

import "context"

func init() {
	Register(&Collective{
		Name:      "alltoall",
		BusFactor: scatterBusFactor,
		// count is the send buffer, rounded down to p equal blocks, one
		// per destination; the receive buffer is the same size.
		Layout: func(count, p int) (int, int, int) {
			whole, _ := gatherLayout(count, p)
			return whole, whole, whole
		},
		Algorithms: []*Algorithm{
			{Name: "pairwise", SMPI: "ring", Summary: "in step s send to rank r+s and receive from rank r-s; p-1 steps, bandwidth-optimal",
				Run: func(ctx context.Context, l Link, c Call) error {
					return AlltoallPairwise(ctx, l, c.Send, c.Buf, c.DType)
				}},
			{Name: "bruck", SMPI: "bruck", Summary: "route blocks by the bits of their distance; ceil(lg p) rounds of about half the buffer",
				Run: func(ctx context.Context, l Link, c Call) error {
					return AlltoallBruck(ctx, l, c.Send, c.Buf, c.DType)
				}},
			{Name: "linear", SMPI: "basic_linear", Summary: "post every send and receive at once and let the network order them",
				Run: func(ctx context.Context, l Link, c Call) error {
					return AlltoallLinear(ctx, l, c.Send, c.Buf, c.DType)
				}},
		},
	})
}
