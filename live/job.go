package live

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Defaults of Options, those of nccl-tests (-w 5 -n 20).
const (
	DefaultWarmup = 5
	DefaultIters  = 20
)

// MaxRankBytes bounds the memory one rank needs for one point (its buffers,
// the pristine copy of its input it restores before every iteration, and
// the reference it checks against), so that a scenario written for the
// simulator's phantom buffers (1 GiB messages cost it nothing) cannot make
// every rank of a real run allocate without bound.
const MaxRankBytes = 4 << 30

// Options say how every point of a job is measured.
type Options struct {
	// Warmup is the number of untimed iterations before the timed ones
	// (connections warm up, buffers are touched); default DefaultWarmup,
	// negative means none.
	Warmup int
	// Iters is the number of timed iterations; default DefaultIters.
	Iters int
	// MinTime, if positive, adds timed iterations after the first Iters
	// while their total time is below it, up to MaxIters in all: many
	// iterations of the sizes that take microseconds, where a machine's
	// noise is largest, and Iters of those that take seconds. Rank 0's
	// clock decides, for every rank.
	MinTime time.Duration
	// MaxIters caps the timed iterations MinTime adds (default 1000).
	MaxIters int
	// Timing says how an iteration is timed: TimingStart (the default)
	// or TimingLoop.
	Timing Timing
	// CPU, if not nil, gets a line per point with TimingLoop: the CPU
	// (user and system), minor page faults and context switches of this
	// rank's process per timed iteration, from getrusage around the
	// timed loop (nexar-live run --profile writes them to rank-N.cpu).
	// Where the ranks share cores, the CPU per iteration varies less
	// with other work than the time does.
	CPU io.Writer
}

// Timing is how a point's iterations are timed.
type Timing string

const (
	// TimingStart starts every iteration at an instant all ranks agreed
	// on and times it from there to the slowest rank's end; the point's
	// time is the median over the timed iterations (harness.Starter). It is
	// the time the simulator predicts.
	TimingStart Timing = "start"
	// TimingLoop is nccl-tests' and OSU's way: a barrier, then the timed
	// iterations back to back; the point's time is the slowest rank's
	// mean per iteration, which includes the skew between iterations
	// that the ranks' leaving the barrier and each other a latency
	// apart makes, and overlaps one iteration's tail with the next one's
	// start.
	TimingLoop Timing = "loop"
)

// ParseTiming reads a timing's name: "start" or "loop".
func ParseTiming(s string) (Timing, error) {
	switch t := Timing(s); t {
	case TimingStart, TimingLoop:
		return t, nil
	}
	return "", fmt.Errorf("timing %q: want %q (an agreed start per iteration) or %q (back-to-back iterations, as nccl-tests)", s, TimingStart, TimingLoop)
}

// Describe says in a line how a point of opt is timed, for the header of
// a table.
func (o Options) Describe() string {
	o = o.withDefaults()
	more := ""
	if o.MinTime > 0 {
		more = fmt.Sprintf(" (more up to %d while under %v)", o.MaxIters, o.MinTime)
	}
	if o.Timing == TimingLoop {
		return fmt.Sprintf("timing loop: %d warm-up iterations, a barrier, then %d%s back to back; time = the slowest rank's mean per iteration (nccl-tests' way); one more iteration, untimed, is checked",
			o.Warmup, o.Iters, more)
	}
	return fmt.Sprintf("timing start: %d warm-up iterations, then %d%s each started at an instant all ranks agreed on; time = median over iterations of the slowest rank's time from that instant",
		o.Warmup, o.Iters, more)
}

func (o Options) withDefaults() Options {
	switch {
	case o.Warmup == 0:
		o.Warmup = DefaultWarmup
	case o.Warmup < 0:
		o.Warmup = 0
	}
	if o.Iters <= 0 {
		o.Iters = DefaultIters
	}
	if o.MaxIters <= 0 {
		o.MaxIters = 1000
	}
	o.MaxIters = max(o.MaxIters, o.Iters)
	if o.Timing == "" {
		o.Timing = TimingStart
	}
	return o
}

// Job is what every rank of a run executes: the same points, in the same
// order, with the same options. Ranks compare the job's ID before they
// start, so that ranks started with different scenario files or flags
// refuse to run together instead of deadlocking.
type Job struct {
	// Points all have World equal to the run's world size.
	Points  []sweep.Point
	Options Options
	// ID identifies the job: a hash of the scenario, the world size and
	// the options.
	ID [32]byte
	// Skipped lists the world sizes of the scenario that were left out
	// because the run has another world size.
	Skipped []int
}

