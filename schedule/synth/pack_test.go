package synth

import (
	"math"
	"testing"
)

// The trees' rates sum to the max-flow bound from every root, on each
// topology, and every tree spans the devices within the capacities.
func TestPackReachesBound(t *testing.T) {
	for _, tc := range topologies(t) {
		g, err := FromTopology(tc.topo, tc.world)
		if err != nil {
			t.Fatal(err)
		}
		for _, root := range []int{0, tc.world/2 + 1} {
			p, err := g.Pack(root, nil)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			t.Logf("%s root %d: bound %.4g B/s, %d trees, rate %.4g", tc.name, root, p.Bound, len(p.Trees), p.Rate)
			if math.Abs(p.Rate-p.Bound) > p.Bound*1e-9 {
				t.Errorf("%s root %d: trees carry %.6g B/s, bound %.6g", tc.name, root, p.Rate, p.Bound)
			}
			checkTrees(t, g, p)
		}
	}
}

func checkTrees(t *testing.T, g *Graph, p *Packing) {
	t.Helper()
	load := make([]float64, len(g.Cap))
	for _, tr := range p.Trees {
		for d, par := range tr.Parent {
			if d == p.Root {
				if par != -1 {
					t.Errorf("root %d has a parent", d)
				}
				continue
			}
			// Walks up to the root without a cycle.
			seen := 0
			for u := d; u != p.Root; u = tr.Parent[u] {
				if seen++; seen > len(tr.Parent) || tr.Parent[u] < 0 {
					t.Fatalf("device %d does not reach the root %d", d, p.Root)
				}
			}
			for _, e := range g.Route(par, d) {
				load[e] += tr.Rate
			}
		}
	}
	for e, l := range load {
		if l > g.Cap[e]*(1+1e-9) {
			t.Errorf("edge %d carries %.6g B/s over its %.6g", e, l, g.Cap[e])
		}
	}
}

// The allgather's packings, one per root on 1/(p-1) of every link, each
// reach their bound and together fit the links: every rank receives the
// p-1 other blocks at the rate its links allow.
func TestAllgatherPacking(t *testing.T) {
	for _, tc := range topologies(t) {
		g, err := FromTopology(tc.topo, tc.world)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := g.AllgatherPacking()
		if err != nil {
			t.Fatal(err)
		}
		if !g.fits(pk) {
			t.Errorf("%s: the roots' trees together exceed a link", tc.name)
		}
		share := scaled(g.Cap, 1/float64(tc.world-1))
		for r, p := range pk {
			if want := g.BroadcastBound(r, share); math.Abs(p.Rate-want) > want*1e-9 {
				t.Errorf("%s root %d: %.6g B/s, bound on 1/(p-1) of the links %.6g", tc.name, r, p.Rate, want)
			}
		}
	}
}
