package sim_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// logGP: L = 5 us, o = 1 us, g = 4 us, G = 1 ns/byte.
var logGP = sim.LogGP{Latency: 5 * sim.Microsecond, Overhead: sim.Microsecond, Gap: 4 * sim.Microsecond, Bandwidth: 1e9}

func TestLogGPOneMessage(t *testing.T) {
	// k = 1000 bytes: the sender spends o, the bytes leave in kG = 1 us
	// and arrive L later: the send completes at o + kG + L = 7 us; the
	// receive after the receiver's o: 8 us.
	res := runModel(t, logGP, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(1000))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
	})
	if res.Finish[0] != us(7) || res.Finish[1] != us(8) {
		t.Fatalf("finish %v, want [7us 8us]", res.Finish)
	}
}

func TestLogGPPipelinedSmallMessages(t *testing.T) {
	// n messages of 100 bytes posted back to back. Isend i returns at
	// (i+1)o; the NIC starts message i at max((i+1)o, start(i-1) + g) =
	// o + i g (g > o, g > kG); it arrives kG + L later; the receiver,
	// with all receives posted, spends o on each as it arrives (arrivals
	// are g > o apart). The last receive completes at
	//   o + (n-1)g + kG + L + o.
	const n, k = 5, 100
	res := runModel(t, logGP, 2, func(ctx context.Context, l algos.Link) error {
		var reqs []algos.Request
		for range n {
			if l.Rank() == 0 {
				reqs = append(reqs, l.Isend(1, 0, l.Alloc(k)))
			} else {
				reqs = append(reqs, l.Irecv(0, 0, l.Alloc(k)))
			}
		}
		return l.Wait(ctx, reqs...)
	})
	o, g, lat := logGP.Overhead, logGP.Gap, logGP.Latency
	kG := sim.TransferTime(k, logGP.Bandwidth)
	if want := o + (n-1)*g + kG + lat + o; res.Finish[1] != want {
		t.Fatalf("receiver done at %v, want %v", res.Finish[1], want)
	}
	if want := o + (n-1)*g + kG + lat; res.Finish[0] != want {
		t.Fatalf("sender done at %v, want %v", res.Finish[0], want)
	}
}

func TestOverheadOnAlphaBeta(t *testing.T) {
	// alpha-beta's 1000-byte message (2 us) with 300 ns at each end.
	m := sim.Overhead{Model: model, Send: 300 * sim.Nanosecond, Recv: 300 * sim.Nanosecond}
	res := runModel(t, m, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(1000))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
	})
	if res.Finish[0] != 2300*sim.Nanosecond || res.Finish[1] != 2600*sim.Nanosecond {
		t.Fatalf("finish %v, want [2.3us 2.6us]", res.Finish)
	}
}

func TestLogGPValidation(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 2, Model: sim.LogGP{Latency: 1}}, func(context.Context, algos.Link) error { return nil })
	if err == nil {
		t.Fatal("LogGP without bandwidth ran")
	}
}
