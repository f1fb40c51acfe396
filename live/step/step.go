package step

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/harness"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/workload"
)

// Files nexar-live step writes into its output directory.
const (
	// File is the measured rows, in workload's step.csv columns.
	File = "step.csv"
	// PartialFile is the rows of a run that did not finish.
	PartialFile = "step.partial.csv"
	// TimesFile is every timed step of every point.
	TimesFile = "step_times.csv"
)

// Job is what every rank of a measured training step runs: the
// scenario's [workload] points of the run's world size, each planned.
type Job struct {
	Scenario *scenario.Scenario
	Points   []scenario.WorkloadPoint
	Plans    []*workload.Plan
	// Warmup untimed steps, then Iters timed ones, per point.
	Warmup, Iters int
	// Skipped lists the world sizes of points left out.
	Skipped []int
	// ID is a hash of the scenario, the world size and the counts.
	ID [32]byte
}

// NewJob makes the job of a run of s's [workload] on world ranks:
// its points of that world size (the layouts of other sizes are left
// out, Skipped lists them). warmup is the untimed steps (0 or more),
// iters the timed ones (at least 1).
func NewJob(s *scenario.Scenario, world, warmup, iters int) (*Job, error) {
	switch {
	case s.Workload == nil:
		return nil, fmt.Errorf("%s: no [workload] table: nexar-live step measures training steps (nexar-live run measures sweeps)", s.File)
	case world < 1:
		return nil, fmt.Errorf("live: world size %d: want at least 1 rank", world)
	case iters < 1:
		return nil, fmt.Errorf("live: %d timed steps: want at least 1", iters)
	case warmup < 0:
		return nil, fmt.Errorf("live: %d warm-up steps: want 0 or more", warmup)
	}
	j := &Job{Scenario: s, Warmup: warmup, Iters: iters}
	for _, p := range s.Workload.Points {
		if w := p.Spec.World(); w != world {
			if !slices.Contains(j.Skipped, w) {
				j.Skipped = append(j.Skipped, w)
			}
			continue
		}
		plan, err := workload.NewPlan(p.Spec)
		if err != nil {
			return nil, fmt.Errorf("%s: point %d: %v", s.File, p.Index, err)
		}
		j.Points = append(j.Points, p)
		j.Plans = append(j.Plans, plan)
	}
	slices.Sort(j.Skipped)
	if len(j.Points) == 0 {
		return nil, fmt.Errorf("%s: no layout of the [workload] has %d ranks (its layouts have %v); a run of %d ranks measures those of %d",
			s.File, world, j.Skipped, world, world)
	}
	h := sha256.New()
	h.Write([]byte(s.Hash))
	h.Write([]byte("step"))
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(world))
	binary.LittleEndian.PutUint64(b[8:], uint64(warmup))
	binary.LittleEndian.PutUint64(b[16:], uint64(iters))
	h.Write(b[:])
	copy(j.ID[:], h.Sum(nil))
	return j, nil
}

// EmulateCompute performs d of emulated compute: it sleeps for d on the
// precise sleep of the agreed starts (harness.SleepUntil: a timerfd on Linux,
// which holds no processor while it waits), so the rank's communication
// goroutines, and the other ranks, have the cores meanwhile. A sleep that
// wakes late makes the compute longer. A measured step's compute stream
// uses a computeEmulator instead, which makes up for late wakes.
func EmulateCompute(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	harness.SleepUntil(harness.Now() + int64(d))
	return ctx.Err()
}

// blockingWait is how long a wait of the compute stream must last to
// count as one that held it up (shorter ones found their event done).
const blockingWait = int64(20 * time.Microsecond)

