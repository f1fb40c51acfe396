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

// ringChecks says whether TestRingAllreduceData checks count elements of
// dt on p ranks: the small counts always; a prime count, so that blocks
// are uneven, of 100003 in a type of each size class (f32, i8, bf16) on
// every world and in every type at p = 17; a million (1000003) in those
// three at p = 2 and 3 and in f32 at 16 and 17 (in the three types there,
// a minute of a loaded machine for the same uneven blocks). -short runs
// 10007 for 100003, and no million.
func ringChecks(p, count int, dt device.DType) bool {
	sizeClass := dt == device.F32 || dt == device.I8 || dt == device.BF16
	switch count {
	case 100003:
		return sizeClass || p == 17
	case 1000003:
		return !testing.Short() && ((sizeClass && (p == 2 || p == 3)) || (dt == device.F32 && p >= 16))
	}
	return true
}

func TestRingAllreduceData(t *testing.T) {
	t.Parallel()
	for p := 1; p <= 17; p++ {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			t.Parallel()
			for _, count := range []int{0, 1, p - 1, p, 100003, 1000003} {
				for _, dt := range device.DTypes() {
					if !ringChecks(p, count, dt) {
						continue
					}
					n := count
					if testing.Short() && n == 100003 {
						n = 10007
					}
					for _, op := range device.Ops() {
						checkAllreduce(t, algos.RingAllreduce, p, n, dt, op)
					}
				}
			}
		})
	}
}
