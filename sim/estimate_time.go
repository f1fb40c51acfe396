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
// Besides the messages, a run builds its topology, at flowBuildCost a
// node or edge, and searches it for the routes: a pass over the whole
// topology per switch that leads to a destination (a leaf, an
// NVSwitch), at flowSearchCost a node or edge. The searches per rank are
// counted on the last calibration run and taken to the world: a ring
// spreads them over half a billion messages, but a tree of 1 GiB at
// 16384 GPUs, 32766 messages on a topology of 166k nodes and edges, spends
// nine tenths of its time in them.
// The estimate is deterministic: it times nothing.
//
// The costs are CPU seconds on one core of the 2.5 GHz Xeon the project
// measures on, a virtual machine whose speed moved by 1.75x from one day
// to the next (the heap-and-switch floor of the scale benchmarks with
// it): they sit between two fits a day apart, so that both days' runs
// fall within 1.5x. The first, under other jobs' load, on ring allreduce
// of 1 GiB on the dgx-h100 preset at 512 to 16384 GPUs (1.2 to 3.2 µs a
// message, 7.9 work units each) and halving-doubling of 64 MiB on
// BenchmarkScaleFlow's fat tree at 4096 ranks (10 to 16 µs a message,
// 91.5 units each, before the passes refilled only the part of a
// component that changed): 0.46 µs a message and 0.154 µs a unit. The
// second, quiet, after that change: the 4096-GPU ring in 118 s of CPU
// (3.5 µs a message, 7.7 units) and the fat tree's halving-doubling at
// 12.8 µs a message (45.7 units): 1.9 µs and 0.195 µs. The build and
// search costs are binomial-tree allreduces of 1 GiB on the dgx-h100
// preset at 4096 and 16384 GPUs (512 searches of 166k nodes and edges,
// 1.0 s; an empty run's 0.2 s for their building), under load 8.
// A third, quiet, on a fast day again, after the flow model's instructions
// fell by a tenth: the fat tree's halving-doubling replayed at 7.3 µs of
// CPU a message, where the costs above gave 1.9x its time; the message
// and work costs are scaled by 0.75 for it, which leaves it at about 1.4x
// and the slow day's at about 0.8x. A fourth, on the AMD EPYC of a later
// round, after flows that start or end alone stopped costing a recompute
// (their work is still counted, see countAlone) and ends moved to
// batches: BenchmarkScaleFlow read the estimate at 1.32-1.35x the ring's
// time replayed at 4096 ranks and 1.12-1.69x halving-doubling's, so the
// message and work costs are scaled by 0.85 again. flowGrowth was
// the square root of 2 until, on that EPYC, the ring of 1 GiB on the
// dgx-h100 preset took 0.80 µs of CPU a message at 4096 GPUs (26.6 and
// 27.7 s, nexar-sim run dgx-4096-ring.toml) and 2.19 µs at 16384
// (1176 s, dgx-16384.toml): 1.65x a doubling, where the estimate read
// 0.70x and 0.51x; 1.66 leaves the second at about 0.7x too. These are a
// replay's costs; a run on coroutines adds their events' price
// (EstimateRun). All of them are the Xeon's, scaled by this machine's
// speed at a heap operation (speed.go).
const (
	flowBuildCost   = 1.2e-6
	flowSearchCost  = 12e-9
	flowMessageCost = 0.60e-6
	flowWorkCost    = 0.110e-6
	flowGrowthFrom  = 4096
	flowGrowth      = 1.66
	flowSetup       = 0.05
)

// calibrateFrom is the world of the first calibration run.
const calibrateFrom = 16

// flowWorkBudget is the most work a calibration run of a flow-model
// estimate may take: about a quarter of a second.
const flowWorkBudget = 3 << 20

// flowSeconds estimates the time of a flow-model run of cfg that sends
// messages messages over a topology of size nodes and edges (see above),
// and the route searches it makes; ok is false when no calibration run
// sends a message or one fails.
func flowSeconds(cfg Config, body Body, messages int64, size int) (seconds, searches float64, ok bool) {
	c, ok := flowCalibrate(cfg, body)
	if !ok {
		return 0, 0, false
	}
	w := float64(cfg.World)
	cost := (flowMessageCost + flowWorkCost*c.perMessage) * math.Pow(flowGrowth, max(math.Log2(w/flowGrowthFrom), 0))
	searches = c.searchesPerRank * w
	heap, _ := machineSpeed() // the reference machine's costs, scaled to this one's (speed.go)
	return heap * (flowSetup + float64(size)*(flowBuildCost+searches*flowSearchCost) + cost*float64(messages)), searches, true
}

// flowCalibration is what the calibration runs of a flow-model estimate
// found: the work of the max-min passes per message, extrapolated to the
// world, and the searches of the routes per rank of the last run.
type flowCalibration struct {
	perMessage, searchesPerRank float64
}

// flowWorkPerMessage estimates the work of the max-min passes per message
// of a flow-model run of cfg from runs of smaller worlds (see above).
func flowWorkPerMessage(cfg Config, body Body) (per float64, ok bool) {
	c, ok := flowCalibrate(builtOnce(cfg), body)
	return c.perMessage, ok
}

