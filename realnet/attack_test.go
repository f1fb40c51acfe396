package realnet

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// heapInUse returns the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// rawStream opens a message stream from l to peer to as l's own sends do
// (counted in its bye), and writes b on it; it closes the stream after
// closeAfter (0: at once, <0: never).
func rawStream(ctx context.Context, l *Link, to int, b []byte, closeAfter time.Duration) (*quic.SendStream, error) {
	p := l.peers[to]
	s, err := p.conn.OpenUniStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	p.opened++
	l.mu.Unlock()
	if _, err := s.Write(b); err != nil {
		return nil, err
	}
	switch {
	case closeAfter == 0:
		s.Close()
	case closeAfter > 0:
		time.AfterFunc(closeAfter, func() { s.Close() })
	}
	return s, nil
}

// TestTinyUnexpectedBounded: a peer floods a rank with empty messages that
// no receive matches. Each is charged msgOverhead against MaxUnexpected,
// so once the budget is used up the rest wait unread in the sender's
// stream credit: the receiver's heap grows by a bound proportional to the
// budget, not to the number of messages, and every message still arrives.
func TestTinyUnexpectedBounded(t *testing.T) {
	checkGoroutines(t)
	const budget = 1 << 20
	links := newWorld(t, 2, Config{MaxUnexpected: budget, Thresholds: algos.Thresholds{Bulk: -1}})
	defer closeWorld(t, links)
	const tag algos.Tag = 7
	hdr := msgHeader{Kind: kindData, Tag: tag}.append(nil)
	before := heapInUse()
	sent := 0
	start := time.Now()
	for sent < 30000 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := rawStream(ctx, links[1], 0, hdr, 0)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break // the receiver holds back the sender: what the fix is for
		}
		if err != nil {
			t.Fatal(err)
		}
		sent++
	}
	time.Sleep(200 * time.Millisecond) // what was sent has arrived
	grown := heapInUse() - before
	links[0].mu.Lock()
	buffered := links[0].buffered
	links[0].mu.Unlock()
	t.Logf("%d empty messages sent in %v; heap +%d KiB, %d bytes charged of a %d budget", sent, time.Since(start).Round(time.Millisecond), grown>>10, buffered, budget)
	if bound := int64(4*budget + 4<<20); grown > bound {
		t.Errorf("heap grew %d KiB for %d unexpected empty messages, bound %d KiB (budget %d KiB)", grown>>10, sent, bound>>10, budget>>10)
	}
	if buffered > budget {
		t.Errorf("%d bytes buffered, budget %d", buffered, budget)
	}
	// Every message arrives once its receive is posted.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range sent {
		if err := links[0].Wait(ctx, links[0].Irecv(1, tag, device.Host{})); err != nil {
			t.Fatalf("receive %d of %d: %v", i, sent, err)
		}
	}
}

// TestRTSStreamReadToEnd: a sender closes each request to send's stream a
// few milliseconds after its header, so that the FIN comes in a later
// packet. The receiver reads every such stream to its end, so that quic-go
// counts it finished: more than maxStreams of them pass, and every
// transfer completes.
func TestRTSStreamReadToEnd(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Bulk: 1}})
	defer closeWorld(t, links)
	const n, size = maxStreams + 44, 1 << 10
	const tag algos.Tag = 11
	var recvs []algos.Request
	for range n {
		recvs = append(recvs, links[0].Irecv(1, tag, make(device.Host, size)))
	}
	l, p := links[1], links[1].peers[0]
	var sends []*request
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range n {
		r := l.newRequest(reqSend, 0, tag)
		r.buf = pattern(size, i)
		l.mu.Lock()
		p.nextID++
		r.bulkID, r.loc = p.nextID, locRTS
		p.rts[r.bulkID] = r
		l.live[r] = struct{}{}
		l.mu.Unlock()
		h := msgHeader{Kind: kindRTS, Tag: tag, Len: size, ID: r.bulkID}
		sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := rawStream(sctx, l, 0, h.append(nil), 3*time.Millisecond)
		scancel()
		if err != nil {
			t.Fatalf("request %d of %d: %v (streams not counted finished)", i, n, err)
		}
		sends = append(sends, r)
	}
	for i, r := range recvs {
		if err := links[0].Wait(ctx, r); err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
	}
	for i, r := range sends {
		if err := l.Wait(ctx, r); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
}

