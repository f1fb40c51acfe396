package calibrate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// simulator gives a sample's time on a model.
type simulator interface {
	time(m sim.Model) (float64, error)
}

// newSimulator returns the simulator of s on a model of spec; tuning is
// the table "auto" selects by.
func newSimulator(s Sample, spec *ModelSpec, tuning *algos.Tuning) (simulator, error) {
	if s.World < 1 {
		return nil, fmt.Errorf("world size %d", s.World)
	}
	if s.Collective == PointToPoint {
		if err := checkPointToPoint(&s); err != nil {
			return nil, err
		}
		return pointToPointSim{s: s, oneTransfer: !spec.Overlaps}, nil
	}
	coll, err := algos.Lookup(s.Collective)
	if err != nil {
		return nil, err
	}
	alg, err := coll.Algorithm(sweep.BaseAlgorithm(s.Algorithm))
	if err != nil {
		return nil, err
	}
	if s.Root < 0 || s.Root >= s.World {
		s.Root = 0
	}
	sz := s.DType.Size()
	send, recv, _ := coll.Layout(s.Bytes/sz, s.World)
	return &collectiveSim{s: s, alg: alg, send: send * sz, recv: recv * sz, tuning: tuning}, nil
}

// collectiveSim simulates one collective sample.
type collectiveSim struct {
	s          Sample
	alg        *algos.Algorithm
	send, recv int
	tuning     *algos.Tuning
}

func (x *collectiveSim) time(m sim.Model) (float64, error) {
	// The body's operations depend on neither time nor data, so the run
	// may be recorded once and replayed (much faster than coroutines).
	res, err := sim.Run(sim.Config{World: x.s.World, Model: m, Replay: true}, func(ctx context.Context, l algos.Link) error {
		c := algos.Call{DType: x.s.DType, Op: x.s.Op, Root: x.s.Root, Params: x.s.Params, Tuning: x.tuning, Buf: l.Alloc(x.recv)}
		if x.send > 0 {
			c.Send = l.Alloc(x.send)
		}
		return x.alg.Run(ctx, l, c)
	})
	if err != nil {
		return 0, fmt.Errorf("simulating %s: %w", x.s, err)
	}
	return res.End.Seconds(), nil
}

// simulateAll gives every simulator's time on m, on every CPU.
func simulateAll(sims []simulator, m sim.Model) ([]float64, error) {
	out := make([]float64, len(sims))
	errs := make([]error, len(sims))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(sims)) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = sims[i].time(m)
			}
		})
	}
	for i := range sims {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}
