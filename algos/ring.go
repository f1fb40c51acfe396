package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// Tags used by the ring algorithms. Each phase has its own tag so that a
// slow rank's message from one phase is never taken for another's.
const (
	tagRingReduceScatter Tag = 1
	tagRingAllgather     Tag = 2
)

// RingAllreduce reduces buf across all ranks in place with op, so that
// every rank ends with the element-wise reduction of every rank's buf.
//
// The buffer is cut into p blocks. In p-1 reduce-scatter steps each rank
// sends one block to its right neighbour and reduces the block arriving from
// its left, so that rank r ends owning the fully reduced block r+1; in p-1
// allgather steps the reduced blocks travel once more around the ring.
// On alpha-beta: 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ.
func RingAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	if err := checkBuffer(buf, dt); err != nil {
		return err
	}
	p, count := l.Size(), buf.Len()/dt.Size()
	if p == 1 || count == 0 {
		return nil
	}
	bl := blocks{count: count, p: p}
	scratch := Scratch(l, bl.len(0)*dt.Size())
	if err := ringReduceScatter(ctx, l, buf, scratch, bl, dt, op, 1, tagRingReduceScatter); err != nil {
		return err
	}
	Release(l, scratch)
	return ringAllgather(ctx, l, buf, bl, dt, 1)
}

// block returns block i of buf.
func block(buf device.Buffer, bl blocks, i int, dt device.DType) device.Buffer {
	return buf.Slice(bl.off(i)*dt.Size(), bl.len(i)*dt.Size())
}

// ringReduceScatter leaves rank r with block r+shift of buf reduced over
// all ranks, in p-1 steps tagged tag: in step s rank r sends block
// r+shift-1-s to its right neighbour and reduces block r+shift-2-s arriving
// from its left into buf. scratch must hold the largest block.
func ringReduceScatter(ctx context.Context, l Link, buf, scratch device.Buffer, bl blocks, dt device.DType, op device.Op, shift int, tag Tag) error {
	r, p := l.Rank(), l.Size()
	right, left := mod(r+1, p), mod(r-1, p)
	for s := 0; s < p-1; s++ {
		send := block(buf, bl, mod(r+shift-1-s, p), dt)
		dst := block(buf, bl, mod(r+shift-2-s, p), dt)
		tmp := scratch.Slice(0, dst.Len())
		if err := SendRecv(ctx, l, right, send, left, tmp, tag); err != nil {
			return err
		}
		if err := l.Reduce(dst, tmp, dt, op); err != nil {
			return err
		}
	}
	return nil
}

// ringAllgather circulates blocks around the ring, starting from rank r
// owning block r+shift, until every rank holds every block.
func ringAllgather(ctx context.Context, l Link, buf device.Buffer, bl blocks, dt device.DType, shift int) error {
	r, p := l.Rank(), l.Size()
	right, left := mod(r+1, p), mod(r-1, p)
	for s := 0; s < p-1; s++ {
		send := block(buf, bl, mod(r+shift-s, p), dt)
		recv := block(buf, bl, mod(r+shift-s-1, p), dt)
		if err := SendRecv(ctx, l, right, send, left, recv, tagRingAllgather); err != nil {
			return err
		}
	}
	return nil
}