// NewJob makes the job of a run of scenario s on world ranks: the points
// of s whose world size is world. Points of other world sizes are left
// out (Job.Skipped lists their sizes): a run of N processes measures
// world = N, and the same scenario file can serve runs of several sizes.
// A scenario with no point of that size is an error, as is a point that
// needs more than MaxRankBytes on a rank.
//
// A real run always moves and checks real bytes, whatever the sweep's
// data key says: phantom buffers exist only in the simulator.
func NewJob(s *scenario.Scenario, world int, opt Options) (*Job, error) {
	if world < 1 {
		return nil, fmt.Errorf("live: world size %d: want at least 1 rank", world)
	}
	all, err := sweep.Plan(s)
	if err != nil {
		return nil, err
	}
	j := &Job{Options: opt.withDefaults()}
	for _, p := range all {
		if p.World != world {
			if !slices.Contains(j.Skipped, p.World) {
				j.Skipped = append(j.Skipped, p.World)
			}
			continue
		}
		if err := checkPoint(p); err != nil {
			return nil, fmt.Errorf("%s: %v", s.File, err)
		}
		p.Data = scenario.Host
		p.Index = len(j.Points)
		j.Points = append(j.Points, p)
	}
	slices.Sort(j.Skipped)
	if len(j.Points) == 0 {
		return nil, fmt.Errorf("%s: no sweep has world size %d (it lists %v); a run of %d ranks measures world = %d only",
			s.File, world, j.Skipped, world, world)
	}
	h := sha256.New()
	h.Write([]byte(s.Hash))
	var b [40]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(world))
	binary.LittleEndian.PutUint64(b[8:], uint64(j.Options.Warmup))
	binary.LittleEndian.PutUint64(b[16:], uint64(j.Options.Iters))
	binary.LittleEndian.PutUint64(b[24:], uint64(j.Options.MinTime))
	binary.LittleEndian.PutUint64(b[32:], uint64(j.Options.MaxIters))
	h.Write(b[:])
	h.Write([]byte(j.Options.Timing))
	copy(j.ID[:], h.Sum(nil))
	return j, nil
}

// checkPoint refuses points a real run cannot measure.
func checkPoint(p sweep.Point) error {
	if _, err := reference(p); err != nil {
		return fmt.Errorf("%v: %v", p, err)
	}
	send, recv, used := p.Layout()
	sz := p.DType.Size()
	// Buffers, their pristine copies, and the reference.
	need := 2*(send+recv)*sz + used*sz
	if need > MaxRankBytes {
		return fmt.Errorf("%v: needs %d MiB per rank, more than the %d MiB a real run allows (use smaller sizes)",
			p, need>>20, MaxRankBytes>>20)
	}
	return nil
}

// From returns the job of j's points from the k-th on: what is left of
// a run that measured the first k already (nexar-live run --resume). The
// points keep their indexes; the ID is j's with k, so that ranks compare
// it as they compare the first.
func (j *Job) From(k int) (*Job, error) {
	if k < 0 || k >= len(j.Points) {
		return nil, fmt.Errorf("live: resuming after %d points of %d", k, len(j.Points))
	}
	r := *j
	r.Points = j.Points[k:]
	h := sha256.New()
	h.Write(j.ID[:])
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(k))
	h.Write([]byte("from"))
	h.Write(b[:])
	copy(r.ID[:], h.Sum(nil))
	return &r, nil
}

// ResumeRows checks that rows, read from the partial file of an earlier
// run, are those of the first points of j, in order, and returns how many
// there are: the run resumes after them. A row of another point (another
// scenario, world or options) is an error.
func (j *Job) ResumeRows(rows []Result) (int, error) {
	if len(rows) > len(j.Points) {
		return 0, fmt.Errorf("%d rows for a job of %d points", len(rows), len(j.Points))
	}
	for i, r := range rows {
		p := j.Points[i]
		want := sweep.NewRow(p, []float64{1}, 0)
		if r.Collective != want.Collective || r.Algorithm != want.Algorithm || r.World != want.World ||
			r.Bytes != want.Bytes || r.DType != want.DType || r.Op != want.Op || r.Params != want.Params {
			return 0, fmt.Errorf("row %d (%s/%s, %d ranks, %d B %s) is not of point %d (%v)", i+1, r.Collective, r.Algorithm, r.World, r.Bytes, r.DType, p.Index, p)
		}
	}
	return len(rows), nil
}
