package algos

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// Tags of the broadcast algorithms. Only one algorithm runs per operation,
// so they need to differ only between the phases of one algorithm.
const (
	tagBroadcast        Tag = 0x100
	tagBroadcastScatter Tag = 0x101
)

// DefaultChainSegment is the default segment of PipelinedChainBroadcast:
// 256 KiB. The best segment is sqrt(nα/((p-2)β)); on the reference
// network (α = 5 µs, 12.5 GB/s) that is about 256 KiB for an 8 MiB buffer
// on 10 ranks, and the time is flat near the optimum, so one default
// serves messages of a few MiB to a few tens of MiB.
const DefaultChainSegment = 256 << 10

// startRootedInPlace checks the arguments of a rooted collective that works
// in place (every broadcast, and reduce) and reports whether there is
// anything to move.
func startRootedInPlace(l Link, buf device.Buffer, dt device.DType, root int) (bool, error) {
	if err := checkBuffer(buf, dt); err != nil {
		return false, err
	}
	if err := checkRootRank(l, root); err != nil {
		return false, err
	}
	return l.Size() > 1 && buf.Len() > 0, nil
}

// BinomialBroadcast copies root's buf into buf on every rank along a
// binomial tree, farthest subtree first: MPICH's binomial broadcast
// (SimGrid's "binomial_tree").
//
// Ranks are numbered relative to the root, v = (rank - root) mod p. Rank v
// receives the whole buffer from v - lowbit(v), then sends it to v + m for
// m = lowbit(v)/2, lowbit(v)/4, ..., 1 (the root starts from the smallest
// power of two >= p), one blocking send after the other as MPICH does, so
// the largest subtree is served first and every rank receives exactly
// once. Every round doubles the ranks that hold the data:
// ceil(lg p)(α + nβ) for every p. It is latency-optimal for whole
// messages, and wins for small buffers; for large ones every byte crosses
// lg p links in sequence, which the pipelined chain and van de Geijn
// avoid. Under an eager protocol the blocking sends return at once and a
// rank's sends share its link; by rendezvous they go one at a time.
func BinomialBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	rl := relativeTo(l, root)
	v, p := rl.Rank(), rl.Size()
	span := subtreeSpan(v, p)
	if v != 0 {
		if err := Recv(ctx, rl, v-span, tagBroadcast, buf); err != nil {
			return err
		}
	}
	for m := span / 2; m >= 1; m /= 2 {
		if v+m < p {
			if err := Send(ctx, rl, v+m, tagBroadcast, buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// BinomialNearestBroadcast is the binomial broadcast the other way round,
// nearest subtree first: with ranks relative to the root, in the round at
// distance d = 1, 2, 4, ... every rank v < d that holds the data sends it
// to v + d (if that rank exists). Rank v receives from v - highbit(v),
// then serves v + 2highbit(v), v + 4highbit(v), ... in turn; the root
// serves 1, 2, 4, ... . It is the same number of rounds,
// ceil(lg p)(α + nβ) on alpha-beta for every p, but its first message
// goes to the nearest rank and its last ones, all at once, to the
// farthest: on a fat tree whose leaves hold neighbouring ranks, the
// bisection carries p/2 messages in the last round where the
// farthest-first tree sends one in the first.
func BinomialNearestBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	return treeBroadcast(ctx, relativeTo(l, root), buf)
}

// FlatBroadcast is nexar's broadcast for small worlds: the root sends the
// whole buffer to every other rank, all sends posted at once, in rank
// order; the others receive once.
//
// The root's port carries every copy: (p-1)(α + nβ). It needs no tree and
// one step per receiver, so it wins only for very few ranks (nexar uses it
// below 4), where it costs the same as a tree: at p = 2 and p = 3 it equals
// ceil(lg p)(α + nβ).
func FlatBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	if l.Rank() != root {
		return Recv(ctx, l, root, tagBroadcast, buf)
	}
	reqs := make([]Request, 0, l.Size()-1)
	for r := 0; r < l.Size(); r++ {
		if r != root {
			reqs = append(reqs, l.Isend(r, tagBroadcast, buf))
		}
	}
	return l.Wait(ctx, reqs...)
}

// BinaryTreeBroadcast is nexar's broadcast for four ranks or more: with
// ranks numbered relative to the root, rank v receives the buffer from
// (v-1)/2 and sends it to 2v+1, then 2v+2.
//
// A left child receives one message time after its parent, a right child
// two, so rank v receives at c(v)(α + nβ) with c(0) = 0,
// c(2v+1) = c(v) + 1, c(2v+2) = c(v) + 2, and the broadcast takes
// max c(v) message times. For a full tree, p = 2^k - 1, that is
// 2(k-1)(α + nβ). In general, with D = floor(lg(p+1)) full levels and
// m = p - (2^D - 1) ranks on the last, partial one, max c =
// max(2(D-1), D + q(m-1)) where q(x) is the largest popcount of an integer
// in [0, x], max(popcount(x), bitlen(x) - 1) (the first term only when
// m = 0). Each rank sends at most twice, which bounds the load on any port,
// but the depth is about 2 lg p message times against the binomial tree's
// lg p: it never beats BinomialBroadcast on alpha-beta, and is here to
// simulate nexar's behaviour.
func BinaryTreeBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	rl := relativeTo(l, root)
	v, p := rl.Rank(), rl.Size()
	if v != 0 {
		if err := Recv(ctx, rl, (v-1)/2, tagBroadcast, buf); err != nil {
			return err
		}
	}
	var reqs []Request
	for _, c := range []int{2*v + 1, 2*v + 2} {
		if c < p {
			reqs = append(reqs, rl.Isend(c, tagBroadcast, buf))
		}
	}
	return rl.Wait(ctx, reqs...)
}

