package sim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// unlimitedCrossbar is the flow model on a crossbar with unlimited slots:
// 1 us, 1 GB/s per port (1 ns per byte).
var unlimitedCrossbar = sim.Flow{Topology: sim.Crossbar{Bandwidth: 1e9, Latency: sim.Microsecond}, SendSlots: -1, RecvSlots: -1}

// smpiLike is SimGrid SMPI's protocol on it: eager below 64 KiB, a 16-byte
// envelope, no handshake.
func smpiLike(m sim.Model) sim.Protocol {
	return sim.Protocol{Model: m, EagerLimit: 64 << 10, Envelope: 16}
}

// fanOut has rank 0 send one message of n bytes to each other rank in turn
// with blocking sends, as MPICH's binomial broadcast sends to its
// children, while every other rank receives once, its receive posted at
// 0.
func fanOut(n int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		if l.Rank() != 0 {
			return algos.Recv(ctx, l, 0, 0, l.Alloc(n))
		}
		for d := 1; d < l.Size(); d++ {
			if err := algos.Send(ctx, l, d, 0, l.Alloc(n)); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestEagerSendsOverlapOnTheWire(t *testing.T) {
	// Three eager sends of 1000 bytes: each completes at once, so all
	// three share rank 0's uplink and arrive together at
	// L + 3(1000+16)/B = 1 us + 3.048 us.
	res := runModel(t, smpiLike(unlimitedCrossbar), 4, fanOut(1000))
	if res.Finish[0] != 0 {
		t.Errorf("sender done at %v, want 0 (eager sends complete at once)", res.Finish[0])
	}
	want := us(1) + sim.TransferTime(3*1016, 1e9)
	for r := 1; r < 4; r++ {
		if !near(res.Finish[r], want) {
			t.Errorf("rank %d done at %v, want %v", r, res.Finish[r], want)
		}
	}
}

func TestRendezvousSendsOneAtATime(t *testing.T) {
	// The same at 64 KiB, by rendezvous: each blocking send waits for its
	// message, so they go one after the other, L + (n+16)/B each.
	const n = 64 << 10
	res := runModel(t, smpiLike(unlimitedCrossbar), 4, fanOut(n))
	one := us(1) + sim.TransferTime(n+16, 1e9)
	for r := 1; r < 4; r++ {
		if want := sim.Time(r) * one; res.Finish[r] != want {
			t.Errorf("rank %d done at %v, want %v", r, res.Finish[r], want)
		}
	}
	if res.Finish[0] != 3*one {
		t.Errorf("sender done at %v, want %v", res.Finish[0], 3*one)
	}
}

// lateReceive has rank 1 compute 10 us (a reduction of 5000 bytes at
// 0.5 GB/s) before it posts its receive of n bytes from rank 0, which
// sends at 0; it returns when each finished.
func lateReceive(t *testing.T, m sim.Model, n int) (send, recv sim.Time) {
	t.Helper()
	res := runModel(t, m, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(n))
		}
		if err := l.Reduce(l.Alloc(5000), l.Alloc(5000), device.U8, device.Sum); err != nil {
			return err
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(n))
	})
	return res.Finish[0], res.Finish[1]
}

func TestRendezvousWaitsForItsReceive(t *testing.T) {
	f := unlimitedCrossbar
	f.ReduceBandwidth = 0.5e9
	p := smpiLike(f)
	// 100 KiB by rendezvous: it starts when the receive is posted at
	// 10 us; both ends finish L + (n+16)/B later.
	const n = 100 << 10
	send, recv := lateReceive(t, p, n)
	want := us(10) + us(1) + sim.TransferTime(n+16, 1e9)
	if send != want || recv != want {
		t.Errorf("send and receive done at %v, %v; want %v", send, recv, want)
	}
	// An eager message of 1000 bytes frees its sender at once, and by
	// default (as SMPI) moves once its receive is posted.
	send, recv = lateReceive(t, p, 1000)
	if want := us(10) + us(1) + sim.TransferTime(1016, 1e9); send != 0 || recv != want {
		t.Errorf("eager on match: send and receive done at %v, %v; want 0, %v", send, recv, want)
	}
	// Moving at once, it waits at the receiver: the receive completes as
	// it is posted.
	p.EagerAtOnce = true
	send, recv = lateReceive(t, p, 1000)
	if send != 0 || recv != us(10) {
		t.Errorf("eager at once: send and receive done at %v, %v; want 0, 10us", send, recv)
	}
}

