package sim_test

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/mesh"
	"github.com/nexar-go/nexar-go/sim"
)

// Rank 2 of 4 crashes 100 us into a ring allreduce of 1 MiB; with nexar's
// heartbeats (every 1 s, dead after 5 s) the survivors notice, agree,
// rebuild and run it again on 3 ranks.
func ExampleRunShrink() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}
	body := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
	}
	got, err := sim.RunShrink(sim.Config{World: 4, Model: model}, 2, 100*sim.Microsecond, sim.Recovery{}, body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)
	// Output: rank 2 of 4 failed at 100us; detected after 4.9999s, agreed in 15.00128us, rebuilt in 10us (4.99992500128s from the failure to the rebuilt world of 3); the work ran again on 3 ranks in 159.8112us, 5.00002500128s lost
}

// The same message on 8 ranks joined as a hypercube: from rank 0 to rank
// 7 it crosses three links, store and forward, h(α + nβ).
func ExampleRelayed() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9}
	cube := sim.Relayed{Model: model, Mesh: mesh.Spec{Kind: mesh.Hypercube}}
	for _, m := range []sim.Model{model, cube} {
		res, err := sim.Run(sim.Config{World: 8, Model: m}, func(ctx context.Context, l algos.Link) error {
			switch l.Rank() {
			case 0:
				return algos.Send(ctx, l, 7, 1, l.Alloc(1<<20))
			case 7:
				return algos.Recv(ctx, l, 0, 1, l.Alloc(1<<20))
			}
			return nil
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.End)
	}
	// Output:
	// 88.88608us
	// 266.65824us
}
