package staging_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/staging"
)

// An allreduce of GPU buffers: four ranks of a simulated world share one
// GPU, each through its own staging Link (its own streams and pinned
// memory); the algorithm is the same ring that runs on host buffers. On a
// machine without a GPU it says so and stops.
func ExampleNewLink() {
	dev, err := cuda.Open(0)
	if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
		fmt.Println("no GPU:", err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()

	const world, count = 4, 1 << 20
	model := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 25e9}
	_, err = sim.Run(sim.Config{World: world, Model: model, HostData: true}, func(ctx context.Context, inner algos.Link) error {
		l, err := staging.NewLink(inner, dev)
		if err != nil {
			return err
		}
		defer l.Close()
		buf := l.Alloc(4 * count) // device memory
		input := algotest.Input(count, device.F32, device.Sum, l.Rank(), world, 1)
		if err := dev.CopyFromHost(buf, input); err != nil {
			return err
		}
		if err := algos.RingAllreduce(ctx, l, buf, device.F32, device.Sum); err != nil {
			return err
		}
		out := make([]byte, buf.Len())
		if err := dev.CopyToHost(out, buf); err != nil {
			return err
		}
		return algotest.Compare(out, algotest.Reduced(count, device.F32, device.Sum, world, 1), device.F32)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("allreduce on", dev)
}
