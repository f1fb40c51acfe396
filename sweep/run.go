package sweep

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// Row is the measurement of one point: its row of results.csv
// (results.Row: the simulator leaves nexar-live's columns zero), and the
// world change the point made, which results.csv does not hold.
type Row struct {
	results.Row

	// Recovery is the recovery of the (first) run of the point during
	// which the scenario's rank failed with recovery by shrinking; nil for
	// every other point. Its World is the world before the failure; the
	// row's World that of the run the row reports (one rank fewer when the
	// failure cost the point its work). It is not written to results.csv:
	// EncodeChange gives it, and Join, to checkpoints and manifests.
	Recovery *sim.Shrunk
	// Join is the growth of the elastic world before the point at which
	// the scenario's ranks joined; nil for every other point. The row's
	// World is the grown world's.
	Join *sim.Grown
	// Symmetry names the group under which the point's run simulated one
	// rank for all (sim.Result.SymmetryGroup), "" for a full run. It is
	// not written to results.csv: the times are the full run's.
	Symmetry string
}

// Key identifies a row's point for lookups: collective, algorithm
// variant, world, bytes and dtype.
func (r Row) Key() string {
	return r.Collective + "\x00" + r.Algorithm + "\x00" + strconv.Itoa(r.World) + "\x00" + strconv.Itoa(r.Bytes) + "\x00" + r.DType
}

// BaseAlgorithm is the catalogue name of a variant name: "pipelined_ring"
// for "pipelined_ring(segment=2MiB)".
func BaseAlgorithm(variant string) string {
	if i := strings.IndexByte(variant, '('); i >= 0 {
		return variant[:i]
	}
	return variant
}

// FormatParams writes params as Row.Params does: "a=1;segment=2097152".
func FormatParams(params map[string]int) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = n + "=" + strconv.Itoa(params[n])
	}
	return strings.Join(names, ";")
}

// ParseParams reads what FormatParams writes; "" is no parameters (nil).
func ParseParams(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int{}
	for _, part := range strings.Split(s, ";") {
		name, val, ok := strings.Cut(part, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("parameters %q: %q is not name=value", s, part)
		}
		n, err := strconv.Atoi(val)
		if err != nil {
			return nil, fmt.Errorf("parameters %q: %q is not a whole number", s, val)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("parameters %q: %s is given twice", s, name)
		}
		out[name] = n
	}
	return out, nil
}

// DataError reports that a host-data run left wrong data on a rank.
type DataError struct {
	Rank int
	Err  error
}

func (e *DataError) Error() string {
	return fmt.Sprintf("rank %d: wrong data: %v", e.Rank, e.Err)
}

func (e *DataError) Unwrap() error { return e.Err }

// RunOptions are what a run of a point may be given besides the point.
type RunOptions struct {
	// Context, if not nil, stops the run once done: the run returns an
	// error wrapping its cause (see sim.Config.Context).
	Context context.Context
	// Progress, if not nil, is told how far the point's runs are, from
	// the goroutine running them (see sim.Config.Progress).
	Progress func(PointProgress)
	// Observer, if not nil, is told what happens in the run (RunOnceWith
	// only).
	Observer sim.Observer
}

// PointProgress says how far a point under way is: which of its runs (one
// per repeat) is under way, and how far that run is.
type PointProgress struct {
	// Run is the run under way, from 0, of Runs.
	Run, Runs int
	sim.Progress
}

// RunOnce simulates p once, with seed seeding the network's random draws
// and the inputs of host data, telling obs (if not nil) what happens. A
// failed run (a deadlock, an algorithm's error, wrong data) returns an
// error that wraps the simulator's (*sim.DeadlockError or *sim.RankErrors,
// whose ranks' errors include *DataError); it does not name the point.
func RunOnce(p Point, seed uint64, obs sim.Observer) (*sim.Result, error) {
	return RunOnceWith(p, seed, RunOptions{Observer: obs})
}

// RunOnceWith is RunOnce with a context, progress reports and an observer
// (o.Progress reports run 0 of 1). Phantom points are replayed (see
// sim.Config.Replay): the catalogue's algorithms depend neither on timing
// nor on data.
func RunOnceWith(p Point, seed uint64, o RunOptions) (*sim.Result, error) {
	var progress func(sim.Progress)
	if o.Progress != nil {
		progress = func(pr sim.Progress) { o.Progress(PointProgress{Run: 0, Runs: 1, Progress: pr}) }
	}
	res, _, err := runOnce(p, seed, o.Observer, o.Context, progress)
	return res, err
}

// worldChange is how a point changed the world: a shrinking rank failure
// that struck it, or ranks that joined before it; zero for other points.
type worldChange struct {
	shrunk *sim.Shrunk
	grown  *sim.Grown
}

