package algos

import "context"

func init() {
	Register(&Collective{
		Name: "barrier",
		// A barrier moves no data, so it has no bus bandwidth: its factor
		// is 0, and only its time means anything.
		BusFactor: func(int) float64 { return 0 },
		// Whatever count is asked for, a barrier uses no buffer.
		Layout: func(int, int) (int, int, int) { return 0, 0, 0 },
		Algorithms: []*Algorithm{
			{Name: "dissemination", SMPI: "ompi_bruck", Summary: "in round k signal rank r+2^k and wait for rank r-2^k; ceil(lg p) latencies",
				Run: func(ctx context.Context, l Link, _ Call) error { return BarrierDissemination(ctx, l) }},
			{Name: "two_phase", SMPI: "ompi_basic_linear", Summary: "everyone signals rank 0, which then releases everyone; 2(p-1) latencies (nexar up to 4 ranks)",
				Run: func(ctx context.Context, l Link, _ Call) error { return BarrierTwoPhase(ctx, l) }},
		},
	})
}
