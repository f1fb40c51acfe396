package workload

import (
	"context"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// SimConfig is how Simulate runs a step.
type SimConfig struct {
	// Model is the network (a scenario's Network.Seeded(seed)).
	Model sim.Model
	// Machine is what the links tell algorithms of the hardware
	// (scenario.Network.MachineFor), and its FLOPS the rate of work given
	// in FLOPs, unless FLOPS is set.
	Machine *algos.Machine
	FLOPS   float64
	// Tuning is the groups' "auto" table; nil for nexar's.
	Tuning *algos.Tuning
	// Observer, if not nil, is the simulator's (a trace.Recorder for the
	// messages of a timeline).
	Observer sim.Observer
	// Keep, if not nil, names the ranks whose stream records Simulate
	// returns whole (for a timeline).
	Keep     func(rank int) bool
	Context  context.Context
	Progress func(sim.Progress)
}

// Simulate runs one step of p on the simulator and accounts for it. It
// returns the result and the kept ranks' stream records.
func Simulate(p *Plan, cfg SimConfig) (*Result, []algos.StreamRecord, error) {
	stats := NewStats(p.World(), cfg.Keep)
	opt := Options{Tuning: cfg.Tuning, FLOPS: cfg.FLOPS, Observer: stats}
	res, err := sim.Run(sim.Config{
		World: p.World(), Model: cfg.Model, Machine: cfg.Machine, Observer: cfg.Observer,
		Context: cfg.Context, Progress: cfg.Progress,
	}, func(ctx context.Context, l algos.Link) error { return Run(ctx, l, p, opt) })
	if err != nil {
		return nil, nil, err
	}
	out := stats.Result(p, res.End.Seconds())
	out.Messages, out.Events = res.Messages, res.Events
	return out, stats.Records(), nil
}
