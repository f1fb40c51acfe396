package live

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/live/harness"
	"github.com/nexar-go/nexar-go/sweep"
)

// RankHooks let the caller of RunRank follow a rank's progress.
type RankHooks struct {
	// Point, if not nil, is called when the rank starts a point.
	Point func(p sweep.Point)
	// Iter, if not nil, is called after every iteration (a heartbeat).
	Iter func()
	// Result, if not nil, is called on rank 0 with each point's result,
	// in order, as soon as it is known.
	Result func(sweep.Point, Result)
	// Boundary, if not nil, is called on every rank after each point but
	// the last; when it returns true RunRank returns errRegroup with the
	// results so far (an elastic world's point boundary: recovery.go).
	Boundary func(next int) (bool, error)
}

// RunRank measures every point of job on one rank, l, of a world of
// job's world size; every rank of the world calls it with the same job.
// For each point each rank restores its input, starts at an instant all
// ranks agreed on (harness.Starter: not a barrier, which ranks leave a
// latency apart), runs the collective and times it from that instant;
// then it checks its output against the reference. Warm-up iterations
// come first and are not timed. After each point every rank sends its
// times and wrong-element count to rank 0, which makes the point's
// Result: per iteration the slowest rank's time, then the median over
// iterations.
//
// Rank 0 returns the results; the other ranks return nil. An error of the
// collective (a lost peer, a timeout) ends the run, wrapped with the point
// it happened in; wrong data does not, it is counted.
func RunRank(ctx context.Context, l algos.Link, job *Job, hooks RankHooks) ([]Result, error) {
	if len(job.Points) > 0 && job.Points[0].World != l.Size() {
		return nil, fmt.Errorf("live: job for world size %d on a world of %d ranks", job.Points[0].World, l.Size())
	}
	if err := harness.Hello(ctx, l, job.ID); err != nil {
		return nil, err
	}
	if err := harness.WarmUp(ctx, l); err != nil {
		return nil, fmt.Errorf("live: warming the connections up: %w", err)
	}
	cl := &countingLink{Link: l}
	opt := job.Options.withDefaults()
	var results []Result
	var seq uint64
	start := harness.NewStarter(l)
	for i, p := range job.Points {
		if hooks.Point != nil {
			hooks.Point(p)
		}
		st, err := measurePoint(ctx, cl, p, opt, &seq, start, hooks.Iter)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", p, err)
		}
		res, err := gatherStats(ctx, l, p, st)
		if err != nil {
			return nil, fmt.Errorf("%v: gathering times: %w", p, err)
		}
		if l.Rank() == 0 {
			results = append(results, res)
			if hooks.Result != nil {
				hooks.Result(p, res)
			}
		}
		if hooks.Boundary != nil && i+1 < len(job.Points) {
			regroup, err := hooks.Boundary(job.Points[i+1].Index)
			if err != nil {
				return nil, fmt.Errorf("%v: point boundary: %w", p, err)
			}
			if regroup {
				return results, errRegroup
			}
		}
	}
	return results, nil
}

// rankStats is what a rank measured of one point.
type rankStats struct {
	times    []float64 // timed iterations, seconds
	wrong    int64     // worst iteration
	messages int64     // sent to other ranks in one iteration
	late     int64     // iterations this rank started late
	// iters is the number of iterations behind each time: 1 with the
	// agreed start, the loop's length with TimingLoop.
	iters int64
}

func measurePoint(ctx context.Context, cl *countingLink, p sweep.Point, opt Options, seq *uint64, start *harness.Starter, beat func()) (rankStats, error) {
	cl.machine = p.Machine()
	d, err := newRankData(p, cl)
	if err != nil {
		return rankStats{}, err
	}
	defer func() {
		if len(d.buf0) >= 16<<20 {
			// Give the point's buffers back before the next one
			// allocates its own, outside any timed region.
			d = nil
			runtime.GC()
		}
	}()
	if opt.Timing == TimingLoop {
		return measureLoop(ctx, cl, p, d, opt, seq, start, beat)
	}
	if err := start.Sync(ctx); err != nil {
		return rankStats{}, fmt.Errorf("synchronising clocks: %w", err)
	}
	late0 := start.Late()
	st := rankStats{times: make([]float64, 0, opt.Iters)}
	var timed int64 // on rank 0: its own time in the timed iterations
	for it := 0; ; it++ {
		d.reset()
		// Rank 0 decides when the point has had enough: the warm-up and
		// Iters timed iterations, then more while they took less than
		// MinTime in all, up to MaxIters.
		n := it - opt.Warmup
		more := n < opt.Iters || timed < int64(opt.MinTime) && n < opt.MaxIters
		t0, more, err := start.Start(ctx, more)
		if err != nil {
			return st, fmt.Errorf("starting iteration %d: %w", it, err)
		}
		if !more {
			break
		}
		before := cl.sent.Load()
		err = p.Algorithm.Run(ctx, algos.Scoped(cl, 0, *seq), d.call)
		elapsed := harness.Now() - t0
		*seq++
		if err != nil {
			return st, fmt.Errorf("iteration %d: %w", it, err)
		}
		if w := d.wrong(); w > st.wrong {
			st.wrong = w
		}
		if it >= opt.Warmup {
			if it == opt.Warmup {
				st.messages = cl.sent.Load() - before
			}
			st.times = append(st.times, float64(elapsed)/1e9)
			timed += elapsed
		}
		if beat != nil {
			beat()
		}
	}
	if cl.Rank() != 0 {
		st.late = start.Late() - late0
	}
	return st, nil
}

