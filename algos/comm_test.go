package algos_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

const commSeed = 23

var commModel = sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}

// commNoSpawn hides the Spawner of a link, so that a Comm over it defers its
// non-blocking operations.
type commNoSpawn struct{ algos.Link }

// runComm runs body on world simulated ranks with host data, each with a
// Comm over its link (without Spawn if deferred), and fails the test on
// error.
func runComm(t *testing.T, world int, deferred bool, opts []algos.Option, body func(ctx context.Context, c *algos.Comm) error) *sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{World: world, Model: commModel, HostData: true}, func(ctx context.Context, l algos.Link) error {
		if deferred {
			l = commNoSpawn{l}
		}
		c, err := algos.NewComm(l, opts...)
		if err != nil {
			return err
		}
		return body(ctx, c)
	})
	if err != nil {
		t.Fatalf("world %d, deferred %v (seed %d): %v", world, deferred, commSeed, err)
	}
	return res
}

// commPrefix returns the reduction with op of ranks 0..last's Input: what
// rank last holds after an inclusive scan.
func commPrefix(count int, dt device.DType, op device.Op, last, world int) []byte {
	acc := algotest.Input(count, dt, op, 0, world, commSeed)
	for q := 1; q <= last; q++ {
		device.ReduceHost(acc, algotest.Input(count, dt, op, q, world, commSeed), dt, op)
	}
	return acc
}

