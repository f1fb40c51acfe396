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

// TestTCPRTSOrder: on the default path small messages go on QUIC streams
// and bulk requests to send on the eager connection; messages of one tag
// mixing both still match first in first out, whether their receives are
// posted before they arrive or after, and the bulk ones cost no QUIC
// stream.
func TestTCPRTSOrder(t *testing.T) {
	checkGoroutines(t)
	const bulk = 4096
	sizes := []int{8, 3 * bulk, 16, 2 * bulk, 5 * bulk, 1, bulk, bulk - 1, 0, 4 * bulk, 32, 2 * bulk}
	for _, c := range []struct {
		name  string
		delay time.Duration // before the receiver posts its receives
	}{{"posted", 0}, {"unexpected", 100 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			links := newWorld(t, 2, Config{Thresholds: algos.Thresholds{Bulk: bulk}})
			defer closeWorld(t, links)
			errs := run(links, func(ctx context.Context, l *Link) error {
				if l.Rank() == 1 {
					time.Sleep(20 * time.Millisecond) // the credit has come: nothing waits for it
					reqs := make([]algos.Request, len(sizes))
					for i, n := range sizes {
						reqs[i] = l.Isend(0, 9, pattern(n, i))
					}
					return l.Wait(ctx, reqs...)
				}
				time.Sleep(c.delay)
				bufs := make([]device.Host, len(sizes))
				reqs := make([]algos.Request, len(sizes))
				for i, n := range sizes {
					bufs[i] = make(device.Host, n)
					reqs[i] = l.Irecv(1, 9, bufs[i])
				}
				if err := l.Wait(ctx, reqs...); err != nil {
					return err
				}
				for i, n := range sizes {
					if !bytes.Equal(bufs[i], pattern(n, i)) {
						return fmt.Errorf("message %d (%d bytes) out of order or wrong", i, n)
					}
				}
				return nil
			})
			if err := firstErr(errs); err != nil {
				t.Fatal(err)
			}
			small := 0
			for _, n := range sizes {
				if n < bulk {
					small++
				}
			}
			l := links[0]
			l.mu.Lock()
			defer l.mu.Unlock()
			p := l.peers[1]
			if p.quicIn != uint64(small) || p.tcpIn != uint64(len(sizes)-small) || p.heldQ.len() != 0 {
				t.Errorf("%d streams, %d requests to send on TCP, %d held; want %d, %d, 0",
					p.quicIn, p.tcpIn, p.heldQ.len(), small, len(sizes)-small)
			}
		})
	}
}

// TestTCPRTSNoEagerData: a peer that asked for credit for requests to send
// only breaks the protocol if it sends an eager message.
func TestTCPRTSNoEagerData(t *testing.T) {
	checkGoroutines(t)
	links := newWorld(t, 2, Config{Timeout: 10 * time.Second})
	defer closeWorld(t, links)
	time.Sleep(20 * time.Millisecond) // the credit has been granted
	links[0].mu.Lock()
	granted, only := links[0].peers[1].granted, links[0].peers[1].rtsOnly
	links[0].mu.Unlock()
	if granted != rtsWindow || !only {
		t.Fatalf("granted %d bytes (requests to send only: %v), want %d", granted, only, rtsWindow)
	}
	got := make(chan error, 1)
	go func() { got <- algos.Recv(context.Background(), links[0], 1, 1, make(device.Host, 8)) }()
	time.Sleep(10 * time.Millisecond)
	links[1].peers[0].eager.writeFrames(append(msgHeader{Kind: kindData, Tag: 1, Len: 8}.append(nil), make([]byte, 8)...))
	err := <-got
	var pe *PeerError
	var perr *ProtocolError
	if !errors.As(err, &pe) || pe.Rank != 1 || !errors.As(err, &perr) {
		t.Fatalf("rank 0: %v, want a *PeerError naming rank 1 for a *ProtocolError", err)
	}
}
