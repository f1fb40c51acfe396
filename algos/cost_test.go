package algos_test

import (
	"context"
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The parameters of the worked example of reference/cost-models.md:
// alpha = 5 us, beta = 1/(12.5 GB/s), gamma = 1/(25 GB/s).
var worked = sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}

// simTime runs fn on world phantom ranks over buf bytes and returns the
// virtual time at which the last rank finished, in seconds.
func simTime(t *testing.T, model sim.Model, world, bytes int, fn allreduceFunc) float64 {
	t.Helper()
	res, err := sim.Run(sim.Config{World: world, Model: model}, func(ctx context.Context, l algos.Link) error {
		return fn(ctx, l, l.Alloc(bytes), device.F32, device.Sum)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.End.Seconds()
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / want
}

// Row "allreduce | ring" of the reference: 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ.
func ringAllreduceCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, g := m.Latency.Seconds(), 1/m.Bandwidth, 1/m.ReduceBandwidth
	return 2*(p-1)*a + 2*(p-1)/p*n*b + (p-1)/p*n*g
}

func TestRingAllreduceWorkedExample(t *testing.T) {
	// p = 8, n = 8 MiB: ring = 70 us + 1174.4051 us + 293.6013 us = 1538.0064 us.
	got := simTime(t, worked, 8, 8<<20, algos.RingAllreduce)
	if want := 1538.0064e-6; relErr(got, want) > 1e-7 { // the reference rounds to 0.1 ns
		t.Fatalf("ring allreduce, worked example: got %.4f us, want %.4f us", got*1e6, want*1e6)
	}
}

func TestRingAllreduceCost(t *testing.T) {
	for _, p := range []int{2, 3, 5, 8, 16, 64} {
		for _, perRank := range []int{4, 1024, 1 << 20} {
			n := p * perRank // divisible by p and by the f32 size
			got := simTime(t, worked, p, n, algos.RingAllreduce)
			want := ringAllreduceCost(worked, float64(p), float64(n))
			if e := relErr(got, want); e > 1e-6 {
				t.Errorf("p=%d n=%d: simulated %.6g s, closed form %.6g s (relative error %.2g)", p, n, got, want, e)
			}
		}
	}
}
