package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// tagRootedReduce is the tag of the binomial reduce.
const tagRootedReduce Tag = 0x200

// BinomialReduce reduces buf across all ranks with op into buf on the root,
// along a binomial tree. On the other ranks buf is input only, and holds a
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
			return Send(ctx, rl, v-m, tagRootedReduce, buf)
		}
		if v+m >= p {
			continue
		}
		if scratch == nil {
			scratch = rl.Alloc(buf.Len())
		}
		if err := Recv(ctx, rl, v+m, tagRootedReduce, scratch); err != nil {
			return err
		}
		if err := rl.Reduce(buf, scratch, dt, op); err != nil {
			return err
		}
	}
	return nil
}
