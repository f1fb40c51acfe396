package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Recovery is how the survivors of a rank failure go on, as nexar's
// Automatic policy does: every rank sends a heartbeat every Heartbeat and
// counts a peer dead once Timeout has passed without one from it; the
// survivors then agree on the failed set, rebuild their communicator with
// ranks renumbered contiguously, and run the lost work again on the
// smaller world ("shrink"). The zero value takes nexar's defaults.
type Recovery struct {
	// Heartbeat is the interval between a rank's heartbeats (key
	// "heartbeat"; nexar's default 1 s).
	Heartbeat Time
	// Timeout is how long without a heartbeat makes a peer dead (key
	// "timeout"; nexar's default 5 s). It must not be below Heartbeat.
	Timeout Time
	// Rebuild is a fixed time the rebuild takes besides its messages
	// (key "rebuild": connection set-up, reallocation; default 0).
	Rebuild Time
}

// nexar's heartbeat defaults.
const (
	DefaultHeartbeat = Second
	DefaultTimeout   = 5 * Second
)

// withDefaults fills zero fields with nexar's defaults and checks the
// rest.
func (r Recovery) withDefaults() (Recovery, error) {
	if r.Heartbeat == 0 {
		r.Heartbeat = DefaultHeartbeat
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	switch {
	case r.Heartbeat < 0 || r.Rebuild < 0:
		return r, fmt.Errorf("recovery: heartbeat %v and rebuild %v must not be negative", r.Heartbeat, r.Rebuild)
	case r.Timeout < r.Heartbeat:
		return r, fmt.Errorf("recovery: timeout %v is shorter than the heartbeat interval %v: every peer would be declared dead between two heartbeats", r.Timeout, r.Heartbeat)
	}
	return r, nil
}

// String describes the policy for reports.
func (r Recovery) String() string {
	r, _ = r.withDefaults()
	s := fmt.Sprintf("shrink (heartbeat %v, timeout %v", r.Heartbeat, r.Timeout)
	if r.Rebuild > 0 {
		s += fmt.Sprintf(", rebuild %v", r.Rebuild)
	}
	return s + ")"
}

// Detection returns when the survivors declare dead a rank that failed at
// at: heartbeats leave every rank at 0, Heartbeat, 2·Heartbeat, ...; the
// last one the failed rank sent left at ⌊at/Heartbeat⌋·Heartbeat, and the
// peers give up Timeout after it. (A heartbeat's flight, microseconds, is
// left out next to seconds.) So detection takes between Timeout -
// Heartbeat and Timeout after the failure.
func (r Recovery) Detection(at Time) Time {
	r, _ = r.withDefaults()
	return at/r.Heartbeat*r.Heartbeat + r.Timeout
}

// Shrunk is the outcome of a run that lost a rank and recovered by
// shrinking (RunShrink). Times are on the run's clock, from its start.
type Shrunk struct {
	// Failed is the rank that failed, in the old world's numbering. Hit
	// says the failure cost the run its work; it is false when every rank
	// had returned before it failed, or none needed it afterwards: Result
	// is then the run at the old world, and the recovery (still needed
	// before any later run) follows it.
	Failed int
	Hit    bool
	// World is the old world's size; the run after the rebuild has
	// World-1 ranks, the survivors renumbered in order (rank r > Failed
	// becomes r-1).
	World int
	// FailedAt is when the rank failed; Detected when the survivors
	// declared it dead (see Recovery.Detection); Agreed when they had
	// agreed on the failed set; Rebuilt when their new communicator was
	// ready and the work started again.
	FailedAt, Detected, Agreed, Rebuilt Time
	// Result is the run of the body at World-1 ranks (at World when the
	// failure did not hit), its times from its own start, Rebuilt.
	Result *Result
	// End is when the work finished: Rebuilt + Result.End when the
	// failure hit, else Result.End.
	End Time
}

// Lost is the time the failure cost the work: the part of the run before
// it, which is done again, and the detection, agreement and rebuild
// (Rebuilt, from the run's start at 0); 0 when it did not hit.
func (s *Shrunk) Lost() Time {
	if !s.Hit {
		return 0
	}
	return s.Rebuilt
}

// Recovering is the time from the failure to the rebuilt communicator:
// detection, agreement and rebuild.
func (s *Shrunk) Recovering() Time { return s.Rebuilt - s.FailedAt }

// RunShrink runs body on cfg.World ranks, rank failed crashing at time at,
// and recovers by shrinking with policy rec:
//
//  1. the body runs at cfg.World until the failure, which fails the
//     operations that need the rank (its work is lost);
//  2. the survivors declare it dead at rec.Detection(at);
//  3. they agree on the failed set: an allreduce (maximum) of one byte per
//     old rank, by recursive doubling on the World-1 survivors;
//  4. they rebuild: a dissemination barrier on the new world, which
//     confirms every survivor holds the new numbering, then rec.Rebuild;
//  5. the body runs again from the start on World-1 ranks.
//
// Steps 3 to 5 run on cfg.Model at World-1 ranks, each from a quiet
// network (the steps follow each other). If the body finishes before at,
// the failure does not cost the run its work (Hit is false): its result
// stands, and steps 2 to 4 are still reported.
// cfg.Model must not fail ranks itself; cfg.World must be at least 2.
func RunShrink(cfg Config, failed int, at Time, rec Recovery, body Body) (*Shrunk, error) {
	rec, err := rec.withDefaults()
	if err != nil {
		return nil, err
	}
	p := cfg.World
	switch {
	case p < 2:
		return nil, fmt.Errorf("recovery: a world of %d rank(s) cannot lose one and go on", p)
	case failed < 0 || failed >= p:
		return nil, fmt.Errorf("recovery: rank %d outside world of %d ranks", failed, p)
	case at < 0:
		return nil, fmt.Errorf("recovery: rank %d fails at %v, before the run starts", failed, at)
	}
	out := &Shrunk{Failed: failed, World: p, FailedAt: at}

	// 1. The run at the old world, with the failure. A rank that has
	// returned is not affected by failing (Engine.FailRank), so a run
	// that ends well either ended before the failure or did not need the
	// failed rank after it: its work stands.
	first := cfg
	first.Model = WithFaults(cfg.Model, 0, RankFailure{Rank: failed, At: at})
	res, err := Run(first, body)
	if err != nil && !failedBy(err, failed) {
		return nil, err
	}
	out.Hit = err != nil

	// 2-4. Detection, agreement, rebuild.
	out.Detected = rec.Detection(at)
	small := cfg
	small.World, small.Observer, small.Progress, small.HostData, small.Replay = p-1, nil, nil, false, true
	agree, err := Run(small, func(ctx context.Context, l algos.Link) error {
		return algos.RecursiveDoublingAllreduce(ctx, l, l.Alloc(p), device.U8, device.Max)
	})
	if err != nil {
		return nil, fmt.Errorf("recovery: agreeing on the failed set: %w", err)
	}
	out.Agreed = out.Detected + agree.End
	barrier, err := Run(small, func(ctx context.Context, l algos.Link) error {
		return algos.BarrierDissemination(ctx, l)
	})
	if err != nil {
		return nil, fmt.Errorf("recovery: rebuilding: %w", err)
	}
	out.Rebuilt = out.Agreed + barrier.End + rec.Rebuild

	// 5. The work again, at World-1, if it was lost.
	if !out.Hit {
		out.Result, out.End = res, res.End
		return out, nil
	}
	again := cfg
	again.World = p - 1
	res, err = Run(again, body)
	if err != nil {
		return nil, fmt.Errorf("after the rebuild at %d ranks: %w", p-1, err)
	}
	out.Result, out.End = res, out.Rebuilt+res.End
	return out, nil
}

// failedBy reports whether err is a run's failure caused by rank failed
// crashing: among the ranks' errors is the crashed rank's own.
func failedBy(err error, failed int) bool {
	var rf *RankFailedError
	return errors.As(err, &rf) && rf.Rank == failed
}

// ShrinkFailure is a rank failure that the survivors recover from by
// shrinking (a [[fault]] of kind "rank_failure" with recovery =
// "shrink"; keys "rank", "at", "point", "heartbeat", "timeout",
// "rebuild"). It belongs to a sweep, not to one run: rank Rank fails At
// into the point Point of the sweeps (the row of the results, numbered
// from 0), which RunShrink runs; the points after it run on one rank
// fewer. As a fault of a single run it is refused: use RunShrink.
type ShrinkFailure struct {
	Rank     int
	At       Time
	Point    int
	Recovery Recovery
}

func (s ShrinkFailure) String() string {
	return fmt.Sprintf("rank %d fails at %v into point %d, recovery %v", s.Rank, s.At, s.Point, s.Recovery)
}

func (s ShrinkFailure) apply(*faultyNet) error {
	return fmt.Errorf("%v: a failure with recovery by shrinking runs through RunShrink (a sweep's point), not as a fault of every run", s)
}

// String reports the recovery in one line, for logs.
func (s *Shrunk) String() string {
	out := fmt.Sprintf("rank %d of %d failed at %v; detected after %v, agreed in %v, rebuilt in %v (%v from the failure to the rebuilt world of %d)",
		s.Failed, s.World, s.FailedAt, s.Detected-s.FailedAt, s.Agreed-s.Detected, s.Rebuilt-s.Agreed, s.Recovering(), s.World-1)
	if s.Hit {
		return out + fmt.Sprintf("; the work ran again on %d ranks in %v, %v lost", s.World-1, s.Result.End, s.Lost())
	}
	return out + "; the work had finished"
}
