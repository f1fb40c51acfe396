package algotest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// Every collective of the catalogue has a reference, so that every
// backend checks it.
func TestEveryCollectiveHasReference(t *testing.T) {
	for _, name := range algos.CollectiveNames() {
		if !algotest.HasReference(name) {
			t.Errorf("collective %s has no reference", name)
		}
	}
	if algotest.HasReference("nosuch") {
		t.Error("a collective nobody registered has a reference")
	}
}

// Every rank's Data of the built-in references fits the buffers its
// collective's Layout gives, fills them the same way every time, and
// sends nothing back that the buffers cannot hold.
func TestReferencesFitTheirLayout(t *testing.T) {
	for _, name := range algos.CollectiveNames() {
		c, _ := algos.Lookup(name)
		ref, ok := algotest.LookupReference(name)
		if !ok {
			continue
		}
		for _, world := range []int{1, 3, 4} {
			send, recv, used := c.Layout(12, world)
			cs := algotest.Case{Algorithm: c.Algorithms[0], DType: device.F32, Op: device.Sum, Root: world - 1, World: world, Count: used, Seed: 5}
			data := ref(cs)
			for r := range world {
				s1, b1 := make([]byte, send*4), make([]byte, recv*4)
				want := data(r, s1, b1)
				s2, b2 := make([]byte, send*4), make([]byte, recv*4)
				data(r, s2, b2)
				if len(want) > len(b1) || string(s1) != string(s2) || string(b1) != string(b2) {
					t.Errorf("%s world %d rank %d: want of %d bytes for a buffer of %d, or inputs that differ between calls", name, world, r, len(want), len(b1))
				}
			}
		}
	}
}

// shift is a collective of the example's own: every rank's buffer moves
// to the next rank, around a ring.
var shift = &algos.Collective{
	Name:      "algotest-shift",
	BusFactor: func(int) float64 { return 1 },
	Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
	Algorithms: []*algos.Algorithm{{Name: "ring", Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
		r, p := l.Rank(), l.Size()
		if p == 1 {
			return nil
		}
		prev := l.Alloc(c.Buf.Len())
		if err := algos.SendRecv(ctx, l, (r+1)%p, c.Buf, (r+p-1)%p, prev, 1); err != nil {
			return err
		}
		return l.Copy(c.Buf, prev)
	}}},
}

func init() {
	algos.Register(shift)
	// Rank r starts with data of its own and must end with rank r-1's.
	algotest.RegisterReference("algotest-shift", func(c algotest.Case) algotest.Data {
		return func(rank int, _, buf []byte) []byte {
			copy(buf, algotest.Distinct(c.Count, c.DType, rank, c.Seed))
			return algotest.Distinct(c.Count, c.DType, (rank+c.World-1)%c.World, c.Seed)
		}
	})
}

// A collective registered outside the catalogue (algos.Register) gives
// its reference to RegisterReference; from then on nexar-sim's host-data
// points and nexar-live's measurements check it, as every backend's
// tests can, as here on the simulator.
func ExampleRegisterReference() {
	const world = 4
	ref, _ := algotest.LookupReference("algotest-shift")
	data := ref(algotest.Case{Algorithm: shift.Algorithms[0], DType: device.I32, World: world, Count: 1000, Seed: 1})
	_, err := sim.Run(sim.Config{World: world, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}, HostData: true},
		func(ctx context.Context, l algos.Link) error {
			buf := make([]byte, 1000*4)
			want := data(l.Rank(), nil, buf)
			if err := shift.Algorithms[0].Run(ctx, l, algos.Call{Buf: device.Host(buf), DType: device.I32}); err != nil {
				return err
			}
			return algotest.Check(buf, want, device.I32)
		})
	fmt.Println("checked:", err)
	// Output: checked: <nil>
}
