package algos_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestSendRecvCosts: the point-to-point benchmarks' closed forms on
// alpha-beta, whatever the world size (ranks above 1 take no part).
func TestSendRecvCosts(t *testing.T) {
	m := sim.AlphaBeta{Latency: 10 * sim.Microsecond, Bandwidth: 1e9}
	a, b := m.Latency.Seconds(), 1/m.Bandwidth
	for _, p := range []int{2, 3, 5} {
		for _, n := range []int{4, 4096, 1 << 20} {
			count := n / 4
			w := min(algos.DefaultWindow, count)
			for _, c := range []struct {
				alg  string
				want float64
			}{
				{"latency", 2 * (a + float64(n)*b)},
				{"one_way", a + float64(n)*b},
				{"bandwidth", float64(w+1)*a + float64(n)*b},
			} {
				got := rootedTime(t, m, "sendrecv", c.alg, p, count, 0, nil)
				if e := relErr(got, c.want); e > 1e-6 {
					t.Errorf("%s p=%d n=%d: %g s, want %g", c.alg, p, n, got, c.want)
				}
			}
		}
	}
	// A window of one message: 2α + nβ.
	got := rootedTime(t, m, "sendrecv", "bandwidth", 2, 1024, 0, map[string]int{"window": 1})
	if want := 2*a + 4096*b; relErr(got, want) > 1e-6 {
		t.Errorf("bandwidth window=1: %g s, want %g", got, want)
	}
}

// TestSendRecvData: rank 1 ends with rank 0's message, rank 0 with its
// echo for the ping-pong; other ranks' buffers are untouched.
func TestSendRecvData(t *testing.T) {
	for _, alg := range []string{"latency", "one_way", "bandwidth"} {
		for _, p := range []int{1, 2, 3} {
			for _, count := range []int{0, 1, 5, 1000} {
				t.Run(fmt.Sprintf("%s/p=%d/count=%d", alg, p, count), func(t *testing.T) {
					checkSendRecv(t, alg, p, count)
				})
			}
		}
	}
}

func checkSendRecv(t *testing.T, alg string, p, count int) {
	c, err := algos.Lookup("sendrecv")
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Algorithm(alg)
	if err != nil {
		t.Fatal(err)
	}
	const dt = device.F32
	msg := algotest.Distinct(count, dt, 0, 7)
	bufs := make([]device.Host, p)
	_, err = sim.Run(sim.Config{World: p, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}, HostData: true},
		func(ctx context.Context, l algos.Link) error {
			r := l.Rank()
			send := device.Host(bytes.Clone(msg))
			bufs[r] = device.Host(algotest.Garbage(msg))
			return a.Run(ctx, l, algos.Call{Send: send, Buf: bufs[r], DType: dt, Op: device.Sum, Params: map[string]int{"window": 3}})
		})
	if err != nil {
		t.Fatal(err)
	}
	for r, b := range bufs {
		want := msg
		if r > 1 || (r == 0 && alg != "latency" && p > 1) {
			want = algotest.Garbage(msg) // not the algorithm's to write
		}
		if !bytes.Equal(b, want) {
			t.Errorf("rank %d: buffer %v, want %v", r, b, want)
		}
	}
}

func TestSendRecvBadWindow(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 2, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}}, func(ctx context.Context, l algos.Link) error {
		return algos.SendRecvBandwidth(ctx, l, l.Alloc(8), l.Alloc(8), device.F32, 0)
	})
	if err == nil {
		t.Fatal("window 0 accepted")
	}
}
