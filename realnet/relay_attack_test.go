package realnet

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// chargedOf is what l charges against its budget: unexpected messages
// buffered or parked, and relayed ones held.
func chargedOf(l *Link) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heldLocked()
}

// TestRelayUnexpectedBounded: rank 0 floods rank 7, three hops away on a
// hypercube of 8, with messages rank 7 never receives, as small relayed
// messages (sent whole along the route) and as large ones (rendezvous).
// The relays and rank 7 charge what they hold against MaxUnexpected, so
// the sender is held back once the budgets along the route are spent: the
// heap grows by a bound of the budget, not by what was sent, and every
// message sent still arrives once its receive is posted.
func TestRelayUnexpectedBounded(t *testing.T) {
	checkGoroutines(t)
	const budget = 1 << 20
	for _, tc := range []struct {
		name    string
		size, n int
	}{
		{"small", relayEagerMax, 4096},
		{"large", 256 << 10, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			links := newWorld(t, 8, Config{Mesh: mustMesh(t, "hypercube"), MaxUnexpected: budget})
			defer closeWorld(t, links)
			const tag algos.Tag = 9
			payload := pattern(tc.size, 3)
			before := heapInUse()
			start := time.Now()
			sent, held := 0, false
			for sent < tc.n {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				err := links[0].Wait(ctx, links[0].Isend(7, tag, payload))
				cancel()
				if err != nil {
					held = true // the route holds the sender back
					break
				}
				sent++
			}
			took := time.Since(start)
			time.Sleep(300 * time.Millisecond) // what was sent has arrived
			grown := heapInUse() - before
			var charged []string
			for _, l := range links {
				charged = append(charged, fmt.Sprintf("%d KiB", chargedOf(l)>>10))
			}
			t.Logf("%d of %d messages of %d KiB sent in %v (held back: %v); heap +%d KiB; charged by rank: %v; budget %d KiB",
				sent, tc.n, tc.size>>10, took.Round(time.Millisecond), held, grown>>10, charged, budget>>10)
			// Per rank on the route: the budget, one segment over it, and
			// what parked streams hold (max(budget, 4 MiB) per peer);
			// quic-go's own buffers besides.
			if bound := int64(4*(budget+relaySegment+4<<20) + 16<<20); grown > bound {
				t.Errorf("heap grew %d KiB, bound %d KiB", grown>>10, bound>>10)
			}
			if !held {
				t.Errorf("all %d messages sent to a rank that never receives them: nothing held the sender back", sent)
			}
			// Nothing is lost: every message sent arrives once its
			// receive is posted, the one abandoned last too.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			want := sent
			if held {
				want++
			}
			buf := make(device.Host, tc.size)
			for i := range want {
				clear(buf)
				if err := links[7].Wait(ctx, links[7].Irecv(0, tag, buf)); err != nil {
					t.Fatalf("receive %d of %d: %v", i, want, err)
				}
				if !bytes.Equal(buf, payload) {
					t.Fatalf("message %d changed", i)
				}
			}
		})
	}
}

// TestRelayHeaderBounded: a neighbour sends a relay header announcing a
// message of MaxMessage bytes (1 GiB here) and no payload. The relay
// allocates at most one segment for it, within its budget, rather than
// what the header claims. (The payload never coming is the neighbour
// withholding a message: the relay waits for it, and Close waits the
// link's Timeout, kept short here, for the farewell it holds up.)
func TestRelayHeaderBounded(t *testing.T) {
	checkGoroutines(t)
	const maxMsg = 1 << 30
	links := newWorld(t, 8, Config{Mesh: mustMesh(t, "hypercube"), MaxMessage: maxMsg, Timeout: 3 * time.Second})
	defer closeWorld(t, links)
	// Rank 1 relays rank 0's messages to rank 3 (0 -> 1 -> 3).
	m := links[0].relay.m
	if m.NextHop(0, 3) != 1 {
		t.Fatalf("route 0 -> 3 takes %v", m.Route(0, 3))
	}
	before := heapInUse()
	start := time.Now()
	h := relayHdr{kind: relayData, origin: 0, dest: 3, n: maxMsg, id: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := links[0].Wait(ctx, links[0].Isend(1, relayHdrTag, device.Host(h.encode()))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	grown := heapInUse() - before
	t.Logf("after a header announcing %d MiB: relay's heap +%d KiB after %v", maxMsg>>20, grown>>10, time.Since(start).Round(time.Millisecond))
	if bound := int64(relaySegment + 8<<20); grown > bound {
		t.Fatalf("heap grew %d KiB for a header alone, bound %d KiB", grown>>10, bound>>10)
	}
}