// commProgram is an application that uses every collective of a Comm, and
// point-to-point messages, checking each result; in non-blocking mode it
// starts several operations before waiting for any.
func commProgram(ctx context.Context, c *algos.Comm, nonBlocking bool) error {
	const dt, op = device.F32, device.Sum
	r, p := c.Rank(), c.Size()
	const count = 37 // elements of the in-place buffers and of each block
	sz := dt.Size()
	check := func(what string, got, want []byte) error {
		if err := algotest.Compare(got, want, dt); err != nil {
			return fmt.Errorf("rank %d: %s: %w", r, what, err)
		}
		return nil
	}

	// Buffers and expected results of every collective.
	ar := algotest.Input(count, dt, op, r, p, commSeed)
	arWant := algotest.Reduced(count, dt, op, p, commSeed)
	bRoot := p - 1
	bc := algotest.BroadcastInput(count, dt, r, bRoot, commSeed)
	bcWant := algotest.Broadcasted(count, dt, bRoot, commSeed)
	rdRoot := p / 2
	rd := algotest.Input(count, dt, op, r, p, commSeed)
	agSend := algotest.Distinct(count, dt, r, commSeed)
	ag := make([]byte, p*count*sz)
	agWant := algotest.Gathered(count, dt, p, commSeed)
	rsSend := algotest.Input(p*count, dt, op, r, p, commSeed)
	rs := make([]byte, count*sz)
	rsWant := algotest.Reduced(p*count, dt, op, p, commSeed)[r*count*sz : (r+1)*count*sz]
	a2aSend := make([]byte, 0, p*count*sz) // block j goes to rank j
	for j := 0; j < p; j++ {
		a2aSend = append(a2aSend, algotest.Distinct(count, dt, r, commSeed+uint64(j))...)
	}
	a2a := make([]byte, p*count*sz)
	var a2aWant []byte // block s comes from rank s
	for s := 0; s < p; s++ {
		a2aWant = append(a2aWant, algotest.Distinct(count, dt, s, commSeed+uint64(r))...)
	}
	gRoot := commMod(1, p)
	var g []byte
	if r == gRoot {
		g = make([]byte, p*count*sz)
	}
	sRoot := commMod(p-2, p)
	sc := make([]byte, count*sz)
	scan := algotest.Input(count, dt, op, r, p, commSeed)
	exscan := algotest.Input(count, dt, op, r, p, commSeed)
	exscanWant := exscan
	if r > 0 {
		exscanWant = commPrefix(count, dt, op, r-1, p)
	}

	// Point-to-point: a ring exchange whose user tag is, bit for bit, the
	// tag of the broadcast's messages (the Comm's second operation, so
	// sequence number 1; algorithm tag 0x100), which must not match them.
	const tag = 1<<algos.AlgoTagBits | 0x100
	ptp := algotest.Distinct(count, dt, r, commSeed+99)
	ptpGot := make([]byte, count*sz)

	run := []struct {
		name  string
		start func() *algos.Handle
		block func() error
	}{
		{"allreduce", func() *algos.Handle { return c.IAllReduce(ctx, device.Host(ar), dt, op) },
			func() error { return c.AllReduce(ctx, device.Host(ar), dt, op) }},
		{"broadcast", func() *algos.Handle { return c.IBroadcast(ctx, device.Host(bc), dt, bRoot) },
			func() error { return c.Broadcast(ctx, device.Host(bc), dt, bRoot) }},
		{"reduce", func() *algos.Handle { return c.IReduce(ctx, device.Host(rd), dt, op, rdRoot) },
			func() error { return c.Reduce(ctx, device.Host(rd), dt, op, rdRoot) }},
		{"allgather", func() *algos.Handle { return c.IAllGather(ctx, device.Host(agSend), device.Host(ag), dt) },
			func() error { return c.AllGather(ctx, device.Host(agSend), device.Host(ag), dt) }},
		{"reduce_scatter", func() *algos.Handle { return c.IReduceScatter(ctx, device.Host(rsSend), device.Host(rs), dt, op) },
			func() error { return c.ReduceScatter(ctx, device.Host(rsSend), device.Host(rs), dt, op) }},
		{"alltoall", func() *algos.Handle { return c.IAllToAll(ctx, device.Host(a2aSend), device.Host(a2a), dt) },
			func() error { return c.AllToAll(ctx, device.Host(a2aSend), device.Host(a2a), dt) }},
		{"gather", func() *algos.Handle { return c.IGather(ctx, device.Host(agSend), hostOrNil(g), dt, gRoot) },
			func() error { return c.Gather(ctx, device.Host(agSend), hostOrNil(g), dt, gRoot) }},
		{"scatter", func() *algos.Handle {
			return c.IScatter(ctx, hostOrNil(algotest.ScatterInput(count, dt, r, sRoot, p, commSeed)), device.Host(sc), dt, sRoot)
		}, func() error {
			return c.Scatter(ctx, hostOrNil(algotest.ScatterInput(count, dt, r, sRoot, p, commSeed)), device.Host(sc), dt, sRoot)
		}},
		{"barrier", func() *algos.Handle { return c.IBarrier(ctx) }, func() error { return c.Barrier(ctx) }},
		{"scan", func() *algos.Handle { return c.IScan(ctx, device.Host(scan), dt, op) },
			func() error { return c.Scan(ctx, device.Host(scan), dt, op) }},
		{"exscan", func() *algos.Handle { return c.IExScan(ctx, device.Host(exscan), dt, op) },
			func() error { return c.ExScan(ctx, device.Host(exscan), dt, op) }},
	}
	if nonBlocking {
		// Send a point-to-point message first; start every collective;
		// wait for the first (the others, spawned, post their receives
		// meanwhile, and the message arrives); receive the message while
		// the collectives are in flight; then wait for them: even ranks
		// in the order started, odd ranks in reverse.
		send := c.ISend(ctx, commMod(r+1, p), tag, device.Host(ptp))
		hs := make([]*algos.Handle, len(run))
		for i, x := range run {
			hs[i] = x.start()
		}
		if err := hs[0].Wait(ctx); err != nil {
			return err
		}
		if err := c.Recv(ctx, commMod(r-1, p), tag, device.Host(ptpGot)); err != nil {
			return err
		}
		if err := send.Wait(ctx); err != nil {
			return err
		}
		for i := range hs {
			j := i
			if r%2 == 1 {
				j = len(hs) - 1 - i
			}
			if err := hs[j].Wait(ctx); err != nil {
				return fmt.Errorf("rank %d: %s: %w", r, run[j].name, err)
			}
		}
	} else {
		for _, x := range run {
			if err := x.block(); err != nil {
				return fmt.Errorf("rank %d: %s: %w", r, x.name, err)
			}
		}
		recv := c.IRecv(ctx, commMod(r-1, p), tag, device.Host(ptpGot))
		if err := c.Send(ctx, commMod(r+1, p), tag, device.Host(ptp)); err != nil {
			return err
		}
		if err := recv.Wait(ctx); err != nil {
			return err
		}
	}

	checks := []struct {
		name      string
		got, want []byte
	}{
		{"allreduce", ar, arWant},
		{"broadcast", bc, bcWant},
		{"allgather", ag, agWant},
		{"reduce_scatter", rs, rsWant},
		{"alltoall", a2a, a2aWant},
		{"scatter", sc, algotest.Scattered(count, dt, r, commSeed)},
		{"scan", scan, commPrefix(count, dt, op, r, p)},
		{"exscan", exscan, exscanWant},
		{"send/recv", ptpGot, algotest.Distinct(count, dt, commMod(r-1, p), commSeed+99)},
	}
	if r == rdRoot {
		checks = append(checks, struct {
			name      string
			got, want []byte
		}{"reduce", rd, algotest.Reduced(count, dt, op, p, commSeed)})
	}
	if r == gRoot {
		checks = append(checks, struct {
			name      string
			got, want []byte
		}{"gather", g, agWant})
	}
	for _, x := range checks {
		if err := check(x.name, x.got, x.want); err != nil {
			return err
		}
	}
	return nil
}

