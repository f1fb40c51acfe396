package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// The sendrecv collective: the point-to-point benchmarks of the OSU
// micro-benchmarks, between ranks 0 and 1, so that a sweep (and a table of
// nexar-live) reads a network's latency and bandwidth, and a model's alpha
// and beta, directly. Call.Send is rank 0's message of n bytes (count
// elements), Call.Buf where it arrives; the bus factor is 1 (n is what
// crosses the link).
func init() {
	Register(&Collective{
		Name:      "sendrecv",
		BusFactor: func(int) float64 { return 1 },
		Layout:    func(count, _ int) (int, int, int) { return count, count, count },
		Algorithms: []*Algorithm{
			{Name: "latency", Summary: "osu_latency: a ping-pong of n bytes between ranks 0 and 1; 2(α+nβ), half of it is osu_latency's figure",
				Run: func(ctx context.Context, l Link, c Call) error { return SendRecvLatency(ctx, l, message(l, c), c.Buf) }},
			{Name: "one_way", Summary: "n bytes from rank 0 to rank 1, timed from a common start to their arrival; α+nβ",
				Run: func(ctx context.Context, l Link, c Call) error { return SendRecvOneWay(ctx, l, message(l, c), c.Buf) }},
			{Name: "bandwidth", Summary: "osu_bw: n bytes as a window of w messages all in flight, then an acknowledgement; (w+1)α+nβ, n/t is osu_bw's figure",
				Params: map[string]int{"window": DefaultWindow},
				Run: func(ctx context.Context, l Link, c Call) error {
					return SendRecvBandwidth(ctx, l, message(l, c), c.Buf, c.DType, c.Param("window", DefaultWindow))
				}},
		},
	})
}

// message is rank 0's message: Call.Send, or an empty one where the caller
// left Send out because it has no elements (a zero-byte ping-pong is still
// a measurement: osu_latency's first row).
func message(l Link, c Call) device.Buffer {
	if c.Send == nil {
		return l.Alloc(0)
	}
	return c.Send
}
