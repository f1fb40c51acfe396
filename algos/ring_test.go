package algos_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// allreduceFunc is the signature every allreduce algorithm has.
type allreduceFunc func(ctx context.Context, l algos.Link, buf device.Buffer, dt device.DType, op device.Op) error

// checkAllreduce runs fn on world simulated ranks with real data and checks
// that every rank ends with the reference reduction.
func checkAllreduce(t *testing.T, fn allreduceFunc, world, count int, dt device.DType, op device.Op) {
	t.Helper()
	const seed = 7
	want := algotest.Reduced(count, dt, op, world, seed)
	model := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}
	_, err := sim.Run(sim.Config{World: world, Model: model, HostData: true}, func(ctx context.Context, l algos.Link) error {
		buf := device.Host(algotest.Input(count, dt, op, l.Rank(), world, seed))
		if err := fn(ctx, l, buf, dt, op); err != nil {
			return err
		}
		if err := algotest.Compare(buf, want, dt); err != nil {
			return fmt.Errorf("result: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("world %d, count %d, %s %s (seed %d): %v", world, count, dt, op, seed, err)
	}
}

func TestRingAllreduceData(t *testing.T) {
	t.Parallel()
	for p := 1; p <= 17; p++ {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			t.Parallel()
			// A prime count, so that blocks are uneven; a million
			// elements at a few worlds, a tenth of that at the others,
			// where it exercises the same uneven blocks.
			large := 100003
			if p == 2 || p == 3 || p >= 16 {
				large = 1000003
			}
			if testing.Short() {
				large = 10007
			}
			for _, count := range []int{0, 1, p - 1, p, 100003, large} {
				if count == 100003 && (large == count || p != 17) {
					continue
				}
				for _, dt := range device.DTypes() {
					for _, op := range device.Ops() {
						if count == large && dt != device.F32 && dt != device.I8 && dt != device.BF16 {
							// The large count exercises uneven blocks,
							// in three types of every size class at
							// every p; every type and op sees uneven
							// blocks at p = 17, at a tenth of a million
							// (the million in every type took two
							// minutes on a loaded machine, for the
							// same blocks).
							continue
						}
						if count == 100003 && (dt == device.F32 || dt == device.I8 || dt == device.BF16) {
							continue // the million covers them
						}
						checkAllreduce(t, algos.RingAllreduce, p, count, dt, op)
					}
				}
			}
		})
	}
}