// computeEmulator is the compute of one rank's step, emulated on the
// device's timeline: a piece of compute ends d after the device would
// have started it, which is when the compute before it was due to end
// (a GPU runs a stream's kernels back to back), or when the last wait
// that held the stream up ended, whichever is later. A sleep that wakes
// late (on a machine with fewer cores than busy threads, by a hundred
// microseconds or more) thus delays the work that waits for that compute,
// as it must, but not the compute after it: the step's compute stays at
// the stated times instead of adding up the late wakes (about 5% of the
// compute of loopback-step.toml on the 2-core development machine with
// plain sleeps). The stream records time what each piece took: one that
// makes up for a late wake before it is shorter than stated.
type computeEmulator struct {
	mu         sync.Mutex
	due, ready int64 // harness.Now(): the last compute's due end; the last blocking wait's end
}

func (e *computeEmulator) compute(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := harness.Now()
	e.mu.Lock()
	start := max(e.due, e.ready)
	if start == 0 || start > now {
		start = now
	}
	e.due = start + int64(d)
	due := e.due
	e.mu.Unlock()
	harness.SleepUntil(due)
	return ctx.Err()
}

// observe learns the compute stream's blocking waits (rec timed on
// harness.Now(), the step link's).
func (e *computeEmulator) observe(rec algos.StreamRecord) {
	if rec.Stream == workload.StreamCompute && rec.Kind == algos.KindWait && int64(rec.End-rec.Start) > blockingWait {
		e.mu.Lock()
		e.ready = max(e.ready, int64(rec.End))
		e.mu.Unlock()
	}
}

// Timed is one timed step of a point.
type Timed struct {
	Point, Iter int
	// Step is the slowest rank's time from the agreed start to its end;
	// Compute and Exposed are the means over the ranks (as Row's).
	Step, Compute, Exposed float64
}

// Measurement is what rank 0 of a measured step returns: a row per
// point (the median over its timed steps), and every timed step.
type Measurement struct {
	Rows  []workload.Row
	Times []Timed
}

// Hooks let the caller of RunRank follow a rank's progress.
type Hooks struct {
	// Point, if not nil, is called when the rank starts a point, with
	// the workload point's index and its swept values.
	Point func(index int, desc string)
	// Iter, if not nil, is called after every step (a heartbeat).
	Iter func()
	// Row, if not nil, is called on rank 0 with each point's row.
	Row func(workload.Row)
}

// RunRank measures every point of job on one rank, l, of a world of
// the job's size; every rank calls it with the same job. Rank 0 returns
// the measurement (with the points measured so far if it fails); the
// others return nil.
func RunRank(ctx context.Context, l algos.Link, job *Job, hooks Hooks) (*Measurement, error) {
	if err := harness.Hello(ctx, l, job.ID); err != nil {
		return nil, err
	}
	if err := harness.WarmUp(ctx, l); err != nil {
		return nil, fmt.Errorf("live: warming the connections up: %w", err)
	}
	sl := &stepLink{Link: l}
	start := harness.NewStarter(l)
	var m *Measurement
	if l.Rank() == 0 {
		m = &Measurement{}
	}
	var exchange uint64
	for i, p := range job.Points {
		plan := job.Plans[i]
		if hooks.Point != nil {
			hooks.Point(p.Index, pointDesc(job.Scenario.Workload, p))
		}
		if err := start.Sync(ctx); err != nil {
			return m, fmt.Errorf("point %d: synchronising clocks: %w", p.Index, err)
		}
		var rows []workload.Row
		for it := 0; ; it++ {
			t0, more, err := start.Start(ctx, it < job.Warmup+job.Iters)
			if err != nil {
				return m, fmt.Errorf("point %d: starting step %d: %w", p.Index, it, err)
			}
			if !more {
				break
			}
			em := &computeEmulator{}
			rec := &recordList{t0: t0, em: em}
			before := sl.sent.Load()
			opt := workload.Options{Tuning: job.Scenario.Workload.Tuning, FLOPS: job.Scenario.Workload.FLOPS, Compute: em.compute, Observer: rec}
			err = workload.Run(ctx, sl, plan, opt)
			elapsed := harness.Now() - t0
			if err != nil {
				return m, fmt.Errorf("point %d: step %d: %w", p.Index, it, err)
			}
			if hooks.Iter != nil {
				hooks.Iter()
			}
			if it < job.Warmup {
				continue
			}
			exchange++
			res, msgs, err := gatherStep(ctx, l, exchange, plan, rec, elapsed, sl.sent.Load()-before)
			if err != nil {
				return m, fmt.Errorf("point %d: gathering step %d: %w", p.Index, it, err)
			}
			if m != nil {
				row := workload.NewRow(job.Scenario.Name, p.Index, p.Spec, res)
				row.Messages = msgs
				rows = append(rows, row)
				m.Times = append(m.Times, Timed{Point: p.Index, Iter: it - job.Warmup, Step: res.Step, Compute: res.Compute, Exposed: res.ExposedTotal})
			}
		}
		if m != nil {
			row := medianRow(rows)
			m.Rows = append(m.Rows, row)
			if hooks.Row != nil {
				hooks.Row(row)
			}
		}
	}
	return m, nil
}

