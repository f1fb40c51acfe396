package sim

import (
	"errors"
	"math"
)

// The flow model's time estimate. Its runs' cost follows the work of
// their max-min passes, which the events do not show: a pass visits the
// flows connected through shared links to the ones that started or
// ended, each over its route, and the edges they share. A ring's
// neighbours share little, so a flow costs a few such visits at any
// world; halving-doubling's distant pairs cross the spines together, so
// its passes grow with the world. A failed link adds events (the
// reroutes) but little work. So the estimate counts, rather than times,
// the work per message on runs of 16, 32, ... ranks, up to a quarter of
// the world or flowWorkBudget, and extrapolates it to the world along
// the power of the world it grew by from the run of 64 ranks to the
// last (between 0 and 1); the time is then the messages at
// flowMessageCost each, plus that work at flowWorkCost a unit, both
// growing by flowGrowth each time the world doubles past
// flowGrowthFrom, as the flows' and routes' state leaves the caches.
// The estimate is deterministic: it times nothing.
//
// The costs are CPU seconds on one core of the 2.5 GHz Xeon the project
// measures on, fitted to replayed runs (phantom data) on that machine
// shared with other jobs, whose CPU times vary by a third from run to
// run: ring allreduce of 1 GiB on the dgx-h100 preset at 512 ranks (1.2
// µs a message, 7.9 work units each), 1024 (1.6 µs), 4096 (1.6 to 2.3
// µs, 8.1 units) and 16384 GPUs (3.2 µs; scenarios/scale), and
// halving-doubling of 64 MiB on BenchmarkScaleFlow's fat tree at 4096
// ranks (10 to 16 µs a message, 91.5 units each).
const (
	flowMessageCost = 0.46e-6
	flowWorkCost    = 0.154e-6
	flowGrowthFrom  = 4096
	flowGrowth      = math.Sqrt2
	flowSetup       = 0.05
)

// flowWorkBudget is the most work a calibration run of a flow-model
// estimate may take: about a quarter of a second.
const flowWorkBudget = 3 << 20

// flowSeconds estimates the time of a flow-model run of cfg that sends
// messages messages (see above); ok is false when no calibration run
// sends a message or one fails.
func flowSeconds(cfg Config, body Body, messages int64) (seconds float64, ok bool) {
	per, ok := flowWorkPerMessage(cfg, body)
	if !ok {
		return 0, false
	}
	w := float64(cfg.World)
	cost := (flowMessageCost + flowWorkCost*per) * math.Pow(flowGrowth, max(math.Log2(w/flowGrowthFrom), 0))
	return flowSetup + cost*float64(messages), true
}

// flowWorkPerMessage estimates the work of the max-min passes per message
// of a flow-model run of cfg from runs of smaller worlds (see above).
func flowWorkPerMessage(cfg Config, body Body) (per float64, ok bool) {
	small := cfg
	small.Observer, small.Progress, small.Replay = nil, nil, true
	// first is the first calibration run of 64 ranks or more (or the
	// first of all), last the last: the power the work per message grew
	// by is taken between them, over several doublings, since the steps
	// of one doubling are uneven (a run that first crosses the spines).
	type point struct {
		world int
		per   float64
		work  int64
	}
	var first, prev, last point
	for w := 16; w == 16 || w <= cfg.World/4; w *= 2 {
		small.World = w
		res, work, err := flowWork(small, body)
		if err != nil {
			return 0, false
		}
		if res.Messages == 0 {
			break
		}
		prev, last = last, point{w, float64(work) / float64(res.Messages), work}
		if first.world == 0 || first.world < 64 {
			first = last
		}
		grow := int64(4)
		if prev.work > 0 {
			grow = max(last.work/prev.work, 1)
		}
		if last.work*grow > flowWorkBudget {
			break
		}
	}
	if last.world == 0 {
		return 0, false
	}
	alpha := 0.0
	if first.world < last.world && first.per > 0 {
		alpha = min(max(math.Log(last.per/first.per)/math.Log(float64(last.world)/float64(first.world)), 0), 1)
	}
	return last.per * math.Pow(float64(cfg.World)/float64(last.world), alpha), true
}

// flowWork runs cfg with its flow model counting the work of its max-min
// passes (Flow.work); it fails without running when the flow model lies
// beneath a decorator it cannot rebuild (see countingFlowWork).
func flowWork(cfg Config, body Body) (*Result, int64, error) {
	var w int64
	var ok bool
	if cfg.Model, ok = countingFlowWork(cfg.Model, &w); !ok {
		return nil, 0, errUncounted
	}
	res, err := Run(cfg, body)
	return res, w, err
}

// errUncounted is flowWork's failure on a model whose flow model's work
// it cannot count.
var errUncounted = errors.New("sim: no flow model to count the work of beneath the model's decorators")

// countingFlowWork returns m with its flow model telling w of the work of
// each max-min pass (Flow.work), under the same decorators (Rewrapper);
// ok is false when m has no flow model this can reach: one beneath a
// decorator that cannot be rebuilt, or none at all.
func countingFlowWork(m Model, w *int64) (Model, bool) {
	if x, ok := m.(Flow); ok {
		x.work = w
		return x, true
	}
	r, ok := m.(Rewrapper)
	if !ok {
		return m, false
	}
	inner, ok := countingFlowWork(r.Unwrap(), w)
	if !ok {
		return m, false
	}
	if out := r.Rewrap(inner); out != nil {
		return out, true
	}
	return m, false
}
