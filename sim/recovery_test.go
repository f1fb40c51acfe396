package sim_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// ringSum is a body that allreduces count f32 elements by the ring, rank r
// contributing r+1+i at element i, and checks the sum of the world it runs
// on: the survivors' result after a shrink.
func ringSum(count int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		buf := l.Alloc(4 * count)
		b, _ := device.HostBytes(buf)
		for i := range count {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(l.Rank()+1+i)))
		}
		if err := algos.RingAllreduce(ctx, l, buf, device.F32, device.Sum); err != nil {
			return err
		}
		p := l.Size()
		for i := range count {
			got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			if want := float32(p*(p+1)/2 + p*i); got != want {
				return fmt.Errorf("rank %d of %d, element %d: %v, want %v", l.Rank(), p, i, got, want)
			}
		}
		return nil
	}
}

// TestRunShrink: 4 ranks, rank 2 killed during a ring allreduce; the
// survivors detect it by heartbeats, agree, rebuild and run it again at 3
// ranks, correctly, and every time is what the policy and alpha-beta's
// closed forms say.
func TestRunShrink(t *testing.T) {
	ab := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e9} // no reduction cost
	const count = 3000                                                // 12000 bytes, 4000 per block at 3 ranks
	cfg := sim.Config{World: 4, Model: ab, HostData: true}
	whole, err := sim.Run(cfg, ringSum(count))
	if err != nil {
		t.Fatal(err)
	}
	at := whole.End / 2 // mid-run
	rec := sim.Recovery{Heartbeat: 100 * sim.Millisecond, Timeout: 500 * sim.Millisecond, Rebuild: sim.Millisecond}
	got, err := sim.RunShrink(cfg, 2, at, rec, ringSum(count))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Hit || got.Failed != 2 || got.World != 4 || got.FailedAt != at {
		t.Fatalf("hit %v failed %d world %d at %v; want a hit on rank 2 of 4 at %v", got.Hit, got.Failed, got.World, got.FailedAt, at)
	}
	// The last heartbeat left at 0 (at is microseconds), so the peers
	// give up at the timeout.
	if got.Detected != rec.Timeout {
		t.Errorf("detected at %v, want %v", got.Detected, rec.Timeout)
	}
	// Agreement: recursive doubling of 4 bytes on 3 ranks: rank 2 folds
	// into rank 0, ranks 0 and 1 exchange, rank 0 sends back: 3(α + 4β).
	alpha, beta := 5*sim.Microsecond, sim.TransferTime(4, 1e9)
	if want := got.Detected + 3*(alpha+beta); got.Agreed != want {
		t.Errorf("agreed at %v, want detection + 3(α + 4β) = %v", got.Agreed, want)
	}
	// Rebuild: a dissemination barrier on 3 ranks, ⌈lg 3⌉ = 2 rounds of
	// empty messages, then the fixed rebuild time.
	if want := got.Agreed + 2*alpha + rec.Rebuild; got.Rebuilt != want {
		t.Errorf("rebuilt at %v, want agreement + 2α + %v = %v", got.Rebuilt, rec.Rebuild, want)
	}
	// The work again at 3 ranks: the ring's 2(p-1)(α + (n/p)β).
	if len(got.Result.Finish) != 3 {
		t.Fatalf("ran again on %d ranks, want 3", len(got.Result.Finish))
	}
	ring := 4 * (alpha + sim.TransferTime(4*count/3, 1e9))
	if got.Result.End != ring || got.End != got.Rebuilt+ring {
		t.Errorf("the run at 3 ranks took %v (ends at %v), want 2(p-1)(α+(n/p)β) = %v", got.Result.End, got.End, ring)
	}
	if got.Lost() != got.Rebuilt || got.Recovering() != got.Rebuilt-at {
		t.Errorf("lost %v, recovering %v", got.Lost(), got.Recovering())
	}
}

// TestRunShrinkDetection checks detection against the heartbeat grid and
// nexar's defaults (1 s, 5 s) for the zero Recovery.
func TestRunShrinkDetection(t *testing.T) {
	for _, c := range []struct {
		rec      sim.Recovery
		at, want sim.Time
	}{
		{sim.Recovery{}, 0, 5 * sim.Second},
		{sim.Recovery{}, 999 * sim.Millisecond, 5 * sim.Second},
		{sim.Recovery{}, sim.Second, 6 * sim.Second},
		{sim.Recovery{}, 2500 * sim.Millisecond, 7 * sim.Second},
		{sim.Recovery{Heartbeat: 10 * sim.Millisecond, Timeout: 30 * sim.Millisecond}, 25 * sim.Millisecond, 50 * sim.Millisecond},
	} {
		if got := c.rec.Detection(c.at); got != c.want {
			t.Errorf("%v: failure at %v detected at %v, want %v", c.rec, c.at, got, c.want)
		}
		// Detection takes between timeout - heartbeat and timeout.
		if d := c.rec.Detection(c.at) - c.at; c.rec.Heartbeat == 0 && (d <= 4*sim.Second || d > 5*sim.Second) {
			t.Errorf("default detection %v after the failure, want in (4s, 5s]", d)
		}
	}
}

// TestRunShrinkMiss: a failure after the run leaves its result at the old
// world, and the recovery is still reported.
func TestRunShrinkMiss(t *testing.T) {
	cfg := sim.Config{World: 4, Model: worked, HostData: true}
	got, err := sim.RunShrink(cfg, 1, sim.Second, sim.Recovery{}, ringSum(100))
	if err != nil {
		t.Fatal(err)
	}
	if got.Hit || len(got.Result.Finish) != 4 || got.End != got.Result.End || got.Lost() != 0 {
		t.Fatalf("hit %v on %d ranks, end %v of %v, lost %v: want the run at 4 ranks", got.Hit, len(got.Result.Finish), got.End, got.Result.End, got.Lost())
	}
	if got.Detected != 6*sim.Second || got.Rebuilt <= got.Agreed || got.Agreed <= got.Detected {
		t.Fatalf("detected %v, agreed %v, rebuilt %v", got.Detected, got.Agreed, got.Rebuilt)
	}
}

func TestRunShrinkBadArguments(t *testing.T) {
	body := ringSum(4)
	for _, c := range []struct {
		world, rank int
		at          sim.Time
		rec         sim.Recovery
	}{
		{1, 0, 0, sim.Recovery{}},
		{4, 4, 0, sim.Recovery{}},
		{4, -1, 0, sim.Recovery{}},
		{4, 1, -1, sim.Recovery{}},
		{4, 1, 0, sim.Recovery{Heartbeat: sim.Second, Timeout: sim.Millisecond}},
		{4, 1, 0, sim.Recovery{Rebuild: -1}},
	} {
		if _, err := sim.RunShrink(sim.Config{World: c.world, Model: worked, HostData: true}, c.rank, c.at, c.rec, body); err == nil {
			t.Errorf("world %d, rank %d at %v, %+v: no error", c.world, c.rank, c.at, c.rec)
		}
	}
}
