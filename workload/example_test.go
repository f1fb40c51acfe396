package workload_test

import (
	"fmt"
	"time"

	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/workload"
)

// ExampleSimulate runs one training step of an eight-layer model on 8
// simulated ranks, 2-way data, 2-way tensor and 2-way pipeline parallel
// (1F1B, 4 micro-batches), with 8 MiB gradient buckets reduced during the
// backward, and prints where the step's time went.
func ExampleSimulate() {
	var layers []workload.Layer
	for i := range 8 {
		layers = append(layers, workload.Layer{
			Name:          fmt.Sprint("block ", i),
			Params:        16 << 20, // 32 MiB of bf16 gradients, 16 MiB a TP rank
			Activation:    4 << 20,  // the TP allreduces' size, and twice the p2p message's
			Forward:       workload.Work{Time: 400 * time.Microsecond},
			TPCollectives: 2, // after attention and after the MLP
		})
	}
	plan, err := workload.NewPlan(workload.Spec{
		Layers:       layers,
		Layout:       workload.Layout{DP: 2, TP: 2, PP: 2},
		MicroBatches: 4,
		Schedule:     workload.OneFOneB,
		Bucket:       8 << 20,
		FirstBucket:  8 << 20,
		Overlap:      true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	network := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 50e9}
	res, _, err := workload.Simulate(plan, workload.SimConfig{Model: network})
	if err != nil {
		fmt.Println(err)
		return
	}
	ms := func(s float64) string { return fmt.Sprintf("%.3f ms", s*1e3) }
	fmt.Println("step:          ", ms(res.Step))
	fmt.Println("compute:       ", ms(res.Compute))
	fmt.Println("pipeline bubble", ms(res.Bubble))
	for _, e := range res.Exposed {
		fmt.Printf("exposed %-2s %-9s %s\n", e.Group, e.Collective, ms(e.Seconds))
	}
	fmt.Printf("utilisation:    %.0f%%\n", 100*res.Utilisation)
	// Output:
	// step:           20.158 ms
	// compute:        9.600 ms
	// pipeline bubble 4.137 ms
	// exposed tp allreduce 6.032 ms
	// exposed dp allreduce 0.389 ms
	// utilisation:    48%
}
