package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestContextStopsRun cancels long runs part way, from their progress
// reports, on coroutines and replayed, while simulating and while
// recording: Run returns at once with the context's cause.
func TestContextStopsRun(t *testing.T) {
	ring := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
	}
	for _, tc := range []struct {
		name   string
		replay bool
		stop   func(sim.Progress) bool
	}{
		{"coroutines", false, func(p sim.Progress) bool { return p.Messages > 20000 }},
		{"replay", true, func(p sim.Progress) bool { return p.Messages > 20000 }},
		{"recording", true, func(p sim.Progress) bool { return p.Recorded > 0 && p.Recorded < 256 && p.Messages == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cause := errors.New("enough")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var last sim.Progress
			start := time.Now()
			res, err := sim.Run(sim.Config{World: 256, Model: worked, Replay: tc.replay, Context: ctx, Progress: func(p sim.Progress) {
				if p.Messages < last.Messages || p.Events < last.Events || p.Now < last.Now {
					t.Errorf("progress went back: %+v after %+v", p, last)
				}
				last = p
				if tc.stop(p) {
					cancel(cause)
				}
			}}, ring)
			if res != nil || !errors.Is(err, cause) {
				t.Fatalf("result %v, error %v; want none and the cause", res, err)
			}
			if last.Messages > 40000 {
				t.Errorf("ran on to %d messages after the cancellation", last.Messages)
			}
			t.Logf("%v after %v", err, time.Since(start))
		})
	}
}

// TestProgressReportsTheEnd checks the last report of a finished run: it
// has every message and event of the result.
func TestProgressReportsTheEnd(t *testing.T) {
	for _, replay := range []bool{false, true} {
		var last sim.Progress
		res, err := sim.Run(sim.Config{World: 64, Model: worked, Replay: replay, Progress: func(p sim.Progress) { last = p }},
			func(ctx context.Context, l algos.Link) error {
				return algos.HalvingDoublingAllreduce(ctx, l, l.Alloc(1<<16), device.F32, device.Sum)
			})
		if err != nil {
			t.Fatal(err)
		}
		if last.Messages != res.Messages || last.Events != res.Events || last.Now != res.End || last.Recorded != 64 {
			t.Errorf("replay %v: last report %+v, result %d messages, %d events, end %v", replay, last, res.Messages, res.Events, res.End)
		}
	}
}

// A run stopped part way, whose processes were spawned one per operation
// (as algos' streams spawn them) and return nil when stopped, tears down
// cleanly: the processes that returned and were forgotten, and those
// stopped, do not upset the walk over the rank's processes.
func TestContextStopsSpawningRun(t *testing.T) {
	cause := errors.New("enough")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	body := func(ctx context.Context, l algos.Link) error {
		sp := l.(algos.Spawner)
		var reqs []algos.Request
		for range 200 {
			reqs = append(reqs, sp.Spawn(func(ctx context.Context) error {
				_ = algos.RingAllreduce(ctx, l, l.Alloc(1<<16), device.F32, device.Sum)
				return nil // whatever happened
			}))
			if len(reqs) > 3 {
				if err := l.Wait(ctx, reqs[0]); err != nil {
					return err
				}
				reqs = reqs[1:]
			}
		}
		return l.Wait(ctx, reqs...)
	}
	res, err := sim.Run(sim.Config{World: 64, Model: worked, Context: ctx, Progress: func(p sim.Progress) {
		if p.Messages > 30000 {
			cancel(cause)
		}
	}}, body)
	if res != nil || !errors.Is(err, cause) {
		t.Fatalf("result %v, error %v; want none and the cause", res, err)
	}
}

// TestContextStopsBeforeReplay cancels a run as its last rank is
// recorded: the replay stops before its first event (building the engine
// of millions of ranks takes a second or more), even where the whole run
// is fewer events than the engine runs between two looks at the context.
func TestContextStopsBeforeReplay(t *testing.T) {
	hd := func(ctx context.Context, l algos.Link) error {
		return algos.HalvingDoublingAllreduce(ctx, l, l.Alloc(1<<10), device.F32, device.Sum)
	}
	cause := errors.New("enough")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	const world = 64
	res, err := sim.Run(sim.Config{World: world, Model: worked, Replay: true, Context: ctx, Progress: func(p sim.Progress) {
		if p.Recorded == world && p.Messages == 0 {
			cancel(cause)
		}
	}}, hd)
	if res != nil || !errors.Is(err, cause) {
		t.Fatalf("result %v, error %v; want none and the cause", res, err)
	}
}
