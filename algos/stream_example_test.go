package algos_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// ExampleStreams overlaps gradient allreduces with backward compute, as
// PyTorch's DistributedDataParallel does, on four simulated ranks: the
// compute stream runs each layer's backward and records an event when
// its gradients are ready; the communication stream waits for the event
// and allreduces them while the next layer computes; the optimizer waits
// for the last allreduce. The same program runs on realnet, with each
// stream on a goroutine.
func ExampleStreams() {
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9}
	step := func(overlap bool) time.Duration {
		res, err := sim.Run(sim.Config{World: 4, Model: model}, func(ctx context.Context, l algos.Link) error {
			c, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
			if err != nil {
				return err
			}
			ss := algos.NewStreams(l)
			compute, comm := ss.NewStream("compute"), ss.NewStream("dp")
			if !overlap {
				comm = compute // the allreduces wait for the compute, and it for them
			}
			for layer := 3; layer >= 0; layer-- {
				var ready algos.Event
				compute.Compute(ctx, time.Millisecond, fmt.Sprint("backward ", layer))
				compute.Record(&ready)
				comm.WaitEvent(&ready)
				comm.AllReduce(ctx, c, l.Alloc(4<<20), device.F32, device.Sum, fmt.Sprint("grads ", layer))
			}
			var reduced algos.Event
			comm.Record(&reduced)
			compute.WaitEvent(&reduced)
			compute.Compute(ctx, 100*time.Microsecond, "optimizer")
			return ss.Synchronize(ctx)
		})
		if err != nil {
			panic(err)
		}
		return res.End.Duration()
	}
	// Each 4 MiB ring allreduce takes 6α + 2(3/4)nβ = 533.3 µs, less than
	// a layer's backward: with overlap only the last one is exposed.
	fmt.Println("no overlap:", step(false))
	fmt.Println("overlap:   ", step(true))
	// Output:
	// no overlap: 6.233265ms
	// overlap:    4.633316ms
}
