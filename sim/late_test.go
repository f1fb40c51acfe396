package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestIsendAfter: a late send's message leaves d after it is posted, the
// sender going on at once; with Replay the body runs on coroutines and
// gives the same times.
func TestIsendAfter(t *testing.T) {
	ab := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e9}
	for _, replay := range []bool{false, true} {
		var sentAt time.Duration
		res, err := sim.Run(sim.Config{World: 2, Model: ab, Replay: replay, HostData: !replay}, func(ctx context.Context, l algos.Link) error {
			buf := l.Alloc(1000)
			if l.Rank() == 0 {
				req := algos.IsendAfter(l, 3*time.Microsecond, 1, 7, buf)
				if !replay {
					sentAt = l.Now()
				}
				return l.Wait(ctx, req)
			}
			return algos.Recv(ctx, l, 0, 7, buf)
		})
		if err != nil {
			t.Fatal(err)
		}
		want := 3*sim.Microsecond + ab.MessageTime(1000)
		if res.Finish[0] != want || res.Finish[1] != want {
			t.Errorf("replay %v: finish %v, want %v for both", replay, res.Finish, want)
		}
		if sentAt != 0 {
			t.Errorf("the sender went on at %v, want 0", sentAt)
		}
	}
	// A late send to a peer outside the world fails at once.
	_, err := sim.Run(sim.Config{World: 1, Model: ab}, func(ctx context.Context, l algos.Link) error {
		return l.Wait(ctx, algos.IsendAfter(l, time.Microsecond, 5, 0, device.Phantom(1)))
	})
	if err == nil {
		t.Error("a late send to rank 5 of 1 did not fail")
	}
}
