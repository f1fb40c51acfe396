package realnet

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// randomBytes returns n bytes of a seeded random stream: unlike pattern's,
// no shift of them matches, so a payload copied in two parts is checked
// at its seam.
func randomBytes(n int, seed uint64) device.Host {
	b := make(device.Host, n)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// lateState is how far the unexpected bulk transfer of tag from rank 0
// has come on l: "queued" (granted into link memory, the bulk reader not
// there yet), "reading", "in" (all of it in link memory), or "" (not
// granted yet, or none).
func lateState(l *Link, tag algos.Tag) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.unexpected[matchKey{0, tag}]
	if q == nil || q.len() == 0 {
		return ""
	}
	switch m := q.peek(); {
	case m.state == inTemp && !m.grant.started:
		return "queued"
	case m.state == inTemp:
		return "reading"
	case m.state == inBuffered:
		return "in"
	}
	return ""
}

// TestLateBulkReceive: a bulk transfer whose receive is posted after
// rtsGrace is granted into link memory, and the receive gets the payload
// whole however far it has come: its grant still queued behind a large
// transfer (the payload then goes straight into the receive's buffer),
// being read (the receive takes over, what had come is copied), or all in
// (copied). The link memory goes back to the link's pool, and nothing
// stays charged against the budget.
func TestLateBulkReceive(t *testing.T) {
	checkGoroutines(t)
	const big, small = 64 << 20, 1 << 20
	for _, c := range []struct {
		name  string
		n     int
		ahead bool   // a large transfer, its receive posted, goes first
		at    string // lateState when the receive is posted
		count func(*Link) int64
	}{
		{"queued", small, true, "queued", func(l *Link) int64 { return l.late.direct }},
		{"reading", big, false, "reading", func(l *Link) int64 { return l.late.takenOver }},
		{"in", small, false, "in", func(l *Link) int64 { return l.late.copied }},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A budget that holds the large transfer in link memory.
			links := newWorld(t, 2, Config{TrustedNetwork: true, MaxUnexpected: 2 * big})
			defer closeWorld(t, links)
			want, first := randomBytes(c.n, 1), randomBytes(big, 2)
			errs := run(links, func(ctx context.Context, l *Link) error {
				if l.Rank() == 0 {
					var reqs []algos.Request
					if c.ahead {
						// Once its receive is posted, so that it is
						// granted first.
						if err := algos.Recv(ctx, l, 1, 3, device.Host{}); err != nil {
							return err
						}
						reqs = append(reqs, l.Isend(1, 1, first))
					}
					return l.Wait(ctx, append(reqs, l.Isend(1, 2, want))...)
				}
				var reqs []algos.Request
				got, gotFirst := make(device.Host, c.n), make(device.Host, big)
				if c.ahead {
					reqs = append(reqs, l.Irecv(0, 1, gotFirst), l.Isend(0, 3, device.Host{}))
				}
				for deadline := time.Now().Add(10 * time.Second); lateState(l, 2) != c.at; time.Sleep(20 * time.Microsecond) {
					if time.Now().After(deadline) {
						return fmt.Errorf("the transfer never got to %q", c.at)
					}
				}
				if err := l.Wait(ctx, append(reqs, l.Irecv(0, 2, got))...); err != nil {
					return err
				}
				if !bytes.Equal(got, want) {
					t.Errorf("payload wrong")
				}
				if c.ahead && !bytes.Equal(gotFirst, first) {
					t.Errorf("the transfer ahead wrong")
				}
				return nil
			})
			if err := firstErr(errs); err != nil {
				t.Fatal(err)
			}
			l := links[1]
			l.mu.Lock()
			n, late, buffered := c.count(l), l.late, l.buffered
			l.mu.Unlock()
			if n != 1 {
				t.Errorf("the receive posted with the transfer %s did not get it so: %+v", c.at, late)
			}
			if buffered != 0 {
				t.Errorf("%d bytes still charged", buffered)
			}
			if !l.scratch.has(c.n) {
				t.Errorf("the link memory of the transfer (%d bytes) is not back in the pool", c.n)
			}
		})
	}
}

// has reports whether s keeps a buffer of n bytes.
func (s *scratchPool) has(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.free {
		if len(b) == n {
			return true
		}
	}
	return false
}
