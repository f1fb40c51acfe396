package nexarlive

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/verify"
)

// progress reports a measurement's progress on stderr: a line when the
// first point starts, with what the whole run will take by the
// estimates, then one as a point starts at most every progressEvery, with
// the points done and the ETA (cli.ETA: the estimates' time left, scaled
// by the pace measured as far as the points done let it be trusted).
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	cmd    string
	points []sweep.Point // the whole job's, resumed ones first
	// secs are the points' estimated times, nil where the model could
	// not predict them (there is then an ETA once a point is done, from
	// the pace alone).
	secs  []float64
	first int // the points done before this run (resumed)
	done  int
	now   func() time.Time
	start time.Time // when the run started
	at    time.Time // when the point under way started
	last  time.Time // of the last line
	said  bool      // the first line is out
}

// progressEvery is the least time between two progress lines.
const progressEvery = 10 * time.Second

// Estimates of a point's time beside its iterations' predicted times: a
// fixed part (its buffers and reference made, the clocks synchronised,
// the times gathered), and per iteration the agreement on its start,
// which costs about what the point's smallest sibling does, and the
// rank's input restored and its output checked, hostPerByte a byte of
// its buffers on a core of its own. Measured on 4 loopback ranks on 2
// cores (load 9): about 0.25 s a point, and 7.5 ns a byte an iteration.
const (
	pointSetup  = 200 * time.Millisecond
	hostPerByte = 3.7e-9
)

// newProgress returns the progress of job, whose first points were
// measured already (a resumed run); it estimates each point's time by
// predicting it on the model of s (nil: no model, no estimates).
func newProgress(w io.Writer, cmd string, s *scenario.Scenario, job *live.Job, first int) *progress {
	p := &progress{w: w, cmd: cmd, points: job.Points, first: first, done: first, now: time.Now}
	if s != nil {
		p.secs, _ = estimatePoints(s, job, thisMachine().cores)
	}
	return p
}

// estimatePoints estimates the time of each point of job, its ranks on
// a machine of cores: its warm-up, timed and checked iterations, each its
// predicted time on the model of s, the start's agreement and the ranks'
// work on their buffers (sharing the cores), and the point's setup.
func estimatePoints(s *scenario.Scenario, job *live.Job, cores int) ([]float64, error) {
	rows := make([]sweep.Row, len(job.Points))
	for i, p := range job.Points {
		rows[i] = sweep.NewRow(p, []float64{1}, 0)
	}
	rs := make([]results.Row, len(rows))
	for i, r := range rows {
		rs[i] = r.Row
	}
	cs, err := verify.Predict(s, rs)
	if err != nil {
		return nil, err
	}
	smallest := math.Inf(1)
	for _, c := range cs {
		smallest = min(smallest, c.Predicted)
	}
	opt := job.Options
	out := make([]float64, len(cs))
	for i, c := range cs {
		iters := float64(opt.Iters)
		if opt.MinTime > 0 && c.Predicted > 0 {
			iters = max(iters, min(float64(opt.MaxIters), opt.MinTime.Seconds()/c.Predicted))
		}
		iters += float64(max(opt.Warmup, 0)) + 1 // the warm-up, and the checked one
		p := job.Points[i]
		send, recv, _ := p.Layout()
		buffers := float64((send + recv) * p.DType.Size())
		host := hostPerByte * buffers * float64(p.World) / float64(min(p.World, max(cores, 1)))
		out[i] = pointSetup.Seconds() + iters*(c.Predicted+smallest+host)
	}
	return out, nil
}

// started records that rank 0 starts the point of index (in the whole
// job): the points before it are done.
func (p *progress) started(index int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.said {
		p.said, p.start, p.last = true, now, now
		p.say("%s", p.plan())
	}
	p.done, p.at = max(p.done, index), now
	if now.Sub(p.last) < progressEvery || index >= len(p.points) {
		return
	}
	p.last = now
	s := fmt.Sprintf("point %d of %d (%v), %d done, elapsed %s", index+1, len(p.points), p.points[index], p.done, units.FormatElapsed(now.Sub(p.start)))
	if eta, ok := p.eta(now); ok {
		s += ", ETA " + units.FormatElapsed(eta)
	}
	p.say("%s", s)
}

// plan says what the run will measure and take.
func (p *progress) plan() string {
	left := len(p.points) - p.first
	s := fmt.Sprintf("%d point(s) to measure", left)
	if p.first > 0 {
		s += fmt.Sprintf(" after the %d done", p.first)
	}
	if p.secs == nil {
		return s + " (the model cannot predict them: no estimate until a point is done)"
	}
	sum := 0.0
	for _, sec := range p.secs[p.first:] {
		sum += sec
	}
	return s + fmt.Sprintf(": roughly %s by the model's predictions; progress every %v", units.FormatSecondsRough(sum), progressEvery)
}

// eta is the time left at now; ok is false when nothing says yet.
func (p *progress) eta(now time.Time) (time.Duration, bool) {
	elapsed, current := now.Sub(p.start).Seconds(), now.Sub(p.at).Seconds()
	var done, left float64
	for i := p.first; i < len(p.points); i++ {
		sec := 1.0
		if p.secs != nil {
			sec = p.secs[i]
		}
		if i < p.done {
			done += sec
		} else {
			left += sec
		}
	}
	var eta float64
	switch {
	case p.secs != nil:
		eta = cli.ETA(left, done, elapsed, current)
	case done > 0:
		// Points alone: the pace of those done.
		eta = max(left*(elapsed-current)/done-current, 0)
	default:
		return 0, false
	}
	return time.Duration(eta * float64(time.Second)), true
}

func (p *progress) say(format string, args ...any) {
	fmt.Fprintf(p.w, "nexar-live %s: %s\n", p.cmd, fmt.Sprintf(format, args...))
}
