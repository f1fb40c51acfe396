package realnet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// testHeartbeat is short, so that the tests notice a death quickly.
var testHeartbeat = Heartbeat{Interval: 100 * time.Millisecond, DeadAfter: time.Second}

// startCoordinator serves a membership coordinator on 127.0.0.1 until the
// test ends; its events go to the returned channel.
func startCoordinator(t *testing.T, cfg CoordinatorConfig) (string, <-chan MembershipEvent) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan MembershipEvent, 64)
	if cfg.Credentials == nil {
		cfg.Credentials = creds(t)
	}
	cfg.Events = func(e MembershipEvent) { events <- e }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeMembership(ctx, ln, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("coordinator: %v", err)
		}
	})
	return ln.Addr().String(), events
}

func nextEvent(t *testing.T, events <-chan MembershipEvent, kind string) MembershipEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Kind == kind {
				return e
			}
		case <-timeout:
			t.Fatalf("no %q event in 30 s", kind)
		}
	}
}

// TestRecoveryShrink: four ranks run allreduces; rank 2 leaves without a
// word (its link aborted, its membership connection closed, as a killed
// process's would be); the three others agree that rank 2 failed, rebuild
// a world of three with contiguous ranks, and run the whole catalogue on
// it.
func TestRecoveryShrink(t *testing.T) {
	checkGoroutines(t)
	const p, dead = 4, 2
	addr, events := startCoordinator(t, CoordinatorConfig{Heartbeat: testHeartbeat, MinWorld: 2})
	links := newWorld(t, p, Config{})
	members := make([]*Member, p)
	for r := range members {
		m, err := JoinMembership(context.Background(), addr, creds(t), r, testHeartbeat)
		if err != nil {
			t.Fatal(err)
		}
		members[r] = m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	newLinks := make([]*Link, p)
	rebuilds := make([]Rebuild, p)
	errs := make([]error, p)
	started := make(chan struct{}, p)
	for r := range p {
		wg.Go(func() {
			l, m := links[r], members[r]
			if r != dead {
				ended := make(chan struct{})
				defer close(ended)
				go func() {
					select {
					case <-m.Stopped():
						l.Abort()
					case <-ended:
					}
				}()
			}
			buf := make(device.Host, 4<<10)
			var err error
			for seq := uint64(1); err == nil; seq++ {
				err = algos.RingAllreduce(ctx, algos.Scoped(l, 0, seq), buf, device.F32, device.Sum)
				if seq == 3 {
					started <- struct{}{}
				}
			}
			l.Abort()
			if r == dead {
				return
			}
			newLinks[r], rebuilds[r], errs[r] = m.Rebuild(ctx, 7+r, err, Config{Credentials: creds(t)})
		})
	}
	for range p {
		<-started
	}
	links[dead].Abort()
	members[dead].Close()
	wg.Wait()
	for r, err := range errs {
		if r != dead && err != nil {
			t.Fatalf("rank %d: rebuild: %v", r, err)
		}
	}
	dev := nextEvent(t, events, "dead")
	if dev.Member != dead {
		t.Errorf("dead member %d, want %d", dev.Member, dead)
	}
	rbe := nextEvent(t, events, "rebuild")
	built := nextEvent(t, events, "rebuilt")
	t.Logf("%s; agreed in %v, rebuilt in %v", dev.Cause, rbe.Agreed, built.Rebuild)
	var world []*Link
	for r, rb := range rebuilds {
		if r == dead {
			continue
		}
		want := r
		if r > dead {
			want--
		}
		if rb.Rank != want || rb.World != p-1 || !slices.Equal(rb.Members, []int{0, 1, 3}) || !slices.Equal(rb.Failed, []int{dead}) || rb.Point != 7 {
			t.Errorf("rank %d: rebuild %+v, want rank %d of 3, members [0 1 3], failed [2], point 7", r, rb, want)
		}
		if newLinks[r].Rank() != rb.Rank || newLinks[r].Size() != p-1 {
			t.Errorf("rank %d: new link is rank %d of %d", r, newLinks[r].Rank(), newLinks[r].Size())
		}
		world = append(world, newLinks[r])
	}
	slices.SortFunc(world, func(a, b *Link) int { return a.Rank() - b.Rank() })
	runCatalogue(t, world, []int{1, 4099}, map[string]bool{})
	closeWorld(t, world)
	for r, m := range members {
		if r != dead {
			if err := m.Done(); err != nil {
				t.Errorf("member %d: done: %v", r, err)
			}
		}
	}
}

// TestRecoveryMinWorld: with fewer survivors than the minimum, the
// survivor is told to give up.
func TestRecoveryMinWorld(t *testing.T) {
	addr, _ := startCoordinator(t, CoordinatorConfig{Heartbeat: testHeartbeat, MinWorld: 2})
	var ms []*Member
	for r := range 2 {
		m, err := JoinMembership(context.Background(), addr, creds(t), r, testHeartbeat)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	time.Sleep(100 * time.Millisecond) // both registered
	ms[1].Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	<-ms[0].Stopped()
	_, _, err := ms[0].Rebuild(ctx, 0, errors.New("lost"), Config{Credentials: creds(t)})
	var rej *JoinRejectedError
	if !errors.As(err, &rej) || !strings.Contains(rej.Reason, "minimum world of 2") {
		t.Fatalf("rebuild with 1 survivor: %v, want a rejection naming the minimum", err)
	}
	ms[0].Close()
}

// memberMain is a member process of TestHeartbeatDetection: it joins the
// coordinator at addr as member 1, says so, and beats until killed.
func memberMain(addr string) int {
	ca, err := LoadCredentials(os.Getenv("NEXAR_CA"), os.Getenv("NEXAR_CERT"), os.Getenv("NEXAR_KEY"))
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	m, err := JoinMembership(context.Background(), addr, ca, 1, testHeartbeat)
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	defer m.Close()
	fmt.Println("ready")
	select {}
}

// TestHeartbeatDetection: a member process that is killed is declared
// dead at once (its kernel closes its connection); one that is stopped
// (SIGSTOP: its sockets stay open, its heartbeats stop, as a hung process
// or a host that vanished) is declared dead after DeadAfter without a
// heartbeat, within Heartbeat.DetectionBound; either way the other
// members are told to stop.
func TestHeartbeatDetection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	caFile, certFile, keyFile, err := testCAFiles(t)
	if err != nil {
		t.Fatal(err)
	}
	// Scheduling slack of a loaded machine on top of the stated bound.
	const slack = 500 * time.Millisecond
	bound := testHeartbeat.DetectionBound()
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		how  string
	}{
		{"killed", syscall.SIGKILL, "connection"},
		{"stopped", syscall.SIGSTOP, "no heartbeat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, events := startCoordinator(t, CoordinatorConfig{Heartbeat: testHeartbeat})
			watcher, err := JoinMembership(context.Background(), addr, creds(t), 0, testHeartbeat)
			if err != nil {
				t.Fatal(err)
			}
			defer watcher.Close()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "REALNET_TEST_MEMBER="+addr, "NEXAR_CA="+caFile, "NEXAR_CERT="+certFile, "NEXAR_KEY="+keyFile)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cmd.Process.Kill()
				cmd.Wait()
			}()
			if sc := bufio.NewScanner(out); !sc.Scan() || sc.Text() != "ready" {
				t.Fatalf("member process: %q", sc.Text())
			}
			time.Sleep(4 * testHeartbeat.Interval) // a few heartbeats
			sent := time.Now()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			e := nextEvent(t, events, "dead")
			took := e.At.Sub(sent)
			t.Logf("%s: declared dead after %v (%s); stated bound %v", c.name, took.Round(time.Millisecond), e.Cause, bound)
			if e.Member != 1 || !strings.Contains(e.Cause, c.how) {
				t.Errorf("dead member %d (%s), want member 1 by %s", e.Member, e.Cause, c.how)
			}
			if took > bound+slack {
				t.Errorf("noticed after %v, beyond the bound %v (+%v slack)", took, bound, slack)
			}
			if c.sig == syscall.SIGSTOP && took < testHeartbeat.DeadAfter-testHeartbeat.Interval {
				t.Errorf("a stopped member declared dead after %v, before its heartbeats could be missed", took)
			}
			select {
			case <-watcher.Stopped():
			case <-time.After(5 * time.Second):
				t.Error("the other member was not told to stop")
			}
		})
	}
}

