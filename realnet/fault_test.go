package realnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// abortingLink is a rank whose process dies in the middle of a collective:
// on its n-th send it closes every connection without a farewell.
type abortingLink struct {
	*Link
	n     int
	sends atomic.Int32
}

func (a *abortingLink) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	if int(a.sends.Add(1)) == a.n {
		a.Link.Abort()
	}
	return a.Link.Isend(dst, tag, buf)
}

// TestPeerLostMidAllreduce: rank 3 dies during a ring allreduce; every
// other rank, its ring neighbours and the rank two steps away alike, fails
// with a *PeerError naming rank 3 (found as an *algos.PeerLostError too,
// as the simulator's errors for a failed rank are), well within the
// timeout.
func TestPeerLostMidAllreduce(t *testing.T) {
	checkGoroutines(t)
	const p, dead = 4, 3
	cfg := Config{Timeout: 20 * time.Second, PeerTimeout: 10 * time.Second}
	for _, path := range []struct {
		name      string
		threshold int
	}{{"quic", -1}, {"bulk", 0}} {
		t.Run(path.name, func(t *testing.T) {
			cfg := cfg
			cfg.Thresholds.Bulk = path.threshold
			links := newWorld(t, p, cfg)
			defer closeWorld(t, links)
			start := time.Now()
			var abortedAt atomic.Int64
			errs := run(links, func(ctx context.Context, l *Link) error {
				buf := make(device.Host, 4<<20)
				var al algos.Link = l
				if l.Rank() == dead {
					al = &abortingLink{Link: l, n: 3}
				}
				err := algos.RingAllreduce(ctx, al, buf, device.F32, device.Sum)
				if l.Rank() == dead {
					abortedAt.Store(int64(time.Since(start)))
				}
				return err
			})
			for r, err := range errs {
				if r == dead {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("rank %d (the one that died): %v, want ErrClosed", r, err)
					}
					continue
				}
				var pe *PeerError
				if !errors.As(err, &pe) || pe.Rank != dead {
					t.Errorf("rank %d: %v, want a *PeerError naming rank %d", r, err, dead)
				}
				var pl *algos.PeerLostError
				if !errors.As(err, &pl) || pl.Rank != dead || pl.Err != error(pe) {
					t.Errorf("rank %d: %v, want an *algos.PeerLostError naming rank %d, of the *PeerError", r, err, dead)
				}
			}
			if el := time.Since(start) - time.Duration(abortedAt.Load()); el > cfg.Timeout {
				t.Errorf("the others took %v after the abort to fail, timeout %v", el, cfg.Timeout)
			} else {
				t.Logf("every rank failed within %v of the abort", el)
			}
			// The dead rank's link is closed; the others close normally.
		})
	}
}

// TestSilentPeer: a rank that stops answering without closing anything,
// as a killed process does, is detected by the idle timeout on every
// rank that waits for it, and named.
func TestSilentPeer(t *testing.T) {
	checkGoroutines(t)
	// Without bulk connections: a killed process's TCP connections are
	// closed by its kernel, which the others see at once; here only QUIC's
	// idle timeout can tell.
	cfg := Config{Timeout: 30 * time.Second, PeerTimeout: time.Second, NoBulk: true}
	links := newWorld(t, 3, cfg)
	defer closeWorld(t, links)
	// Rank 2's socket goes away: no packet leaves it any more, not even a
	// CONNECTION_CLOSE.
	links[2].ep.pc.Close()
	start := time.Now()
	errs := run(links[:2], func(ctx context.Context, l *Link) error {
		return algos.Recv(ctx, l, 2, 1, make(device.Host, 8))
	})
	el := time.Since(start)
	for r, err := range errs {
		// Whichever rank times out first tells the other.
		var pe *PeerError
		var idle *quic.IdleTimeoutError
		var rep *ReportedError
		if !errors.As(err, &pe) || pe.Rank != 2 || !errors.As(err, &idle) && !(errors.As(err, &rep) && strings.Contains(rep.Reason, "no recent network activity")) {
			t.Errorf("rank %d: %v, want a *PeerError naming rank 2 for an idle timeout", r, err)
		}
	}
	if el > cfg.PeerTimeout+2*time.Second {
		t.Errorf("detected after %v, peer timeout %v", el, cfg.PeerTimeout)
	}
	t.Logf("silent peer detected after %v (peer timeout %v)", el, cfg.PeerTimeout)
}

