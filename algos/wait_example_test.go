package algos_test

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// A link whose Wait allocates nothing says so by being a FixedWaiter, and
// Send, Recv and SendRecv then wait through WaitOne and WaitTwo, which
// take their requests as values: a variadic Wait called through the Link
// interface puts its argument list on the heap. The simulator's links are
// FixedWaiters, and so is a Scoped link over one; a decorator of one's
// own keeps the saving by forwarding the two methods. Here two ranks swap
// eight bytes.
func ExampleFixedWaiter() {
	_, err := sim.Run(sim.Config{World: 2, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}}, func(ctx context.Context, l algos.Link) error {
		_, scoped := algos.Scoped(l, 0, 1).(algos.FixedWaiter)
		w, ok := l.(algos.FixedWaiter)
		if !ok {
			return fmt.Errorf("rank %d: the link is no FixedWaiter", l.Rank())
		}
		other := 1 - l.Rank()
		r := l.Irecv(other, 1, device.Phantom(8))
		s := l.Isend(other, 1, device.Phantom(8))
		err := w.WaitTwo(ctx, r, s) // what l.Wait(ctx, r, s) does
		if l.Rank() == 0 {
			fmt.Println(scoped, err)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// true <nil>
}
