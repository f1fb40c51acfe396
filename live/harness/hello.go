package harness

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// JobMismatchError reports ranks that were started with another job
// (another scenario file, world size or options) than rank 0.
type JobMismatchError struct {
	// Ranks are the ranks whose job differs from rank 0's; empty on a rank
	// other than 0, which only learns that rank 0 refused.
	Ranks []int
}

func (e *JobMismatchError) Error() string {
	if len(e.Ranks) == 0 {
		return "live: rank 0 runs another job (scenario file, world size or options differ)"
	}
	return fmt.Sprintf("live: ranks %v run another job than rank 0 (scenario file, world size or options differ)", e.Ranks)
}

// Hello makes sure every rank of l runs the same job: each sends rank 0
// its job's id (a hash of what it runs), and rank 0 answers each with a
// go (1) or a refusal (0), a *JobMismatchError on both sides.
func Hello(ctx context.Context, l algos.Link, id [32]byte) error {
	sl := algos.Scoped(l, CommHello, 0)
	if l.Rank() != 0 {
		if err := algos.Send(ctx, sl, 0, 0, device.Host(id[:])); err != nil {
			return fmt.Errorf("live: joining rank 0: %w", err)
		}
		ok := make(device.Host, 1)
		if err := algos.Recv(ctx, sl, 0, 1, ok); err != nil {
			return fmt.Errorf("live: joining rank 0: %w", err)
		}
		if ok[0] != 1 {
			return &JobMismatchError{}
		}
		return nil
	}
	p := l.Size()
	ids := make([]device.Host, p)
	reqs := make([]algos.Request, 0, p)
	for r := 1; r < p; r++ {
		ids[r] = make(device.Host, len(id))
		reqs = append(reqs, sl.Irecv(r, 0, ids[r]))
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return fmt.Errorf("live: waiting for the ranks to join: %w", err)
	}
	var bad []int
	answers := make([]device.Host, p)
	reqs = reqs[:0]
	for r := 1; r < p; r++ {
		answers[r] = device.Host{1}
		if string(ids[r]) != string(id[:]) {
			bad = append(bad, r)
			answers[r][0] = 0
		}
		reqs = append(reqs, sl.Isend(r, 1, answers[r]))
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return fmt.Errorf("live: answering the ranks: %w", err)
	}
	if len(bad) > 0 {
		return &JobMismatchError{Ranks: bad}
	}
	return nil
}

// WarmUp exchanges messages of a few sizes, on either side of the bulk
// threshold, between every pair of ranks, a few times: connections,
// congestion windows and buffers are then past their start-up, which
// the first points measured would otherwise pay (per-point warm-up
// iterations are too few for that, on the first point).
func WarmUp(ctx context.Context, l algos.Link) error {
	p, me := l.Size(), l.Rank()
	seq := uint64(1)
	for range 3 {
		for _, n := range []int{8, 16 << 10, 1 << 20} {
			sl := algos.Scoped(l, CommHello, seq)
			seq++
			out := make(device.Host, n)
			in := make([]device.Host, p)
			reqs := make([]algos.Request, 0, 2*p)
			for r := range p {
				if r == me {
					continue
				}
				in[r] = make(device.Host, n)
				reqs = append(reqs, sl.Irecv(r, 0, in[r]), sl.Isend(r, 0, out))
			}
			if err := l.Wait(ctx, reqs...); err != nil {
				return err
			}
		}
	}
	return nil
}