// flowCalibrate runs cfg's body on smaller worlds, counting (see above).
func flowCalibrate(cfg Config, body Body) (flowCalibration, bool) {
	small := cfg
	small.Observer, small.Progress, small.Replay = nil, nil, true
	// first is the first calibration run of 64 ranks or more (or the
	// first of all), last the last: the power the work per message grew
	// by is taken between them, over several doublings, since the steps
	// of one doubling are uneven (a run that first crosses the spines).
	type point struct {
		world    int
		per      float64
		work     int64
		searches int64
	}
	var first, prev, last point
	for w := calibrateFrom; w == calibrateFrom || w <= cfg.World/4; w *= 2 {
		small.World = w
		res, c, err := flowCounted(small, body)
		if err != nil {
			return flowCalibration{}, false
		}
		if res.Messages == 0 {
			break
		}
		prev, last = last, point{w, float64(c.work) / float64(res.Messages), c.work, c.searches}
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
		return flowCalibration{}, false
	}
	alpha := 0.0
	if first.world < last.world && first.per > 0 {
		alpha = min(max(math.Log(last.per/first.per)/math.Log(float64(last.world)/float64(first.world)), 0), 1)
	}
	return flowCalibration{
		perMessage:      last.per * math.Pow(float64(cfg.World)/float64(last.world), alpha),
		searchesPerRank: float64(last.searches) / float64(last.world),
	}, true
}

// flowCounts are what a counting flow model tells of a run: the work of
// its max-min passes (Flow.work) and its searches of the routes
// (Flow.searches).
type flowCounts struct {
	work, searches int64
}

// flowWork runs cfg with its flow model counting the work of its max-min
// passes (Flow.work); it fails without running when the flow model lies
// beneath a decorator it cannot rebuild (see countingFlowWork).
func flowWork(cfg Config, body Body) (*Result, int64, error) {
	res, c, err := flowCounted(cfg, body)
	return res, c.work, err
}

// flowCounted runs cfg with its flow model counting (flowCounts).
func flowCounted(cfg Config, body Body) (*Result, flowCounts, error) {
	var c flowCounts
	var ok bool
	if cfg.Model, ok = countingFlowWork(cfg.Model, &c); !ok {
		return nil, c, errUncounted
	}
	res, err := Run(cfg, body)
	return res, c, err
}

// errUncounted is flowWork's failure on a model whose flow model's work
// it cannot count.
var errUncounted = errors.New("sim: no flow model to count the work of beneath the model's decorators")

// countingFlowWork returns m with its flow model telling c of the work of
// each max-min pass and of each search of the routes, under the same
// decorators (Rewrapper);
// ok is false when m has no flow model this can reach: one beneath a
// decorator that cannot be rebuilt, or none at all.
func countingFlowWork(m Model, c *flowCounts) (Model, bool) {
	return rewrapFlow(m, func(x Flow) Flow {
		x.work, x.searches = &c.work, &c.searches
		return x
	})
}

// rewrapFlow returns m with its flow model changed by change, under the
// same decorators (Rewrapper); ok is false, and m returned as it is,
// when m has no flow model this can reach.
func rewrapFlow(m Model, change func(Flow) Flow) (Model, bool) {
	if x, ok := m.(Flow); ok {
		return change(x), true
	}
	r, ok := m.(Rewrapper)
	if !ok {
		return m, false
	}
	inner, ok := rewrapFlow(r.Unwrap(), change)
	if !ok {
		return m, false
	}
	if out := r.Rewrap(inner); out != nil {
		return out, true
	}
	return m, false
}

// builtOnce returns cfg with the topology of its flow model built once,
// if it is of fixed size (fixedTopology), so that the estimate's runs and
// its size share the build: on a 16k-GPU preset a build takes a third of
// a second, and the flow model's calibration alone makes ten runs.
func builtOnce(cfg Config) Config {
	if t, ok := fixedTopology(cfg.Model, cfg.World); ok {
		cfg.Model, _ = rewrapFlow(cfg.Model, func(x Flow) Flow { x.Topology = t; return x })
	}
	return cfg
}

// fixedTopology returns the topology of the flow model in m (under any
// decorators) when it is the same for every calibration world: built
// for the smallest (calibrateFrom ranks), it already has devices for
// world. A topology of fixed size (a preset's nodes, a torus's
// dimensions) builds the same for any world it fits, and a spec that
// grows with the world builds a smaller one for the calibration runs,
// which is then built for each of them as before.
func fixedTopology(m Model, world int) (*Topology, bool) {
	for {
		if x, ok := m.(Flow); ok {
			if x.Topology == nil {
				return nil, false
			}
			t, err := x.Topology.Build(calibrateFrom)
			if err != nil || t.NumDevices() < world {
				return nil, false
			}
			return t, true
		}
		inner, ok := beneath(m)
		if !ok {
			return nil, false
		}
		m = inner
	}
}
