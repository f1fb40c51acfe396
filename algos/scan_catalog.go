package algos

import "context"

func init() {
	Register(&Collective{
		Name: "scan",
		// The least a rank must receive is the whole buffer once (as for
		// reduce), so the bus factor is 1; recursive doubling moves it
		// ceil(lg p) times, which is why its busbw falls with p.
		BusFactor: func(int) float64 { return 1 },
		// In place over count elements.
		Layout:  func(count, _ int) (int, int, int) { return 0, count, count },
		Reduces: true,
		Algorithms: []*Algorithm{
			{Name: "recursive_doubling",
				Summary: "Hillis-Steele: add the partial from rank r-2^k in round k; ceil(lg p) rounds; exclusive=1 for an exclusive scan",
				Params:  map[string]int{"exclusive": 0},
				Run: func(ctx context.Context, l Link, c Call) error {
					return ScanRecursiveDoubling(ctx, l, c.Buf, c.DType, c.Op, c.Param("exclusive", 0) != 0)
				}},
		},
	})
}
