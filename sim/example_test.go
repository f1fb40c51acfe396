package sim_test

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// Simulate a ring allreduce of 8 MiB on 8 ranks with the parameters of the
// reference cost model's worked example, with phantom buffers.
func ExampleRun() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}
	res, err := sim.Run(sim.Config{World: 8, Model: model}, func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(8<<20), device.F32, device.Sum)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f us, %d messages\n", res.End.Seconds()*1e6, res.Messages)
	// Output: 1538.0064 us, 112 messages
}

// Reduce 8 MiB across 8 ranks in the network's switch (NVLink SHARP's
// allreduce) on the worked example's alpha-beta network with a switch
// that reduces at 400 GB/s: one operation, 2(α + nβ) + 7n/R.
func ExampleAlphaBeta_switch() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9, SwitchBandwidth: 400e9}
	res, err := sim.Run(sim.Config{World: 8, Model: model, HostData: true}, func(ctx context.Context, l algos.Link) error {
		sr, ok := l.(algos.SwitchReducer)
		if !ok || !sr.CanSwitchReduce([]int{0, 1, 2, 3, 4, 5, 6, 7}) {
			return algos.RingAllreduce(ctx, l, l.Alloc(8<<20), device.F32, device.Sum)
		}
		buf := l.Alloc(8 << 20)
		return l.Wait(ctx, sr.ISwitchReduce([]int{0, 1, 2, 3, 4, 5, 6, 7}, 0, buf, buf, device.F32, device.Sum))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f us, %d messages\n", res.End.Seconds()*1e6, res.Messages)
	// Output: 1498.9779 us, 0 messages
}