// NexarBroadcastThreshold is the world size from which nexar's broadcast
// uses the binary tree instead of the flat one.
const NexarBroadcastThreshold = 4

// NexarBroadcast makes nexar's choice: FlatBroadcast below
// NexarBroadcastThreshold ranks, BinaryTreeBroadcast from it on. Its cost
// is theirs: (p-1)(α + nβ) for p < 4, the binary tree's above.
func NexarBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error {
	if l.Size() < NexarBroadcastThreshold {
		return FlatBroadcast(ctx, l, buf, dt, root)
	}
	return BinaryTreeBroadcast(ctx, l, buf, dt, root)
}

// PipelinedChainBroadcast cuts buf into segments of segment bytes (rounded
// down to whole elements, at least one) and passes them down a chain in
// rank order from the root: rank v receives each segment from v-1 and
// forwards it to v+1 while the next one arrives.
//
// With k segments each taking T = α + sβ per link, the last rank has the
// last segment after (p + k - 2)T: p - 1 links to fill the pipeline, k - 1
// more segments behind the first. When the last segment is shorter
// (T' = α + s'β), the chain is a proportionate flow shop and the time is
// (k-1)T + T' + (p-2)T. The best segment is s = sqrt(nα/((p-2)β)), giving
// about nβ + 2 sqrt((p-2)nαβ) + (p-2)α: the bandwidth term no longer grows
// with p, so it wins for large buffers, while its p - 2 fill steps make it
// lose to the binomial tree for small ones.
func PipelinedChainBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root, segment int) error {
	if segment <= 0 {
		return fmt.Errorf("algos: pipelined chain broadcast: segment of %d bytes, want a positive size", segment)
	}
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	seg := max(segment-segment%dt.Size(), dt.Size())
	rl := relativeTo(l, root)
	v, p, n := rl.Rank(), rl.Size(), buf.Len()
	k := (n + seg - 1) / seg
	piece := func(i int) device.Buffer {
		off := i * seg
		return buf.Slice(off, min(seg, n-off))
	}
	var recvs []Request
	if v > 0 {
		recvs = make([]Request, k)
		for i := range recvs {
			recvs[i] = rl.Irecv(v-1, tagBroadcast, piece(i))
		}
	}
	var sends []Request
	if v < p-1 {
		sends = make([]Request, 0, k)
	}
	for i := 0; i < k; i++ {
		if v > 0 {
			if err := rl.Wait(ctx, recvs[i]); err != nil {
				return err
			}
		}
		if v < p-1 {
			sends = append(sends, rl.Isend(v+1, tagBroadcast, piece(i)))
		}
	}
	return rl.Wait(ctx, sends...)
}

// ScatterAllgatherBroadcast is van de Geijn's broadcast: the root scatters
// the buffer in p blocks along a binomial tree (rank v, relative to the
// root, ends with block v), then a ring allgather gives every rank every
// block.
//
// The scatter takes ceil(lg p)α + ((p-1)/p)nβ (the root sends the blocks
// of each subtree once, largest first) and the allgather
// (p-1)(α + (n/p)β): together (ceil(lg p) + p - 1)α + 2((p-1)/p)nβ, for
// every p when n divides into p blocks of whole elements. Every byte
// crosses about two links instead of lg p, so it wins over the binomial
// tree for large buffers; its p - 1 ring steps make it lose for small ones
// and on many ranks.
func ScatterAllgatherBroadcast(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error {
	if ok, err := startRootedInPlace(l, buf, dt, root); !ok {
		return err
	}
	rl := relativeTo(l, root)
	v, p := rl.Rank(), rl.Size()
	bl := blocks{count: buf.Len() / dt.Size(), p: p}
	sz := dt.Size()
	// span returns the bytes of blocks [from, to) of buf.
	span := func(from, to int) device.Buffer {
		off := bl.off(from) * sz
		return buf.Slice(off, bl.off(to)*sz-off)
	}
	mask := subtreeSpan(v, p)
	if v != 0 {
		if err := Recv(ctx, rl, v-mask, tagBroadcastScatter, span(v, min(v+mask, p))); err != nil {
			return err
		}
	}
	for m := mask / 2; m >= 1; m /= 2 {
		if c := v + m; c < p {
			if err := Send(ctx, rl, c, tagBroadcastScatter, span(c, min(c+m, p))); err != nil {
				return err
			}
		}
	}
	return ringAllgather(ctx, rl, buf, bl, dt, 0)
}
