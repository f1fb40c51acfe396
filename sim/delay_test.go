package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestDelayExact checks that Delay holds the process for exactly d: its
// nanoseconds become the clock's picoseconds without rounding.
func TestDelayExact(t *testing.T) {
	for _, d := range []time.Duration{1, 999, 1234567, 3*time.Second + 7} {
		res, err := sim.Run(sim.Config{World: 2, Model: worked}, func(ctx context.Context, l algos.Link) error {
			if err := algos.Delay(ctx, l, d); err != nil {
				return err
			}
			return algos.Delay(ctx, l, time.Duration(l.Rank()))
		})
		if err != nil {
			t.Fatal(err)
		}
		for r, f := range res.Finish {
			if want := sim.Time(d+time.Duration(r)) * sim.Nanosecond; f != want {
				t.Errorf("Delay(%v) then Delay(%dns): rank %d finished at %v (%d ps), want %d ps", d, r, r, f, int64(f), int64(want))
			}
		}
	}
}

// TestDelayHoldsOnlyTheProcess checks that a delay holds neither the
// rank's compute nor its ports: a spawned process reduces and sends
// while the body is held, and a message to the rank arrives meanwhile.
// On worked: a reduction of 100000 bytes takes 4 us (γ = 1/25 GB/s), a
// message of 12500 bytes α + nβ = 5 us + 1 us.
func TestDelayHoldsOnlyTheProcess(t *testing.T) {
	const d = 3 * time.Microsecond
	var log logObserver
	res, err := sim.Run(sim.Config{World: 2, Model: worked, Observer: &log}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 1 {
			if err := algos.Send(ctx, l, 0, 1, l.Alloc(12500)); err != nil {
				return err
			}
			return algos.Recv(ctx, l, 0, 2, l.Alloc(12500))
		}
		reduce := l.(algos.Spawner).Spawn(func(ctx context.Context) error {
			return l.Reduce(l.Alloc(100000), l.Alloc(100000), device.F32, device.Sum)
		})
		send := l.(algos.Spawner).Spawn(func(ctx context.Context) error {
			return algos.Send(ctx, l, 1, 2, l.Alloc(12500))
		})
		recv := l.Irecv(1, 1, l.Alloc(12500))
		if err := algos.Delay(ctx, l, d); err != nil {
			return err
		}
		if got := l.Now(); got != d {
			return fmt.Errorf("after the delay the clock reads %v, want %v", got, d)
		}
		return l.Wait(ctx, reduce, send, recv)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Both messages take 6 us from 0 (each holds one egress and the
	// other's ingress); the reduction ends at 4 us; the delay at 3 us.
	if want := 6 * sim.Microsecond; res.Finish[0] != want || res.Finish[1] != want {
		t.Errorf("finish %v, want %v on both ranks", res.Finish, want)
	}
	if !strings.Contains(log.String(), "span 0 delay 0B 0-3000000\n") {
		t.Errorf("no delay span [0, 3us) on rank 0 in:\n%s", log.String())
	}
}

// TestDelayContext checks that a delay on a context that is done returns
// its error at once.
func TestDelayContext(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 1, Model: worked}, func(ctx context.Context, l algos.Link) error {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return algos.Delay(ctx, l, time.Microsecond)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the context's error", err)
	}
}

// TestReplayDelay pins a replay of bodies that delay to the coroutines'
// run, event for event, on every pinned model: delays of each rank's own
// length between the steps of a ring allreduce, and a delay that ends at
// the instant a message does.
func TestReplayDelay(t *testing.T) {
	body := func(ctx context.Context, l algos.Link) error {
		r := l.Rank()
		if err := algos.Delay(ctx, l, time.Duration(r*1700+1)); err != nil {
			return err
		}
		if err := algos.RingAllreduce(ctx, l, l.Alloc(4096), device.F32, device.Sum); err != nil {
			return err
		}
		req := l.Isend((r+1)%l.Size(), 3, l.Alloc(1000))
		rq := l.Irecv((r+l.Size()-1)%l.Size(), 3, l.Alloc(1000))
		if err := algos.Delay(ctx, l, 5*time.Microsecond); err != nil {
			return err
		}
		if err := l.Wait(ctx, req, rq); err != nil {
			return err
		}
		return algos.Delay(ctx, l, time.Duration(r))
	}
	for _, m := range goldenModels {
		for _, p := range []int{1, 3, 8} {
			compareReplay(t, fmt.Sprintf("%s p=%d", m.name, p), m.model, p, body, true)
		}
	}
}