// testCAFiles writes the tests' CA and a rank certificate to files.
func testCAFiles(t *testing.T) (string, string, string, error) {
	creds(t)
	return testCA.WriteFiles(t.TempDir(), JobIdentity("rank"), false)
}

func FuzzMembershipMessages(f *testing.F) {
	f.Add([]byte(`{"type":"hello","member":3}`))
	f.Add([]byte(`{"type":"failed","epoch":1,"point":4,"addr":{"Host":"","UDPPort":1,"BulkPort":2}}`))
	f.Add([]byte(`{"type":"rebuild","epoch":1,"rank":0,"members":[0],"peers":[{"Host":"h","UDPPort":1,"BulkPort":0}],"failed":[1],"causes":["x"]}`))
	f.Add([]byte(`{"type":"stop","epoch":2}`))
	f.Add([]byte(`{"type":"beat","epoch":2}`))
	f.Add([]byte(`{"type":"failed","epoch":1,"point":4,"cause":"lost\u0000","addr":{"Host":"h","UDPPort":1,"BulkPort":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeMemberMsg(b); err == nil {
			if m.Type == "hello" && (m.Member < 0 || m.Member >= maxWorld) {
				t.Fatalf("accepted hello from member %d", m.Member)
			}
			// What a member may say fits the coordinator's line bound
			// when Member writes it.
			if line, err := json.Marshal(m); err != nil || len(line) > maxMemberLine {
				t.Fatalf("accepted %+v, which makes a line of %d bytes (%v), bound %d", m, len(line), err, maxMemberLine)
			}
		}
		if m, err := decodeCoordMsg(b); err == nil && m.Type == "rebuild" {
			if m.Rank < 0 || m.Rank >= len(m.Peers) || len(m.Members) != len(m.Peers) {
				t.Fatalf("accepted rebuild %+v", m)
			}
			for _, a := range m.Peers {
				if _, err := a.peerAddr(); err != nil {
					return // refused later, by Rebuild
				}
			}
		}
	})
}
