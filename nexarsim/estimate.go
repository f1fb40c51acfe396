package nexarsim

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
)

// costs are the estimates of a plan's points (see sweep.EstimatePoint).
type costs struct {
	points []sweep.Point
	ests   []sweep.Estimate
	errs   []error
	// mem is the machine's memory, total and available, in bytes; 0 if
	// unknown.
	memTotal, memAvail int64
}

// estimate estimates points, jobs at a time.
func estimate(points []sweep.Point, jobs int) *costs {
	c := &costs{points: points}
	c.ests, c.errs = sweep.EstimatePoints(points, jobs)
	c.memTotal, c.memAvail = machineMemory()
	return c
}

// estimateCtx estimates points, jobs at a time, unless ctx is done first
// (a signal): then ok is false. The estimates are a small part of the
// run's work, at most seconds for millions of ranks.
func estimateCtx(ctx context.Context, points []sweep.Point, jobs int) (c *costs, ok bool) {
	done := make(chan *costs, 1)
	go func() { done <- estimate(points, jobs) }()
	select {
	case c = <-done:
		return c, true
	case <-ctx.Done():
		return nil, false
	}
}

// weight is point i's share of the work, for the progress bar: its
// estimated cost, or the mean of the others' if it has none.
func (c *costs) weight(i int) float64 {
	if c.errs[i] == nil && c.ests[i].Cost() > 0 {
		return c.ests[i].Cost()
	}
	return 1
}

