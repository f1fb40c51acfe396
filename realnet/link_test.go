package realnet

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

func TestSendRecvSmall(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{})
	defer closeWorld(t, links)
	msg := []byte("hello, rank 1")
	errs := run(links, func(ctx context.Context, l *Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 7, device.Host(msg))
		}
		buf := make(device.Host, 64)
		if err := algos.Recv(ctx, l, 0, 7, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf[:len(msg)], msg) {
			t.Errorf("got %q", buf[:len(msg)])
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}

// paths are the ways a message travels: its own QUIC stream, the bulk
// TCP connection (threshold 1 byte: everything non-empty), and the eager
// TCP connection (with rendezvous on the bulk one above 4 KiB).
var paths = []struct {
	name string
	cfg  Config
}{
	{"quic", Config{Thresholds: algos.Thresholds{Bulk: -1}}},
	{"bulk", Config{Thresholds: algos.Thresholds{Bulk: 1}}},
	{"eager", Config{Thresholds: algos.Thresholds{Eager: 4096}}},
}

func pattern(n, seed int) device.Host {
	b := make(device.Host, n)
	for i := range b {
		b[i] = byte(i*7 + seed)
	}
	return b
}

// TestFIFO: messages with one tag match their receives in the order they
// were sent, across sizes on both sides of the bulk threshold and whether
// the receives are posted before or after the messages arrive.
func TestFIFO(t *testing.T) {
	for _, cfg := range []Config{{Thresholds: algos.Thresholds{Bulk: 4096}}, {Thresholds: algos.Thresholds{Eager: 4096}}} {
		testFIFO(t, cfg)
	}
}

