package nexarsim

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
	"golang.org/x/term"
)

// progress reports a run's progress on stderr: a bar redrawn in place when
// stderr is a terminal, plain lines otherwise (a line per sweep, and one at
// most every plainEvery). Points weigh what their estimates say they cost
// (sweep.Estimate.Cost), so that the bar and its ETA follow the work
// rather than the count of points, and a point under way counts for the
// part of its messages it has sent; the bar names the largest point under
// way with its simulated time and messages so far.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	quiet   bool
	total   int
	done    int
	start   time.Time
	last    time.Time // of the last plain line
	drawn   bool      // a bar is on the screen
	drawnAt time.Time // when it was drawn
	stop    chan struct{}
	wg      sync.WaitGroup

	// Weighing: points[i] is point i of the run, weights[i] its cost and
	// ests[i] its estimate (nil before the estimates are known: each
	// point then weighs the same).
	points  []sweep.Point
	ests    []sweep.Estimate
	weights []float64
	sum     float64 // of weights
	doneW   float64 // weight of the points done
	// startDone is the points done when the run started (resumed).
	startDone int
	// secs[i] is point i's estimated wall time on this machine (its
	// estimate's Seconds over its runs), which the ETA adds up (nil
	// before the estimates are known: no ETA), and jobs how many points
	// run at once.
	secs []float64
	jobs int
	// running are the points under way, with how far they are.
	running map[int]sweep.PointProgress
}

// plainEvery is the least time between two plain progress lines.
const plainEvery = 10 * time.Second

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress starts reporting the progress of total points, of which
// done have run already (a resumed run).
func newProgress(w io.Writer, quiet bool, done, total int) *progress {
	p := &progress{w: w, tty: !quiet && isTerminal(w), quiet: quiet, total: total, done: done, start: time.Now(), stop: make(chan struct{}),
		running: map[int]sweep.PointProgress{}}
	p.last = p.start
	p.weigh(nil, nil, 1)
	if p.tty {
		// Redraw every second, so that elapsed time moves during a long
		// point.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-t.C:
					p.mu.Lock()
					p.draw()
					p.mu.Unlock()
				}
			}
		}()
	}
	return p
}

// weigh sets the points of the run and their estimates (c may be nil:
// every point then weighs the same, and there is no ETA), run jobs at a
// time, and restarts the clock of the ETA.
func (p *progress) weigh(points []sweep.Point, c *costs, jobs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.points = points
	p.ests = nil
	p.secs = nil
	p.jobs = max(jobs, 1)
	if c != nil {
		p.secs = c.seconds()
	}
	p.weights = make([]float64, p.total)
	p.sum, p.doneW = 0, 0
	for i := range p.weights {
		p.weights[i] = 1
		if c != nil {
			p.weights[i] = c.weight(i)
		}
		p.sum += p.weights[i]
		if i < p.done {
			p.doneW += p.weights[i]
		}
	}
	if c != nil {
		p.ests = c.ests
	}
	p.startDone = p.done
	p.start = time.Now()
}

// line prints a message line (above the bar on a terminal).
func (p *progress) line(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, format+"\n", args...)
	p.draw()
}

// step records that done points have run.
func (p *progress) step(done int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := p.done; i < done && i < len(p.weights); i++ {
		p.doneW += p.weights[i]
		delete(p.running, i)
	}
	p.done = done
	p.tick(done == p.total)
}

// point records how far point i (of the run) is.
func (p *progress) point(i int, pr sweep.PointProgress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= p.done {
		p.running[i] = pr
	}
	p.tick(false)
}

// tick redraws the bar, at most ten times a second, or prints a plain
// line at most every plainEvery.
func (p *progress) tick(force bool) {
	now := time.Now()
	if p.tty {
		// The ticker catches up.
		if now.Sub(p.drawnAt) >= 100*time.Millisecond || force {
			p.draw()
		}
		return
	}
	if now.Sub(p.last) >= plainEvery && p.done < p.total {
		p.last = now
		fmt.Fprintf(p.w, "nexar-sim: %s\n", p.status())
	}
}

// finish stops the redrawing and clears the bar.
func (p *progress) finish() {
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *progress) clear() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// draw redraws the bar (terminals only).
func (p *progress) draw() {
	if !p.tty {
		return
	}
	const width = 30
	fill := int(width * p.fraction())
	fill = min(max(fill, 0), width)
	fmt.Fprintf(p.w, "\r\x1b[K[%s%s] %s", strings.Repeat("#", fill), strings.Repeat("-", width-fill), p.status())
	p.drawn, p.drawnAt = true, time.Now()
}