// commMod returns i mod p in [0, p).
func commMod(i, p int) int { return ((i % p) + p) % p }

// TestCommProgram runs a program using every collective and point-to-point
// messages through a Comm: blocking, non-blocking with Spawn, and
// non-blocking deferred (a link without Spawn), on several worlds.
func TestCommProgram(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5, 8, 12} {
		for _, mode := range []struct {
			name                  string
			nonBlocking, deferred bool
		}{{"blocking", false, false}, {"spawned", true, false}, {"deferred", true, true}} {
			t.Run(fmt.Sprintf("p=%d/%s", p, mode.name), func(t *testing.T) {
				runComm(t, p, mode.deferred, nil, func(ctx context.Context, c *algos.Comm) error {
					return commProgram(ctx, c, mode.nonBlocking)
				})
			})
		}
	}
}

// TestCommProgramAlgorithms runs the program with other algorithms than
// nexar's, fixed by name.
func TestCommProgramAlgorithms(t *testing.T) {
	opts := []algos.Option{
		algos.WithAlgorithm("allreduce", "halving_doubling", nil),
		algos.WithAlgorithm("broadcast", "pipelined_chain", map[string]int{"segment": 24}),
		algos.WithAlgorithm("gather", "binomial_tree", nil),
		algos.WithAlgorithm("scatter", "binomial_tree", nil),
		algos.WithAlgorithm("allgather", "bruck", nil),
		algos.WithAlgorithm("alltoall", "bruck", nil),
		algos.WithAlgorithm("barrier", "dissemination", nil),
	}
	for _, p := range []int{3, 8} {
		runComm(t, p, false, opts, func(ctx context.Context, c *algos.Comm) error { return commProgram(ctx, c, true) })
	}
}

// TestCommOverlap: a non-blocking broadcast overlaps the rank's own
// compute (a local reduction) when the link can spawn, so the program
// takes the longer of the two rather than their sum; deferred, it takes
// the sum.
func TestCommOverlap(t *testing.T) {
	const p, n = 8, 1 << 20
	elapsed := func(nonBlocking, deferred bool) time.Duration {
		var took time.Duration
		runComm(t, p, deferred, []algos.Option{algos.WithAlgorithm("broadcast", "binomial_tree", nil)},
			func(ctx context.Context, c *algos.Comm) error {
				l := c.Link()
				buf := make([]byte, n)
				work, other := make(device.Host, 4*n), make(device.Host, 4*n)
				start := l.Now()
				compute := func() error { return l.Reduce(work, other, device.F32, device.Sum) }
				if nonBlocking {
					h := c.IBroadcast(ctx, device.Host(buf), device.U8, 0)
					if err := compute(); err != nil {
						return err
					}
					if err := h.Wait(ctx); err != nil {
						return err
					}
				} else {
					if err := c.Broadcast(ctx, device.Host(buf), device.U8, 0); err != nil {
						return err
					}
					if err := compute(); err != nil {
						return err
					}
				}
				if c.Rank() == p-1 {
					took = l.Now() - start
				}
				return nil
			})
		return took
	}
	a, b, g := rootedABG(commModel)
	bcast := 3 * (a + n*b) // binomial tree, 8 ranks
	comp := 4 * n * g
	seconds := func(d time.Duration) float64 { return d.Seconds() }
	const tol = 1e-5 // Link.Now is rounded to the nanosecond
	if got, want := seconds(elapsed(false, false)), bcast+comp; relErr(got, want) > tol {
		t.Errorf("blocking: %.9g s, want broadcast + compute = %.9g s", got, want)
	}
	if got, want := seconds(elapsed(true, false)), max(bcast, comp); relErr(got, want) > tol {
		t.Errorf("spawned: %.9g s, want max(broadcast, compute) = %.9g s", got, want)
	}
	if got, want := seconds(elapsed(true, true)), bcast+comp; relErr(got, want) > tol {
		t.Errorf("deferred: %.9g s, want broadcast + compute = %.9g s", got, want)
	}
}

