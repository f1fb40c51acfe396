package algos_test

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// An algorithm of one's own takes its scratch memory with Scratch and hands
// it back with Release once its requests are done: realnet then gives the
// same memory to the next call, where a fresh buffer would cost a page
// fault per page; the simulator, which keeps no pool, allocates as
// Alloc does. Here two ranks add their buffers by swapping them, three
// times.
func ExampleScratch() {
	swapSum := func(ctx context.Context, l algos.Link, buf device.Buffer) error {
		other := 1 - l.Rank()
		tmp := algos.Scratch(l, buf.Len()) // its bytes are unspecified: the receive overwrites them
		if err := algos.SendRecv(ctx, l, other, buf, other, tmp, 1); err != nil {
			return err // tmp may still be written by an abandoned receive: not released
		}
		if err := l.Reduce(buf, tmp, device.I32, device.Sum); err != nil {
			return err
		}
		algos.Release(l, tmp)
		return nil
	}
	_, err := sim.Run(sim.Config{World: 2, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}, HostData: true}, func(ctx context.Context, l algos.Link) error {
		buf := make(device.Host, 4)
		binary.LittleEndian.PutUint32(buf, uint32(l.Rank()+1))
		for call := range 3 {
			if err := swapSum(ctx, algos.Scoped(l, 0, uint64(call)), buf); err != nil {
				return err
			}
		}
		if l.Rank() == 0 {
			fmt.Println(binary.LittleEndian.Uint32(buf))
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 12
}
