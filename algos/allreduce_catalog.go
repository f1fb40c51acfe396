package algos

import "context"

func init() {
	Register(&Collective{
		Name:      "allreduce",
		BusFactor: func(p int) float64 { return 2 * float64(p-1) / float64(p) },
		Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
		Reduces:   true,
		Algorithms: []*Algorithm{
			{Name: "ring", Summary: "reduce-scatter then allgather around a ring; bandwidth-optimal",
				Run: func(ctx context.Context, l Link, c Call) error {
					return RingAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
		},
	})
}
