package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// RSAGAllreduce is an allreduce composed of two collectives called one
// after the other: a ring reduce-scatter that leaves rank r with block r of
// the reduction in a buffer of its own, then a ring allgather of those
// blocks back into buf. Blocks may differ by one element, so any count
// works.
//
// On alpha-beta it costs what the ring costs, the two phases' times added:
// (p-1)α + ((p-1)/p)n(β + γ) + (p-1)α + ((p-1)/p)nβ
// = 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ. It exists to show that
// composing the collectives loses nothing against the fused RingAllreduce,
// and as the shape hierarchical allreduce builds on.
func RSAGAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	count, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	bl := blocks{count: count, p: l.Size()}
	own := Scratch(l, bl.len(l.Rank())*dt.Size())
	if err := reduceScatterBlocks(ctx, l, buf, own, bl, dt, op); err != nil {
		return err
	}
	if err := allgatherBlocks(ctx, l, own, buf, bl, dt); err != nil {
		return err
	}
	Release(l, own)
	return nil
}

// reduceScatterBlocks is a ring reduce-scatter over uneven blocks: it
// reduces in across all ranks of l and leaves block r (of bl) of the result
// in out, on rank r. It uses in as its workspace, which it overwrites.
//
// It is ringReduceScatter with its own tag, shifted so that rank r's last
// step reduces block r. (p-1)α + ((p-1)/p)n(β + γ) on alpha-beta.
func reduceScatterBlocks(ctx context.Context, l Link, in, out device.Buffer, bl blocks, dt device.DType, op device.Op) error {
	if l.Size() > 1 {
		scratch := Scratch(l, bl.len(0)*dt.Size())
		if err := ringReduceScatter(ctx, l, in, scratch, bl, dt, op, 0, tagRSAGReduceScatter); err != nil {
			return err
		}
		Release(l, scratch)
	}
	return l.Copy(out, block(in, bl, l.Rank(), dt))
}

// allgatherBlocks is a ring allgather over uneven blocks: it puts rank q's
// in (block q of bl) into block q of out on every rank.
// (p-1)α + ((p-1)/p)nβ on alpha-beta.
func allgatherBlocks(ctx context.Context, l Link, in, out device.Buffer, bl blocks, dt device.DType) error {
	if err := l.Copy(block(out, bl, l.Rank(), dt), in); err != nil {
		return err
	}
	return ringAllgather(ctx, l, out, bl, dt, 0)
}
