package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// DirectAllreduce is the one-shot allreduce: every rank sends its whole
// buffer to every other rank and reduces the p-1 buffers it receives, in
// the order they arrive, into a copy of its own.
//
// Rank r posts its p-1 sends at once, to r+1, r+2, ..., r+p-1 in that
// order, so that in the j-th message time every rank sends to the rank j
// to its right and receives from the one j to its left: no port is ever
// asked for by two messages. Receives go into two alternating scratch
// buffers, and each arrival is reduced while the next is on the wire. With
// T = α + nβ and R = nγ, the j-th buffer arrives at jT and the last
// reduction ends at
//
//	T + (p-2)·max(T, R) + R
//
// on alpha-beta: (p-1)(α + nβ) + nγ when reducing is faster than the link.
// That is a single latency step deep but moves (p-1)n bytes per rank, so it
// wins only for tiny messages on few ranks, where one round of α beats the
// log p rounds of the others.
//
// Each rank reduces in its own order, so for floating-point sums and
// products ranks may differ in the last bits (integers, min and max are
// exact); the other algorithms give every rank the same bits.
func DirectAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	_, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	r, p, n := l.Rank(), l.Size(), buf.Len()
	sends := make([]Request, 0, p-1)
	for j := 1; j < p; j++ {
		sends = append(sends, l.Isend(mod(r+j, p), tagDirect, buf))
	}
	// buf is being sent: accumulate into a copy until the sends are done.
	acc := Scratch(l, n)
	if err := l.Copy(acc, buf); err != nil {
		return err
	}
	scratch := Scratch(l, 2*n)
	slots := [2]device.Buffer{scratch.Slice(0, n), scratch.Slice(n, n)}
	// The receive of the j-th arrival (from r-j) goes into slot j%2.
	var recvs [2]Request
	recvs[1] = l.Irecv(mod(r-1, p), tagDirect, slots[1])
	if p > 2 {
		recvs[0] = l.Irecv(mod(r-2, p), tagDirect, slots[0])
	}
	for j := 1; j < p; j++ {
		if err := l.Wait(ctx, recvs[j%2]); err != nil {
			return err
		}
		if err := l.Reduce(acc, slots[j%2], dt, op); err != nil {
			return err
		}
		if j+2 < p {
			recvs[j%2] = l.Irecv(mod(r-j-2, p), tagDirect, slots[j%2])
		}
	}
	if err := l.Wait(ctx, sends...); err != nil {
		return err
	}
	Release(l, scratch)
	if err := l.Copy(buf, acc); err != nil {
		return err
	}
	Release(l, acc)
	return nil
}
