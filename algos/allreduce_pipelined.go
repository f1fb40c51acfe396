package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// DefaultPipelineSegment is the default segment of PipelinedRingAllreduce
// in bytes: nexar's pipeline_segment_bytes, 2 MiB.
const DefaultPipelineSegment = 2 << 20

// PipelinedRingAllreduce is the ring allreduce with its blocks cut into
// segments, so that the reduction of one segment overlaps the transfer of
// the next.
//
// The buffer is cut into p blocks as by RingAllreduce, and every block into
// k = ceil(b / segment) segments, b the largest block's bytes (at most one
// segment per element). The reduce-scatter is then one stream of (p-1)k
// segment steps: rank r sends segment j of block r-s to its right
// neighbour and reduces segment j of block r-s-1 arriving from its left,
// for s = 0 .. p-2 and j = 0 .. k-1 in that order, and posts the next
// step's send and receive before it reduces, so its ports carry the next
// segment while it computes. Segment j of step s+1 is the one reduced in
// step s, k steps earlier, so with k >= 2 nothing waits on data. The
// allgather then circulates the reduced blocks whole, as the plain ring's
// does. With k = 1 there is nothing to overlap and it is RingAllreduce.
//
// On alpha-beta, with n divisible so that every segment has s = n/(pk)
// bytes, a segment's transfer T = α + sβ and its reduction R = sγ, k >= 2:
//
//	T + ((p-1)k - 1)·max(T, R) + R + (p-1)(α + (n/p)β)
//
// When reducing is faster than the link (R <= T, as on every real link)
// this is (p-1)(k+1)α + 2((p-1)/p)nβ + sγ: the ring's bandwidth term, with
// all the reduction hidden but one segment's, for (k-1)(p-1) more
// latencies. It beats the ring when ((p-1)/p)nγ - sγ > (p-1)(k-1)α: large
// messages whose reduction is a visible share of the time. nexar uses it
// from 8 MiB on.
func PipelinedRingAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, segment int) error {
	if err := checkPositive("pipelined_ring", "segment", segment); err != nil {
		return err
	}
	count, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	r, p, sz := l.Rank(), l.Size(), dt.Size()
	bl := blocks{count: count, p: p}
	maxBlock := bl.len(0)
	k := min(maxBlock, (maxBlock*sz+segment-1)/segment)
	if k <= 1 {
		return RingAllreduce(ctx, l, buf, dt, op)
	}
	right, left := mod(r+1, p), mod(r-1, p)
	// seg returns segment j of block b.
	seg := func(b, j int) device.Buffer {
		sb := blocks{count: bl.len(b), p: k}
		return elems(buf, dt, bl.off(b)+sb.off(j), sb.len(j))
	}
	// Two scratch slots: the step being reduced and the next one.
	slot := (maxBlock + k - 1) / k * sz
	scratch := Scratch(l, 2*slot)
	steps := (p - 1) * k
	type step struct {
		recv, send Request
		dst, tmp   device.Buffer
	}
	post := func(u int) step {
		s, j := u/k, u%k
		dst := seg(mod(r-s-1, p), j)
		tmp := scratch.Slice(u%2*slot, dst.Len())
		return step{
			recv: l.Irecv(left, tagPipelinedReduceScatter, tmp),
			send: l.Isend(right, tagPipelinedReduceScatter, seg(mod(r-s, p), j)),
			dst:  dst,
			tmp:  tmp,
		}
	}
	cur := post(0)
	for u := 0; u < steps; u++ {
		var next step
		if u+1 < steps {
			// Step u+1 sends what step u+1-k reduced; k >= 2 makes
			// that an earlier step, so it can go out now.
			next = post(u + 1)
		}
		if err := l.Wait(ctx, cur.recv, cur.send); err != nil {
			return err
		}
		if err := l.Reduce(cur.dst, cur.tmp, dt, op); err != nil {
			return err
		}
		cur = next
	}
	Release(l, scratch)
	return ringAllgather(ctx, l, buf, bl, dt, 1)
}
