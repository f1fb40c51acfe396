package realnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// rankCreds returns credentials of testCA for rank r of job (AnyRank: any
// rank).
func rankCreds(t *testing.T, job string, r int) *Credentials {
	t.Helper()
	creds(t) // testCA
	c, err := testCA.CredentialsFor(Identity{Job: job, Rank: r})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIdentityBound: a certificate of the cluster CA joins only as what it
// names. A certificate of another job is refused by the handshake; one of
// another rank is refused by the seed with the reason; a rank's
// certificate asking for any rank gets its own; and the world forms with
// the real ranks.
func TestIdentityBound(t *testing.T) {
	checkGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eps := make([]*Endpoint, 2)
	for i := range eps {
		var err error
		if eps[i], err = ListenAddr("127.0.0.1:0", Config{Credentials: rankCreds(t, "job", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eps[0].HostSeed(2, ""); err != nil {
		t.Fatal(err)
	}
	seed := eps[0].Addr()

	for _, tc := range []struct {
		name string
		id   Identity
		rank int
		want string
	}{
		{"another job", JobIdentity("other"), anyRank, "job"},
		{"another rank", RankIdentity("job", 0), 1, "certificate of rank 0 claims rank 1"},
		{"a rank outside the world", RankIdentity("job", 5), anyRank, "joins a world of 2"},
	} {
		mallory, err := ListenAddr("127.0.0.1:0", Config{Credentials: rankCreds(t, tc.id.Job, tc.id.Rank), HandshakeTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = mallory.tryJoin(ctx, seed, joinRequest{World: 2, Rank: tc.rank})
		mallory.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: joined (%v), want an error naming %q", tc.name, err, tc.want)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}

	// Asking for a rank its certificate does not name fails before the
	// seed is asked.
	if _, err := eps[1].Join(ctx, seed.String(), 0, 2); err == nil || !strings.Contains(err.Error(), "claims rank 0") {
		t.Fatalf("rank 1's certificate joined as rank 0: %v", err)
	}
	links := make([]*Link, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { links[i], errs[i] = ep.Join(ctx, seed.String(), -1, 2) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
		if links[i].Rank() != i {
			t.Fatalf("endpoint %d holds rank %d's certificate and got rank %d", i, i, links[i].Rank())
		}
	}
	closeWorld(t, links)
}

// TestDialWrongRank: the process at rank 0's address holds rank 2's
// certificate; the dialer refuses it at once, before saying hello, rather
// than retrying until its context ends.
func TestDialWrongRank(t *testing.T) {
	checkGoroutines(t)
	impostor, err := ListenAddr("127.0.0.1:0", Config{Credentials: rankCreds(t, "job", 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	dialer, err := ListenAddr("127.0.0.1:0", Config{Credentials: rankCreds(t, "job", 1)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	peers := []PeerAddr{{Addr: impostor.Addr()}, {Addr: dialer.Addr()}}
	_, err = dialer.Connect(ctx, 1, peers, Session{1})
	if err == nil || !strings.Contains(err.Error(), "certificate of rank 2 claims rank 0") {
		t.Fatalf("Connect: %v, want the impostor named", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("refused after %v: retried", el)
	}
	start = time.Now()
	dialer.Close()
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Close after a failed Connect took %v", el)
	}
}

// bulkPair sets up a sealed bulk connection on loopback between a dialer
// holding dc and an acceptor holding ac, with token; accept, if not nil,
// runs the acceptor's side instead of the real one.
func bulkPair(t *testing.T, dc, ac *Credentials, token [16]byte, accept func(net.Conn) (*bulkConn, error)) (d, a *bulkConn, dErr, aErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if accept == nil {
		accept = func(c net.Conn) (*bulkConn, error) {
			b, h, err := acceptBulkConn(c, ac, false)
			if err == nil {
				err = b.answerBulk(h, token)
			}
			return b, err
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			aErr = err
			return
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if a, aErr = accept(c); aErr != nil {
			c.Close()
		} else {
			c.SetDeadline(time.Time{})
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if d, dErr = dialBulkConn(c, dc, false, 0, bulkHello{Rank: 1, Session: Session{7}}, token); dErr != nil {
		c.Close()
	} else {
		c.SetDeadline(time.Time{})
	}
	<-done
	return d, a, dErr, aErr
}

// TestBulkBoundBothWays: the acceptor of a bulk connection must prove it
// knows the token (a holder of a certificate of the CA sitting at the bulk
// address does not), the dialer too, and a relay in the middle that holds
// a certificate good for any rank cannot pass one end's proof to the
// other: the proofs are bound to each leg's handshake.
func TestBulkBoundBothWays(t *testing.T) {
	token := [16]byte{1, 2, 3}
	r0, r1, any := rankCreds(t, "job", 0), rankCreds(t, "job", 1), rankCreds(t, "job", AnyRank)

	d, a, dErr, aErr := bulkPair(t, r1, r0, token, nil)
	if dErr != nil || aErr != nil {
		t.Fatalf("the real pair: %v / %v", dErr, aErr)
	}
	d.Close()
	a.Close()

	// An acceptor that does not know the token.
	_, _, dErr, _ = bulkPair(t, r1, any, token, func(c net.Conn) (*bulkConn, error) {
		b, h, err := acceptBulkConn(c, any, false)
		if err != nil {
			return nil, err
		}
		guess := b.proof([16]byte{9}, proveAcceptor, h)
		return b, b.writeRecord(guess[:])
	})
	if dErr == nil {
		t.Fatal("the dialer took an acceptor that does not know the token")
	}
	t.Logf("acceptor without the token: %v", dErr)

	// A dialer that does not know it.
	_, _, _, aErr = bulkPair(t, any, r0, [16]byte{9}, func(c net.Conn) (*bulkConn, error) {
		b, h, err := acceptBulkConn(c, r0, false)
		if err != nil {
			return nil, err
		}
		return b, b.answerBulk(h, token)
	})
	if aErr == nil {
		t.Fatal("the acceptor took a dialer that does not know the token")
	}

	// A relay: it accepts the real dialer's connection, dials the real
	// acceptor and passes the dialer's hello on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accErr <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, h, err := acceptBulkConn(c, r0, false)
		if err == nil {
			err = b.answerBulk(h, token)
		}
		accErr <- err
	}()
	_, _, dErr, _ = bulkPair(t, r1, any, token, func(c net.Conn) (*bulkConn, error) {
		front, h, err := acceptBulkConn(c, any, false)
		if err != nil {
			return nil, err
		}
		back, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return nil, err
		}
		defer back.Close()
		back.SetDeadline(time.Now().Add(5 * time.Second))
		// The relay's own dial, with the victim's proof in its hello.
		hb, err := relayHello(back, any, h)
		if err != nil {
			return front, err
		}
		return front, front.writeRecord(hb[:])
	})
	if err := <-accErr; err == nil {
		t.Error("the acceptor took a relayed hello")
	}
	if dErr == nil {
		t.Error("the dialer took a relay")
	}
}

// relayHello dials the acceptor on c as the holder of creds and sends h as
// it is; it returns the acceptor's answer.
func relayHello(c net.Conn, creds *Credentials, h bulkHello) ([16]byte, error) {
	var ans [16]byte
	b, err := dialBulkSetup(c, creds)
	if err != nil {
		return ans, err
	}
	if err := b.writeRecord(h.encode()); err != nil {
		return ans, err
	}
	return ans, b.readRecord(ans[:])
}

// TestBulkHelloFlood: on a trusted network anyone who reaches the bulk
// port can send hellos; those claiming this rank, or a rank that was
// issued no token, are closed at once rather than queued, so they can
// neither fill the queue nor stop the mesh from forming.
func TestBulkHelloFlood(t *testing.T) {
	checkGoroutines(t)
	cfg := Config{Credentials: creds(t), TrustedNetwork: true}
	ep, err := ListenAddr("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", ep.BulkAddr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			h := bulkHello{Rank: i % 3, Eager: i%2 == 0, Token: [16]byte{byte(i)}}
			c.Write(h.encode())
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			// The challenge comes first; no answer after it.
			if _, err := io.ReadFull(c, make([]byte, challengeLen+1)); err == nil {
				t.Error("a bulk hello without a token issued was answered")
			}
		})
	}
	wg.Wait()
	ep.mu.Lock()
	queued := len(ep.bulkIn)
	ep.mu.Unlock()
	if queued != 0 {
		t.Fatalf("%d of %d bulk hellos without a token queued", queued, n)
	}
}

// TestKeyFiles: credentials are written into new files only, never
// through a planted symbolic link, the key with mode 0600 whatever was
// there; an existing file is refused unless overwriting is asked for.
func TestKeyFiles(t *testing.T) {
	creds(t)
	dir := t.TempDir()
	id := RankIdentity("job", 3)
	keyFile := filepath.Join(dir, "job-rank3-key.pem")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, keyFile); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testCA.WriteCredentials(dir, id, false); err == nil {
		t.Fatal("wrote a key through a planted symbolic link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Fatalf("the link's target was written: %q", b)
	}
	_, kf, err := testCA.WriteCredentials(dir, id, true)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Fatalf("the link's target was written: %q", b)
	}
	st, err := os.Lstat(kf)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, want a regular file of mode 0600", st.Mode())
	}
	// A key file left readable by others is replaced, not reused.
	if err := os.Chmod(kf, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testCA.WriteCredentials(dir, id, false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("wrote over an existing file: %v", err)
	}
	if _, _, err := testCA.WriteCredentials(dir, id, true); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kf); st.Mode().Perm() != 0o600 {
		t.Fatalf("overwritten key has mode %v", st.Mode().Perm())
	}
	if _, err := LoadCredentials(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "job-rank3.pem"), kf); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadCredentials without ca.pem: %v", err)
	}
}

// TestBulkKeyUpdate: each direction's nonces are its IV XORed with the
// sequence number, the IVs secret and different per direction, and both
// ends move to the next key after keyUpdateBytes, counting on their own
// side, without a message.
func TestBulkKeyUpdate(t *testing.T) {
	defer func(n int64) { keyUpdateBytes = n }(keyUpdateBytes)
	keyUpdateBytes = 1 << 20
	token := [16]byte{4}
	d, a, dErr, aErr := bulkPair(t, rankCreds(t, "job", 1), rankCreds(t, "job", 0), token, nil)
	if dErr != nil || aErr != nil {
		t.Fatal(dErr, aErr)
	}
	defer d.Close()
	defer a.Close()
	if d.send.iv == ([12]byte{}) || d.send.iv == d.recv.iv || d.send.iv != a.recv.iv {
		t.Fatalf("IVs: dialer sends %x, receives %x; acceptor receives %x", d.send.iv, d.recv.iv, a.recv.iv)
	}
	payload := pattern(5<<20+123, 3)
	got := make([]byte, len(payload))
	errc := make(chan error, 1)
	go func() { errc <- d.writeMessage(bulkHeader{ID: 1, Len: uint64(len(payload))}, payload) }()
	h, err := a.readHeader(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.readPayload(got, int64(h.Len), 0); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if string(got) != string(payload) {
		t.Fatal("payload changed across key updates")
	}
	if d.send.gen < 5 || d.send.gen != a.recv.gen || d.send.seq != a.recv.seq {
		t.Fatalf("key generations: sender %d (seq %d), receiver %d (seq %d)", d.send.gen, d.send.seq, a.recv.gen, a.recv.seq)
	}
}

// failingListener fails its first Accept as a process out of descriptors
// does, then hands out the connections of the real listener.
type failingListener struct {
	net.Listener
	mu      sync.Mutex
	calls   int
	failFor int
}

func (f *failingListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	f.calls++
	fail := f.calls <= f.failFor
	f.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return f.Listener.Accept()
}

// TestAcceptRetry: a failed Accept (no descriptor left for a moment) does
// not stop the bulk listener; and connections that never finish their
// handshake hold at most maxHandshakes slots: beyond that the oldest is
// closed to make room for the next, so the listener keeps accepting.
func TestAcceptRetry(t *testing.T) {
	checkGoroutines(t)
	ep, err := ListenAddr("127.0.0.1:0", Config{Credentials: creds(t), HandshakeTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &failingListener{Listener: ln, failFor: 3}
	a := newAcceptor(f, maxHandshakes)
	ep.wg.Go(func() { ep.acceptBulk(a, false) })
	defer ln.Close()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Silent connections: each holds a handshake slot while it can.
	const extra = 20
	for range maxHandshakes + extra {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		calls := f.calls
		f.mu.Unlock()
		if calls >= f.failFor+maxHandshakes+extra || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.mu.Lock()
	calls := f.calls
	f.mu.Unlock()
	pending, evicted := a.pending()
	t.Logf("%d accepts after %d failures; %d being set up, %d closed to make room", calls-f.failFor, f.failFor, pending, evicted)
	if calls-f.failFor < maxHandshakes+extra {
		t.Fatalf("%d accepts after %d failures: the listener stopped", calls-f.failFor, f.failFor)
	}
	if pending > maxHandshakes || evicted != extra {
		t.Fatalf("%d handshakes in flight (cap %d), %d closed to make room (want %d)", pending, maxHandshakes, evicted, extra)
	}
	// The oldest were closed.
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conns[0].Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the oldest silent connection is still open: %v", err)
	}
}

// TestCloseAfterFailedConnect: rank 2 of 3 reaches rank 0 but never rank 1;
// once its Connect has failed, Close returns at once rather than waiting
// the link's Timeout for a bye from rank 0.
func TestCloseAfterFailedConnect(t *testing.T) {
	checkGoroutines(t)
	cfg := Config{Credentials: creds(t), Timeout: 30 * time.Second}
	ep0, err := ListenAddr("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep2, err := ListenAddr("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	absent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	absentAddr := absent.LocalAddr()
	absent.Close()
	peers := []PeerAddr{{Addr: ep0.Addr()}, {Addr: absentAddr}, {Addr: ep2.Addr()}}
	ctx0, cancel0 := context.WithCancel(context.Background())
	done0 := make(chan struct{})
	go func() {
		defer close(done0)
		ep0.Connect(ctx0, 0, peers, Session{3})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := ep2.Connect(ctx, 2, peers, Session{3}); err == nil {
		t.Fatal("Connect without rank 1 succeeded")
	}
	start := time.Now()
	ep2.Close()
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Close after a failed Connect took %v (Timeout %v)", el, cfg.Timeout)
	}
	cancel0()
	<-done0
	ep0.Close()
}

// FuzzIdentity parses arbitrary subject alternative names: it never
// panics, and an identity it accepts is valid and written back the same.
func FuzzIdentity(f *testing.F) {
	f.Add("nexar://job/rank/3")
	f.Add("nexar://job-1.x_y/any")
	f.Add("nexar://job/rank/03")
	f.Add("nexar://u@job/rank/-1?x#y")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		id, err := parseIdentity(u)
		if err != nil {
			return
		}
		if err := id.check(); err != nil {
			t.Fatalf("accepted %q as %+v: %v", s, id, err)
		}
		back, err := parseIdentity(id.URI())
		if err != nil || back != id {
			t.Fatalf("%q: %+v written as %q reads back as %+v, %v", s, id, id.URI(), back, err)
		}
	})
}

// TestMeshHelloPending: before Connect takes them, mesh hellos are kept
// one per rank (a later one replaces an earlier one, which is closed), so
// that a process holding a job-wide certificate cannot fill the queue; once
// Connect has begun, hellos claiming this rank or a lower one are refused
// at once.
func TestMeshHelloPending(t *testing.T) {
	checkGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ep, err := ListenAddr("127.0.0.1:0", Config{Credentials: rankCreds(t, "job", 1), NoBulk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	mallory, err := ListenAddr("127.0.0.1:0", Config{Credentials: rankCreds(t, "job", AnyRank), NoBulk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mallory.Close()
	hi := func(rank int) *quic.Conn {
		conn, err := mallory.tr.Dial(ctx, ep.Addr(), mallory.cfg.Credentials.clientTLS(alpnMesh), mallory.quicConfig())
		if err != nil {
			t.Fatal(err)
		}
		ctrl, err := conn.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ctrl.Write(appendFrame(nil, frameHello, hello{Rank: rank, World: 4, Session: Session{5}}.body())); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	pending := func() int {
		ep.mu.Lock()
		defer ep.mu.Unlock()
		return len(ep.meshIn)
	}
	var conns []*quic.Conn
	for range 20 {
		conns = append(conns, hi(3))
	}
	for i := 0; pending() == 0 && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := pending(); n != 1 {
		t.Fatalf("%d hellos of rank 3 pending, want 1", n)
	}
	// The hellos are handled concurrently: whichever came last is kept,
	// and every other one is closed.
	open := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		open = 0
		for _, c := range conns {
			if c.Context().Err() == nil {
				open++
			}
		}
		if open == 1 {
			break
		}
	}
	if open != 1 {
		t.Fatalf("%d of %d connections of rank 3 still open, want the one kept", open, len(conns))
	}

	// Connect as rank 1 of 4 (rank 0 is nowhere): hellos claiming rank 1
	// or 0 are refused at once.
	absent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	absentAddr := absent.LocalAddr()
	absent.Close()
	peers := []PeerAddr{{Addr: absentAddr}, {Addr: ep.Addr()}, {Addr: absentAddr}, {Addr: absentAddr}}
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ep.Connect(cctx, 1, peers, Session{5})
	}()
	defer func() { ccancel(); <-done }()
	for i := 0; i < 200; i++ {
		ep.mu.Lock()
		started := ep.link != nil
		ep.mu.Unlock()
		if started {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, r := range []int{0, 1} {
		c := hi(r)
		select {
		case <-c.Context().Done():
			t.Logf("rank %d: %v", r, context.Cause(c.Context()))
		case <-time.After(5 * time.Second):
			t.Fatalf("a hello claiming rank %d was kept", r)
		}
	}
}

// TestBulkListenerFlood: anyone who reaches the bulk port opens 600 TCP
// connections and sends nothing. They take no handshake slot a rank of
// the world needs for long: the oldest handshake is closed to make room
// for the next, so the mesh forms as fast as without them (and each costs
// a goroutine only while it holds a slot).
func TestBulkListenerFlood(t *testing.T) {
	checkGoroutines(t)
	const flood = 600
	cfg := Config{Credentials: creds(t), HandshakeTimeout: 2 * time.Second}
	eps := make([]*Endpoint, 2)
	for i := range eps {
		var err error
		if eps[i], err = ListenAddr("127.0.0.1:0", cfg); err != nil {
			t.Fatal(err)
		}
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", eps[0].BulkAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := eps[0].HostSeed(2, ""); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	links := make([]*Link, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { links[i], errs[i] = ep.Join(ctx, eps[0].Addr().String(), i, 2) })
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("mesh formed in %v beside %d idle connections: %v %v", took.Round(time.Millisecond), flood, errs[0], errs[1])
	for i, err := range errs {
		if err != nil {
			for _, ep := range eps {
				ep.Close()
			}
			t.Fatalf("rank %d: %v", i, err)
		}
	}
	closeWorld(t, links)
	if took > cfg.HandshakeTimeout {
		t.Errorf("the mesh took %v to form beside %d idle connections, more than one handshake timeout", took, flood)
	}
}

// recordingConn keeps a copy of what is read from it.
type recordingConn struct {
	net.Conn
	read []byte
}

func (r *recordingConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.read = append(r.read, p[:n]...)
	return n, err
}

// TestTrustedHelloReplay: on a trusted network (plaintext bulk
// connections) someone who captured a rank's bulk hello sends it again on
// a connection of its own, while the token it proves is still good. The
// acceptor refuses it: the proof is bound to a challenge the acceptor
// sends on each connection.
func TestTrustedHelloReplay(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	token := [16]byte{4, 5, 6}
	accept := func() (*recordingConn, bulkHello, error) {
		c, err := ln.Accept()
		if err != nil {
			return nil, bulkHello{}, err
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		rc := &recordingConn{Conn: c}
		b, h, err := acceptBulkConn(rc, creds(t), true)
		if err == nil {
			err = b.answerBulk(h, token)
		}
		return rc, h, err
	}
	var captured []byte
	done := make(chan error, 1)
	go func() {
		rc, _, err := accept()
		if rc != nil {
			captured = rc.read
			defer rc.Close()
		}
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := dialBulkConn(c, creds(t), true, 0, bulkHello{Rank: 1, Session: Session{1}}, token); err != nil {
		t.Fatalf("the real dialer: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the real acceptor: %v", err)
	}
	c.Close()

	// The replay: what the real dialer sent, on a connection of its own.
	go func() {
		rc, _, err := accept()
		if rc != nil {
			defer rc.Close()
		}
		done <- err
	}()
	mallory, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer mallory.Close()
	mallory.Write(captured)
	err = <-done
	t.Logf("a captured hello of %d bytes sent again: %v", len(captured), err)
	if err == nil {
		t.Fatal("the acceptor took a captured hello on another connection")
	}
}

// TestEagerCreditOverflow: a receiver grants a sender 2^63 bytes of eager
// credit, which would overflow the sender's count and leave it no credit
// at all (its sends waiting for ever). The sender refuses such a grant:
// the receiver broke the protocol, and the sender's operations fail at
// once naming it.
func TestEagerCreditOverflow(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Eager: 1024}, TrustedNetwork: true, Timeout: 3 * time.Second})
	defer closeWorld(t, links)
	time.Sleep(100 * time.Millisecond) // the real credit has come
	p := links[0].peers[1]
	p.eager.wmu.Lock()
	_, err := p.eager.c.Write(msgHeader{Kind: kindCredit, Len: 1 << 63}.append(nil))
	p.eager.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = links[1].Wait(ctx, links[1].Isend(0, 3, device.Host{1}))
	if err == nil {
		err = links[1].Wait(ctx, links[1].Irecv(0, 3, device.Host{1}))
	}
	t.Logf("after a grant of 2^63 bytes, in %v: %v", time.Since(start).Round(time.Millisecond), err)
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Rank != 0 {
		t.Fatalf("the sender's operations: %v, want a *PeerError naming rank 0", err)
	}
}