// pointDesc names a workload point by its swept values.
func pointDesc(w *scenario.Workload, p scenario.WorkloadPoint) string {
	s := p.Spec.Layout.String()
	for i, a := range w.Axes {
		if a != "layout" {
			s += " " + a + "=" + p.Values[i]
		}
	}
	return s
}

// stepLink is a rank's link during a measured step: it counts the
// messages sent to other ranks, and its clock is harness.Now(), the agreed
// starts' (the stream records are timed on it).
type stepLink struct {
	algos.Link
	sent atomic.Int64
}

func (s *stepLink) Now() time.Duration { return time.Duration(harness.Now()) }

// Unwrap lets the streams find the inner link's Spawner.
func (s *stepLink) Unwrap() algos.Link { return s.Link }

func (s *stepLink) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	if dst != s.Rank() {
		s.sent.Add(1)
	}
	return s.Link.Isend(dst, tag, buf)
}

// recordList keeps a rank's stream records of one step, timed from t0
// (the agreed start, on harness.Now()).
type recordList struct {
	mu   sync.Mutex
	t0   int64
	em   *computeEmulator // told of every record, if not nil
	recs []algos.StreamRecord
}

func (r *recordList) StreamItem(rec algos.StreamRecord) {
	if r.em != nil {
		r.em.observe(rec)
	}
	rec.Start -= time.Duration(r.t0)
	rec.End -= time.Duration(r.t0)
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

// gatherStep sends every rank's records of a step (and its time and
// messages) to rank 0, which accounts for the step with workload.Stats:
// the same accounts as the simulator's. Other ranks return nil.
func gatherStep(ctx context.Context, l algos.Link, seq uint64, plan *workload.Plan, rec *recordList, elapsed, sent int64) (*workload.Result, int64, error) {
	sl := algos.Scoped(l, harness.CommStep, seq)
	payload := encodeRecords(rec.recs, elapsed, sent)
	if l.Rank() != 0 {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(payload)))
		if err := algos.Send(ctx, sl, 0, 0, device.Host(n[:])); err != nil {
			return nil, 0, err
		}
		return nil, 0, algos.Send(ctx, sl, 0, 1, device.Host(payload))
	}
	world := l.Size()
	stats := workload.NewStats(world, nil)
	step := float64(elapsed) / 1e9
	msgs := sent
	for _, r := range rec.recs {
		stats.StreamItem(r)
	}
	for r := 1; r < world; r++ {
		n := make(device.Host, 8)
		if err := algos.Recv(ctx, sl, r, 0, n); err != nil {
			return nil, 0, err
		}
		b := make(device.Host, binary.LittleEndian.Uint64(n))
		if err := algos.Recv(ctx, sl, r, 1, b); err != nil {
			return nil, 0, err
		}
		recs, el, s, err := decodeRecords(b, r)
		if err != nil {
			return nil, 0, fmt.Errorf("rank %d's records: %w", r, err)
		}
		for _, x := range recs {
			stats.StreamItem(x)
		}
		step = max(step, float64(el)/1e9)
		msgs += s
	}
	return stats.Result(plan, step), msgs, nil
}

