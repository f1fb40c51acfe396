package algos

import (
	"context"
	"fmt"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Tag labels a message so that a receive matches the right send. Messages
// match by (source rank, tag); between one pair of ranks, messages with the
// same tag match in the order they were sent.
type Tag uint64

// Request is a handle to a posted send or receive. It is only meaningful to
// the Link that returned it.
type Request interface{}

// Link is one rank's view of the network: the only thing an algorithm may
// use to talk to other ranks. The simulator, the QUIC transport and a
// CUDA-buffer device each implement it, so an algorithm is written once.
//
// A Link is used by one goroutine at a time: the rank's own.
type Link interface {
	// Rank is this rank's index in [0, Size()).
	Rank() int
	// Size is the number of ranks in the world.
	Size() int

	// Isend posts a send of buf to rank dst with tag and returns at once.
	// The caller must not modify buf until the request completes.
	// Sending to oneself is allowed and costs nothing.
	Isend(dst int, tag Tag, buf device.Buffer) Request
	// Irecv posts a receive from rank src with tag into buf and returns at
	// once. The message must not be longer than buf. The caller must not
	// touch buf until the request completes.
	Irecv(src int, tag Tag, buf device.Buffer) Request
	// Wait blocks until every request has completed. It returns an error
	// if any of them failed (a peer lost, a message longer than its
	// receive buffer), if the deadline of ctx passes, or if ctx is
	// cancelled; the requests are then abandoned.
	Wait(ctx context.Context, reqs ...Request) error

	// Reduce computes dst = dst op src element-wise over elements of dt,
	// and charges the time it takes to this rank's compute.
	Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error
	// Copy copies src into dst, of equal length.
	Copy(dst, src device.Buffer) error
	// Alloc returns a scratch buffer of n bytes of the same kind as the
	// buffers this Link moves (host, phantom or device memory).
	// Algorithms take theirs through Scratch and hand it back with
	// Release, which reuse memory where the link keeps a ScratchPool.
	Alloc(n int) device.Buffer

	// Now is the time elapsed on this rank's clock since the world
	// started: virtual time in the simulator, monotonic time on hardware.
	Now() time.Duration
}

// Send posts a send and waits for it.
func Send(ctx context.Context, l Link, dst int, tag Tag, buf device.Buffer) error {
	return waitOne(ctx, l, l.Isend(dst, tag, buf))
}

// Recv posts a receive and waits for it.
func Recv(ctx context.Context, l Link, src int, tag Tag, buf device.Buffer) error {
	return waitOne(ctx, l, l.Irecv(src, tag, buf))
}

// SendRecv sends sbuf to dst and receives rbuf from src at the same time,
// the step of most ring and pairwise algorithms.
func SendRecv(ctx context.Context, l Link, dst int, sbuf device.Buffer, src int, rbuf device.Buffer, tag Tag) error {
	r := l.Irecv(src, tag, rbuf)
	s := l.Isend(dst, tag, sbuf)
	return waitTwo(ctx, l, r, s)
}

// FixedWaiter is implemented by links that wait for one or two requests
// passed as values: WaitOne(ctx, a) does what Wait(ctx, a) does, and
// WaitTwo(ctx, a, b) what Wait(ctx, a, b) does. A variadic Wait called
// through the Link interface puts its argument list on the heap, one
// allocation a call; Send, Recv and SendRecv wait through a FixedWaiter
// where the link (or the Scoped link over it) is one, so that a link
// whose own Wait allocates nothing (the simulator's) waits without any.
type FixedWaiter interface {
	WaitOne(ctx context.Context, a Request) error
	WaitTwo(ctx context.Context, a, b Request) error
}

// waitOne is l.Wait(ctx, a), through FixedWaiter where l is one.
func waitOne(ctx context.Context, l Link, a Request) error {
	if w, ok := l.(FixedWaiter); ok {
		return w.WaitOne(ctx, a)
	}
	return l.Wait(ctx, a)
}

// waitTwo is l.Wait(ctx, a, b), through FixedWaiter where l is one.
func waitTwo(ctx context.Context, l Link, a, b Request) error {
	if w, ok := l.(FixedWaiter); ok {
		return w.WaitTwo(ctx, a, b)
	}
	return l.Wait(ctx, a, b)
}

// checkCount returns an error unless buf holds a whole number of elements.
func checkBuffer(buf device.Buffer, dt device.DType) error {
	if buf.Len()%dt.Size() != 0 {
		return fmt.Errorf("algos: buffer of %d bytes is not a whole number of %s elements", buf.Len(), dt)
	}
	return nil
}

// Spawner is implemented by links that can run an operation concurrently
// with the rest of the rank's program, which is how non-blocking
// collectives overlap with computation. Spawn starts fn at once; the
// returned request completes, with fn's error, when fn returns, and is
// waited on with Link.Wait like any other. fn may use the same Link.
type Spawner interface {
	Spawn(fn func(ctx context.Context) error) Request
}