// TestStalledPayload: a peer sends a valid header of an unexpected small
// message and only part of its payload. The receiver does not wait for the
// rest forever: after Timeout the peer is reported as having broken the
// protocol, and a receive from it fails with a *PeerError naming it rather
// than timing out.
func TestStalledPayload(t *testing.T) {
	checkGoroutines(t)
	for _, path := range []string{"quic", "eager", "eager-spinning"} {
		t.Run(path, func(t *testing.T) {
			cfg := Config{Timeout: time.Second, Thresholds: algos.Thresholds{Bulk: -1}}
			if path == "eager-spinning" {
				cfg.SpinRead, path = 50*time.Microsecond, "eager"
			}
			if path == "eager" {
				cfg.Thresholds.Eager, cfg.TrustedNetwork = 1024, true
			}
			links := newWorld(t, 2, cfg)
			defer closeWorld(t, links)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			b := msgHeader{Kind: kindData, Tag: 9, Len: 100}.append(nil)
			b = append(b, make([]byte, 10)...)
			if path == "quic" {
				if _, err := rawStream(ctx, links[1], 0, b, -1); err != nil {
					t.Fatal(err)
				}
			} else {
				l, p := links[1], links[1].peers[0]
				time.Sleep(100 * time.Millisecond) // the credit has come
				l.mu.Lock()
				p.opened++
				l.mu.Unlock()
				if _, err := p.eager.c.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			// Past the payload's deadline, a receive from the peer fails
			// at once.
			time.Sleep(1500 * time.Millisecond)
			start := time.Now()
			err := links[0].Wait(ctx, links[0].Irecv(1, 10, make(device.Host, 8)))
			var pe *PeerError
			if !errors.As(err, &pe) || pe.Rank != 1 {
				t.Fatalf("receive from the staller: %v, want a *PeerError naming rank 1", err)
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// TestParkedWindowsBounded: a peer sends maxStreams unexpected messages of
// 256 KiB, more than the budget can buffer. Those parked hold what their
// stream's initial window let in, which the budget now sets: the
// receiver's heap grows by a bound proportional to the budget, not by
// maxStreams times 256 KiB (64 MiB), and every message still arrives.
func TestParkedWindowsBounded(t *testing.T) {
	checkGoroutines(t)
	const budget = 4 << 20
	links := newWorld(t, 2, Config{MaxUnexpected: budget, Thresholds: algos.Thresholds{Bulk: -1}})
	defer closeWorld(t, links)
	const tag algos.Tag = 5
	const size = 256 << 10
	payload := pattern(size, 1) // one buffer behind every send
	before := heapInUse()
	var sends []algos.Request
	for range maxStreams {
		sends = append(sends, links[1].Isend(0, tag, payload))
	}
	time.Sleep(time.Second) // what the windows let in has arrived
	grown := heapInUse() - before
	links[0].mu.Lock()
	buffered, parked := links[0].buffered, len(links[0].parked)
	links[0].mu.Unlock()
	t.Logf("heap +%d KiB; %d bytes buffered, %d messages parked; budget %d KiB", grown>>10, buffered, parked, budget>>10)
	if bound := int64(4*budget + 4<<20); grown > bound {
		t.Errorf("heap grew %d KiB, bound %d KiB (budget %d KiB)", grown>>10, bound>>10, budget>>10)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range maxStreams {
		buf := make(device.Host, size)
		if err := links[0].Wait(ctx, links[0].Irecv(1, tag, buf)); err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
		if string(buf) != string(payload) {
			t.Fatalf("message %d changed", i)
		}
	}
	if err := links[1].Wait(ctx, sends...); err != nil {
		t.Fatal(err)
	}
}

// TestEagerRTSBounded: requests to send on the eager connection cost
// eagerOverhead of credit until they are cleared. A sender with many sends
// outstanding that the receiver has not posted holds them back in its own
// memory once the credit is spent, and all complete once the receives are
// posted; a peer that sends requests beyond its credit breaks the
// protocol, so that it cannot grow the receiver's queue without bound.
func TestEagerRTSBounded(t *testing.T) {
	checkGoroutines(t)
	const budget = 1 << 20
	cfg := Config{MaxUnexpected: budget, Thresholds: algos.Thresholds{Eager: 1 << 10}, TrustedNetwork: true}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Run("outstanding", func(t *testing.T) {
		links := newWorld(t, 2, cfg)
		defer closeWorld(t, links)
		const n, size = 2000, 4 << 10
		payload := pattern(size, 2)
		var sends []algos.Request
		for range n {
			sends = append(sends, links[1].Isend(0, 3, payload))
		}
		time.Sleep(300 * time.Millisecond)
		l, p := links[0], links[0].peers[1]
		l.mu.Lock()
		held, granted, parked := p.held, p.granted, len(l.parked)
		l.mu.Unlock()
		t.Logf("%d requests parked, %d bytes of credit held of %d", parked, held, granted)
		if held > granted || parked > int(granted/eagerOverhead) {
			t.Fatalf("%d requests parked, %d held of %d granted", parked, held, granted)
		}
		for i := range n {
			buf := make(device.Host, size)
			if err := l.Wait(ctx, l.Irecv(1, 3, buf)); err != nil {
				t.Fatalf("receive %d: %v", i, err)
			}
			if string(buf) != string(payload) {
				t.Fatalf("message %d changed", i)
			}
		}
		if err := links[1].Wait(ctx, sends...); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("beyond credit", func(t *testing.T) {
		links := newWorld(t, 2, cfg)
		defer closeWorld(t, links)
		l, p := links[1], links[1].peers[0]
		time.Sleep(100 * time.Millisecond) // the credit has been granted
		var b []byte
		n := int(p.l.cfg.MaxUnexpected/eagerOverhead) + 10 // beyond any credit
		for i := range n {
			b = msgHeader{Kind: kindRTS, Tag: 3, Len: 1 << 30, ID: uint64(i + 1)}.append(b)
		}
		l.mu.Lock()
		p.opened += uint64(n)
		l.mu.Unlock()
		p.eager.c.Write(b)
		time.Sleep(500 * time.Millisecond)
		err := links[0].Wait(ctx, links[0].Irecv(1, 4, make(device.Host, 1)))
		var pe *PeerError
		if !errors.As(err, &pe) || pe.Rank != 1 {
			t.Fatalf("after %d requests to send beyond the credit: %v, want a *PeerError naming rank 1", n, err)
		}
		t.Log(err)
	})
}

// TestStalledBulkPayload: a peer cleared to send a bulk payload sends its
// header and half the payload, then nothing, its connections staying up.
// The receiver does not wait for the rest forever: once no byte has come
// for Timeout the peer is reported as having broken the protocol, a
// receive from it fails with a *PeerError naming it, and what the stalled
// message was charged goes back to the budget.
func TestStalledBulkPayload(t *testing.T) {
	checkGoroutines(t)
	for _, c := range []struct{ local, trusted bool }{{false, false}, {false, true}, {true, false}} {
		t.Run(fmt.Sprintf("local=%v/trusted=%v", c.local, c.trusted), func(t *testing.T) {
			const timeout = time.Second
			const size = 64 << 10
			links := newWorld(t, 2, Config{Timeout: timeout, Thresholds: algos.Thresholds{Bulk: 1 << 10}, TrustedNetwork: c.trusted,
				NoLocalSockets: !c.local})
			defer closeWorld(t, links)
			l, p := links[1], links[1].peers[0]
			// The sender's bulk writer will wait for the connection the
			// test writes on.
			p.bulk.wmu.Lock()
			unlocked := false
			defer func() {
				if !unlocked {
					p.bulk.wmu.Unlock()
				}
			}()
			send := l.Isend(0, 9, pattern(size, 1)).(*request)
			// Its receive, posted: a bulk send is cleared once it is.
			posted := links[0].Irecv(1, 9, make(device.Host, size))
			// Cleared to send: the bulk writer has taken it.
			deadline := time.Now().Add(10 * time.Second)
			for {
				l.mu.Lock()
				st, id := send.state, send.bulkID
				l.mu.Unlock()
				if st == stIO {
					var hb [bulkHeaderLen]byte
					bulkHeader{ID: id, Len: size}.encode(&hb)
					if err := p.bulk.writeRecordLocked(hb[:]); err != nil {
						t.Fatal(err)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the bulk send was never cleared")
				}
				time.Sleep(5 * time.Millisecond)
			}
			// Half the payload: sealed, half of its one record.
			half := pattern(size/2, 2)
			if p.bulk.sealed() {
				rec := p.bulk.send.aead.Seal(nil, p.bulk.send.nonce(), pattern(size, 1), nil)
				half = rec[:len(rec)/2]
			}
			if _, err := p.bulk.c.Write(half); err != nil {
				t.Fatal(err)
			}
			stalled := time.Now()
			time.Sleep(100 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var err error
			for time.Since(stalled) < 3*timeout {
				req := posted
				if req == nil {
					req = links[0].Irecv(1, 9, make(device.Host, size))
				}
				posted = nil
				if err = links[0].Wait(ctx, req); err != nil {
					var pe *PeerError
					if errors.As(err, &pe) {
						break
					}
				}
			}
			took := time.Since(stalled)
			links[0].mu.Lock()
			charged := links[0].heldLocked()
			links[0].mu.Unlock()
			t.Logf("stalled half-way: after %v: %v; %d bytes still charged", took.Round(time.Millisecond), err, charged)
			var pe *PeerError
			if !errors.As(err, &pe) || pe.Rank != 1 {
				t.Fatalf("a receive from the peer that stalled: %v, want a *PeerError naming rank 1", err)
			}
			if charged != 0 {
				t.Errorf("%d bytes still charged against the budget", charged)
			}
			p.bulk.wmu.Unlock()
			unlocked = true
		})
	}
}

// TestStalledFrames: a peer begins a frame on its eager connection or on
// its control stream and stops half-way, its connections staying up. The
// receiver does not wait for the rest forever: after Timeout the peer is
// reported as having broken the protocol.
func TestStalledFrames(t *testing.T) {
	checkGoroutines(t)
	const timeout = time.Second
	for _, where := range []string{"eager", "eager-spinning", "control"} {
		t.Run(where, func(t *testing.T) {
			cfg := Config{Timeout: timeout, Thresholds: algos.Thresholds{Eager: 1024}, TrustedNetwork: true}
			if where == "eager-spinning" {
				// The deadline applies once the spin is spent.
				cfg.SpinRead, where = 50*time.Microsecond, "eager"
			}
			links := newWorld(t, 2, cfg)
			defer closeWorld(t, links)
			p := links[1].peers[0]
			time.Sleep(100 * time.Millisecond) // the eager credit has come
			h := msgHeader{Kind: kindData, Tag: 3, Len: 8}.append(nil)
			var err error
			if where == "eager" {
				_, err = p.eager.c.Write(h[:10])
			} else {
				_, err = p.ctrl.Write([]byte{frameCTS})
			}
			if err != nil {
				t.Fatal(err)
			}
			stalled := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for time.Since(stalled) < 3*timeout {
				if err = links[0].Wait(ctx, links[0].Irecv(1, 9, make(device.Host, 8))); err != nil {
					var pe *PeerError
					if errors.As(err, &pe) {
						break
					}
				}
			}
			t.Logf("a frame stalled half-way on the %s connection: after %v: %v", where, time.Since(stalled).Round(time.Millisecond), err)
			var pe *PeerError
			if !errors.As(err, &pe) || pe.Rank != 1 {
				t.Fatalf("a receive from the peer that stalled: %v, want a *PeerError naming rank 1", err)
			}
		})
	}
}