// seconds are the points' estimated wall times on this machine, each
// over all its runs; a point without an estimate takes the mean of the
// others'.
func (c *costs) seconds() []float64 {
	out := make([]float64, len(c.ests))
	sum, n := 0.0, 0
	for i, e := range c.ests {
		if c.errs[i] == nil {
			out[i] = e.Seconds * float64(max(e.Runs, 1))
			sum += out[i]
			n++
		}
	}
	for i := range out {
		if c.errs[i] != nil && n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// sweepLine says what the points of one sweep, points[lo:hi], will cost.
func (c *costs) sweepLine(lo, hi int) string {
	t := sweep.Sum(c.ests[lo:hi])
	s := fmt.Sprintf("%s messages, %s events, roughly %s; largest point %s", count(t.Messages), count(t.Events), seconds(t.Seconds), bytesOf(t.Memory))
	if n := symmetricPoints(c.ests[lo:hi], c.errs[lo:hi]); n > 0 {
		s += fmt.Sprintf("; %d point(s) likely simulated one rank for all (symmetry, as the sampled ranks suggest; the run proves it or runs every rank)", n)
	}
	for _, err := range c.errs[lo:hi] {
		if err != nil {
			s += " (some points could not be estimated)"
			break
		}
	}
	return s
}

// symmetricPoints counts the estimated points whose sample says the run
// will simulate one rank for all (sim.Estimate.Symmetry).
func symmetricPoints(ests []sweep.Estimate, errs []error) int {
	n := 0
	for i, e := range ests {
		if errs[i] == nil && e.Symmetry != "" {
			n++
		}
	}
	return n
}

// memoryLimit is the memory a point may need before it is warned about:
// what the machine has available, or failing that its total.
func (c *costs) memoryLimit() int64 {
	if c.memAvail > 0 {
		return c.memAvail
	}
	return c.memTotal
}

// warnings lists the points that would not fit in the machine's memory,
// and those that would run for hours, each with the file and line of its
// sweep; at most a few of each kind per sweep, then how many more.
func (c *costs) warnings(s *scenario.Scenario, file string, jobs int) []string {
	var out []string
	limit := c.memoryLimit()
	const most = 3
	type key struct{ sweep, kind int }
	seen := map[key]int{}
	for i, e := range c.ests {
		if c.errs[i] != nil {
			continue
		}
		p := c.points[i]
		line := s.Sweeps[p.Sweep].Line
		if limit > 0 && e.Memory > limit {
			k := key{p.Sweep, 0}
			if seen[k]++; seen[k] <= most {
				out = append(out, fmt.Sprintf("%s:%d: %v needs about %s of memory, more than the %s this machine has available (of %s): it may not fit",
					file, line, p, bytesOf(e.Memory), bytesOf(c.memAvail), bytesOf(c.memTotal)))
			}
		}
		if e.Messages*int64(e.Runs) >= longMessages || e.Seconds*float64(e.Runs) > longPoint {
			k := key{p.Sweep, 1}
			if seen[k]++; seen[k] <= most {
				short := ""
				if e.Symmetry != "" {
					short = fmt.Sprintf(" (one rank simulated for all, %s group, if the run proves it)", e.Symmetry)
				}
				out = append(out, fmt.Sprintf("%s:%d: %v simulates %s messages: roughly %s on this machine%s", file, line, p, count(e.Messages*int64(e.Runs)), seconds(e.Seconds*float64(e.Runs)), short))
			}
		}
	}
	for k, n := range seen {
		if n > most {
			what := "more points may not fit in memory"
			if k.kind == 1 {
				what = "more points run for over an hour or a billion messages"
			}
			out = append(out, fmt.Sprintf("%s:%d: %d %s", file, s.Sweeps[k.sweep].Line, n-most, what))
		}
	}
	if jobs > 1 && limit > 0 {
		// Points run jobs at a time: the largest ones may meet.
		t := sweep.Sum(c.ests)
		if t.Memory <= limit && t.Memory*int64(jobs) > limit && bigPoints(c.ests, limit/int64(jobs)) >= 2 {
			out = append(out, fmt.Sprintf("%s: points of up to %s run %d at a time (--jobs %d) may not fit in the %s available; lower --jobs if the run is killed",
				file, bytesOf(t.Memory), jobs, jobs, bytesOf(limit)))
		}
	}
	return out
}

// A point is warned about when it simulates longMessages messages or
// more, or is estimated to take over longPoint seconds on this machine
// (an estimate that depends on the machine's load: the messages do not).
const (
	longMessages = 1_000_000_000
	longPoint    = 3600
)

// bigPoints counts the estimates over size bytes.
func bigPoints(ests []sweep.Estimate, size int64) int {
	n := 0
	for _, e := range ests {
		if e.Memory > size {
			n++
		}
	}
	return n
}

// machineMemory reads the machine's total and available memory
// (cli.MachineMemory); zeros where it cannot.
func machineMemory() (total, avail int64) { return cli.MachineMemory() }

// parseMeminfo reads MemTotal and MemAvailable (in kB) from r
// (cli.ParseMeminfo).
func parseMeminfo(r io.Reader) (total, avail int64) { return cli.ParseMeminfo(r) }

// count writes n with three significant digits: "950", "12.3k", "8.59G"
// (units.FormatCount).
func count(n int64) string { return units.FormatCount(n) }

// bytesOf writes n bytes in binary units: "512 B", "14.7 GiB"
// (units.FormatBytesFixed).
func bytesOf(n int64) string { return units.FormatBytesFixed(n) }

// seconds writes a rough duration: "0.2s", "40s", "12 min", "3.1 h"
// (units.FormatSecondsRough).
func seconds(s float64) string { return units.FormatSecondsRough(s) }

// reportCosts estimates points (of scenario s, from file) and writes to
// stdout what each sweep will cost, then warns on stderr of the points
// that may not fit in memory or run for hours: validate's report.
func reportCosts(stdout, stderr io.Writer, s *scenario.Scenario, file string, points []sweep.Point) {
	c := estimate(points, runtime.NumCPU())
	for _, r := range sweepRanges(points) {
		sw := s.Sweeps[points[r[0]].Sweep]
		fmt.Fprintf(stdout, "  sweep %d (%s:%d): %d point(s): %s\n", sw.Index+1, file, sw.Line, r[1]-r[0], c.sweepLine(r[0], r[1]))
	}
	t := sweep.Sum(c.ests)
	fmt.Fprintf(stdout, "  total: %s messages, %s events, roughly %s on this machine (one point at a time); the largest point needs about %s",
		count(t.Messages), count(t.Events), seconds(t.Seconds), bytesOf(t.Memory))
	if c.memTotal > 0 {
		fmt.Fprintf(stdout, " (the machine has %s, %s available)", bytesOf(c.memTotal), bytesOf(c.memAvail))
	}
	fmt.Fprintln(stdout)
	for _, w := range c.warnings(s, file, 1) {
		fmt.Fprintf(stderr, "nexar-sim: warning: %s\n", w)
	}
}

// sweepRanges splits points into the [lo, hi) ranges of their sweeps.
func sweepRanges(points []sweep.Point) [][2]int {
	var out [][2]int
	for i := 0; i < len(points); {
		j := i
		for j < len(points) && points[j].Sweep == points[i].Sweep {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}
