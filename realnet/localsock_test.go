//go:build linux

package realnet

import (
	"context"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
)

// TestLocalSockets: ranks on one host connect their bulk and eager
// connections over the local socket, in plaintext, unless
// Config.NoLocalSockets, when they use TCP, sealed unless the network is
// trusted; the catalogue's results are right on each.
func TestLocalSockets(t *testing.T) {
	checkGoroutines(t)
	for _, c := range []struct {
		name             string
		cfg              Config
		unix, wantSealed bool
	}{
		{"local", Config{}, true, false},
		{"local-trusted", Config{TrustedNetwork: true}, true, false},
		{"tcp", Config{NoLocalSockets: true}, false, true},
		{"tcp-trusted", Config{NoLocalSockets: true, TrustedNetwork: true}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Thresholds = algos.Thresholds{Bulk: 1, Eager: 1024}
			links := newWorld(t, 3, cfg)
			defer closeWorld(t, links)
			for _, l := range links {
				for _, q := range l.peers {
					if q == nil {
						continue
					}
					for _, b := range []*bulkConn{q.bulk, q.eager} {
						_, isUnix := b.c.(*net.UnixConn)
						if isUnix != c.unix || b.sealed() != c.wantSealed {
							t.Errorf("rank %d to rank %d: a %T, sealed %v; want unix %v, sealed %v",
								l.rank, q.rank, b.c, b.sealed(), c.unix, c.wantSealed)
						}
					}
				}
			}
			runCatalogue(t, links, []int{4099}, map[string]bool{})
		})
	}
}

// TestLocalSocketSquatted: a process holding an endpoint's local socket
// name answers its peers' dials as a rank would, but cannot prove the
// token; they fall back to TCP, sealed, and the world works.
func TestLocalSocketSquatted(t *testing.T) {
	checkGoroutines(t)
	eps := newEndpoints(t, 3, Config{Thresholds: algos.Thresholds{Bulk: 1}})
	name := localName(eps[0].BulkAddr().String())
	eps[0].localLn.Close()
	squat, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer squat.Close()
	go func() {
		for {
			c, err := squat.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := newPlainBulk(c)
				challenge := make([]byte, challengeLen)
				rand.Read(challenge)
				c.Write(challenge)
				hello := make([]byte, bulkHelloLen)
				if b.readRecord(hello) != nil {
					return
				}
				var proof [16]byte
				rand.Read(proof[:])
				b.writeRecord(proof[:])
				c.Read(make([]byte, 1))
			}()
		}
	}()
	links := joinWorld(t, eps)
	defer closeWorld(t, links)
	for _, l := range links {
		for _, q := range l.peers {
			if q == nil {
				continue
			}
			_, isUnix := q.bulk.c.(*net.UnixConn)
			toSquatted := l.rank == 0 || q.rank == 0
			if isUnix == toSquatted || q.bulk.sealed() != toSquatted {
				t.Errorf("rank %d to rank %d: a %T, sealed %v", l.rank, q.rank, q.bulk.c, q.bulk.sealed())
			}
		}
	}
	runCatalogue(t, links, []int{4099}, map[string]bool{})
}

// TestLocalSocketStranger: a connection to an endpoint's local socket
// that cannot prove a token is closed, and the ranks still connect.
func TestLocalSocketStranger(t *testing.T) {
	checkGoroutines(t)
	eps := newEndpoints(t, 2, Config{Thresholds: algos.Thresholds{Bulk: 1}})
	c, err := net.Dial("unix", localName(eps[0].BulkAddr().String()))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b := newPlainBulk(c)
	challenge := make([]byte, challengeLen)
	if _, err := c.Read(challenge); err != nil {
		t.Fatal(err)
	}
	h := bulkHello{Rank: 1}
	rand.Read(h.Token[:])
	if err := b.writeRecord(h.encode()); err != nil {
		t.Fatal(err)
	}
	if err := b.readRecord(make([]byte, 16)); err == nil {
		t.Fatal("a stranger's hello was answered")
	}
	c.Close()
	links := joinWorld(t, eps)
	defer closeWorld(t, links)
	if _, ok := links[1].peers[0].bulk.c.(*net.UnixConn); !ok {
		t.Errorf("rank 1's bulk connection is a %T", links[1].peers[0].bulk.c)
	}
}

// TestLocalHost: which bulk addresses are this host's.
func TestLocalHost(t *testing.T) {
	var l localHost
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:4000", true},
		{"127.0.0.2:4000", true},
		{"[::1]:4000", true},
		{"localhost:4000", true},
		{"192.0.2.1:4000", false}, // TEST-NET-1, on no host
		{"no port", false},
	} {
		if got := l.holds(ctx, c.addr); got != c.want {
			t.Errorf("holds(%q) = %v, want %v", c.addr, got, c.want)
		}
	}
	as, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			addr := net.JoinHostPort(n.IP.String(), "4000")
			if !l.holds(ctx, addr) {
				t.Errorf("holds(%q) = false for an interface's address", addr)
			}
		}
	}
	if got := localName("10.0.0.1:40001"); got != "@nexar-bulk/40001" {
		t.Errorf("localName = %q", got)
	}
}
