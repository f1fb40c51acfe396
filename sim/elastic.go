package sim

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// RankJoin is ranks joining an elastic world at a point boundary, as
// nexar's elastic membership resizes a world at checkpoint boundaries and
// nexar-live admits a late worker at the next point: a [[fault]] of kind
// "rank_join" (keys "point", "ranks", "min_world", "max_world",
// "rebuild"). Ranks new ranks join before the point Point of the sweeps
// (the row of the results, numbered from 0), which RunGrow runs; from it
// on every point runs on Ranks more ranks, never more than MaxWorld. The
// world may never be below MinWorld nor above MaxWorld. It belongs to a
// sweep, not to one run: as a fault of a single run it is refused.
type RankJoin struct {
	Ranks              int
	Point              int
	MinWorld, MaxWorld int
	// Rebuild is a fixed time the rebuild takes besides its messages
	// (connection set-up with the newcomers; default 0).
	Rebuild Time
}

func (j RankJoin) String() string {
	return fmt.Sprintf("%d rank(s) join before point %d (world %d..%d)", j.Ranks, j.Point, j.MinWorld, j.MaxWorld)
}

func (j RankJoin) apply(*faultyNet) error {
	return fmt.Errorf("%v: ranks joining run through RunGrow (a sweep's point), not as a fault of every run", j)
}

// Grown is the outcome of a run that began with the world growing
// (RunGrow). Times are from the point boundary, when the newcomers
// announced themselves.
type Grown struct {
	// World is the old world's size, Joined how many ranks joined: the
	// run has World+Joined ranks, the newcomers numbered World, World+1,
	// ...
	World, Joined int
	// Agreed is when the members had agreed on the new membership;
	// Rebuilt when the communicator of the new world was ready and the
	// work started.
	Agreed, Rebuilt Time
	// Result is the run of the body at World+Joined ranks, its times from
	// its own start, Rebuilt.
	Result *Result
	// End is Rebuilt + Result.End.
	End Time
}

// String reports the growth in one line, for logs.
func (g *Grown) String() string {
	return fmt.Sprintf("%d rank(s) joined the world of %d; agreed in %v, rebuilt in %v (%v from the boundary to the world of %d); the work ran on %d ranks in %v",
		g.Joined, g.World, g.Agreed, g.Rebuilt-g.Agreed, g.Rebuilt, g.World+g.Joined, g.World+g.Joined, g.Result.End)
}

// RunGrow runs body on cfg.World+joined ranks after growing the world
// from cfg.World, as RunShrink rebuilds it after a failure, without the
// detection (a newcomer announces itself at the boundary):
//
//  1. the cfg.World members agree on the new membership: an allreduce
//     (maximum) of one byte per rank of the new world, by recursive
//     doubling on the old world;
//  2. they rebuild: a dissemination barrier on the new world, which
//     confirms every rank, old and new, holds the new numbering, then
//     rebuild;
//  3. the body runs on cfg.World+joined ranks.
//
// Each step runs on cfg.Model from a quiet network. cfg.Model must not
// fail ranks itself.
func RunGrow(cfg Config, joined int, rebuild Time, body Body) (*Grown, error) {
	p := cfg.World
	switch {
	case p < 1:
		return nil, fmt.Errorf("elastic: a world of %d ranks cannot grow", p)
	case joined < 1:
		return nil, fmt.Errorf("elastic: %d ranks joining: want at least 1", joined)
	case rebuild < 0:
		return nil, fmt.Errorf("elastic: rebuild %v must not be negative", rebuild)
	}
	q := p + joined
	out := &Grown{World: p, Joined: joined}
	quiet := cfg
	quiet.Observer, quiet.Progress, quiet.HostData, quiet.Replay = nil, nil, false, true
	agree, err := Run(quiet, func(ctx context.Context, l algos.Link) error {
		return algos.RecursiveDoublingAllreduce(ctx, l, l.Alloc(q), device.U8, device.Max)
	})
	if err != nil {
		return nil, fmt.Errorf("elastic: agreeing on the new membership: %w", err)
	}
	out.Agreed = agree.End
	quiet.World = q
	barrier, err := Run(quiet, func(ctx context.Context, l algos.Link) error {
		return algos.BarrierDissemination(ctx, l)
	})
	if err != nil {
		return nil, fmt.Errorf("elastic: rebuilding: %w", err)
	}
	out.Rebuilt = out.Agreed + barrier.End + rebuild
	grown := cfg
	grown.World = q
	res, err := Run(grown, body)
	if err != nil {
		return nil, fmt.Errorf("after growing to %d ranks: %w", q, err)
	}
	out.Result, out.End = res, out.Rebuilt+res.End
	return out, nil
}
