package sweep

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// Estimate is what a point will cost, judged before it runs.
type Estimate struct {
	// Estimate is one run's (see sim.EstimateRun): messages, events and
	// the engine's memory.
	sim.Estimate
	// Runs is how many runs the point takes (its repeats).
	Runs int
	// HostBytes is the memory of host data's buffers and checks (see
	// MaxHostBytes); it is part of Memory.
	HostBytes int64
}

// Cost is the point's weight beside others: the estimated time of all its
// runs, or, where there is none, their events. (On the flow model time
// does not follow events: a failed link adds reroutes, which cost little,
// and a run's max-min passes, which the events do not show, cost most.)
func (e Estimate) Cost() float64 {
	if e.Seconds > 0 {
		return e.Seconds * float64(max(e.Runs, 1))
	}
	return float64(e.Events) * float64(max(e.Runs, 1))
}

// EstimatePoint estimates what p will cost without simulating it (see
// sim.EstimateRun): it records the algorithm's operations on a sample of
// the ranks (on phantom buffers: the catalogue's operations do not depend
// on data).
func EstimatePoint(p Point) (Estimate, error) {
	send, recv, _ := p.Layout()
	sz := p.DType.Size()
	inPlace := p.InPlace()
	host := p.Data == scenario.Host
	cfg := sim.Config{World: p.World, Model: p.Model(p.Seed), Machine: p.Machine(), HostData: host, Replay: !host, Symmetry: p.Symmetry}
	est, err := sim.EstimateRun(cfg, func(ctx context.Context, l algos.Link) error {
		c := algos.Call{DType: p.DType, Op: p.Op, Root: p.Root, Params: p.Params, Tuning: p.Tuning, Buf: l.Alloc(recv * sz)}
		if !inPlace {
			c.Send = l.Alloc(send * sz)
		}
		return p.Algorithm.Run(ctx, l, c)
	})
	if err != nil {
		return Estimate{}, fmt.Errorf("estimate of %v: %w", p, err)
	}
	out := Estimate{Estimate: est, Runs: max(p.Repeat, 1), HostBytes: int64(p.hostBytes())}
	out.Memory += out.HostBytes
	return out, nil
}

// EstimatePoints estimates every point, jobs at a time (0: one per CPU),
// in the order of points; errs[i] is not nil where point i could not be
// estimated (its algorithm fails, or depends on timing).
func EstimatePoints(points []Point, jobs int) (ests []Estimate, errs []error) {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	ests = make([]Estimate, len(points))
	errs = make([]error, len(points))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(jobs, max(len(points), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ests[i], errs[i] = EstimatePoint(points[i])
			}
		}()
	}
	for i := range points {
		next <- i
	}
	close(next)
	wg.Wait()
	return ests, errs
}

// Totals sums estimates: the messages, events and time of every run, the
// largest memory of one point, and which point needs it.
type Totals struct {
	Messages, Events int64
	Seconds          float64
	// Memory is the most one point needs, at Point (an index into the
	// estimates).
	Memory int64
	Point  int
}

// Sum returns the totals of ests.
func Sum(ests []Estimate) Totals {
	var t Totals
	for i, e := range ests {
		t.Messages += e.Messages * int64(e.Runs)
		t.Events += e.Events * int64(e.Runs)
		t.Seconds += e.Seconds * float64(e.Runs)
		if e.Memory > t.Memory {
			t.Memory, t.Point = e.Memory, i
		}
	}
	return t
}
