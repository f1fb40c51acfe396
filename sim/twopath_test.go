package sim_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

func TestTwoPaths(t *testing.T) {
	// QUIC: 30 us, 200 MB/s; bulk: 10 us, 1 GB/s; bulk from 16 KiB.
	tp := sim.TwoPaths{
		QUIC:       sim.AlphaBeta{Latency: 30 * sim.Microsecond, Bandwidth: 200e6},
		Bulk:       sim.AlphaBeta{Latency: 10 * sim.Microsecond, Bandwidth: 1e9},
		Thresholds: algos.Thresholds{Bulk: 16 << 10},
	}
	oneWay := func(m sim.Model, n int) (send, recv sim.Time) {
		res := runModel(t, m, 2, func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 0 {
				return algos.Send(ctx, l, 1, 0, l.Alloc(n))
			}
			return algos.Recv(ctx, l, 0, 0, l.Alloc(n))
		})
		return res.Finish[0], res.Finish[1]
	}
	// Below the threshold: one QUIC message, the sender free at once.
	send, recv := oneWay(tp, 1000)
	if want := us(30) + sim.TransferTime(1000, 200e6); send != 0 || recv != want {
		t.Errorf("1000 bytes: send %v, receive %v; want 0, %v", send, recv, want)
	}
	// From it: a request to send and a clear to send on the eager TCP
	// connection (10 us each), then the payload on the bulk path: what
	// derive's bulk threshold weighs, 3 bulk_latency + m/bulk_bandwidth.
	const n = 1 << 20
	send, recv = oneWay(tp, n)
	if want := us(30) + sim.TransferTime(n, 1e9); send != want || recv != want {
		t.Errorf("1 MiB: send %v, receive %v; want %v", send, recv, want)
	}
	// The paths do not queue behind each other: a bulk message and a
	// small one posted together, the small one arrives on QUIC first.
	res := runModel(t, tp, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return l.Wait(ctx, l.Isend(1, 0, l.Alloc(n)), l.Isend(1, 1, l.Alloc(100)))
		}
		if err := algos.Recv(ctx, l, 0, 1, l.Alloc(100)); err != nil {
			return err
		}
		if l.Now() != (us(30) + sim.TransferTime(100, 200e6)).Duration() {
			t.Errorf("small message behind a bulk one arrived at %v", l.Now())
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(n))
	})
	// Its receive is posted when the small one is in (30.5 us), after the
	// request to send came on TCP (10 us): the clear to send leaves then.
	if want := us(30.5) + us(20) + sim.TransferTime(n, 1e9); res.Finish[1] != want {
		t.Errorf("bulk message after a small one: done at %v, want %v", res.Finish[1], want)
	}
	// Never bulk.
	never := tp
	never.Thresholds.Bulk = algos.BulkNever
	if _, recv = oneWay(never, n); recv != us(30)+sim.TransferTime(n, 200e6) {
		t.Errorf("never bulk: 1 MiB arrived at %v", recv)
	}

	// Eager mode: every message on TCP, below the eager threshold at once
	// on the eager connection (the sender free at once), from it by
	// rendezvous whose request and clear to send both take the eager
	// connection; the bulk threshold no longer applies.
	eager := tp
	eager.Thresholds.Eager = 64 << 10
	if send, recv = oneWay(eager, 32<<10); send != 0 || recv != us(10)+sim.TransferTime(32<<10, 1e9) {
		t.Errorf("eager mode, 32 KiB: send %v, receive %v; want 0, %v", send, recv, us(10)+sim.TransferTime(32<<10, 1e9))
	}
	send, recv = oneWay(eager, n)
	if want := us(30) + sim.TransferTime(n, 1e9); send != want || recv != want {
		t.Errorf("eager mode, 1 MiB: send %v, receive %v; want %v", send, recv, want)
	}
	// The eager connection is a connection of its own: a small message
	// does not wait behind a bulk payload of the same sender.
	res = runModel(t, eager, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return l.Wait(ctx, l.Isend(1, 0, l.Alloc(n)), l.Isend(1, 1, l.Alloc(100)))
		}
		payload := l.Irecv(0, 0, l.Alloc(n))
		if err := algos.Recv(ctx, l, 0, 1, l.Alloc(100)); err != nil {
			return err
		}
		if want := (us(10) + sim.TransferTime(100, 1e9)).Duration(); l.Now() != want {
			t.Errorf("eager mode: small message beside a bulk one arrived at %v, want %v", l.Now(), want)
		}
		return l.Wait(ctx, payload)
	})
	if want := us(30) + sim.TransferTime(n, 1e9); res.Finish[1] != want {
		t.Errorf("eager mode: bulk message beside a small one done at %v, want %v", res.Finish[1], want)
	}
}
