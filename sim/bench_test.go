package sim_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// BenchmarkRingAllreduce measures the simulator's speed in simulated
// messages per second of wall time, for ring allreduce with phantom data.
// Compare with BenchmarkGoroutineHandoff and BenchmarkCoroutineSwitch from
// the same run: a message costs a few rank switches plus heap operations.
//
//	go test ./sim -run '^$' -bench 'RingAllreduce|Handoff|Switch' -count 5
func BenchmarkRingAllreduce(b *testing.B) {
	for _, p := range []int{256} {
		b.Run("p="+strconv.Itoa(p), func(b *testing.B) {
			var msgs int64
			for b.Loop() {
				res, err := sim.Run(sim.Config{World: p, Model: model}, func(ctx context.Context, l algos.Link) error {
					return algos.RingAllreduce(ctx, l, l.Alloc(64<<20), device.F32, device.Sum)
				})
				if err != nil {
					b.Fatal(err)
				}
				msgs += res.Messages
			}
			b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(msgs), "ns/msg")
		})
	}
}

// BenchmarkGoroutineHandoff is one resume of a goroutine over a channel and
// its hand-back: the cost of driving ranks as plain goroutines.
func BenchmarkGoroutineHandoff(b *testing.B) {
	ping, pong := make(chan struct{}), make(chan struct{})
	go func() {
		for range ping {
			pong <- struct{}{}
		}
		close(pong)
	}()
	for b.Loop() {
		ping <- struct{}{}
		<-pong
	}
	close(ping)
}

// BenchmarkCoroutineSwitch is one resume and yield of an iter.Pull
// coroutine, which is how the simulator drives ranks.
func BenchmarkCoroutineSwitch(b *testing.B) {
	next, stop := sim.Switcher()
	defer stop()
	for b.Loop() {
		next()
	}
}
