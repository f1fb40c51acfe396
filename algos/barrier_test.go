package algos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestBarrierSemantics checks what a barrier promises: no rank leaves it
// before the last rank has entered. Ranks enter at seeded, very different
// times, and run three barriers back to back (scoped as Comm scopes
// operations), each entered after a new random delay.
func TestBarrierSemantics(t *testing.T) {
	t.Parallel()
	for _, alg := range algorithms(t, "barrier") {
		for _, p := range dataWorlds() {
			const rounds = 3
			var enter, leave [rounds][]time.Duration
			for i := range rounds {
				enter[i], leave[i] = make([]time.Duration, p), make([]time.Duration, p)
			}
			// Phantom buffers: the delays cost simulated time only.
			_, err := sim.Run(sim.Config{World: p, Model: dataModel}, func(ctx context.Context, l algos.Link) error {
				rng := rand.New(rand.NewPCG(dataSeed, uint64(l.Rank())))
				for i := range rounds {
					// Up to 100 latencies of delay.
					scratch := l.Alloc(rng.IntN(2 << 20))
					if err := l.Reduce(scratch, scratch, device.U8, device.Max); err != nil {
						return err
					}
					enter[i][l.Rank()] = l.Now()
					if err := alg.Run(ctx, algos.Scoped(l, 0, uint64(i)), algos.Call{Buf: l.Alloc(0)}); err != nil {
						return err
					}
					leave[i][l.Rank()] = l.Now()
				}
				return nil
			})
			if err != nil {
				t.Fatalf("barrier %s, p=%d (seed %d): %v", alg.Name, p, dataSeed, err)
			}
			for i := range rounds {
				last := 0
				for r := range p {
					if enter[i][r] > enter[i][last] {
						last = r
					}
				}
				for r := range p {
					if leave[i][r] < enter[i][last] {
						t.Fatalf("barrier %s, p=%d, barrier %d: rank %d left at %v, before rank %d entered at %v",
							alg.Name, p, i, r, leave[i][r], last, enter[i][last])
					}
				}
			}
		}
	}
}

// TestBarrierCost checks the rows "barrier" of reference/cost-models.md.
func TestBarrierCost(t *testing.T) {
	t.Parallel()
	rows := []costRow{
		{alg: "two_phase", time: func(m sim.AlphaBeta, p int, _ float64) float64 {
			return 2 * float64(p-1) * m.Latency.Seconds()
		}},
		{alg: "dissemination", time: func(m sim.AlphaBeta, p int, _ float64) float64 {
			return lgCeil(p) * m.Latency.Seconds()
		}},
	}
	checkCostTable(t, "barrier", rows, []int{0}, func(int, int) (int, int, int) { return 0, 0, 0 })
}

// ExampleBarrierDissemination shows that a barrier holds every rank until
// the slowest has arrived: rank 2 arrives 10 µs late, and the news of its
// arrival needs the three rounds of 1 µs latency to reach everyone.
func ExampleBarrierDissemination() {
	const world = 5
	left := make([]time.Duration, world)
	_, err := sim.Run(sim.Config{World: world, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 1e9}, HostData: true},
		func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 2 {
				late := l.Alloc(10000) // 10 µs of reduction at 1 GB/s
				if err := l.Reduce(late, late, device.U8, device.Max); err != nil {
					return err
				}
			}
			if err := algos.BarrierDissemination(ctx, l); err != nil {
				return err
			}
			left[l.Rank()] = l.Now()
			return nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(left)
	// Output:
	// [13µs 13µs 13µs 13µs 13µs]
}