// TestCommDeferredRunsBeforeBlocking: without Spawn, a started operation
// runs when the rank next blocks, even on a point-to-point receive, so a
// peer that needs it first does not wait forever.
func TestCommDeferredRunsBeforeBlocking(t *testing.T) {
	runComm(t, 2, true, nil, func(ctx context.Context, c *algos.Comm) error {
		buf := make([]byte, 8)
		if c.Rank() == 0 {
			copy(buf, "deferred")
		}
		h := c.IBroadcast(ctx, device.Host(buf), device.U8, 0)
		msg := make([]byte, 2)
		if c.Rank() == 0 {
			// Rank 1 sends only after its broadcast, which needs
			// rank 0's: the receive must run the broadcast first.
			if err := c.Recv(ctx, 1, 7, device.Host(msg)); err != nil {
				return err
			}
		} else {
			if err := h.Wait(ctx); err != nil {
				return err
			}
			if err := c.Send(ctx, 0, 7, device.Host([]byte("ok"))); err != nil {
				return err
			}
		}
		if err := h.Wait(ctx); err != nil {
			return err
		}
		if string(buf) != "deferred" {
			return fmt.Errorf("rank %d: broadcast gave %q", c.Rank(), buf)
		}
		return nil
	})
}

// TestCommSplit splits a world by parity, with keys that reverse the
// order, and runs collectives on the halves and on the world at once.
func TestCommSplit(t *testing.T) {
	for _, p := range []int{1, 2, 7, 10} {
		for _, deferred := range []bool{false, true} {
			runComm(t, p, deferred, nil, func(ctx context.Context, c *algos.Comm) error {
				const dt, op = device.I32, device.Sum
				r := c.Rank()
				sub, err := c.Split(ctx, r%2, -r)
				if err != nil {
					return err
				}
				members := []int{} // world ranks of my half, by descending rank
				for q := p - 1; q >= 0; q-- {
					if q%2 == r%2 {
						members = append(members, q)
					}
				}
				if sub.Size() != len(members) || members[sub.Rank()] != r {
					return fmt.Errorf("rank %d: sub-communicator rank %d of %d, want %d of %v", r, sub.Rank(), sub.Size(), r, members)
				}
				// An allreduce in each half, and one on the world, in
				// flight together.
				half := algotest.Input(5, dt, op, r, p, commSeed)
				world := algotest.Input(5, dt, op, r, p, commSeed)
				hh := sub.IAllReduce(ctx, device.Host(half), dt, op)
				hw := c.IAllReduce(ctx, device.Host(world), dt, op)
				if err := algos.WaitAll(ctx, hw, hh); err != nil {
					return err
				}
				want := algotest.Input(5, dt, op, members[0], p, commSeed)
				for _, q := range members[1:] {
					device.ReduceHost(want, algotest.Input(5, dt, op, q, p, commSeed), dt, op)
				}
				if err := algotest.Compare(half, want, dt); err != nil {
					return fmt.Errorf("rank %d: half allreduce: %w", r, err)
				}
				if err := algotest.Compare(world, algotest.Reduced(5, dt, op, p, commSeed), dt); err != nil {
					return fmt.Errorf("rank %d: world allreduce: %w", r, err)
				}
				// Point-to-point inside the half: the same user tag as on
				// the world, to the sub-communicator's ranks.
				if sub.Size() > 1 {
					got := make([]byte, 4)
					rq := sub.IRecv(ctx, commMod(sub.Rank()-1, sub.Size()), 1, device.Host(got))
					if err := sub.Send(ctx, commMod(sub.Rank()+1, sub.Size()), 1, device.Host([]byte{byte(r), 0, 0, 0})); err != nil {
						return err
					}
					if err := rq.Wait(ctx); err != nil {
						return err
					}
					if from := members[commMod(sub.Rank()-1, sub.Size())]; got[0] != byte(from) {
						return fmt.Errorf("rank %d: got a message from world rank %d, want %d", r, got[0], from)
					}
				}
				// A rank that passes a negative color joins nothing.
				none, err := c.Split(ctx, -1+r%2, 0)
				if err != nil {
					return err
				}
				if (none == nil) != (r%2 == 0) {
					return fmt.Errorf("rank %d: Split with color %d gave %v", r, -1+r%2, none)
				}
				return nil
			})
		}
	}
}