// runOnce runs p once; for the point of a shrinking rank failure or of
// joining ranks it returns the change too, and the result of the run the
// row reports (see sim.Shrunk.Result, sim.Grown.Result).
func runOnce(p Point, seed uint64, obs sim.Observer, ctx context.Context, progress func(sim.Progress)) (*sim.Result, worldChange, error) {
	host := p.Data == scenario.Host
	cfg := sim.Config{World: p.World, Model: p.Model(seed), Machine: p.Machine(), HostData: host, Observer: obs, Replay: !host, Context: ctx, Progress: progress,
		Symmetry: p.Symmetry}
	body, err := p.body(seed)
	if err != nil {
		return nil, worldChange{}, err
	}
	if p.Join != nil {
		// The members agree and rebuild at JoinFrom ranks; the point
		// runs on the grown world, with its buffers and check.
		cfg.World = p.JoinFrom
		g, err := sim.RunGrow(cfg, p.World-p.JoinFrom, p.Join.Rebuild, body)
		if err != nil {
			return nil, worldChange{}, err
		}
		return g.Result, worldChange{grown: g}, nil
	}
	if p.Shrink == nil {
		res, err := sim.Run(cfg, body)
		return res, worldChange{}, err
	}
	// The survivors run the point again on World-1 ranks, with the
	// buffers and the check of that world.
	q := p
	q.World--
	small, err := q.body(seed)
	if err != nil {
		return nil, worldChange{}, err
	}
	both := func(ctx context.Context, l algos.Link) error {
		if l.Size() == p.World {
			return body(ctx, l)
		}
		return small(ctx, l)
	}
	f := p.Shrink
	sh, err := sim.RunShrink(cfg, f.Rank, f.At, f.Recovery, both)
	if err != nil {
		return nil, worldChange{}, err
	}
	return sh.Result, worldChange{shrunk: sh}, nil
}

// body returns the body of a run of p: every rank allocates the point's
// buffers and runs its algorithm; with host data the inputs are filled
// from seed and the results checked.
func (p Point) body(seed uint64) (sim.Body, error) {
	send, recv, _ := p.Layout()
	sz := p.DType.Size()
	var chk *check
	if p.Data == scenario.Host {
		var err error
		if chk, err = newCheck(p, seed); err != nil {
			return nil, err
		}
	}
	inPlace := p.InPlace()
	return func(ctx context.Context, l algos.Link) error {
		c := algos.Call{DType: p.DType, Op: p.Op, Root: p.Root, Params: p.Params, Tuning: p.Tuning, Buf: l.Alloc(recv * sz)}
		if !inPlace {
			c.Send = l.Alloc(send * sz)
		}
		if chk != nil {
			chk.fill(l.Rank(), &c)
		}
		if err := p.Algorithm.Run(ctx, l, c); err != nil {
			return err
		}
		if chk != nil {
			if err := chk.verify(l.Rank(), c); err != nil {
				return &DataError{Rank: l.Rank(), Err: err}
			}
		}
		return nil
	}, nil
}

// RunPoint simulates p, Repeat times with seeds Seed, Seed+1, ..., and
// returns its row. A failed run returns an error that names the point (and
// the seed, when it repeats) and wraps RunOnce's.
func RunPoint(p Point) (Row, error) { return RunPointWith(p, RunOptions{}) }

// RunPointWith is RunPoint with a context, which stops the point's run
// under way, and progress reports.
func RunPointWith(p Point, o RunOptions) (Row, error) {
	n := max(p.Repeat, 1)
	times := make([]float64, n)
	var messages int64
	var change worldChange
	var group string
	for k := range n {
		seed := p.Seed + uint64(k)
		var progress func(sim.Progress)
		if o.Progress != nil {
			progress = func(pr sim.Progress) { o.Progress(PointProgress{Run: k, Runs: n, Progress: pr}) }
		}
		res, ch, err := runOnce(p, seed, nil, o.Context, progress)
		if err != nil {
			if n > 1 {
				return Row{}, fmt.Errorf("%v (seed %d): %w", p, seed, err)
			}
			return Row{}, fmt.Errorf("%v: %w", p, err)
		}
		times[k] = res.End.Seconds()
		if k == 0 {
			messages, change, group = res.Messages, ch, res.SymmetryGroup
		}
	}
	q := p
	if change.shrunk != nil {
		// The row reports the run the survivors made.
		q.World = len(change.shrunk.Result.Finish)
	}
	row := NewRow(q, times, messages)
	row.Recovery, row.Join, row.Symmetry = change.shrunk, change.grown, group
	return row, nil
}

