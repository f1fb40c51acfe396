package staging

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/realnet"
)

// loopbackWorld starts p realnet ranks on 127.0.0.1 in this process.
// MaxUnexpected is tiny, so a message whose receive is not posted waits in
// its sender's flow-control window (and bulk messages wait for the
// receiver's clear-to-send anyway): sends complete only when the receiver
// is ready, the rendezvous behaviour under which a staging layer that held
// back messages could deadlock.
func loopbackWorld(t testing.TB, p int) []*realnet.Link {
	t.Helper()
	ca, err := realnet.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ca.Credentials("rank")
	if err != nil {
		t.Fatal(err)
	}
	cfg := realnet.Config{Credentials: creds, Timeout: 30 * time.Second, MaxUnexpected: 1}
	eps := make([]*realnet.Endpoint, p)
	for i := range eps {
		if eps[i], err = realnet.ListenAddr("127.0.0.1:0", cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := eps[0].HostSeed(p, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	links := make([]*realnet.Link, p)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { links[i], errs[i] = ep.Join(ctx, eps[0].Addr().String(), i, p) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", i, err)
		}
	}
	t.Cleanup(func() {
		// Together, as processes ending would: a rank's Close waits for
		// its peers' goodbyes.
		var wg sync.WaitGroup
		for _, l := range links {
			wg.Go(func() { l.Close() })
		}
		wg.Wait()
	})
	return links
}

// TestStagedAllreduceRealnet runs every allreduce algorithm through the
// staging Link (fake mover) over realnet on loopback, 2 and 4 ranks, with
// messages of many chunks on the bulk path: the staging composes with the
// real transport and does not deadlock under its rendezvous.
func TestStagedAllreduceRealnet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts QUIC worlds on loopback")
	}
	coll, err := algos.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	const count, chunk = 50_001, 32 << 10 // 200 KB of f32: ring blocks of several chunks with odd tails
	params := map[string]int{"segment": 48 << 10, "group": 2, "tensors": 3}
	for _, p := range []int{2, 4} {
		links := loopbackWorld(t, p)
		for i, a := range coll.Algorithms {
			if a.Lossy() {
				continue // a compressed allreduce selects on the host: it refuses device memory
			}
			dt, op := device.F32, device.Ops()[i%4]
			seed := uint64(100 + i)
			want := algotest.Reduced(count, dt, op, p, seed)
			errs := make([]error, p)
			var wg sync.WaitGroup
			for r, inner := range links {
				wg.Go(func() {
					m := newFakeMover(seed, r)
					l := newLink(inner, m, linkConfig{chunk: chunk})
					defer l.Close()
					buf := fakeDev(algotest.Input(count, dt, op, r, p, seed))
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					if err := a.Run(ctx, algos.Scoped(l, 0, uint64(i)), algos.Call{Buf: buf, DType: dt, Op: op, Params: params}); err != nil {
						errs[r] = err
						return
					}
					errs[r] = algotest.Compare(buf, want, dt)
				})
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Errorf("p=%d %s %s: rank %d: %v", p, a.Name, op, r, err)
				}
			}
		}
	}
}

// TestStagedRendezvousCycle is the pattern that deadlocks a staging layer
// which waits on the network while holding back sends: every rank sends a
// large message to its right neighbour and receives one from its left, and
// waits for the receive before the send.
func TestStagedRendezvousCycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts QUIC worlds on loopback")
	}
	const p, n = 3, 1 << 20
	links := loopbackWorld(t, p)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r, inner := range links {
		wg.Go(func() {
			m := newFakeMover(1, r)
			m.polls = func() int { return 1 << 30 } // copies complete only when waited for
			l := newLink(inner, m, linkConfig{chunk: 64 << 10})
			defer l.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			send, recv := make(fakeDev, n), make(fakeDev, n)
			for i := range send {
				send[i] = byte(r + i)
			}
			s := l.Isend((r+1)%p, 1, send)
			rr := l.Irecv((r+p-1)%p, 1, recv)
			if err := l.Wait(ctx, rr); err != nil {
				errs[r] = err
				return
			}
			if err := l.Wait(ctx, s); err != nil {
				errs[r] = err
				return
			}
			left := (r + p - 1) % p
			for i, v := range recv {
				if v != byte(left+i) {
					errs[r] = fmt.Errorf("byte %d is %d", i, v)
					return
				}
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
