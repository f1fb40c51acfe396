package schedule_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/schedule"
)

// plainLink hides every interface of a link but algos.Link: no Spawner,
// so the interpreter advances the threadblocks in rounds.
type plainLink struct{ algos.Link }

// TestRounds runs allreduce schedules on links that cannot spawn: the
// rounds give the reference's data.
func TestRounds(t *testing.T) {
	n := network(t)
	ring2ch, _ := registerFile(t, "allreduce_ring_ll_2ch_4gpu.xml")
	for _, c := range []struct {
		s     *schedule.Schedule
		world int
	}{
		{schedule.RingAllreduce(5), 5},
		{schedule.HalvingDoublingAllreduce(6), 6},
		{schedule.RecursiveDoublingAllreduce(3), 3},
		{ring2ch, 4},
	} {
		for _, count := range []int{1, 7, 1001} {
			want := algotest.Reduced(count, device.F32, device.Sum, c.world, 3)
			n.Run(t, c.world, true, func(ctx context.Context, l algos.Link) error {
				buf := device.Host(algotest.Input(count, device.F32, device.Sum, l.Rank(), c.world, 3))
				if err := c.s.Run(ctx, plainLink{l}, algos.Call{Buf: buf, DType: device.F32, Op: device.Sum}); err != nil {
					return err
				}
				return algotest.Compare(buf, want, device.F32)
			})
		}
	}
}
