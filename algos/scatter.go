package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// tagScatter is the tag of the scatter algorithms.
const tagScatter Tag = 0x400

// BinomialScatter sends block r of the root's send buffer, p blocks of
// len(recv) bytes, into recv on rank r, along a binomial tree. send is
// only read on the root (it may be nil elsewhere).
//
// Ranks are numbered relative to the root, v = (rank - root) mod p. Rank v
// receives the blocks of its whole subtree, ranks v .. min(v+lowbit(v), p)
// - 1, from v - lowbit(v) into a scratch buffer, keeps its own and sends
// the subtree of v + m to it for m = lowbit(v)/2, ..., 1, largest first
// (the root starts from the smallest power of two >= p, and first rotates
// its buffer into relative order when it is not rank 0; copies are free on
// alpha-beta).
//
// Time ceil(lg p)α + ((p-1)/p)nβ for every p, n the root's buffer: the
// root sends p-1 blocks in ceil(lg p) messages, its last one to rank 1, a
// leaf, and no path through a smaller subtree ends later. As with
// BinomialGather, it beats LinearScatter unless α is negligible.
func BinomialScatter(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, root int) error {
	if ok, err := startRooted("scatter", l, recv, send, dt, root); !ok {
		return err
	}
	if l.Size() == 1 {
		return l.Copy(recv, send)
	}
	rl := relativeTo(l, root)
	v, p, b := rl.Rank(), rl.Size(), recv.Len()
	span := subtreeSpan(v, p)
	size := min(span, p-v) // blocks in v's subtree
	if size == 1 {
		return Recv(ctx, rl, v-span, tagScatter, recv)
	}
	src := send
	switch {
	case v != 0:
		src = Scratch(l, size*b)
		if err := Recv(ctx, rl, v-span, tagScatter, src); err != nil {
			return err
		}
	case root != 0:
		src = Scratch(l, p*b)
		// Relative block v is rank v+root's: start from root's block.
		if err := rotateLeft(l, src, send, root*b); err != nil {
			return err
		}
	}
	var reqs []Request
	for m := span / 2; m >= 1; m /= 2 {
		if c := v + m; c < p {
			reqs = append(reqs, rl.Isend(c, tagScatter, src.Slice(m*b, min(m, p-c)*b)))
		}
	}
	if err := rl.Copy(recv, src.Slice(0, b)); err != nil {
		return err
	}
	if err := rl.Wait(ctx, reqs...); err != nil {
		return err
	}
	if v != 0 || root != 0 {
		Release(l, src)
	}
	return nil
}

// LinearScatter sends block r of the root's send buffer, p blocks of
// len(recv) bytes, into recv on rank r: the root sends the blocks one
// blocking send after the other in rank order, as Open MPI's basic linear
// scatter (SimGrid's "ompi_basic_linear"), and every other rank receives
// its block.
//
// The root's port sends the blocks one after another: (p-1)(α + (n/p)β),
// n the root's buffer, for every p. Same bandwidth term as the binomial
// tree, linear latency term; it wins only when α is negligible next to
// (n/p)β. Under an eager protocol the sends overlap on the root's link;
// by rendezvous they go strictly in turn, as on alpha-beta.
func LinearScatter(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, root int) error {
	if ok, err := startRooted("scatter", l, recv, send, dt, root); !ok {
		return err
	}
	if l.Rank() != root {
		return Recv(ctx, l, root, tagScatter, recv)
	}
	b := recv.Len()
	for r := 0; r < l.Size(); r++ {
		if r == root {
			if err := l.Copy(recv, send.Slice(root*b, b)); err != nil {
				return err
			}
		} else if err := Send(ctx, l, r, tagScatter, send.Slice(r*b, b)); err != nil {
			return err
		}
	}
	return nil
}

// FlatScatter is nexar's scatter: the root posts all p-1 sends at once, in
// rank order, and every other rank receives its block. On alpha-beta the
// time is LinearScatter's, (p-1)(α + (n/p)β).
func FlatScatter(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, root int) error {
	if ok, err := startRooted("scatter", l, recv, send, dt, root); !ok {
		return err
	}
	if l.Rank() != root {
		return Recv(ctx, l, root, tagScatter, recv)
	}
	b := recv.Len()
	reqs := make([]Request, 0, l.Size()-1)
	for r := 0; r < l.Size(); r++ {
		if r != root {
			reqs = append(reqs, l.Isend(r, tagScatter, send.Slice(r*b, b)))
		}
	}
	if err := l.Copy(recv, send.Slice(root*b, b)); err != nil {
		return err
	}
	return l.Wait(ctx, reqs...)
}