// NewRow summarises p's per-iteration times in seconds (at least one;
// sorted in place) as its row: the median, the extremes and the bandwidths
// the point's bytes make of it. messages is what one iteration sent.
// Times are rounded to whole picoseconds, the simulator's clock (the
// median of an even count and the spread may fall half-way between two
// ticks), so that a row read back from its CSV record (results.SimDecimals) is
// the row written.
func NewRow(p Point, times []float64, messages int64) Row {
	slices.Sort(times)
	n := len(times)
	med := times[n/2]
	if n%2 == 0 {
		med = (times[n/2-1] + times[n/2]) / 2
	}
	row := Row{Row: results.Row{
		Collective: p.Collective.Name,
		Algorithm:  p.VariantName(),
		World:      p.World,
		Bytes:      p.UsedBytes(),
		DType:      p.DType.String(),
		Time:       roundTime(med),
		Params:     FormatParams(p.Params),
		Repeats:    n,
		TimeMin:    roundTime(times[0]),
		TimeMax:    roundTime(times[n-1]),
		Spread:     roundTime((times[n-1] - times[0]) / 2),
		Messages:   messages,
	}}
	if p.Collective.Reduces {
		row.Op = p.Op.String()
	}
	if row.Bytes > 0 && row.Time > 0 {
		row.AlgBW = float64(row.Bytes) / row.Time / 1e9
		row.BusBW = row.AlgBW * p.Collective.BusFactor(p.World)
	}
	return row
}

// roundTime rounds t seconds to whole picoseconds: k/10^12 for an integer
// k, the double that formats with results.SimDecimals decimals as k's digits and
// parses back to itself.
func roundTime(t float64) float64 {
	const ticks = 1e12 // per second; 10^results.SimDecimals
	return math.Round(t*ticks) / ticks
}

// Options tune Run.
type Options struct {
	// Jobs is how many points run at once; 0 or less means one per CPU
	// (runtime.GOMAXPROCS). Rows come out in the order of the points
	// whatever Jobs is, and are the same.
	Jobs int
	// Sweep, if not nil, is called when Run reaches the first point of
	// each sweep in order (before its row is emitted, or its error
	// returned), with that sweep's points.
	Sweep func(sweep int, points []Point)
	// Done, if not nil, is called after each row is emitted, with the
	// number of rows emitted so far and the total.
	Done func(done, total int)
	// Progress, if not nil, is told how far each point under way is (i
	// indexes points), from the goroutines running them, possibly at
	// once.
	Progress func(i int, pr PointProgress)
}

// result is the outcome of one point.
type result struct {
	row Row
	err error
}

// Run runs points, Jobs at a time, and passes each row to emit in the
// order of points (emit is called from Run's goroutine). It stops at the
// first failed point in that order (emitting the rows before it), at an
// error of emit, or when ctx is done: then the points under way stop
// within milliseconds, Run emits in order the rows that are complete up
// to the first point that is not, and returns ctx's cause. Host-data
// points run at once only while their memory (see MaxHostBytes) fits in
// MaxHostBytes together.
func Run(ctx context.Context, points []Point, opt Options, emit func(Row) error) error {
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, max(len(points), 1))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	results := make([]chan result, len(points))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	mem := newBudget(MaxHostBytes)
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := points[i]
				need := min(p.hostBytes(), MaxHostBytes)
				mem.acquire(need)
				o := RunOptions{Context: ctx}
				if opt.Progress != nil {
					o.Progress = func(pr PointProgress) { opt.Progress(i, pr) }
				}
				row, err := RunPointWith(p, o)
				mem.release(need)
				results[i] <- result{row, err}
			}
		}()
	}
	// Feed the workers in order; stop feeding when cancelled.
	go func() {
		defer close(next)
		for i := range points {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer wg.Wait()

	for i := range points {
		var r result
		got := false
		select {
		case r = <-results[i]:
			got = true
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			// Stopped: the points under way stop; emit, in order, the
			// rows that are complete.
			wg.Wait()
			for j := i; j < len(points); j++ {
				if !got || j > i {
					select {
					case r = <-results[j]:
					default:
						return context.Cause(ctx)
					}
				}
				if r.err != nil {
					return context.Cause(ctx)
				}
				announce(points, j, opt)
				if err := emitRow(points, j, r.row, opt, emit); err != nil {
					return err
				}
			}
			return nil // everything ran after all
		}
		announce(points, i, opt)
		if r.err != nil {
			cancel()
			return r.err
		}
		if err := emitRow(points, i, r.row, opt, emit); err != nil {
			cancel()
			return err
		}
	}
	return nil
}

// announce calls opt.Sweep if point i is the first of its sweep.
func announce(points []Point, i int, opt Options) {
	p := points[i]
	if opt.Sweep != nil && (i == 0 || points[i-1].Sweep != p.Sweep) {
		j := i
		for j < len(points) && points[j].Sweep == p.Sweep {
			j++
		}
		opt.Sweep(p.Sweep, points[i:j])
	}
}

func emitRow(points []Point, i int, row Row, opt Options, emit func(Row) error) error {
	if err := emit(row); err != nil {
		return err
	}
	if opt.Done != nil {
		opt.Done(i+1, len(points))
	}
	return nil
}

// budget is a counting semaphore over bytes of memory.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int
}

func newBudget(n int) *budget {
	b := &budget{free: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *budget) acquire(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	for b.free < n {
		b.cond.Wait()
	}
	b.free -= n
	b.mu.Unlock()
}

func (b *budget) release(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}