// measureLoop times a point nccl-tests' way (TimingLoop): after the
// warm-up, a barrier, then the timed iterations back to back, without
// restoring the input between them; a rank's time is its mean per
// iteration, and the point's the slowest rank's. Rank 0 picks the number
// of iterations: Iters, or more (up to MaxIters) to fill MinTime at the
// pace of its warm-up. One more iteration, from a restored input and
// untimed, is checked, as nccl-tests checks its results apart from its
// timed loop.
func measureLoop(ctx context.Context, cl *countingLink, p sweep.Point, d *rankData, opt Options, seq *uint64, start *harness.Starter, beat func()) (rankStats, error) {
	var st rankStats
	run := func(what string, i int) error {
		err := p.Algorithm.Run(ctx, algos.Scoped(cl, 0, *seq), d.call)
		*seq++
		if err != nil {
			return fmt.Errorf("%s iteration %d: %w", what, i, err)
		}
		return nil
	}
	t0 := harness.Now()
	for i := range opt.Warmup {
		d.reset()
		if err := run("warm-up", i); err != nil {
			return st, err
		}
		st.wrong = max(st.wrong, d.wrong())
	}
	n := int64(opt.Iters)
	if opt.MinTime > 0 && opt.Warmup > 0 {
		per := max((harness.Now()-t0)/int64(opt.Warmup), 1)
		n = min(max(n, int64(opt.MinTime)/per), int64(opt.MaxIters))
	}
	n, err := start.Barrier(ctx, n)
	if err != nil {
		return st, fmt.Errorf("barrier: %w", err)
	}
	d.reset()
	before := cl.sent.Load()
	u0, cpu := processCPU()
	t0 = harness.Now()
	for i := range n {
		if err := run("timed", int(i)); err != nil {
			return st, err
		}
		if i == 0 {
			st.messages = cl.sent.Load() - before
		}
		if beat != nil {
			beat()
		}
	}
	st.times = []float64{float64(harness.Now()-t0) / float64(n) / 1e9}
	st.iters = n
	if u1, _ := processCPU(); cpu && opt.CPU != nil {
		writeCPU(opt.CPU, p, n, u0, u1)
	}
	d.reset()
	if err := run("checked", 0); err != nil {
		return st, err
	}
	st.wrong = max(st.wrong, d.wrong())
	return st, nil
}

// gatherStats sends every rank's stats to rank 0, which returns the
// point's result; other ranks return a zero Result.
func gatherStats(ctx context.Context, l algos.Link, p sweep.Point, st rankStats) (Result, error) {
	// Every rank ran the same iterations: rank 0 decided how many.
	n := len(st.times)
	size := 8*n + 24
	encode := func(st rankStats) device.Host {
		b := make(device.Host, size)
		for i, t := range st.times {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(t))
		}
		binary.LittleEndian.PutUint64(b[8*n:], uint64(st.wrong))
		binary.LittleEndian.PutUint64(b[8*n+8:], uint64(st.messages))
		binary.LittleEndian.PutUint64(b[8*n+16:], uint64(st.late))
		return b
	}
	sl := algos.Scoped(l, harness.CommStats, uint64(p.Index))
	if l.Rank() != 0 {
		return Result{}, algos.Send(ctx, sl, 0, 0, encode(st))
	}
	world := l.Size()
	bufs := make([]device.Host, world)
	reqs := make([]algos.Request, 0, world)
	for r := 1; r < world; r++ {
		bufs[r] = make(device.Host, size)
		reqs = append(reqs, sl.Irecv(r, 0, bufs[r]))
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return Result{}, err
	}
	bufs[0] = encode(st)
	slowest := make([]float64, n)
	var wrong, messages, late int64
	for _, b := range bufs {
		for i := range slowest {
			slowest[i] = max(slowest[i], math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
		wrong += int64(binary.LittleEndian.Uint64(b[8*n:]))
		messages += int64(binary.LittleEndian.Uint64(b[8*n+8:]))
		late += int64(binary.LittleEndian.Uint64(b[8*n+16:]))
	}
	r := makeResult(p, slowest, wrong, messages)
	r.LateStarts = late
	if st.iters > 1 {
		r.Repeats = int(st.iters) // one mean of a loop of iters
	}
	return r, nil
}

// makeResult summarises a point's per-iteration times as a row (sweep.NewRow,
// on a copy: Times keeps the iterations in order).
func makeResult(p sweep.Point, times []float64, wrong, messages int64) Result {
	row := sweep.NewRow(p, slices.Clone(times), messages).Row
	row.Wrong = wrong
	return Result{Row: row, Times: times}
}

// countingLink counts the messages its rank sends to other ranks.
type countingLink struct {
	algos.Link
	sent atomic.Int64
	// machine is what the point's scenario says of the hardware (its
	// ranks_per_node, GPU keys): nil leaves the link's own.
	machine *algos.Machine
}

// Unwrap lets algorithms find the inner link's Spawner (NCCL's channels
// run as processes of their own).
func (c *countingLink) Unwrap() algos.Link { return c.Link }

// Machine is the point's machine where its scenario describes one, else
// the inner link's.
func (c *countingLink) Machine() *algos.Machine {
	if c.machine != nil {
		return c.machine
	}
	return algos.MachineOf(c.Link)
}

func (c *countingLink) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	if dst != c.Rank() {
		c.sent.Add(1)
	}
	return c.Link.Isend(dst, tag, buf)
}
