package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// RecursiveDoublingAllreduce exchanges whole buffers in lg p rounds: in the
// round at distance d = p/2, p/4, ..., 1, rank v swaps its buffer with
// v XOR d and reduces the two, so after the last round every rank holds the
// reduction of all. Partners reduce the same two operands, and the
// operators are commutative, so every rank ends with the same bits.
//
// On alpha-beta, p a power of two: lg p (α + nβ + nγ). Otherwise the extra
// ranks fold in and out as in HalvingDoublingAllreduce (see fold):
// (floor(lg p) + 2)(α + nβ) + (floor(lg p) + 1)nγ.
//
// It has the fewest messages of any allreduce but moves the whole buffer
// in each, so it wins only for small messages, where α dominates.
func RecursiveDoublingAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	return recursiveDoublingAllreduce(ctx, l, buf, dt, op, farthestFirst)
}

// RecursiveDoublingNearestAllreduce is MPICH's recursive-doubling
// allreduce (SimGrid's "rdb"): RecursiveDoublingAllreduce with the rounds
// at distance d = 1, 2, ..., p/2, nearest first, and the same fold.
//
// On alpha-beta the same time for p = 2^k, lg p (α + nβ + nγ); off powers
// of two the fold's ranks are one round behind as in the farthest-first
// order, and with free reductions the time is again (floor(lg p) +
// 2)(α + nβ). Where distance costs something, the early rounds stay among
// neighbours; every round moves the whole buffer, so the order matters
// less than for halving-doubling.
func RecursiveDoublingNearestAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	return recursiveDoublingAllreduce(ctx, l, buf, dt, op, nearestFirst)
}

func recursiveDoublingAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, o order) error {
	_, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	f := newFold(l.Size())
	scratch := Scratch(l, buf.Len())
	if err := f.in(ctx, l, buf, scratch, dt, op); err != nil {
		return err
	}
	if v := f.vrank(l.Rank()); v >= 0 {
		for round, d := range o.distances(f.p2, make([]int, 0, maxRounds)) {
			peer := f.rank(v ^ d)
			if err := SendRecv(ctx, l, peer, buf, peer, scratch, tagRecursiveDoubling+Tag(round)); err != nil {
				return err
			}
			if err := l.Reduce(buf, scratch, dt, op); err != nil {
				return err
			}
		}
	}
	Release(l, scratch)
	return f.out(ctx, l, buf)
}
