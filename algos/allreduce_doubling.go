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
	_, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	f := newFold(l.Size())
	scratch := l.Alloc(buf.Len())
	if err := f.in(ctx, l, buf, scratch, dt, op); err != nil {
		return err
	}
	if v := f.vrank(l.Rank()); v >= 0 {
		round := 0
		for d := f.p2 / 2; d >= 1; d /= 2 {
			peer := f.rank(v ^ d)
			if err := SendRecv(ctx, l, peer, buf, peer, scratch, tagRecursiveDoubling+Tag(round)); err != nil {
				return err
			}
			if err := l.Reduce(buf, scratch, dt, op); err != nil {
				return err
			}
			round++
		}
	}
	return f.out(ctx, l, buf)
}