func TestRendezvousHandshake(t *testing.T) {
	// On alpha-beta (1 us, 1 GB/s) with the receive posted first, a
	// request to send and a clear to send of 16 bytes (1.016 us each),
	// then the payload: 2(1.016 us) + 1 us + (n+16) ns, plus the delay.
	const n = 100000
	p := sim.Protocol{Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}, EagerLimit: 1000, Envelope: 16,
		Handshake: sim.Handshake{RTSCTS: true, Delay: 500 * sim.Nanosecond}}
	res := runModel(t, p, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(n))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(n))
	})
	ctl := us(1) + sim.TransferTime(16, 1e9)
	if want := 2*ctl + 500*sim.Nanosecond + us(1) + sim.TransferTime(n+16, 1e9); res.Finish[1] != want {
		t.Errorf("receive done at %v, want %v", res.Finish[1], want)
	}
}

func TestFactorsScaleLatencyAndBandwidth(t *testing.T) {
	// Above 1000 bytes on the wire, latency x2 and bandwidth x0.5.
	p := sim.Protocol{Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}, EagerLimit: sim.NoProtocol,
		LatencyFactors: sim.Factors{{From: 1000, Factor: 2}}, BandwidthFactors: sim.Factors{{From: 1000, Factor: 0.5}}}
	for _, c := range []struct {
		n    int
		want sim.Time
	}{{1000, us(1) + sim.TransferTime(1000, 1e9)}, {1001, us(2) + sim.TransferTime(1001, 0.5e9)}} {
		res := runModel(t, p, 2, func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 0 {
				return algos.Send(ctx, l, 1, 0, l.Alloc(c.n))
			}
			return algos.Recv(ctx, l, 0, 0, l.Alloc(c.n))
		})
		if res.Finish[1] != c.want {
			t.Errorf("%d bytes: done at %v, want %v", c.n, res.Finish[1], c.want)
		}
	}
}

func TestFactorsAt(t *testing.T) {
	// SimGrid's rule: a step applies above its size.
	f := sim.Factors{{From: 0, Factor: 0.5}, {From: 100, Factor: 2}, {From: 1000, Factor: 3}}
	for _, c := range []struct {
		bytes int
		want  float64
	}{{0, 1}, {1, 0.5}, {100, 0.5}, {101, 2}, {1000, 2}, {1001, 3}} {
		if got := f.At(c.bytes); got != c.want {
			t.Errorf("At(%d) = %g, want %g", c.bytes, got, c.want)
		}
	}
	if err := (sim.Factors{{From: 5, Factor: 1}, {From: 5, Factor: 2}}).Validate(); err == nil {
		t.Error("steps at one size validated")
	}
	if err := (sim.Factors{{From: 5, Factor: 0}}).Validate(); err == nil {
		t.Error("a zero factor validated")
	}
}

func TestMessagesDoNotOvertake(t *testing.T) {
	// A rendezvous of 100 KiB then an eager message of 10 bytes, with one
	// tag: the eager one may arrive first, but each lands in the receive
	// posted for it, in order.
	p := smpiLike(unlimitedCrossbar)
	p.EagerAtOnce = true
	_, err := sim.Run(sim.Config{World: 2, Model: p, HostData: true}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			big, small := device.Host(make([]byte, 100<<10)), device.Host{7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
			big[0] = 1
			return l.Wait(ctx, l.Isend(1, 3, big), l.Isend(1, 3, small))
		}
		if err := l.Reduce(l.Alloc(5000), l.Alloc(5000), device.U8, device.Sum); err != nil {
			return err
		}
		big, small := device.Host(make([]byte, 100<<10)), device.Host(make([]byte, 10))
		if err := l.Wait(ctx, l.Irecv(0, 3, big), l.Irecv(0, 3, small)); err != nil {
			return err
		}
		if big[0] != 1 || small[0] != 7 {
			return errors.New("messages landed in the wrong receives")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHeldRendezvousOfAFailedRank(t *testing.T) {
	// Rank 1 fails before it posts the receive rank 0's rendezvous waits
	// for: rank 0's send fails naming it instead of hanging.
	f := unlimitedCrossbar
	f.ReduceBandwidth = 0.5e9
	p := sim.WithFaults(smpiLike(f), 1, sim.RankFailure{Rank: 1, At: us(5)})
	_, err := sim.Run(sim.Config{World: 2, Model: p}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(1<<20))
		}
		if err := l.Reduce(l.Alloc(5000), l.Alloc(5000), device.U8, device.Sum); err != nil {
			return err
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(1<<20))
	})
	var re *sim.RankErrors
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want rank errors", err)
	}
	var rf *sim.RankFailedError
	if len(*re) != 2 || !errors.As((*re)[0].Err, &rf) || rf.Rank != 1 {
		t.Fatalf("got %v, want rank 0's send to fail on rank 1", err)
	}
}

func TestProtocolIsDeterministic(t *testing.T) {
	p := smpiLike(unlimitedCrossbar)
	body := allreduceBody(t, "halving_doubling", 96<<10)
	a := runModel(t, p, 7, body)
	b := runModel(t, p, 7, body)
	if a.End != b.End || a.Events != b.Events {
		t.Fatalf("two runs differ: %v/%d and %v/%d", a.End, a.Events, b.End, b.Events)
	}
}
