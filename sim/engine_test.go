package sim_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// model: alpha = 1 us, 1 GB/s (1 ns per byte), reductions at 0.5 GB/s.
var model = sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9, ReduceBandwidth: 0.5e9}

func run(t *testing.T, world int, body sim.Body) *sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{World: world, Model: model, HostData: true}, body)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// us converts microseconds to Time.
func us(x float64) sim.Time { return sim.FromSeconds(x * 1e-6) }

func TestSingleMessageTime(t *testing.T) {
	// One message of 1000 bytes: alpha + m*beta = 1 us + 1000 ns.
	res := run(t, 2, func(ctx context.Context, l algos.Link) error {
		buf := l.Alloc(1000)
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, buf)
		}
		return algos.Recv(ctx, l, 0, 0, buf)
	})
	if want := us(2); res.Finish[0] != want || res.Finish[1] != want {
		t.Fatalf("finish %v, want both %v", res.Finish, want)
	}
}

func TestIncastGoesInRankOrder(t *testing.T) {
	// Ranks 1..3 ask for rank 0's ingress at time 0: ties go to the lower
	// sender, so rank k's send completes after k messages of 2 us each.
	res := run(t, 4, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			var reqs []algos.Request
			for src := 3; src >= 1; src-- { // posted in reverse: order must not matter
				reqs = append(reqs, l.Irecv(src, 0, l.Alloc(1000)))
			}
			return l.Wait(ctx, reqs...)
		}
		return algos.Send(ctx, l, 0, 0, l.Alloc(1000))
	})
	for k := 1; k <= 3; k++ {
		if want := us(2 * float64(k)); res.Finish[k] != want {
			t.Errorf("rank %d finished at %v, want %v", k, res.Finish[k], want)
		}
	}
}

func TestFirstToAskGoesFirst(t *testing.T) {
	// Rank 3 holds rank 0's ingress during [0, 3 us). Rank 2 asks for it
	// at 1 us (after a 1 us reduction), rank 1 at 2 us (after 2 us): rank
	// 2 asked first, so it goes first although its rank is higher.
	reduceFor := func(l algos.Link, bytes int) error { // 0.5 GB/s: 2 ns per byte
		return l.Reduce(l.Alloc(bytes), l.Alloc(bytes), device.F32, device.Sum)
	}
	res := run(t, 4, func(ctx context.Context, l algos.Link) error {
		switch l.Rank() {
		case 0:
			return l.Wait(ctx, l.Irecv(3, 0, l.Alloc(2000)), l.Irecv(1, 0, l.Alloc(1000)), l.Irecv(2, 0, l.Alloc(1000)))
		case 3:
			return algos.Send(ctx, l, 0, 0, l.Alloc(2000))
		case 2:
			if err := reduceFor(l, 500); err != nil {
				return err
			}
		case 1:
			if err := reduceFor(l, 1000); err != nil {
				return err
			}
		}
		return algos.Send(ctx, l, 0, 0, l.Alloc(1000))
	})
	// Rank 2 goes at 3 us (done at 5 us), then rank 1 (done at 7 us).
	if res.Finish[2] != us(5) || res.Finish[1] != us(7) {
		t.Fatalf("rank 2 finished at %v (want 5us), rank 1 at %v (want 7us)", res.Finish[2], res.Finish[1])
	}
}

func TestSenderMessagesStartInPostOrder(t *testing.T) {
	// Rank 0 posts to 1 then to 2: one egress port, so the second message
	// starts when the first ends, although rank 2's ingress is free.
	res := run(t, 3, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return l.Wait(ctx, l.Isend(1, 0, l.Alloc(1000)), l.Isend(2, 0, l.Alloc(1000)))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
	})
	if res.Finish[1] != us(2) || res.Finish[2] != us(4) {
		t.Fatalf("finish %v, want rank 1 at 2us and rank 2 at 4us", res.Finish)
	}
}

func TestEagerSendAndLateReceive(t *testing.T) {
	// The send completes at 2 us without a posted receive; the receive,
	// posted at 10 us after a 5000-byte reduction, completes at once, and
	// carries the bytes sent.
	res := run(t, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			buf := device.Host(make([]byte, 1000))
			buf[999] = 42
			if err := algos.Send(ctx, l, 1, 7, buf); err != nil {
				return err
			}
			buf[999] = 0 // the message must have kept its own copy
			return nil
		}
		if err := l.Reduce(l.Alloc(5000), l.Alloc(5000), device.U8, device.Sum); err != nil {
			return err
		}
		buf := device.Host(make([]byte, 1000))
		if err := algos.Recv(ctx, l, 0, 7, buf); err != nil {
			return err
		}
		if buf[999] != 42 {
			return errors.New("received wrong bytes")
		}
		return nil
	})
	if res.Finish[0] != us(2) || res.Finish[1] != us(10) {
		t.Fatalf("finish %v, want [2us 10us]", res.Finish)
	}
}

func TestMatchingIsBySourceAndTagInOrder(t *testing.T) {
	run(t, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			var reqs []algos.Request
			for i, tag := range []algos.Tag{1, 2, 1, 2} {
				reqs = append(reqs, l.Isend(1, tag, device.Host{byte(i)}))
			}
			return l.Wait(ctx, reqs...)
		}
		// Receive tag 2 first: it must get the messages sent with tag 2,
		// in the order they were sent.
		got := make([]device.Host, 4)
		var reqs []algos.Request
		for i, tag := range []algos.Tag{2, 2, 1, 1} {
			got[i] = device.Host{0xff}
			reqs = append(reqs, l.Irecv(0, tag, got[i]))
		}
		if err := l.Wait(ctx, reqs...); err != nil {
			return err
		}
		if got[0][0] != 1 || got[1][0] != 3 || got[2][0] != 0 || got[3][0] != 2 {
			return errors.New("messages matched out of order")
		}
		return nil
	})
}

