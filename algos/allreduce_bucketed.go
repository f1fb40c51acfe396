package algos

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/nexar-go/nexar-go/device"
)

// DefaultBucketTensors is the number of tensors the "bucketed" catalogue
// entry cuts its buffer into by default.
const DefaultBucketTensors = 8

// BucketedAllreduce allreduces many tensors as one, as nexar's bucketed
// allreduce does for a model's gradients: it copies the tensors (buffers
// of dt elements, of any sizes) into one contiguous buffer, runs inner on
// it, and copies the results back.
//
// Copies cost nothing on alpha-beta, so its time is inner's on the total
// size n; with inner = RingAllreduce,
//
//	2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ,
//
// where t separate ring allreduces of the same tensors (each divisible by
// p) cost 2t(p-1)α + the same bandwidth and reduction terms: fusing saves
// 2(t-1)(p-1) latencies. It wins whenever tensors are small enough for
// their latency to matter, which for gradients is nearly always.
func BucketedAllreduce(ctx context.Context, l Link, tensors []device.Buffer, dt device.DType, op device.Op, inner AllreduceFunc) error {
	total := 0
	for i, t := range tensors {
		if err := checkBuffer(t, dt); err != nil {
			return fmt.Errorf("tensor %d: %w", i, err)
		}
		total += t.Len()
	}
	if total == 0 || l.Size() == 1 {
		return nil
	}
	fused := Scratch(l, total)
	off := 0
	for _, t := range tensors {
		if err := l.Copy(fused.Slice(off, t.Len()), t); err != nil {
			return err
		}
		off += t.Len()
	}
	if err := inner(ctx, l, fused, dt, op); err != nil {
		return err
	}
	off = 0
	for _, t := range tensors {
		if err := l.Copy(t, fused.Slice(off, t.Len())); err != nil {
			return err
		}
		off += t.Len()
	}
	Release(l, fused)
	return nil
}

// SplitTensors cuts buf into t tensors of uneven sizes, deterministically:
// tensor i (from 0) gets about (i+1)/(t(t+1)/2) of the elements, so sizes
// grow linearly, as a model's layers might, and some are empty when buf
// has fewer elements than that takes. It is how the "bucketed" catalogue
// entry turns one buffer into many tensors. t must be at least 1.
func SplitTensors(buf device.Buffer, dt device.DType, t int) []device.Buffer {
	if t < 1 {
		panic(fmt.Sprintf("algos: SplitTensors into %d tensors", t))
	}
	count := uint64(buf.Len() / dt.Size())
	weights := uint64(t) * uint64(t+1) / 2
	out := make([]device.Buffer, t)
	prev, cum := 0, uint64(0)
	for i := range out {
		cum += uint64(i + 1)
		// count*cum/weights without overflow: cum <= weights, so the
		// quotient is at most count.
		hi, lo := bits.Mul64(count, cum)
		q, _ := bits.Div64(hi, lo, weights)
		end := int(q)
		out[i] = elems(buf, dt, prev, end-prev)
		prev = end
	}
	return out
}
