package synth

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// model is the flow model on t, every rank sending and receiving any
// number of messages at once (so that a rank feeds all its trees).
func model(t *sim.Topology) sim.Model {
	return sim.Flow{Topology: t, ReduceBandwidth: 100e9, SendSlots: -1, RecvSlots: -1}
}

// simulate runs a on world ranks of m for a buffer of bytes (broadcast's
// buffer, allgather's output) and returns its time; with data, every
// rank's result is checked against algotest's reference.
func simulate(m sim.Model, world int, coll string, a *algos.Algorithm, bytes int, data bool) (sim.Time, error) {
	const seed, root = 7, 1
	dt := device.F32
	count := bytes / dt.Size()
	if coll == "allgather" {
		count /= world
	}
	res, err := sim.Run(sim.Config{World: world, Model: m, HostData: data}, func(ctx context.Context, l algos.Link) error {
		r := l.Rank()
		c := algos.Call{DType: dt, Op: device.Sum, Root: root}
		var want []byte
		if coll == "allgather" {
			c.Send, c.Buf = l.Alloc(count*dt.Size()), l.Alloc(world*count*dt.Size())
			if data {
				copy(c.Send.(device.Host), algotest.AllgatherInput(count, dt, r, seed))
				want = algotest.Allgathered(count, dt, world, seed)
			}
		} else {
			c.Buf = l.Alloc(count * dt.Size())
			if data {
				copy(c.Buf.(device.Host), algotest.BroadcastInput(count, dt, r, root, seed))
				want = algotest.Broadcasted(count, dt, root, seed)
			}
		}
		if err := a.Run(ctx, l, c); err != nil {
			return err
		}
		if data {
			return algotest.Compare(c.Buf.(device.Host), want, dt)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return res.End, nil
}

// TestSynthData checks the synthesized broadcast and allgather's data on
// every topology, at counts that do not divide among trees and segments.
func TestSynthData(t *testing.T) {
	for _, tc := range topologies(t) {
		bc, ag := NewSynth(tc.topo).Algorithms("synth_tree")
		for _, bytes := range []int{4 * tc.world, 4 * 1003 * tc.world, 3 << 20} {
			for _, x := range []struct {
				coll string
				a    *algos.Algorithm
			}{{"broadcast", bc}, {"allgather", ag}} {
				if _, err := simulate(model(tc.topo), tc.world, x.coll, x.a, bytes, true); err != nil {
					t.Errorf("%s %s %d bytes: %v", tc.name, x.coll, bytes, err)
				}
			}
		}
	}
}
