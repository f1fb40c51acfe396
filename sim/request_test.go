package sim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestWaitRefusesForeignRequests checks that a rank's Wait refuses a
// request that its own link did not return (another rank's, or none of
// the simulator's), on the coroutine path, where requests carry their
// rank.
func TestWaitRefusesForeignRequests(t *testing.T) {
	for _, c := range []struct {
		name    string
		foreign func(stolen algos.Request) algos.Request
		want    string
	}{
		{"another rank's", func(stolen algos.Request) algos.Request { return stolen }, "this link did not return"},
		{"not the simulator's", func(algos.Request) algos.Request { return struct{}{} }, "this link did not return"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stolen algos.Request
			body := func(ctx context.Context, l algos.Link) error {
				buf := l.Alloc(8)
				if l.Rank() == 1 {
					stolen = l.Irecv(0, 7, buf)
					return l.Wait(ctx, stolen)
				}
				// Let rank 1 post its receive first.
				if err := l.(algos.Delayer).Delay(ctx, time.Microsecond); err != nil {
					return err
				}
				err := l.Wait(ctx, c.foreign(stolen))
				if werr := l.Wait(ctx, l.Isend(1, 7, buf)); werr != nil {
					return werr
				}
				return err
			}
			_, err := sim.Run(sim.Config{World: 2, Model: model}, body)
			var re *sim.RankErrors
			if !errors.As(err, &re) || len(*re) != 1 || (*re)[0].Rank != 0 || !strings.Contains((*re)[0].Err.Error(), c.want) {
				t.Fatalf("Run: %v, want rank 0 failing with %q", err, c.want)
			}
		})
	}
}
