package realnet

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

var soakMessages = flag.Int("soak", 20000, "messages TestSoak sends (the documented soak: 1000000)")

// TestSoak: two ranks exchange many small messages, half of them
// unexpected (their receives are posted only after they have all
// arrived), through a budget they fill; the heap and the goroutines stay
// within a bound throughout, and every message arrives intact, in order.
//
//	go test ./realnet -run TestSoak -soak 1000000 -v
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	checkGoroutines(t)
	for _, path := range []string{"quic", "eager"} {
		t.Run(path, func(t *testing.T) {
			cfg := Config{MaxUnexpected: 1 << 20}
			if path == "eager" {
				cfg.Thresholds.Eager = 1 << 10
			}
			soak(t, cfg)
		})
	}
}

func soak(t *testing.T, cfg Config) {
	budget := cfg.MaxUnexpected
	const batch = 1000 // half expected (tag 1), half unexpected (tag 2)
	links := newWorld(t, 2, cfg)
	defer closeWorld(t, links)
	batches := max(*soakMessages/batch, 1)
	baseHeap, baseG := heapInUse(), runtime.NumGoroutine()
	var maxHeap int64
	maxG := 0
	sample := func() {
		maxHeap = max(maxHeap, heapInUse()-baseHeap)
		maxG = max(maxG, runtime.NumGoroutine()-baseG)
	}
	start := time.Now()
	errs := run(links, func(ctx context.Context, l *Link) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		defer cancel()
		marker := make(device.Host, 1)
		bufs := make([]device.Host, batch)
		for i := range bufs {
			bufs[i] = make(device.Host, 8)
		}
		for b := range batches {
			if l.Rank() == 1 {
				if err := l.Wait(ctx, l.Irecv(0, 3, marker)); err != nil {
					return err
				}
				reqs := make([]algos.Request, 0, batch+1)
				for i := range batch {
					binary.LittleEndian.PutUint64(bufs[i], uint64(b*batch+i))
					reqs = append(reqs, l.Isend(0, algos.Tag(1+i%2), bufs[i]))
				}
				// After every message of the batch: they have all arrived
				// when it does.
				reqs = append(reqs, l.Isend(0, 4, marker))
				if err := l.Wait(ctx, reqs...); err != nil {
					return err
				}
				continue
			}
			reqs := make([]algos.Request, 0, batch)
			for i := 0; i < batch; i += 2 {
				reqs = append(reqs, l.Irecv(1, 1, bufs[i]))
			}
			if err := l.Wait(ctx, l.Isend(1, 3, marker)); err != nil {
				return err
			}
			if err := l.Wait(ctx, l.Irecv(1, 4, marker)); err != nil {
				return err
			}
			for i := 1; i < batch; i += 2 {
				reqs = append(reqs, l.Irecv(1, 2, bufs[i]))
			}
			if err := l.Wait(ctx, reqs...); err != nil {
				return err
			}
			for i, buf := range bufs {
				if got, want := binary.LittleEndian.Uint64(buf), uint64(b*batch+i); got != want {
					return fmt.Errorf("batch %d: message %d carries %d", b, want, got)
				}
			}
			if b%max(batches/20, 1) == 0 {
				sample()
			}
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	sample()
	el := time.Since(start)
	t.Logf("%d messages (%d unexpected) in %v (%.1f us each); heap at most +%d KiB, goroutines at most +%d (budget %d KiB)",
		batches*batch, batches*batch/2, el.Round(time.Millisecond), float64(el.Microseconds())/float64(batches*batch), maxHeap>>10, maxG, budget>>10)
	if bound := 4*budget + 8<<20; maxHeap > bound {
		t.Errorf("heap grew up to %d KiB, bound %d KiB", maxHeap>>10, bound>>10)
	}
	if maxG > 64 {
		t.Errorf("goroutines grew by up to %d", maxG)
	}
}

// TestRelaySoak: rank 0 sends rank 7, three hops away on a hypercube of 8,
// many small messages through two relays, half of them unexpected (rank 7
// posts their receives only once they have all arrived), after a first
// few that rank 7 never receives at all and that stay charged against its
// budget throughout. Every rank's heap stays within a bound of the budget
// (each rank on the route: the budget, one relay segment over it, and what
// parked streams hold), its charge within the budget and one piece, and
// every message received arrives intact, in order.
//
//	go test ./realnet -run TestRelaySoak -soak 1000000 -v
func TestRelaySoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	checkGoroutines(t)
	const budget = 1 << 20
	const batch = 500 // half expected (tag 1), half unexpected (tag 2)
	const never = 100 // tag 5: rank 7 never receives them
	links := newWorld(t, 8, Config{Mesh: mustMesh(t, "hypercube"), MaxUnexpected: budget})
	defer closeWorld(t, links)
	src, dst := links[0], links[7]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	msg := make(device.Host, 8)
	for range never {
		if err := src.Wait(ctx, src.Isend(7, 5, msg)); err != nil {
			t.Fatal(err)
		}
	}
	batches := max(*soakMessages/batch, 1)
	baseHeap, baseG := heapInUse(), runtime.NumGoroutine()
	var maxHeap, maxCharged int64
	maxG := 0
	sample := func() {
		maxHeap = max(maxHeap, heapInUse()-baseHeap)
		maxG = max(maxG, runtime.NumGoroutine()-baseG)
		for _, l := range links {
			maxCharged = max(maxCharged, chargedOf(l))
		}
	}
	start := time.Now()
	errs := run([]*Link{src, dst}, func(ctx context.Context, l *Link) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Hour)
		defer cancel()
		marker := make(device.Host, 1)
		bufs := make([]device.Host, batch)
		for i := range bufs {
			bufs[i] = make(device.Host, 8)
		}
		for b := range batches {
			if l.Rank() == 0 {
				if err := l.Wait(ctx, l.Irecv(7, 3, marker)); err != nil {
					return err
				}
				reqs := make([]algos.Request, 0, batch+1)
				for i := range batch {
					binary.LittleEndian.PutUint64(bufs[i], uint64(b*batch+i))
					reqs = append(reqs, l.Isend(7, algos.Tag(1+i%2), bufs[i]))
				}
				// After every message of the batch, along the same
				// route: they have all arrived when it does.
				reqs = append(reqs, l.Isend(7, 4, marker))
				if err := l.Wait(ctx, reqs...); err != nil {
					return err
				}
				continue
			}
			reqs := make([]algos.Request, 0, batch)
			for i := 0; i < batch; i += 2 {
				reqs = append(reqs, l.Irecv(0, 1, bufs[i]))
			}
			if err := l.Wait(ctx, l.Isend(0, 3, marker)); err != nil {
				return err
			}
			if err := l.Wait(ctx, l.Irecv(0, 4, marker)); err != nil {
				return err
			}
			if b%max(batches/20, 1) == 0 {
				sample() // the unexpected half held
			}
			for i := 1; i < batch; i += 2 {
				reqs = append(reqs, l.Irecv(0, 2, bufs[i]))
			}
			if err := l.Wait(ctx, reqs...); err != nil {
				return err
			}
			for i, buf := range bufs {
				if got, want := binary.LittleEndian.Uint64(buf), uint64(b*batch+i); got != want {
					return fmt.Errorf("batch %d: message %d carries %d", b, want, got)
				}
			}
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	sample()
	el := time.Since(start)
	held := chargedOf(dst)
	t.Logf("%d messages relayed twice (%d unexpected, %d never received) in %v (%.1f us each); heap at most +%d KiB, charge at most %d KiB on a rank (%d KiB held by rank 7 at the end), goroutines at most +%d (budget %d KiB)",
		batches*batch, batches*batch/2, never, el.Round(time.Millisecond), float64(el.Microseconds())/float64(batches*batch), maxHeap>>10, maxCharged>>10, held>>10, maxG, budget>>10)
	if bound := int64(4*(budget+relaySegment+4<<20) + 16<<20); maxHeap > bound {
		t.Errorf("heap grew up to %d KiB, bound %d KiB", maxHeap>>10, bound>>10)
	}
	if bound := int64(budget + cost(relaySegment)); maxCharged > bound {
		t.Errorf("a rank charged up to %d KiB, bound %d KiB", maxCharged>>10, bound>>10)
	}
	if held < never*msgOverhead {
		t.Errorf("rank 7 holds %d bytes, less than the %d messages it never received", held, never)
	}
	if maxG > 256 {
		t.Errorf("goroutines grew by up to %d", maxG)
	}
}
