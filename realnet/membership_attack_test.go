package realnet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// memberCreds returns credentials of testCA for member id of the tests'
// job: the certificate a launcher gives the worker that is member id.
func memberCreds(t *testing.T, id int) *Credentials {
	t.Helper()
	return rankCreds(t, "rank", id)
}

// rawMember opens a membership connection with creds and says hello as
// member id, as JoinMembership does, without beating.
func rawMember(t *testing.T, addr string, creds *Credentials, id int) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, creds.clientTLS(alpnMembership))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	writeLine(t, c, memberMsg{Type: "hello", Member: id})
	return c
}

func writeLine(t *testing.T, c net.Conn, msg memberMsg) {
	t.Helper()
	b, _ := json.Marshal(msg)
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// joinMember joins the coordinator at addr as member id with its own
// certificate.
func joinMember(t *testing.T, addr string, id int) *Member {
	t.Helper()
	m, err := JoinMembership(context.Background(), addr, memberCreds(t, id), id, testHeartbeat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// stopped reports whether m is told to stop, or loses the coordinator,
// within d.
func stopped(m *Member, d time.Duration) string {
	select {
	case <-m.Stopped():
		return "told to stop"
	case <-m.Grow():
		return "asked to leave it for a member to join"
	case <-m.gone:
		return "dropped by the coordinator"
	case <-time.After(d):
		return ""
	}
}

// TestMemberIDBound: the holder of member 2's certificate says hello as
// member 1 before member 1 does. The coordinator refuses it, rather than
// dropping the real member 1 (whose world would then stop).
func TestMemberIDBound(t *testing.T) {
	addr, _ := startCoordinator(t, CoordinatorConfig{Heartbeat: testHeartbeat, World: 3})
	mallory := rawMember(t, addr, memberCreds(t, 2), 1)
	time.Sleep(100 * time.Millisecond)
	m0, m1 := joinMember(t, addr, 0), joinMember(t, addr, 1)
	start := time.Now()
	got := stopped(m1, 2*time.Second)
	if got == "" {
		got = stopped(m0, 0)
	}
	mallory.SetReadDeadline(time.Now().Add(time.Second))
	_, err := mallory.Read(make([]byte, 1))
	t.Logf("after %v: members 0 and 1: %q; the impostor's connection: %v", time.Since(start).Round(time.Millisecond), got, err)
	if got != "" {
		t.Fatalf("a member was %s after an impostor took its id", got)
	}
	if err == nil {
		t.Fatal("the impostor's connection is still served")
	}
}

// TestForgedMembership: a certificate holder that was never launched
// cannot stop the world: not as a member outside the first world (member
// 5 of 2), nor, in an elastic world, by joining late under an id its
// certificate does not name.
func TestForgedMembership(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       CoordinatorConfig
		cert, id  int
		say       memberMsg
		wantStops bool
	}{
		{"outside the world", CoordinatorConfig{World: 2}, 5, 5, memberMsg{Type: "failed", Addr: joinAddr{Host: "127.0.0.1", UDPPort: 9}}, false},
		{"joining under another id", CoordinatorConfig{World: 2, MaxWorld: 4}, 1, 6, memberMsg{Type: "join", Addr: joinAddr{Host: "127.0.0.1", UDPPort: 9}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Heartbeat = testHeartbeat
			addr, _ := startCoordinator(t, cfg)
			m0, m1 := joinMember(t, addr, 0), joinMember(t, addr, 1)
			time.Sleep(100 * time.Millisecond)
			mallory := rawMember(t, addr, memberCreds(t, tc.cert), tc.id)
			writeLine(t, mallory, tc.say)
			got := stopped(m0, 2*time.Second)
			if got == "" {
				got = stopped(m1, 0)
			}
			t.Logf("certificate of member %d, hello as member %d, then %q: the world was %q", tc.cert, tc.id, tc.say.Type, got)
			if got != "" {
				t.Fatalf("the world was %s", got)
			}
		})
	}
}

// TestAgreementDeadline: member 2 keeps sending heartbeats but never
// reports its broken link (its main loop hung). The survivors' agreement
// does not wait for it for ever: AgreeTimeout after the stop it is
// declared dead, and the world is rebuilt without it.
func TestAgreementDeadline(t *testing.T) {
	checkGoroutines(t)
	addr, events := startCoordinator(t, CoordinatorConfig{Heartbeat: testHeartbeat, World: 3})
	ms := []*Member{joinMember(t, addr, 0), joinMember(t, addr, 1), joinMember(t, addr, 2)}
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	links := make([]*Link, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			links[i], _, errs[i] = ms[i].Rebuild(ctx, 0, nil, Config{Credentials: memberCreds(t, i)})
		})
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("rebuilt after %v: %v %v", took.Round(time.Millisecond), errs[0], errs[1])
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	closeWorld(t, links)
	if e := nextEvent(t, events, "dead"); e.Member != 2 {
		t.Errorf("member %d declared dead (%s), want 2", e.Member, e.Cause)
	} else {
		t.Logf("member 2: %s", e.Cause)
	}
}

// TestMemberLinesBounded: 40 connections of a certificate holder each
// send 5 MB without a line break. The coordinator reads at most a short
// line from each and drops them, rather than holding every line whole
// until the member is declared dead.
func TestMemberLinesBounded(t *testing.T) {
	addr, _ := startCoordinator(t, CoordinatorConfig{Heartbeat: Heartbeat{Interval: 100 * time.Millisecond, DeadAfter: 10 * time.Second}, World: 2})
	const conns, size = 40, 5 << 20
	before := heapInUse()
	var wg sync.WaitGroup
	junk := make([]byte, size)
	for i := range junk {
		junk[i] = 'x'
	}
	// The connections stay open while the heap is measured: a member's
	// line is held for as long as its connection is served.
	hold := make(chan struct{})
	var held sync.WaitGroup
	for range conns {
		wg.Add(1)
		held.Go(func() {
			c, err := tls.Dial("tcp", addr, creds(t).clientTLS(alpnMembership))
			if err != nil {
				t.Error(err)
				wg.Done()
				return
			}
			defer c.Close()
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			c.Write([]byte(`{"type":"hello","member":0,"x":"`))
			c.Write(junk) // fails once the coordinator has dropped c
			wg.Done()
			<-hold
		})
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond)
	grown := heapInUse() - before - size // the test's own junk
	close(hold)
	held.Wait()
	t.Logf("%d connections each sent %d MB without a line break: heap +%d KiB", conns, size>>20, grown>>10)
	if bound := int64(16 << 20); grown > bound {
		t.Fatalf("heap grew %d KiB, bound %d KiB", grown>>10, bound>>10)
	}
}

// TestCoordinatorAccept: a failed Accept (no descriptor left for a moment)
// does not stop the coordinator; and 2000 TCP connections that never
// start their handshake cost a goroutine each only while they hold one of
// the coordinator's handshake slots.
func TestCoordinatorAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &failingListener{Listener: ln, failFor: 3}
	events := make(chan MembershipEvent, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeMembership(ctx, f, CoordinatorConfig{Credentials: creds(t), Heartbeat: testHeartbeat, World: 2, Events: func(e MembershipEvent) { events <- e }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("coordinator: %v", err)
		}
	}()
	base := runtime.NumGoroutine()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 2000 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	time.Sleep(500 * time.Millisecond)
	grown := runtime.NumGoroutine() - base
	jctx, jcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer jcancel()
	var ms []*Member
	for id := range 2 {
		m, err := JoinMembership(jctx, ln.Addr().String(), memberCreds(t, id), id, testHeartbeat)
		if err != nil {
			t.Fatalf("member %d: %v", id, err)
		}
		defer m.Close()
		ms = append(ms, m)
	}
	time.Sleep(300 * time.Millisecond)
	ms[1].Close()
	var dead string
	select {
	case e := <-events:
		dead = e.Kind + ": " + e.Cause
	case <-time.After(5 * time.Second):
	}
	t.Logf("after 3 failed accepts and 2000 idle connections (+%d goroutines): %q", grown, dead)
	if dead == "" {
		t.Fatal("the coordinator noticed nothing: it stopped serving")
	}
	if grown > 2*maxHandshakes {
		t.Errorf("2000 idle connections cost %d goroutines", grown)
	}
}

// TestRebuildIdentities: each member holds a certificate of its own
// (member N: rank N of the first world), which stays good when a world is
// rebuilt and renumbered: member 1 dies, members 0 and 2 become ranks 0
// and 1 of the next world and connect with their own certificates. And
// the certificate of another member does not pass for it: the holder of
// member 1's certificate cannot connect as rank 1 of that world, which is
// member 2's.
func TestRebuildIdentities(t *testing.T) {
	checkGoroutines(t)
	addr, events := startCoordinator(t, CoordinatorConfig{Heartbeat: testHeartbeat, World: 3})
	ms := []*Member{joinMember(t, addr, 0), joinMember(t, addr, 1), joinMember(t, addr, 2)}
	time.Sleep(100 * time.Millisecond)
	ms[1].Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	links := make([]*Link, 2)
	errs := make([]error, 2)
	for i, id := range []int{0, 2} {
		wg.Go(func() {
			<-ms[id].Stopped()
			links[i], _, errs[i] = ms[id].Rebuild(ctx, 0, nil, Config{Credentials: memberCreds(t, id)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", []int{0, 2}[i], err)
		}
	}
	nextEvent(t, events, "rebuilt")
	if err := firstErr(run(links, func(ctx context.Context, l *Link) error {
		buf := device.Host{byte(l.Rank())}
		return l.Wait(ctx, l.Isend(1-l.Rank(), 1, buf), l.Irecv(1-l.Rank(), 1, buf))
	})); err != nil {
		t.Fatal(err)
	}
	closeWorld(t, links)

	// The same world, with the holder of member 1's certificate dialing
	// rank 0 as rank 1 before member 2 does.
	eps := make([]*Endpoint, 3)
	for i := range eps {
		var err error
		if eps[i], err = ListenAddr("127.0.0.1:0", Config{Credentials: memberCreds(t, i), HandshakeTimeout: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		eps[i].awaitMembers()
	}
	addrOf := func(ep *Endpoint) PeerAddr { return PeerAddr{Addr: ep.Addr(), Bulk: ep.BulkAddr().String()} }
	session := Session{7}
	world := []PeerAddr{addrOf(eps[0]), addrOf(eps[2])}
	var l0, l2 *Link
	var err0, err2 error
	wg.Go(func() { l0, err0 = eps[0].connectMembers(ctx, 0, world, session, []int{0, 2}) })
	_, errImpostor := eps[1].connectMembers(ctx, 1, []PeerAddr{addrOf(eps[0]), addrOf(eps[1])}, session, []int{0, 1})
	eps[1].Close()
	wg.Go(func() { l2, err2 = eps[2].connectMembers(ctx, 1, world, session, []int{0, 2}) })
	wg.Wait()
	t.Logf("member 1's certificate as rank 1 (member 2's): %v", errImpostor)
	if errImpostor == nil || !strings.Contains(errImpostor.Error(), "certificate of rank 1 claims rank 2") {
		t.Errorf("the holder of member 1's certificate connected as member 2: %v", errImpostor)
	}
	if err0 != nil || err2 != nil {
		t.Fatalf("the real world: %v / %v", err0, err2)
	}
	closeWorld(t, []*Link{l0, l2})
}
