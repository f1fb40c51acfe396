package realnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// TestEagerCatalogue runs the whole catalogue with every message on TCP:
// eager below 4 KiB, rendezvous above, sealed and plaintext, and with the
// eager reader spinning (Config.SpinRead); and on the local socket.
func TestEagerCatalogue(t *testing.T) {
	checkGoroutines(t)
	counts := []int{1, 4099}
	unchecked := map[string]bool{}
	for _, c := range []struct {
		local, trusted bool
		spin           time.Duration
	}{{false, false, 0}, {false, true, 0}, {false, false, 50 * time.Microsecond}, {true, false, 0}} {
		for _, p := range []int{2, 3} {
			trusted := c.trusted
			t.Run(fmt.Sprintf("local=%v/trusted=%v/spin=%v/p=%d", c.local, trusted, c.spin, p), func(t *testing.T) {
				links := newWorld(t, p, Config{Thresholds: algos.Thresholds{Eager: 4096}, TrustedNetwork: trusted, SpinRead: c.spin,
					NoLocalSockets: !c.local})
				defer closeWorld(t, links)
				runCatalogue(t, links, counts, unchecked)
				for _, l := range links {
					// Under l.mu: the eager reader may still be
					// handling a late frame (credit coming back).
					l.mu.Lock()
					for _, q := range l.peers {
						if q != nil && (q.accepted == 0 || q.granted == 0) {
							t.Errorf("rank %d: %d messages from rank %d, %d bytes of credit granted: the eager path was not used",
								l.rank, q.accepted, q.rank, q.granted)
						}
					}
					l.mu.Unlock()
				}
			})
		}
	}
}

// TestEagerNotBehindBulk: a small message sent after a large one whose
// receive is not posted (and which the receiver has no room to buffer)
// arrives anyway: it does not travel on the byte stream that would carry
// the large payload.
func TestEagerNotBehindBulk(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Eager: 4096}, MaxUnexpected: 1 << 20, Timeout: 20 * time.Second})
	defer closeWorld(t, links)
	big := pattern(8<<20, 1)
	errs := run(links, func(ctx context.Context, l *Link) error {
		if l.Rank() == 0 {
			return l.Wait(ctx, l.Isend(1, 1, big), l.Isend(1, 2, pattern(8, 2)))
		}
		small := make(device.Host, 8)
		if err := algos.Recv(ctx, l, 0, 2, small); err != nil {
			return err
		}
		if !bytes.Equal(small, pattern(8, 2)) {
			t.Errorf("small message %v", small)
		}
		got := make(device.Host, len(big))
		if err := algos.Recv(ctx, l, 0, 1, got); err != nil {
			return err
		}
		if !bytes.Equal(got, big) {
			t.Error("large message wrong")
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}

// TestEagerCredit: a sender with more unexpected small messages than the
// receiver's credit covers sends the rest by rendezvous; the receiver
// never holds more than it granted, and every message arrives, in order.
func TestEagerCredit(t *testing.T) {
	checkGoroutines(t)
	// Credit: 64 KiB / 2 = 32 KiB for the one peer.
	links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Eager: 4096}, MaxUnexpected: 64 << 10})
	defer closeWorld(t, links)
	const n, size = 40, 3000          // 120 kB: well beyond the credit
	time.Sleep(20 * time.Millisecond) // the credit has been granted
	errs := run(links, func(ctx context.Context, l *Link) error {
		if l.Rank() == 0 {
			reqs := make([]algos.Request, n)
			for i := range n {
				reqs[i] = l.Isend(1, 5, pattern(size, i))
			}
			return l.Wait(ctx, reqs...)
		}
		time.Sleep(100 * time.Millisecond) // all of them arrive unexpected
		l.mu.Lock()
		p := l.peers[0]
		held, granted := p.held, p.granted
		l.mu.Unlock()
		if granted != 32<<10 || held > granted || held == 0 {
			t.Errorf("holding %d bytes of eager messages, %d granted", held, granted)
		}
		for i := range n {
			buf := make(device.Host, size)
			if err := algos.Recv(ctx, l, 0, 5, buf); err != nil {
				return err
			}
			if !bytes.Equal(buf, pattern(size, i)) {
				t.Errorf("message %d out of order or wrong", i)
			}
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	l := links[1]
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.peers[0]; p.held != 0 {
		t.Errorf("still holding %d bytes", p.held)
	}
}

// TestEagerTooLong: an eager message longer than its posted receive fails
// that receive; the link goes on.
func TestEagerTooLong(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Eager: 4096}})
	defer closeWorld(t, links)
	errs := run(links, func(ctx context.Context, l *Link) error {
		if l.Rank() == 0 {
			if err := algos.Send(ctx, l, 1, 1, pattern(100, 1)); err != nil {
				return err
			}
			return algos.Send(ctx, l, 1, 2, pattern(10, 2))
		}
		err := algos.Recv(ctx, l, 0, 1, make(device.Host, 10))
		var tl *TooLongError
		if !errors.As(err, &tl) || tl.Len != 100 {
			t.Errorf("receive of 10 bytes for 100: %v", err)
		}
		buf := make(device.Host, 10)
		if err := algos.Recv(ctx, l, 0, 2, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf, pattern(10, 2)) {
			t.Error("next message wrong")
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}
