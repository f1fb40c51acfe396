package algos

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// tagGather is the tag of the gather algorithms.
const tagGather Tag = 0x300

// startRooted checks the arguments of a gather or a scatter: block is this
// rank's block, full the root's buffer of p blocks (only looked at on the
// root); a nil buffer is an empty one. It reports whether there is
// anything to move.
func startRooted(name string, l Link, block, full device.Buffer, dt device.DType, root int) (bool, error) {
	if err := checkRootRank(l, root); err != nil {
		return false, err
	}
	b := 0
	if block != nil {
		if err := checkBuffer(block, dt); err != nil {
			return false, err
		}
		b = block.Len()
	}
	if l.Rank() == root {
		f := 0
		if full != nil {
			f = full.Len()
		}
		if want := l.Size() * b; f != want {
			return false, fmt.Errorf("algos: %s: root buffer of %d bytes, want %d ranks x %d bytes = %d",
				name, f, l.Size(), b, want)
		}
	}
	return b > 0, nil
}

// BinomialGather gathers every rank's send block into recv on the root,
// rank r's block at offset r*len(send), along a binomial tree. recv must
// hold p blocks on the root and is not used elsewhere (it may be nil).
//
// Ranks are numbered relative to the root, v = (rank - root) mod p; rank v
// collects the blocks of its subtree, ranks v .. min(v+lowbit(v), p) - 1,
// receiving the subtree of v + m for m = 1, 2, 4, ... (nearest first, all
// receives posted at once) into a scratch buffer, then sends them on to
// v - lowbit(v) in one message. The root gathers in relative order and
// rotates into rank order (copies are free on alpha-beta).
//
// Time ceil(lg p)α + ((p-1)/p)nβ for every p, n the root's buffer: the
// root's port is busy without a gap from the first message to the last
// (each subtree is complete by the time the previous, smaller one has
// arrived), and it receives p-1 blocks in ceil(lg p) messages. The
// latency term is logarithmic and the bandwidth term optimal, so it beats
// LinearGather except where per-message overheads are tiny.
func BinomialGather(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, root int) error {
	if ok, err := startRooted("gather", l, send, recv, dt, root); !ok {
		return err
	}
	if l.Size() == 1 {
		return l.Copy(recv, send)
	}
	rl := relativeTo(l, root)
	v, p, b := rl.Rank(), rl.Size(), send.Len()
	span := subtreeSpan(v, p)
	size := min(span, p-v) // blocks in v's subtree
	if size == 1 {
		return Send(ctx, rl, v-span, tagGather, send)
	}
	acc, own := recv, v != 0 || root != 0
	if own {
		acc = Scratch(l, size*b)
	}
	if err := rl.Copy(acc.Slice(0, b), send); err != nil {
		return err
	}
	var reqs []Request
	for m := 1; m < span && v+m < p; m <<= 1 {
		blocksOfChild := min(m, p-v-m)
		reqs = append(reqs, rl.Irecv(v+m, tagGather, acc.Slice(m*b, blocksOfChild*b)))
	}
	if err := rl.Wait(ctx, reqs...); err != nil {
		return err
	}
	var err error
	switch {
	case v != 0:
		err = Send(ctx, rl, v-span, tagGather, acc)
	case root != 0:
		// Relative block v is rank v+root's: rotate left by the p-root
		// blocks of ranks root..p-1.
		err = rotateLeft(l, recv, acc, (p-root)*b)
	}
	if err == nil && own {
		Release(l, acc)
	}
	return err
}

// LinearGather gathers every rank's send block into recv on the root, rank
// r's block at offset r*len(send): every rank sends its block straight to
// the root, which receives them one blocking receive after the other in
// rank order, as Open MPI's basic linear gather (SimGrid's
// "ompi_basic_linear").
//
// The root's port takes the blocks one after another: (p-1)(α + (n/p)β),
// n the root's buffer, for every p. The bandwidth term equals the binomial
// tree's but the latency term is linear in p, so it wins only when α is
// negligible next to (n/p)β, or where a tree's extra hop costs more than
// α (for example a root with a faster port than its peers'). Under a
// protocol whose messages wait for their receive the root takes them
// strictly in turn; FlatGather lets them all come at once.
func LinearGather(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, root int) error {
	if ok, err := startRooted("gather", l, send, recv, dt, root); !ok {
		return err
	}
	if l.Rank() != root {
		return Send(ctx, l, root, tagGather, send)
	}
	b := send.Len()
	for r := 0; r < l.Size(); r++ {
		if r == root {
			if err := l.Copy(recv.Slice(root*b, b), send); err != nil {
				return err
			}
		} else if err := Recv(ctx, l, r, tagGather, recv.Slice(r*b, b)); err != nil {
			return err
		}
	}
	return nil
}

// FlatGather is nexar's gather: every rank sends its block straight to the
// root, which posts all p-1 receives at once and lets the network order
// them. On alpha-beta the time is LinearGather's, (p-1)(α + (n/p)β).
func FlatGather(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, root int) error {
	if ok, err := startRooted("gather", l, send, recv, dt, root); !ok {
		return err
	}
	if l.Rank() != root {
		return Send(ctx, l, root, tagGather, send)
	}
	b := send.Len()
	if err := l.Copy(recv.Slice(root*b, b), send); err != nil {
		return err
	}
	reqs := make([]Request, 0, l.Size()-1)
	for r := 0; r < l.Size(); r++ {
		if r != root {
			reqs = append(reqs, l.Irecv(r, tagGather, recv.Slice(r*b, b)))
		}
	}
	return l.Wait(ctx, reqs...)
}
