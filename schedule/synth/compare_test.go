package synth

import (
	"context"
	"fmt"
	"strings"
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
	return simulateWith(m, world, coll, a, bytes, data, nil)
}

func simulateWith(m sim.Model, world int, coll string, a *algos.Algorithm, bytes int, data bool, params map[string]int) (sim.Time, error) {
	const seed, root = 7, 1
	dt := device.F32
	count := bytes / dt.Size()
	if coll == "allgather" || coll == "reduce_scatter" {
		count /= world
	}
	res, err := sim.Run(sim.Config{World: world, Model: m, HostData: data}, func(ctx context.Context, l algos.Link) error {
		r := l.Rank()
		c := algos.Call{DType: dt, Op: device.Sum, Root: root, Params: params}
		var want []byte
		if coll == "allgather" {
			c.Send, c.Buf = l.Alloc(count*dt.Size()), l.Alloc(world*count*dt.Size())
			if data {
				copy(c.Send.(device.Host), algotest.AllgatherInput(count, dt, r, seed))
				want = algotest.Allgathered(count, dt, world, seed)
			}
		} else if coll == "reduce_scatter" {
			c.Send, c.Buf = l.Alloc(world*count*dt.Size()), l.Alloc(count*dt.Size())
			if data {
				copy(c.Send.(device.Host), algotest.ReduceScatterInput(count, dt, device.Sum, r, world, seed))
				want = algotest.ReduceScattered(count, dt, device.Sum, world, seed)[r]
			}
		} else if coll == "allreduce" || coll == "reduce" {
			c.Buf = l.Alloc(count * dt.Size())
			if data {
				copy(c.Buf.(device.Host), algotest.Input(count, dt, device.Sum, r, world, seed))
				if coll == "allreduce" || r == root {
					want = algotest.Reduced(count, dt, device.Sum, world, seed)
				}
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
		if data && want != nil {
			return algotest.Compare(c.Buf.(device.Host), want, dt)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return res.End, nil
}

// TestSynthData checks the synthesized broadcast, allgather, allreduce,
// reduce and reduce-scatter, and the allgather as an MSCCL schedule
// (whole chunks and in loops of slices), with real data on every topology: at one element per chunk,
// and at counts that divide unevenly among trees and segments.
func TestSynthData(t *testing.T) {
	for _, tc := range topologies(t) {
		sy := NewSynth(tc.topo)
		bc, ag := sy.Algorithms("synth_tree")
		ar := sy.Allreduce("synth_tree")
		for _, bytes := range []int{4 * mscclChunks * tc.world, 4 * 67 * mscclChunks * tc.world} {
			for _, x := range []struct {
				coll string
				a    *algos.Algorithm
			}{{"broadcast", bc}, {"allgather", ag}, {"allreduce", ar}, {"reduce", sy.Reduce("synth_tree")}, {"reduce_scatter", sy.ReduceScatter("synth_tree")}} {
				for _, seg := range []int{segment, 300} {
					if _, err := simulateWith(model(tc.topo), tc.world, x.coll, x.a, bytes, true, map[string]int{"segment": seg}); err != nil {
						t.Errorf("%s %s %d bytes, segment %d: %v", tc.name, x.coll, bytes, seg, err)
					}
				}
			}
			ms := mscclAllgather(t, tc.topo, tc.world)
			for _, slice := range []int{0, 4096} {
				if _, err := simulateWith(model(tc.topo), tc.world, "allgather", ms, bytes, true, map[string]int{"slice": slice}); err != nil {
					t.Errorf("%s MSCCL allgather %d bytes, slice %d: %v", tc.name, bytes, slice, err)
				}
			}
		}
	}
}

// mscclChunks is how many chunks the MSCCL allgather cuts a rank's block
// into.
const mscclChunks = 16

// mscclSlice is the slice the MSCCL allgather is timed with: chunks
// larger than 256 KiB move in loops of that much, pipelined.
const mscclSlice = 256 << 10

// mscclAllgather is the allgather's packing on topo as an MSCCL schedule,
// written as XML, read back and made an algorithm.
func mscclAllgather(t testing.TB, topo *sim.Topology, world int) *algos.Algorithm {
	t.Helper()
	g, err := FromTopology(topo, world)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := g.AllgatherPacking()
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.AllgatherSchedule("synth_tree_allgather", pk, mscclChunks)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Algorithm("synth_tree_msccl")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// catalogue returns the catalogue's own exact algorithms of coll.
func catalogue(t testing.TB, coll string) []*algos.Algorithm {
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	var out []*algos.Algorithm
	for _, a := range c.Algorithms {
		if a.Family == "" && !a.Lossy() {
			out = append(out, a)
		}
	}
	return out
}

// TestSynthAgainstCatalogue times the synthesized trees against every
// exact algorithm of the catalogue on the four topologies at 1 KiB,
// 1 MiB and 1 GiB (the flow model), logs the table, and holds the trees
// to what the bound says: at 1 GiB, where bandwidth rules, they are never
// slower than the catalogue's best by more than 5% (a chain's pipeline
// fill: up to d-1 of its 64 segments for a depth d), and faster where
// the bound exceeds what one port gives (the torus's four links).
func TestSynthAgainstCatalogue(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 1 GiB collectives")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| topology | collective | size | synth_tree | as MSCCL | catalogue's best | ratio |\n|---|---|---|---|---|---|---|\n")
	for _, tc := range topologies(t) {
		m := model(tc.topo)
		sy := NewSynth(tc.topo)
		bc, ag := sy.Algorithms("synth_tree")
		for _, x := range []struct {
			coll string
			a    *algos.Algorithm
		}{{"broadcast", bc}, {"allgather", ag}, {"allreduce", sy.Allreduce("synth_tree")}, {"reduce", sy.Reduce("synth_tree")}, {"reduce_scatter", sy.ReduceScatter("synth_tree")}} {
			for _, size := range []int{1 << 10, 1 << 20, 1 << 30} {
				syn, err := simulate(m, tc.world, x.coll, x.a, size, false)
				if err != nil {
					t.Fatal(err)
				}
				ms := "-"
				if x.coll == "allgather" {
					mt, err := simulateWith(m, tc.world, x.coll, mscclAllgather(t, tc.topo, tc.world), size, false, map[string]int{"slice": mscclSlice})
					if err != nil {
						t.Fatal(err)
					}
					ms = fmt.Sprintf("%.1f us", mt.Seconds()*1e6)
				}
				best, bestName := sim.Time(0), ""
				for _, a := range catalogue(t, x.coll) {
					got, err := simulate(m, tc.world, x.coll, a, size, false)
					if err != nil {
						continue // an algorithm that does not run at this world or size
					}
					if bestName == "" || got < best {
						best, bestName = got, a.Name
					}
				}
				fmt.Fprintf(&table, "| %s | %s | %s | %.1f us | %s | %.1f us (%s) | %.2f |\n", tc.name, x.coll, sizeName(size),
					syn.Seconds()*1e6, ms, best.Seconds()*1e6, bestName, float64(syn)/float64(best))
				if size == 1<<30 && float64(syn) > 1.05*float64(best) {
					t.Errorf("%s %s 1 GiB: synth_tree %v, slower than %s's %v", tc.name, x.coll, syn, bestName, best)
				}
				if size == 1<<30 && strings.HasPrefix(tc.name, "torus") && syn >= best {
					t.Errorf("%s %s 1 GiB: synth_tree %v, not faster than %s's %v on four links", tc.name, x.coll, syn, bestName, best)
				}
			}
		}
	}
	t.Logf("\n%s", table.String())
}

func sizeName(b int) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<20:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
