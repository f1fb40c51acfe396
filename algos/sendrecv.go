package algos

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// Tags of the point-to-point benchmarks (the low 16 bits; see tags.go).
const (
	tagPing Tag = 0x7000
	tagPong Tag = 0x7001
	tagAck  Tag = 0x7002
	tagBW   Tag = 0x7100 // + message of the window
)

// DefaultWindow is the messages SendRecvBandwidth keeps in flight at once
// unless the window parameter says otherwise: osu_bw's window size. A
// window holds at most MaxWindow messages (each has a tag of its own).
const (
	DefaultWindow = 64
	MaxWindow     = 1024
)

// The point-to-point benchmarks between ranks 0 and 1 (other ranks take no
// part): send is rank 0's message, buf where rank 1 (and for the ping-pong
// rank 0 too) receives it. A world of one rank copies send into buf.

// SendRecvLatency is osu_latency's ping-pong: rank 0 sends send to rank 1,
// which receives it into buf and sends it back; rank 0 receives the echo
// into its buf. The time is a round trip, 2(α + nβ) on alpha-beta:
// osu_latency prints half of it.
func SendRecvLatency(ctx context.Context, l Link, send, buf device.Buffer) error {
	switch r := l.Rank(); {
	case l.Size() == 1:
		return l.Copy(buf, send)
	case r == 0:
		if err := Send(ctx, l, 1, tagPing, send); err != nil {
			return err
		}
		return Recv(ctx, l, 1, tagPong, buf)
	case r == 1:
		if err := Recv(ctx, l, 0, tagPing, buf); err != nil {
			return err
		}
		return Send(ctx, l, 0, tagPong, buf)
	}
	return nil
}

// SendRecvOneWay sends send from rank 0 to rank 1's buf: one message, whose
// time from a common start to its arrival is α + nβ on alpha-beta. It is
// the latency an agreed start (nexar-live's default timing) measures
// directly, where a benchmark without one (osu_latency) halves a round
// trip; timed as a loop of back-to-back iterations it measures how fast
// messages follow each other instead.
func SendRecvOneWay(ctx context.Context, l Link, send, buf device.Buffer) error {
	switch r := l.Rank(); {
	case l.Size() == 1:
		return l.Copy(buf, send)
	case r == 0:
		return Send(ctx, l, 1, tagPing, send)
	case r == 1:
		return Recv(ctx, l, 0, tagPing, buf)
	}
	return nil
}

// SendRecvBandwidth is osu_bw's window: rank 0 sends send to rank 1 as
// window messages of about n/window bytes each, all in flight at once,
// and rank 1, once it has them all in buf, answers with an empty
// acknowledgement. n is what the window moves in all, so that the
// algorithm bandwidth n/t is osu_bw's figure. On alpha-beta, whose ports
// carry one message at a time, t = (w+1)α + nβ for a window of w messages
// (they follow each other on rank 0's egress port; then the
// acknowledgement), so n/t tends to 1/β as n grows. The window is at most
// the number of elements (count), and at least 1.
func SendRecvBandwidth(ctx context.Context, l Link, send, buf device.Buffer, dt device.DType, window int) error {
	if window < 1 || window > MaxWindow {
		return fmt.Errorf("algos: sendrecv bandwidth: window of %d messages, want 1 to %d", window, MaxWindow)
	}
	if l.Size() == 1 {
		return l.Copy(buf, send)
	}
	r := l.Rank()
	if r > 1 {
		return nil
	}
	sz := dt.Size()
	count := buf.Len() / sz
	if r == 0 {
		count = send.Len() / sz
	}
	b := blocks{count: count, p: max(min(window, count), 1)}
	reqs := make([]Request, 0, b.p+1)
	ack := l.Alloc(0)
	if r == 0 {
		reqs = append(reqs, l.Irecv(1, tagAck, ack))
		for i := range b.p {
			reqs = append(reqs, l.Isend(1, tagBW+Tag(i), send.Slice(b.off(i)*sz, b.len(i)*sz)))
		}
		return l.Wait(ctx, reqs...)
	}
	for i := range b.p {
		reqs = append(reqs, l.Irecv(0, tagBW+Tag(i), buf.Slice(b.off(i)*sz, b.len(i)*sz)))
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return err
	}
	return Send(ctx, l, 0, tagAck, ack)
}