// partOf is how much of point i is done, from its progress report: the
// runs before the one under way, and that run's messages so far over the
// estimate of its messages.
func (p *progress) partOf(i int, pr sweep.PointProgress) float64 {
	f := 0.0
	if p.ests != nil && i < len(p.ests) {
		switch e := p.ests[i]; {
		case e.Messages > 0:
			f = float64(pr.Messages) / float64(e.Messages)
		case e.Events > 0:
			f = float64(pr.Events) / float64(e.Events)
		}
	}
	f = min(f, 0.99) // an estimate may fall short: done is done
	return (float64(pr.Run) + f) / float64(max(pr.Runs, 1))
}

// fraction is the share of the run's work done, weighing each point by
// its estimated cost.
func (p *progress) fraction() float64 {
	if p.sum <= 0 {
		return 1
	}
	w := p.doneW
	for i, pr := range p.running {
		if i < len(p.weights) {
			w += p.weights[i] * p.partOf(i, pr)
		}
	}
	return min(w/p.sum, 1)
}

// status says how far the run is: "12/456 points, 26% of the work; point
// 13 (allreduce/ring world=65536 ...): 1.2ms simulated, 40.1M of 8.59G
// messages; elapsed 12s, ETA 34s".
func (p *progress) status() string {
	elapsed := time.Since(p.start)
	f := p.fraction()
	s := fmt.Sprintf("%d/%d points, %d%% of the work", p.done, p.total, int(100*f))
	if i, pr, ok := p.biggest(); ok {
		s += fmt.Sprintf("; point %d (%v): ", i+1, p.points[i])
		if pr.Messages == 0 && pr.Recorded < p.points[i].World {
			s += fmt.Sprintf("recorded %d of %d ranks", pr.Recorded, p.points[i].World)
		} else {
			s += fmt.Sprintf("%v simulated, %s", pr.Now, count(pr.Messages))
			if p.ests != nil && p.ests[i].Messages > 0 {
				s += " of " + count(p.ests[i].Messages)
			}
			s += " messages"
		}
		if pr.Runs > 1 {
			s += fmt.Sprintf(", run %d of %d", pr.Run+1, pr.Runs)
		}
	}
	s += ", elapsed " + units.FormatElapsed(elapsed)
	if eta, ok := p.eta(elapsed); ok && f < 1 {
		s += ", ETA " + units.FormatElapsed(eta)
	}
	return s
}

// eta is the time the run has left: the estimated wall time of the work
// left, scaled by the pace of the work this run has done as far as that
// pace can be trusted (cli.ETA); ok is false without estimates. Points run
// jobs at a time, each on one core: the wall time of work is its
// estimated seconds over jobs, or its longest point's, whichever is more,
// and the work done is the wall time of the run less that of the work
// left.
func (p *progress) eta(elapsed time.Duration) (time.Duration, bool) {
	if p.secs == nil {
		return 0, false
	}
	var all, left, longest, longestLeft float64
	for i, sec := range p.secs {
		if i < p.startDone {
			continue
		}
		part := 0.0
		switch pr, running := p.running[i]; {
		case i < p.done:
			part = 1
		case running:
			part = p.partOf(i, pr)
		}
		all += sec
		left += sec * (1 - part)
		longest = max(longest, sec)
		longestLeft = max(longestLeft, sec*(1-part))
	}
	jobs := float64(p.jobs)
	wall := func(sum, longest float64) float64 { return max(sum/jobs, longest) }
	leftW := wall(left, longestLeft)
	doneW := max(wall(all, longest)-leftW, 0)
	// Until some work counts as done (a large point records its ranks
	// first), the time elapsed is the work under way's.
	current := 0.0
	if doneW == 0 {
		current = elapsed.Seconds()
	}
	eta := cli.ETA(leftW, doneW, elapsed.Seconds(), current)
	return time.Duration(eta * float64(time.Second)), true
}

// biggest returns the point under way that weighs most, if a point is
// under way and the run has more than one point or it is long.
func (p *progress) biggest() (int, sweep.PointProgress, bool) {
	best, found := -1, false
	var bestPr sweep.PointProgress
	for i, pr := range p.running {
		if i >= len(p.points) {
			continue
		}
		if !found || p.weights[i] > p.weights[best] || (p.weights[i] == p.weights[best] && i < best) {
			best, bestPr, found = i, pr, true
		}
	}
	return best, bestPr, found
}