// recordingSelector records what it is asked and answers as nexar.
type recordingSelector struct {
	asked map[string][3]int // world, bytes, count
}

func (s *recordingSelector) Select(coll string, world, bytes, count int) (algos.Choice, error) {
	s.asked[coll] = [3]int{world, bytes, count}
	return algos.NexarSelector{}.Select(coll, world, bytes, count)
}

// TestCommSelectorSizes checks the message sizes a Comm passes to its
// Selector: bytes as nccl-tests counts them.
func TestCommSelectorSizes(t *testing.T) {
	const p, block = 4, 10 // f32 elements
	sels := make([]*recordingSelector, p)
	_, err := sim.Run(sim.Config{World: p, Model: commModel, HostData: true}, func(ctx context.Context, l algos.Link) error {
		s := &recordingSelector{asked: map[string][3]int{}}
		sels[l.Rank()] = s
		c, err := algos.NewComm(l, algos.WithSelector(s))
		if err != nil {
			return err
		}
		const dt = device.F32
		blk, full := make(device.Host, block*4), make(device.Host, p*block*4)
		var root device.Buffer
		if c.Rank() == 0 {
			root = make(device.Host, p*block*4)
		}
		return errors.Join(
			c.AllReduce(ctx, full, dt, device.Sum),
			c.Broadcast(ctx, blk, dt, 0),
			c.Reduce(ctx, blk, dt, device.Sum, 0),
			c.AllGather(ctx, blk, full, dt),
			c.ReduceScatter(ctx, full, blk, dt, device.Sum),
			c.AllToAll(ctx, full, make(device.Host, p*block*4), dt),
			c.Gather(ctx, blk, root, dt, 0),
			c.Scatter(ctx, root, blk, dt, 0),
			c.Barrier(ctx),
			c.Scan(ctx, blk, dt, device.Sum),
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	whole, part := p*block*4, block*4
	want := map[string]int{"allreduce": whole, "broadcast": part, "reduce": part, "allgather": whole, "reduce_scatter": whole,
		"alltoall": whole, "gather": whole, "scatter": whole, "barrier": 0, "scan": part}
	for r, s := range sels {
		for coll, bytes := range want {
			got, ok := s.asked[coll]
			if !ok || got != [3]int{p, bytes, bytes / 4} {
				t.Errorf("rank %d, %s: selector asked (world, bytes, count) = %v, want %v", r, coll, got, [3]int{p, bytes, bytes / 4})
			}
		}
	}
}

// TestNexarSelector checks nexar's choices at their boundaries.
func TestNexarSelector(t *testing.T) {
	cases := []struct {
		coll                string
		world, bytes, count int
		want                string
	}{
		{"broadcast", 3, 1 << 20, 1 << 18, "flat"},
		{"broadcast", 4, 1 << 20, 1 << 18, "binary_tree"},
		{"barrier", 4, 0, 0, "two_phase"},
		{"barrier", 5, 0, 0, "dissemination"},
		{"gather", 16, 1 << 20, 1 << 18, "flat"},
		{"scatter", 16, 1 << 20, 1 << 18, "flat"},
		{"allreduce", 16, 8<<20 - 4, 2<<20 - 1, "halving_doubling"},
		{"allreduce", 16, 8 << 20, 2 << 20, "pipelined_ring"},
		{"allreduce", 8, 1 << 20, 1 << 18, "ring"},
		{"allreduce", 16, 32, 8, "ring"},
		{"alltoall", 16, 1 << 20, 1 << 18, "pairwise"},
	}
	for _, c := range cases {
		ch, err := algos.NexarSelector{}.Select(c.coll, c.world, c.bytes, c.count)
		if err != nil || ch.Algorithm != c.want {
			t.Errorf("%s on %d ranks, %d bytes: got %q (%v), want %q", c.coll, c.world, c.bytes, ch.Algorithm, err, c.want)
		}
	}
	if _, err := (algos.NexarSelector{}).Select("no_such_collective", 4, 0, 0); err == nil {
		t.Error("no error for an unknown collective")
	}
}

// TestCommFixedAlgorithmCost: an algorithm fixed by name is the one that
// runs, as its cost on alpha-beta shows.
func TestCommFixedAlgorithmCost(t *testing.T) {
	const p, n = 8, 1 << 16
	for _, alg := range []string{"flat", "binomial_tree", "binary_tree"} {
		res, err := sim.Run(sim.Config{World: p, Model: worked}, func(ctx context.Context, l algos.Link) error {
			c, err := algos.NewComm(l, algos.WithAlgorithm("broadcast", alg, nil))
			if err != nil {
				return err
			}
			return c.Broadcast(ctx, l.Alloc(n), device.F32, 3)
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]func(sim.AlphaBeta, float64, float64) float64{
			"flat": bcastFlatCost, "binomial_tree": bcastBinomialCost, "binary_tree": bcastBinaryTreeCost}[alg](worked, p, n)
		if got := res.End.Seconds(); relErr(got, want) > 1e-6 {
			t.Errorf("%s: %.9g s, want %.9g s", alg, got, want)
		}
	}
}

func TestCommErrors(t *testing.T) {
	l := commNoLink{}
	for _, opt := range []algos.Option{
		algos.WithAlgorithm("broadcast", "no_such_algorithm", nil),
		algos.WithAlgorithm("no_such_collective", "ring", nil),
		algos.WithAlgorithm("broadcast", "pipelined_chain", map[string]int{"no_such_param": 1}),
		algos.WithSelector(nil),
	} {
		if _, err := algos.NewComm(l, opt); err == nil {
			t.Error("NewComm accepted a bad option")
		}
	}
	runComm(t, 2, false, nil, func(ctx context.Context, c *algos.Comm) error {
		if err := c.Send(ctx, 1-c.Rank(), algos.MaxUserTag+1, device.Host{0}); err == nil {
			return errors.New("a tag above MaxUserTag was accepted")
		}
		if err := c.Broadcast(ctx, device.Host(make([]byte, 4)), device.F32, 2); err == nil {
			return errors.New("a root outside the world was accepted")
		}
		// The failed operations used their sequence numbers alike on
		// every rank: the next one still works.
		buf := []byte{byte(c.Rank())}
		if err := c.Broadcast(ctx, device.Host(buf), device.U8, 1); err != nil {
			return err
		}
		if buf[0] != 1 {
			return fmt.Errorf("rank %d: broadcast after errors gave %d", c.Rank(), buf[0])
		}
		return nil
	})
}

// commNoLink is a Link that must not be used: NewComm's option errors come
// before any communication.
type commNoLink struct{ algos.Link }

func (commNoLink) Rank() int { return 0 }
func (commNoLink) Size() int { return 1 }

// TestHandleWaitTwice: waiting again on a handle returns its result again.
func TestHandleWaitTwice(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		runComm(t, 3, deferred, nil, func(ctx context.Context, c *algos.Comm) error {
			buf := bytes.Repeat([]byte{byte(c.Rank() + 1)}, 4)
			h := c.IAllReduce(ctx, device.Host(buf), device.U8, device.Sum)
			if err := h.Wait(ctx); err != nil {
				return err
			}
			if err := h.Wait(ctx); err != nil {
				return err
			}
			if buf[0] != 6 {
				return fmt.Errorf("allreduce gave %d", buf[0])
			}
			bad := c.IBroadcast(ctx, device.Host(buf), device.U8, -1)
			first, again := bad.Wait(ctx), bad.Wait(ctx)
			if first == nil || again != first {
				return fmt.Errorf("a bad broadcast: first wait %v, second %v", first, again)
			}
			return nil
		})
	}
}