// encodeRecords writes what Stats reads of each record, and the rank's
// step time and messages.
func encodeRecords(recs []algos.StreamRecord, elapsed, sent int64) []byte {
	b := binary.AppendUvarint(nil, uint64(elapsed))
	b = binary.AppendUvarint(b, uint64(sent))
	n := 0
	for _, r := range recs {
		if r.Err == nil {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, r := range recs {
		if r.Err != nil {
			continue
		}
		b = append(b, byte(r.Kind))
		str(r.Stream)
		str(r.Collective)
		str(r.Waited.Stream)
		str(r.Waited.Collective)
		b = binary.AppendVarint(b, int64(r.Start))
		b = binary.AppendVarint(b, int64(r.End))
	}
	return b
}

var errRecords = errors.New("malformed records")

func decodeRecords(b []byte, rank int) (recs []algos.StreamRecord, elapsed, sent int64, err error) {
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			err = errRecords
			return 0
		}
		b = b[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			err = errRecords
			return 0
		}
		b = b[n:]
		return v
	}
	str := func() string {
		n := uv()
		if err != nil || n > uint64(len(b)) {
			err = errRecords
			return ""
		}
		s := string(b[:n])
		b = b[n:]
		return s
	}
	elapsed, sent = int64(uv()), int64(uv())
	n := uv()
	if err != nil || n > uint64(len(b)) {
		return nil, 0, 0, errRecords
	}
	recs = make([]algos.StreamRecord, 0, n)
	for range n {
		if len(b) == 0 {
			return nil, 0, 0, errRecords
		}
		r := algos.StreamRecord{Rank: rank}
		r.Kind = algos.ItemKind(b[0])
		b = b[1:]
		r.Stream, r.Collective = str(), str()
		r.Waited.Stream, r.Waited.Collective = str(), str()
		r.Start, r.End = time.Duration(sv()), time.Duration(sv())
		if err != nil {
			return nil, 0, 0, err
		}
		recs = append(recs, r)
	}
	return recs, elapsed, sent, nil
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// medianRow is rows' first row with each measured column the median over
// rows (the timed steps of one point).
func medianRow(rows []workload.Row) workload.Row {
	out := rows[0]
	col := func(get func(*workload.Row) *float64) {
		v := make([]float64, len(rows))
		for i := range rows {
			v[i] = *get(&rows[i])
		}
		slices.Sort(v)
		*get(&out) = median(v)
	}
	col(func(r *workload.Row) *float64 { return &r.Step })
	col(func(r *workload.Row) *float64 { return &r.Compute })
	col(func(r *workload.Row) *float64 { return &r.Utilisation })
	col(func(r *workload.Row) *float64 { return &r.Bubble })
	col(func(r *workload.Row) *float64 { return &r.BubbleFraction })
	col(func(r *workload.Row) *float64 { return &r.Idle })
	col(func(r *workload.Row) *float64 { return &r.Exposed })
	for k := range out.ExposedBy {
		col(func(r *workload.Row) *float64 { return &r.ExposedBy[k] })
		col(func(r *workload.Row) *float64 { return &r.BusyBy[k] })
	}
	ms := make([]float64, len(rows))
	for i, r := range rows {
		ms[i] = float64(r.Messages)
	}
	slices.Sort(ms)
	out.Messages = int64(median(ms))
	return out
}

// WorkerConfig configures one rank process of a measured step.
type WorkerConfig struct {
	// Scenario is the path of the scenario file, with a [workload].
	Scenario      string
	Warmup, Iters int
	Net           realnet.Config
	// Dir is where rank 0 writes File and TimesFile (or
	// PartialFile when the run fails).
	Dir string
	// Getenv reads the launcher's environment (os.Getenv if nil).
	Getenv func(string) string
	// Status, if not nil, receives status lines for a launcher (see
	// launch.StatusWriter).
	Status io.Writer
	// Progress, if not nil, receives a line from rank 0 as each point is
	// measured.
	Progress    io.Writer
	JoinTimeout time.Duration
}

// Worker runs one rank of a measured step under any launcher, as
// live.Worker runs one of a sweep: it joins the world the environment
// describes, measures the [workload] points of its size, and on rank 0
// writes the rows. It returns rank 0's measurement (nil on other ranks).
func Worker(ctx context.Context, cfg WorkerConfig) (*Measurement, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	st := launch.NewStatusWriter(cfg.Status, live.Blamed)
	fail := func(err error) (*Measurement, error) {
		st.Error(err)
		return nil, err
	}
	la, err := realnet.LaunchFromEnv(getenv)
	if err != nil {
		return fail(err)
	}
	s, err := scenario.Load(cfg.Scenario)
	if err != nil {
		return fail(err)
	}
	job, err := NewJob(s, la.World, cfg.Warmup, cfg.Iters)
	if err != nil {
		return fail(err)
	}
	jt := cfg.JoinTimeout
	if jt <= 0 {
		jt = live.DefaultJoinTimeout
	}
	jctx, cancel := context.WithTimeout(ctx, jt)
	link, err := realnet.Start(jctx, la, cfg.Net)
	cancel()
	if err != nil {
		return fail(fmt.Errorf("live: joining a world of %d through %s: %w", la.World, la.Seed, err))
	}
	st.Ready(link.Rank())
	hooks := Hooks{
		Point: st.Point,
		Iter:  st.Beat,
	}
	if cfg.Progress != nil && link.Rank() == 0 {
		hooks.Row = func(r workload.Row) {
			fmt.Fprintf(cfg.Progress, "# measured point %d (%s): step %.3f ms, compute %.3f ms, exposed %.3f ms (medians of %d steps)\n",
				r.Point, pointDesc(s.Workload, s.Workload.Points[r.Point]), 1e3*r.Step, 1e3*r.Compute, 1e3*r.Exposed, job.Iters)
		}
	}
	m, err := RunRank(ctx, link, job, hooks)
	if link.Rank() == 0 && cfg.Dir != "" {
		switch werr := writeStepFiles(cfg.Dir, m, err); {
		case werr != nil && err == nil:
			err = werr
		case werr != nil:
			fmt.Fprintf(os.Stderr, "nexar-live step-worker: saving the points measured to %s: %v\n", PartialFile, werr)
		}
	}
	if err != nil {
		st.Error(err)
		link.Abort()
		return m, err
	}
	if cerr := link.Close(); cerr != nil {
		st.Error(cerr)
		return m, fmt.Errorf("live: leaving the world: %w", cerr)
	}
	st.Done()
	return m, nil
}

// writeStepFiles writes rank 0's rows: File and TimesFile after
// a run that finished, PartialFile (the points measured) after one
// that failed with runErr.
func writeStepFiles(dir string, m *Measurement, runErr error) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if runErr != nil {
		if m == nil || len(m.Rows) == 0 {
			return nil
		}
		return writeAtomic(filepath.Join(dir, PartialFile), func(w io.Writer) error { return workload.WriteCSV(w, m.Rows) })
	}
	if err := writeAtomic(filepath.Join(dir, TimesFile), func(w io.Writer) error { return WriteTimes(w, m.Times) }); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, File), func(w io.Writer) error { return workload.WriteCSV(w, m.Rows) })
}

// writeAtomic writes what fn writes to path, whole or not at all.
func writeAtomic(path string, fn func(io.Writer) error) error {
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b.Bytes())
}

// TimesColumns are the columns of TimesFile.
var TimesColumns = []string{"point", "iteration", "step_s", "compute_s", "exposed_s"}

// WriteTimes writes every timed step.
func WriteTimes(w io.Writer, ts []Timed) error {
	if _, err := fmt.Fprintln(w, strings.Join(TimesColumns, ",")); err != nil {
		return err
	}
	for _, t := range ts {
		if _, err := fmt.Fprintf(w, "%d,%d,%s,%s,%s\n", t.Point, t.Iter, secs(t.Step), secs(t.Compute), secs(t.Exposed)); err != nil {
			return err
		}
	}
	return nil
}

func secs(v float64) string { return strconv.FormatFloat(v, 'f', 9, 64) }
