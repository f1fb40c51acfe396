package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// tagRootedReduce is the tag of the binomial reduce.
const tagRootedReduce Tag = 0x200

// BinomialReduce reduces buf across all ranks with op into buf on the root,
// along a binomial tree, nearest subtree first: MPICH's binomial reduce
// (SimGrid's "binomial"). On the other ranks buf is input only, and holds a
// partial reduction afterwards.
//
// Ranks are numbered relative to the root, v = (rank - root) mod p. In
// round j (mask m = 2^j), a rank whose bit j is set sends its partial
// result to v - m and stops; a rank whose low j+1 bits are clear receives
// the partial result of v + m, if that rank exists, and reduces it into
// its own. The broadcast's binomial tree run backwards: the nearest, and
// smallest, subtree is reduced first.
//
// For p = 2^k every round waits for the previous one: lg p (α + nβ + nγ).
// For other p some messages of the partial subtrees travel while their
// receiver is still reducing, and the time lies between
// ceil(lg p)(α + nβ) + nγ and ceil(lg p)(α + nβ + nγ); it equals
// ceil(lg p)(α + nβ) when reduction is free. It moves the whole buffer in
// each of lg p rounds, so it wins for small buffers; for large ones a
// reduce-scatter followed by a gather moves 2((p-1)/p)n.
func BinomialReduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	rl := relativeTo(l, root)
	v, p := rl.Rank(), rl.Size()
	var scratch device.Buffer
	for m := 1; m < p; m <<= 1 {
		if v&m != 0 {
			Release(l, scratch)
			return Send(ctx, rl, v-m, tagRootedReduce, buf)
		}
		if v+m >= p {
			continue
		}
		if scratch == nil {
			scratch = Scratch(l, buf.Len())
		}
		if err := Recv(ctx, rl, v+m, tagRootedReduce, scratch); err != nil {
			return err
		}
		if err := rl.Reduce(buf, scratch, dt, op); err != nil {
			return err
		}
	}
	Release(l, scratch)
	return nil
}

// BinomialFarthestReduce is the binomial reduce the other way round,
// farthest subtree first: with ranks relative to the root, in the round at
// distance d = 2^(ceil(lg p)-1), ..., 2, 1 every rank in [d, 2d) sends its
// partial result to v - d and stops, and every rank v < d with a rank
// v + d receives that rank's partial and reduces it into its own (the
// reduce half of BinomialTreeAllreduce, from any root).
//
// For p = 2^k every round waits for the one before: lg p (α + nβ + nγ), as
// BinomialReduce. Its first round sends half the ranks' buffers across the
// middle of the world at once, where the nearest-first tree sends only one
// message that far, in its last round: on a fat tree whose leaves hold
// neighbouring ranks it loads the uplinks at the worst moment.
func BinomialFarthestReduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	return treeReduce(ctx, relativeTo(l, root), buf, dt, op)
}