func testFIFO(t *testing.T, cfg Config) {
	checkGoroutines(t)
	links := newWorld(t, 2, cfg)
	defer closeWorld(t, links)
	sizes := []int{0, 1, 4095, 4096, 100000, 3, 1 << 20, 17}
	for _, late := range []bool{false, true} {
		errs := run(links, func(ctx context.Context, l *Link) error {
			var reqs []algos.Request
			if l.Rank() == 0 {
				for i, n := range sizes {
					reqs = append(reqs, l.Isend(1, 9, pattern(n, i)))
				}
				return l.Wait(ctx, reqs...)
			}
			if late {
				time.Sleep(50 * time.Millisecond) // everything arrives unexpected
			}
			bufs := make([]device.Host, len(sizes))
			for i := range sizes {
				bufs[i] = make(device.Host, 1<<20)
				reqs = append(reqs, l.Irecv(0, 9, bufs[i]))
			}
			if err := l.Wait(ctx, reqs...); err != nil {
				return err
			}
			for i, n := range sizes {
				if !bytes.Equal(bufs[i][:n], pattern(n, i)) {
					t.Errorf("late=%v: message %d (%d bytes) wrong", late, i, n)
				}
			}
			return nil
		})
		if err := firstErr(errs); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTooLong: a message longer than its receive buffer fails that
// receive with a *TooLongError, is thrown away, and the next message of
// the tag goes to the next receive.
func TestTooLong(t *testing.T) {
	checkGoroutines(t)
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			links := newWorld(t, 2, path.cfg)
			defer closeWorld(t, links)
			for _, late := range []bool{false, true} {
				errs := run(links, func(ctx context.Context, l *Link) error {
					if l.Rank() == 0 {
						return l.Wait(ctx, l.Isend(1, 3, pattern(1000, 1)), l.Isend(1, 3, pattern(10, 2)))
					}
					if late {
						time.Sleep(30 * time.Millisecond)
					}
					small, next := make(device.Host, 999), make(device.Host, 10)
					r1, r2 := l.Irecv(0, 3, small), l.Irecv(0, 3, next)
					err := l.Wait(ctx, r1)
					var tl *TooLongError
					if !errors.As(err, &tl) || tl.Len != 1000 || tl.Buf != 999 || tl.Peer != 0 {
						t.Errorf("late=%v: %v, want a *TooLongError for 1000 bytes into 999", late, err)
					}
					if err := l.Wait(ctx, r2); err != nil {
						return err
					}
					if !bytes.Equal(next, pattern(10, 2)) {
						t.Errorf("late=%v: the message after the long one is wrong", late)
					}
					return nil
				})
				if err := firstErr(errs); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestUnexpectedBudget: with a budget of 1 MiB, 16 messages of 256 KiB
// sent before any receive is posted, received in the reverse order of
// their tags, all arrive intact: those over the budget wait unread in
// their streams until their receives are posted.
func TestUnexpectedBudget(t *testing.T) {
	checkGoroutines(t)
	const n, size = 16, 256 << 10
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			cfg := path.cfg
			cfg.MaxUnexpected = 1 << 20
			links := newWorld(t, 2, cfg)
			defer closeWorld(t, links)
			errs := run(links, func(ctx context.Context, l *Link) error {
				if l.Rank() == 0 {
					var reqs []algos.Request
					for i := range n {
						reqs = append(reqs, l.Isend(1, algos.Tag(i), pattern(size, i)))
					}
					return l.Wait(ctx, reqs...)
				}
				time.Sleep(100 * time.Millisecond)
				l.mu.Lock()
				buffered := l.buffered
				l.mu.Unlock()
				if buffered > cfg.MaxUnexpected {
					t.Errorf("%d bytes buffered, budget %d", buffered, cfg.MaxUnexpected)
				}
				for i := n - 1; i >= 0; i-- {
					buf := make(device.Host, size)
					if err := algos.Recv(ctx, l, 0, algos.Tag(i), buf); err != nil {
						return err
					}
					if !bytes.Equal(buf, pattern(size, i)) {
						t.Errorf("message %d wrong", i)
					}
				}
				return nil
			})
			if err := firstErr(errs); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSelf: a rank sends to itself, before and after posting the receive.
func TestSelf(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{})
	defer closeWorld(t, links)
	l, ctx := links[1], context.Background()
	if err := algos.Send(ctx, l, 1, 4, device.Host("first")); err != nil {
		t.Fatal(err)
	}
	buf := make(device.Host, 5)
	if err := algos.Recv(ctx, l, 1, 4, buf); err != nil || string(buf) != "first" {
		t.Fatalf("%q, %v", buf, err)
	}
	r := l.Irecv(1, 4, buf)
	if err := l.Wait(ctx, l.Isend(1, 4, device.Host("again")), r); err != nil || string(buf) != "again" {
		t.Fatalf("%q, %v", buf, err)
	}
}

// TestSpawn: two allreduces run at once on one link, each on its own
// goroutine and its own tags.
func TestSpawn(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 3, Config{})
	defer closeWorld(t, links)
	errs := run(links, func(ctx context.Context, l *Link) error {
		a, b := make(device.Host, 4<<10), make(device.Host, 4<<10)
		for i := range a {
			a[i], b[i] = 1, 2
		}
		ra := l.Spawn(func(ctx context.Context) error {
			return algos.RingAllreduce(ctx, algos.Scoped(l, 0, 1), a, device.U8, device.Sum)
		})
		rb := l.Spawn(func(ctx context.Context) error {
			return algos.RingAllreduce(ctx, algos.Scoped(l, 0, 2), b, device.U8, device.Sum)
		})
		if err := l.Wait(ctx, ra, rb); err != nil {
			return err
		}
		if a[100] != 3 || b[100] != 6 {
			t.Errorf("got %d and %d, want 3 and 6", a[100], b[100])
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}

// TestAbandonLargeReceive: a wait given up while a large message is being
// read into the receive buffer stops touching the buffer when it returns
// (the race detector checks this: the test writes the buffer at once), and
// the link goes on working.
func TestAbandonLargeReceive(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Bulk: -1}})
	defer closeWorld(t, links)
	sent := make(chan error, 1)
	go func() { sent <- algos.Send(context.Background(), links[0], 1, 1, make(device.Host, 256<<20)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	buf := make(device.Host, 256<<20)
	err := algos.Recv(ctx, links[1], 0, 1, buf)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline", err)
	}
	clear(buf) // the receive no longer writes here
	if err := <-sent; err == nil {
		t.Log("the send completed before the receiver gave up")
	} else {
		t.Logf("sender: %v", err)
	}
	errs := run(links, func(ctx context.Context, l *Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 2, device.Host("still here"))
		}
		b := make(device.Host, 10)
		if err := algos.Recv(ctx, l, 0, 2, b); err != nil {
			return err
		}
		if string(b) != "still here" {
			t.Errorf("got %q", b)
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}
