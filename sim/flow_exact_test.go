package sim_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestFlowRatesExact checks every recompute of the flow model against the
// progressive filling it was first written as (every flow of the
// component, every edge in the heap), bit for bit, over collectives and
// random traffic on fat trees with and without oversubscription, a torus,
// a dragonfly, a hierarchical topology, several slot settings and both
// sharings.
func TestFlowRatesExact(t *testing.T) {
	link := sim.LinkParams{Bandwidth: 10e9, Latency: 300 * sim.Nanosecond}
	tops := []sim.TopologySpec{
		sim.FatTree{Tiers: 3, Radix: 8, Link: link},
		sim.FatTree{Tiers: 3, Radix: 6, Oversubscription: 2, Link: link},
		sim.FatTree{Radix: 8, Oversubscription: 3, Link: link},
		sim.Torus{Dims: []int{4, 4}, Link: link, NIC: sim.LinkParams{Bandwidth: 20e9}},
		sim.Dragonfly{Groups: 4, Routers: 3, Hosts: 2, GlobalLinks: 1, Local: link, Global: link},
		sim.Hierarchical{DevicesPerNode: 4, Intra: sim.LinkParams{Bandwidth: 50e9}, NICs: 2, Inter: sim.FatTree{Radix: 4, Link: link}},
	}
	bodies := []struct {
		name string
		body func(rng *rand.Rand, world int) sim.Body
	}{
		{"halving_doubling", func(*rand.Rand, int) sim.Body {
			return scaleBody(algos.HalvingDoublingAllreduce, 3<<20+4)
		}},
		{"ring", func(*rand.Rand, int) sim.Body { return scaleBody(algos.RingAllreduce, 1<<20) }},
		{"alltoall", func(_ *rand.Rand, world int) sim.Body {
			return func(ctx context.Context, l algos.Link) error {
				return algos.AlltoallPairwise(ctx, l, l.Alloc(world*4096), l.Alloc(world*4096), device.F32)
			}
		}},
		{"random", func(rng *rand.Rand, world int) sim.Body {
			perms := make([][]int, 6)
			sizes := make([]int, len(perms))
			for i := range perms {
				perms[i], sizes[i] = rng.Perm(world), 1+rng.IntN(1<<20)
			}
			return func(ctx context.Context, l algos.Link) error {
				r := l.Rank()
				var reqs []algos.Request
				for i, p := range perms {
					src := slices.Index(p, r)
					reqs = append(reqs, l.Irecv(src, algos.Tag(i), l.Alloc(sizes[i])), l.Isend(p[r], algos.Tag(i), l.Alloc(sizes[i])))
				}
				return l.Wait(ctx, reqs...)
			}
		}},
	}
	done := sim.CheckFlowRates()
	defer done()
	rng := rand.New(rand.NewPCG(33, 1))
	for i, spec := range tops {
		top, err := spec.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		world := min(len(top.Devices()), 64)
		for _, b := range bodies {
			for _, slots := range [][2]int{{1, 1}, {2, -1}, {-1, -1}} {
				model := sim.Flow{Topology: spec, SendSlots: slots[0], RecvSlots: slots[1], Sharing: sim.Sharing(i % 2), ReduceBandwidth: 20e9}
				if _, err := sim.Run(sim.Config{World: world, Model: model}, b.body(rng, world)); err != nil {
					t.Fatalf("%s on %s, slots %v: %v", b.name, top.Name, slots, err)
				}
			}
		}
	}
	checked, errs := done()
	if len(errs) > 0 || checked == 0 {
		t.Fatalf("%d recomputes checked, rates differ:\n%v", checked, errs)
	}
	t.Logf("%d recomputes checked", checked)
}
