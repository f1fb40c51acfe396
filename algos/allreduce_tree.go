package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// BinomialTreeAllreduce reduces the buffer to rank 0 along a binomial tree,
// farthest subtree first, and broadcasts the result from rank 0 as MPICH
// does (BinomialBroadcast, SimGrid SMPI's binomial_tree), farthest subtree
// first too.
//
// In the reduce, rank r > 0 hangs under r - 2^i, 2^i the highest power of
// two in r. It runs the rounds at distance d = 2^(ceil(lg p)-1) down to 1:
// in the round at distance d, each rank r < d with a child r + d receives
// the child's partial result and reduces it into its own, and each rank in
// [d, 2d) sends its partial result to its parent. The broadcast sends each
// rank's farthest subtree first, so that the largest subtree starts
// soonest: off powers of two, a nearest-first broadcast keeps the largest
// subtree waiting behind the small ones (up to 18% slower at 6 and 12
// ranks, 3 to 48 KiB, under SMPI's eager protocol on a crossbar, where the
// reduce's order costs nothing). Every message carries the whole buffer.
// On alpha-beta, p a power of two, every round waits for the one before:
//
//	lg p (2α + 2nβ + nγ)
//
// It has twice the rounds of recursive doubling and the same bytes per
// round, so on a flat network it never beats it; it is here because it is
// what "reduce then broadcast" costs, the baseline that composing rooted
// collectives gives, and because a tree keeps each link's load to one
// message per round when the network is not flat.
func BinomialTreeAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	_, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	if err := treeReduce(ctx, l, buf, dt, op); err != nil {
		return err
	}
	return BinomialBroadcast(ctx, l, buf, dt, 0)
}

// BinomialTreeNearestAllreduce is MPICH's allreduce by reduce then
// broadcast (SimGrid's "redbcast" with the binomial reduce and the
// binomial_tree broadcast): BinomialReduce to rank 0, nearest subtree
// first, then BinomialBroadcast from rank 0, farthest subtree first.
//
// On alpha-beta, p = 2^k, the same as BinomialTreeAllreduce:
// lg p (2α + 2nβ + nγ). Both halves send their first message to the
// nearest rank in the reduce and their last ones, few, far: on a fat
// tree whose leaves hold neighbouring ranks the uplinks carry one message
// per round where the farthest-first reduce puts p/2 on them at once.
func BinomialTreeNearestAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	_, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	if err := BinomialReduce(ctx, l, buf, dt, op, 0); err != nil {
		return err
	}
	return BinomialBroadcast(ctx, l, buf, dt, 0)
}

// treeReduce reduces buf into rank 0's buf along the binomial tree.
func treeReduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	r, p := l.Rank(), l.Size()
	var tmp device.Buffer
	for d := treeSpan(p) / 2; d >= 1; d /= 2 {
		switch {
		case r < d && r+d < p:
			if tmp == nil {
				tmp = Scratch(l, buf.Len())
			}
			if err := Recv(ctx, l, r+d, tagTreeReduce, tmp); err != nil {
				return err
			}
			if err := l.Reduce(buf, tmp, dt, op); err != nil {
				return err
			}
		case d <= r && r < 2*d:
			Release(l, tmp)
			return Send(ctx, l, r-d, tagTreeReduce, buf)
		}
	}
	Release(l, tmp)
	return nil
}

// treeBroadcast copies rank 0's buf to every rank along the binomial tree.
func treeBroadcast(ctx context.Context, l Link, buf device.Buffer) error {
	r, p := l.Rank(), l.Size()
	for d := 1; d < p; d *= 2 {
		switch {
		case r < d && r+d < p:
			if err := Send(ctx, l, r+d, tagTreeBroadcast, buf); err != nil {
				return err
			}
		case d <= r && r < 2*d:
			if err := Recv(ctx, l, r-d, tagTreeBroadcast, buf); err != nil {
				return err
			}
		}
	}
	return nil
}