// TestWaitTimeout: a wait for a message that never comes from a live peer
// returns a *TimeoutError naming that peer after the link's timeout; a
// cancelled context ends it at once.
func TestWaitTimeout(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Timeout: 300 * time.Millisecond})
	defer closeWorld(t, links)
	l := links[0]
	start := time.Now()
	err := algos.Recv(context.Background(), l, 1, 5, make(device.Host, 8))
	var te *TimeoutError
	if !errors.As(err, &te) || len(te.Peers()) != 1 || te.Peers()[0] != 1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a *TimeoutError naming rank 1", err)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 2*time.Second {
		t.Errorf("timed out after %v, timeout 300ms", el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start = time.Now()
	err = algos.Recv(ctx, l, 1, 6, make(device.Host, 8))
	if !errors.Is(err, context.Canceled) || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("cancelled wait: %v after %v", err, time.Since(start))
	}
	// The abandoned receives are gone: a message sent now with their tag
	// goes to a new receive.
	errs := run(links, func(ctx context.Context, l *Link) error {
		if l.Rank() == 1 {
			return algos.Send(ctx, l, 0, 5, device.Host("late"))
		}
		buf := make(device.Host, 4)
		if err := algos.Recv(ctx, l, 1, 5, buf); err != nil {
			return err
		}
		if string(buf) != "late" {
			t.Errorf("got %q", buf)
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}

// rogue opens a raw stream from rank 1 to rank 0, as a buggy or hostile
// peer would, and writes b on it.
func rogueStream(t *testing.T, links []*Link, b []byte) {
	t.Helper()
	s, err := links[1].peers[0].conn.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write(b)
	s.Close()
}

// TestBadFrames: garbage and oversized frames from a peer close its
// connection with a *ProtocolError; the rank survives and names the peer.
func TestBadFrames(t *testing.T) {
	checkGoroutines(t)
	huge := msgHeader{Kind: kindData, Tag: 1, Len: 1 << 50}.append(nil)
	short := msgHeader{Kind: kindData, Tag: 1, Len: 100}.append(nil)
	for _, c := range []struct {
		name   string
		inject func(t *testing.T, links []*Link)
	}{
		{"garbage header", func(t *testing.T, links []*Link) {
			rogueStream(t, links, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		}},
		{"oversized message", func(t *testing.T, links []*Link) { rogueStream(t, links, huge) }},
		{"truncated payload", func(t *testing.T, links []*Link) { rogueStream(t, links, append(short, 1, 2, 3)) }},
		{"overlong payload", func(t *testing.T, links []*Link) {
			// The 3 bytes announced are taken (into link memory: no
			// receive is posted), and then the stream's extra bytes
			// break the protocol.
			rogueStream(t, links, append(msgHeader{Kind: kindData, Tag: 5, Len: 3}.append(nil), 1, 2, 3, 4, 5))
		}},
		{"garbage control frame", func(t *testing.T, links []*Link) {
			links[1].peers[0].ctrl.Write([]byte{0xee, 1, 2, 3})
		}},
		{"oversized control frame", func(t *testing.T, links []*Link) {
			links[1].peers[0].ctrl.Write([]byte{frameCTS, 0xff, 0xff, 0xff, 0xff, 0x0f})
		}},
		{"unrequested bulk payload", func(t *testing.T, links []*Link) {
			links[1].peers[0].bulk.writeMessage(bulkHeader{ID: 99, Len: 10}, make([]byte, 10))
		}},
		{"garbage eager frame", func(t *testing.T, links []*Link) {
			links[1].peers[0].eager.c.Write(make([]byte, msgHeaderLen+gcmTag))
		}},
		{"eager message without credit", func(t *testing.T, links []*Link) {
			// Rank 0 granted rank 1 no credit: it never asked.
			links[1].peers[0].eager.writeFrames(append(msgHeader{Kind: kindData, Tag: 1, Len: 10}.append(nil), make([]byte, 10)...))
		}},
		{"forged bulk record", func(t *testing.T, links []*Link) {
			// Bytes on the TCP connection that were not sealed with its
			// key, as an attacker on the path would inject.
			links[1].peers[0].bulk.c.Write(make([]byte, bulkHeaderLen+gcmTag))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			links := newWorld(t, 2, Config{Timeout: 10 * time.Second})
			defer closeWorld(t, links)
			// Rank 0 waits for a message from rank 1 while the bad bytes
			// arrive.
			got := make(chan error, 1)
			go func() { got <- algos.Recv(context.Background(), links[0], 1, 77, make(device.Host, 8)) }()
			time.Sleep(10 * time.Millisecond)
			c.inject(t, links)
			err := <-got
			var pe *PeerError
			var perr *ProtocolError
			if !errors.As(err, &pe) || pe.Rank != 1 || !errors.As(err, &perr) {
				t.Fatalf("rank 0: %v, want a *PeerError naming rank 1 for a *ProtocolError", err)
			}
			t.Logf("rank 0: %v", err)
			// Rank 1 learns that rank 0 closed the connection on it.
			err = algos.Recv(context.Background(), links[1], 0, 1, make(device.Host, 8))
			var ae *quic.ApplicationError
			if !errors.As(err, &pe) || pe.Rank != 0 || !errors.As(err, &ae) || ae.ErrorCode != codeProtocol {
				t.Fatalf("rank 1: %v, want a *PeerError naming rank 0 for a protocol-error close", err)
			}
		})
	}
}

// TestUnauthenticated: a client without a certificate of the cluster CA
// is refused by the handshake, on the mesh port, on the join protocol
// (before it is given a rank), and on the bulk port; the world forms
// without it.
func TestUnauthenticated(t *testing.T) {
	checkGoroutines(t)
	other, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := other.Credentials("stranger")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Credentials: creds(t)}
	eps := make([]*Endpoint, 2)
	for i := range eps {
		if eps[i], err = ListenAddr("127.0.0.1:0", cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := eps[0].HostSeed(2, ""); err != nil {
		t.Fatal(err)
	}
	seed := eps[0].Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A stranger tries to join first, with a certificate of another CA,
	// and with none at all.
	rogue, err := ListenAddr("127.0.0.1:0", Config{Credentials: stranger, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()
	for _, tc := range []*tls.Config{stranger.clientTLS(alpnJoin), {InsecureSkipVerify: true, NextProtos: []string{alpnJoin}, MinVersion: tls.VersionTLS13}} {
		_, err := rogue.tryJoin(ctx, eps[0].Addr(), joinRequest{World: 2, Rank: anyRank})
		if err == nil {
			t.Fatal("a stranger joined")
		}
		conn, err := rogue.tr.Dial(ctx, eps[0].Addr(), tc, rogue.quicConfig())
		if err == nil {
			// The server's verdict may arrive just after the client's
			// handshake completes: the connection must then be closed.
			select {
			case <-conn.Context().Done():
			case <-time.After(5 * time.Second):
				t.Fatal("a connection without a cluster certificate stayed open")
			}
		} else {
			t.Logf("refused: %v", err)
		}
	}
	// A stranger on the bulk port.
	if eps[0].BulkAddr() != nil {
		c, err := net.Dial("tcp", eps[0].BulkAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		tc := tls.Client(c, stranger.clientTLS(alpnBulk))
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err == nil {
			// TLS 1.3 clients finish before the server checks their
			// certificate; the server then closes.
			if _, err := tc.Read(make([]byte, 1)); err == nil {
				t.Fatal("a stranger's bulk connection was served")
			}
		}
		c.Close()
	}

	// The two real ranks still get ranks 0 and 1.
	links := make([]*Link, 2)
	errs := make([]error, 2)
	done := make(chan int, 2)
	for i := range eps {
		go func() {
			links[i], errs[i] = eps[i].Join(ctx, seed, -1, 2)
			done <- i
		}()
	}
	<-done
	<-done
	for i, err := range errs {
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
	}
	if links[0].Rank()+links[1].Rank() != 1 {
		t.Fatalf("ranks %d and %d", links[0].Rank(), links[1].Rank())
	}
	closeWorld(t, links)
}

// TestJoinRejected: asking for a taken rank or a different world size is
// refused with the reason.
func TestJoinRejected(t *testing.T) {
	checkGoroutines(t)
	cfg := Config{Credentials: creds(t)}
	seedEP, err := ListenAddr("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer seedEP.Close()
	if err := seedEP.HostSeed(3, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Rank 0 (the host) registers, then waits for the world.
	go seedEP.Join(ctx, "", 0, 3)
	time.Sleep(50 * time.Millisecond)
	ep, err := ListenAddr("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	for _, c := range []struct {
		rank, world int
		want        string
	}{{0, 3, "taken"}, {1, 4, "world of 4"}} {
		_, err := ep.Join(ctx, seedEP.Addr().String(), c.rank, c.world)
		var rej *JoinRejectedError
		if !errors.As(err, &rej) || !strings.Contains(rej.Reason, c.want) {
			t.Errorf("join as %d of %d: %v, want a rejection for %q", c.rank, c.world, err, c.want)
		}
	}
	cancel()
}

// TestServeSeed: a seed that is not a rank (nexar's way) assembles a world
// of ranks that do not know their ranks, and assigns 0..p-1.
func TestServeSeed(t *testing.T) {
	checkGoroutines(t)
	const p = 3
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ServeSeed(ctx, pc, creds(t), p) }()
	eps := make([]*Endpoint, p)
	links := make([]*Link, p)
	errs := make([]error, p)
	done := make(chan struct{}, p)
	for i := range eps {
		if eps[i], err = ListenAddr("127.0.0.1:0", Config{Credentials: creds(t)}); err != nil {
			t.Fatal(err)
		}
		go func() {
			links[i], errs[i] = eps[i].Join(ctx, pc.LocalAddr().String(), -1, p)
			done <- struct{}{}
		}()
	}
	for range p {
		<-done
	}
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("seed: %v", err)
	}
	seen := map[int]bool{}
	for _, l := range links {
		seen[l.Rank()] = true
	}
	if len(seen) != p {
		t.Fatalf("ranks %v", seen)
	}
	byRank := make([]*Link, p)
	for _, l := range links {
		byRank[l.Rank()] = l
	}
	errs = run(byRank, func(ctx context.Context, l *Link) error {
		buf := make(device.Host, 64)
		return algos.RingAllreduce(ctx, l, buf, device.U8, device.Sum)
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	closeWorld(t, byRank)
}

// TestPeerErrorIsPeerLost: errors.As finds a *PeerError, wrapped or not,
// as the *algos.PeerLostError that the simulator reports too, naming the
// lost rank, with the PeerError's message, and its cause still reached
// through it.
func TestPeerErrorIsPeerLost(t *testing.T) {
	pe := &PeerError{Rank: 2, Local: 0, Err: ErrPeerClosed}
	for _, err := range []error{pe, fmt.Errorf("allreduce: %w", pe)} {
		var pl *algos.PeerLostError
		if !errors.As(err, &pl) || pl.Rank != 2 || pl.Err != error(pe) {
			t.Fatalf("%v: found %+v, want an *algos.PeerLostError naming rank 2 of the *PeerError", err, pl)
		}
		if pl.Error() != pe.Error() || !errors.Is(pl, ErrPeerClosed) {
			t.Errorf("PeerLostError %q, cause ErrPeerClosed %t: want %q and true", pl.Error(), errors.Is(pl, ErrPeerClosed), pe.Error())
		}
	}
	var pl *algos.PeerLostError
	if errors.As(&TimeoutError{Local: 0, Pending: []Pending{{Peer: 1}}}, &pl) {
		t.Errorf("a timeout is found as a lost peer: %v", pl)
	}
}

// TestOperationFailureBreaksLink: an operation can fail on a peer's
// broken byte stream before the link's readers have judged the peer lost.
// The operation's failure judges it, so that the link is broken when the
// operation returns: a rank that then aborts tells its peers which rank
// it lost, not a bare abort, and the third rank hears rank 2 named.
func TestOperationFailureBreaksLink(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 3, Config{Timeout: 20 * time.Second, PeerTimeout: 10 * time.Second, NoBulk: true})
	defer closeWorld(t, links)
	// Rank 2 goes silent, as a killed process does, so that only rank 0
	// can tell rank 1 about it.
	links[2].ep.pc.Close()
	err := links[0].peers[2].ioErr(fmt.Errorf("bulk: %w", net.ErrClosed), nil)
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Rank != 2 {
		t.Fatalf("ioErr: %v, want a *PeerError naming rank 2", err)
	}
	links[0].mu.Lock()
	broken := links[0].broken
	links[0].mu.Unlock()
	if broken != err {
		t.Errorf("rank 0's link broken by %v, want the operation's error", broken)
	}
	links[0].Abort()
	err = algos.Recv(context.Background(), links[1], 0, 1, make(device.Host, 8))
	if !errors.As(err, &pe) || pe.Rank != 2 {
		t.Errorf("rank 1: %v, want a *PeerError naming rank 2, reported by rank 0", err)
	}
}

// TestCancelledCloseKeepsLink: a send abandoned between its stream's Write
// and its Close (abandon's CancelWrite) fails alone: the Close's error
// says nothing of the connection, so the peer is not judged and the link
// stays whole.
func TestCancelledCloseKeepsLink(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Timeout: 20 * time.Second, PeerTimeout: 10 * time.Second, NoBulk: true})
	defer closeWorld(t, links)
	p := links[0].peers[1]
	s, err := p.conn.OpenUniStreamSync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	links[0].mu.Lock()
	p.opened++ // the peer counts it: the byes at the end must agree
	links[0].mu.Unlock()
	if _, err := s.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	s.CancelWrite(codeCancelled) // what abandon's takeCancel does
	closeErr := s.Close()
	if closeErr == nil {
		t.Fatal("Close of a cancelled stream succeeded")
	}
	var se *quic.StreamError
	if !errors.As(context.Cause(s.Context()), &se) || se.Remote {
		t.Fatalf("the stream's cause: %v, want a local *quic.StreamError (closeData reports it)", context.Cause(s.Context()))
	}
	for _, err := range []error{closeErr, se} {
		got := p.ioErr(err, nil)
		links[0].mu.Lock()
		broken := links[0].broken
		links[0].mu.Unlock()
		if broken != nil {
			t.Errorf("ioErr(%v): the link broke: %v", err, broken)
		}
		var pe *PeerError
		if !errors.As(got, &pe) || pe.Rank != 1 {
			t.Errorf("ioErr(%v) = %v, want a *PeerError naming rank 1", err, got)
		}
	}
}

// TestAbortDuringBulkTransfer: a rank aborts while its bulk writer holds a
// transfer under way. Giving up that transfer loses the peer, and the
// peer must hear an abort, not a bye: its link breaks, naming the rank
// that aborted, rather than taking it for a rank that left gracefully.
func TestAbortDuringBulkTransfer(t *testing.T) {
	checkGoroutines(t)
	const size = 1 << 20
	links := newWorld(t, 2, Config{Timeout: 20 * time.Second, PeerTimeout: 10 * time.Second, Thresholds: algos.Thresholds{Bulk: 1 << 10}})
	defer closeWorld(t, links)
	p := links[0].peers[1]
	p.bulk.wmu.Lock() // the bulk writer will wait, its transfer under way
	recv := links[1].Irecv(0, 5, make(device.Host, size))
	send := links[0].Isend(1, 5, pattern(size, 1)).(*request)
	deadline := time.Now().Add(10 * time.Second)
	for {
		links[0].mu.Lock()
		st := send.state
		links[0].mu.Unlock()
		if st == stIO {
			break
		}
		if time.Now().After(deadline) {
			p.bulk.wmu.Unlock()
			t.Fatal("the bulk send was never cleared")
		}
		time.Sleep(5 * time.Millisecond)
	}
	aborted := make(chan struct{})
	go func() { links[0].Abort(); close(aborted) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := links[1].Wait(ctx, recv)
	p.bulk.wmu.Unlock()
	<-aborted
	links[1].mu.Lock()
	broken := links[1].broken
	links[1].mu.Unlock()
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Rank != 0 || errors.Is(err, ErrPeerClosed) || broken == nil {
		t.Errorf("rank 1: %v (link broken: %v), want a *PeerError naming rank 0 that broke the link, not a bye", err, broken)
	}
}
