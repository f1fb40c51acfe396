package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress reports a run's progress on stderr: a bar redrawn in place when
// stderr is a terminal, plain lines otherwise (a line per sweep, and one at
// most every plainEvery).
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
	p := &progress{w: w, tty: !quiet && isTerminal(w), quiet: quiet, total: total, done: done, start: time.Now(), stop: make(chan struct{})}
	p.last = p.start
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
	p.done = done
	if p.tty {
		// At most ten redraws a second; the ticker catches up.
		if now := time.Now(); now.Sub(p.drawnAt) >= 100*time.Millisecond || done == p.total {
			p.draw()
		}
		return
	}
	if now := time.Now(); now.Sub(p.last) >= plainEvery && done < p.total {
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
	fill := 0
	if p.total > 0 {
		fill = width * p.done / p.total
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%s%s] %s", strings.Repeat("#", fill), strings.Repeat("-", width-fill), p.status())
	p.drawn, p.drawnAt = true, time.Now()
}

// status says how far the run is: "120/456 points (26%), elapsed 12s, ETA 34s".
func (p *progress) status() string {
	elapsed := time.Since(p.start)
	pct := 100
	if p.total > 0 {
		pct = 100 * p.done / p.total
	}
	s := fmt.Sprintf("%d/%d points (%d%%), elapsed %s", p.done, p.total, pct, formatDuration(elapsed))
	if p.done > 0 && p.done < p.total {
		eta := time.Duration(float64(elapsed) * float64(p.total-p.done) / float64(p.done))
		s += ", ETA " + formatDuration(eta)
	}
	return s
}

// formatDuration writes d to the second: "7s", "2m05s", "1h02m".
func formatDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}