func TestSelfMessageIsFree(t *testing.T) {
	res := run(t, 1, func(ctx context.Context, l algos.Link) error {
		return algos.SendRecv(ctx, l, 0, l.Alloc(1<<20), 0, l.Alloc(1<<20), 3)
	})
	if res.End != 0 {
		t.Fatalf("self message took %v, want 0", res.End)
	}
}

func TestDeadlockIsReported(t *testing.T) {
	// Both ranks receive before sending: a broken exchange.
	_, err := sim.Run(sim.Config{World: 3, Model: model}, func(ctx context.Context, l algos.Link) error {
		peer := (l.Rank() + 1) % 2
		if l.Rank() == 2 {
			return nil
		}
		if err := algos.Recv(ctx, l, peer, 5, l.Alloc(8)); err != nil {
			return err
		}
		return algos.Send(ctx, l, peer, 5, l.Alloc(8))
	})
	var d *sim.DeadlockError
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want a deadlock error", err)
	}
	if len(d.Blocked) != 2 || d.Blocked[0].Rank != 0 || d.Blocked[1].Rank != 1 {
		t.Fatalf("blocked ranks %+v, want ranks 0 and 1", d.Blocked)
	}
	msg := err.Error()
	for _, want := range []string{"rank 0 waits for: receive from rank 1 (tag 5, 8 bytes)", "rank 1 waits for: receive from rank 0 (tag 5, 8 bytes)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("report %q lacks %q", msg, want)
		}
	}
}

func TestLongMessageFailsReceive(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 2, Model: model}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(16))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(8))
	})
	if err == nil || !strings.Contains(err.Error(), "longer than its receive buffer") {
		t.Fatalf("got %v, want an error about the receive buffer", err)
	}
}

func TestPanicBecomesRankError(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 2, Model: model}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 1 {
			panic("boom")
		}
		return nil
	})
	var re *sim.RankErrors
	if !errors.As(err, &re) || len(*re) != 1 || (*re)[0].Rank != 1 || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v, want rank 1's panic as an error", err)
	}
}

func TestBadPeer(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 2, Model: model}, func(ctx context.Context, l algos.Link) error {
		return algos.Send(ctx, l, 2, 0, l.Alloc(1))
	})
	if err == nil || !strings.Contains(err.Error(), "peer 2 outside world of 2 ranks") {
		t.Fatalf("got %v", err)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	body := func(ctx context.Context, l algos.Link) error {
		// Everyone sends a rank-dependent size to everyone: lots of
		// contention and same-instant arbitration.
		var reqs []algos.Request
		for peer := range l.Size() {
			reqs = append(reqs, l.Isend(peer, 0, l.Alloc(100*(l.Rank()+1))), l.Irecv(peer, 0, l.Alloc(100*(peer+1))))
		}
		return l.Wait(ctx, reqs...)
	}
	a, b := run(t, 13, body), run(t, 13, body)
	for i := range a.Finish {
		if a.Finish[i] != b.Finish[i] {
			t.Fatalf("rank %d: %v then %v", i, a.Finish[i], b.Finish[i])
		}
	}
}

func TestSpawnRunsConcurrently(t *testing.T) {
	// Rank 0 spawns a receive-and-reduce from rank 1 while its body does
	// the same from rank 2. Both processes block at once; the messages
	// share rank 0's ingress port and the reductions its compute.
	res := run(t, 3, func(ctx context.Context, l algos.Link) error {
		sp, ok := l.(algos.Spawner)
		if !ok {
			return errors.New("sim link does not implement algos.Spawner")
		}
		switch l.Rank() {
		case 0:
			h := sp.Spawn(func(ctx context.Context) error {
				if err := algos.Recv(ctx, l, 1, 0, l.Alloc(1000)); err != nil {
					return err
				}
				return l.Reduce(l.Alloc(1000), l.Alloc(1000), device.U8, device.Sum) // 2 us
			})
			if err := algos.Recv(ctx, l, 2, 0, l.Alloc(1000)); err != nil {
				return err
			}
			if err := l.Reduce(l.Alloc(1000), l.Alloc(1000), device.U8, device.Sum); err != nil {
				return err
			}
			return l.Wait(ctx, h)
		default:
			return algos.Send(ctx, l, 0, 0, l.Alloc(1000))
		}
	})
	// Rank 1's message: [0, 2 us); rank 2's: [2, 4 us). The spawned
	// process reduces [2, 4 us); the body's reduction waits for the
	// rank's compute: [4, 6 us).
	if res.Finish[0] != us(6) {
		t.Fatalf("rank 0 finished at %v, want 6us", res.Finish[0])
	}
}

func TestSpawnedErrorReachesWaiter(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 1, Model: model}, func(ctx context.Context, l algos.Link) error {
		h := l.(algos.Spawner).Spawn(func(ctx context.Context) error { return errors.New("inner failure") })
		return l.Wait(ctx, h)
	})
	if err == nil || !strings.Contains(err.Error(), "inner failure") {
		t.Fatalf("got %v, want the spawned process's error", err)
	}
}
