package synth

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Tree is one spanning tree of a packing: Parent[d] is the device device
// d receives from (-1 for the root), and Rate the bytes per second the
// tree carries; each of its arcs is a message along the simulator's
// route between the two devices.
type Tree struct {
	Root   int
	Parent []int
	Rate   float64
}

// Packing is a broadcast's trees from one root: their rates sum to Rate,
// and Bound is the max-flow bound they are held against.
type Packing struct {
	Root        int
	Trees       []Tree
	Rate, Bound float64
}

// BroadcastBound is the most bytes per second a broadcast from device
// root can deliver to every device: the least, over the other devices,
// of the maximum flow from the root to it on capacities c (nil: the
// graph's).
func (g *Graph) BroadcastBound(root int, c []float64) float64 {
	if c == nil {
		c = g.Cap
	}
	b := math.Inf(1)
	for d := range g.Devices {
		if d != root {
			b = min(b, g.maxFlow(c, g.Devices[root], g.Devices[d]))
		}
	}
	return b
}

// maxTrees bounds a packing's trees: a packing that has not reached its
// bound by then stops, short of it.
const maxTrees = 16

// Pack packs spanning trees of the devices, rooted at root, on
// capacities c (nil: the graph's), in the manner of Blink and of Lovász's
// proof of Edmonds' theorem: each tree is grown arc by arc at a rate x,
// an arc (u, v) being the simulator's route from device u to device v;
// an arc is taken only where every edge of its route has x left and,
// with x taken from them, the maximum flow from the root to every device
// is still the bound less x, so that the trees still to come can carry
// the rest. A tree that cannot be finished is tried again at a lower
// rate (the capacities left on edges, then halves of the bound left).
// Arcs are preferred short (fewest edges), then (where the graph's
// prefer is set, for packings that share the links) of the most capacity
// left on the links out of the device it reaches, which may then
// forward), then from the deepest device, then by device number:
// deterministic.
func (g *Graph) Pack(root int, c []float64) (*Packing, error) {
	if c == nil {
		c = g.Cap
	}
	res := slices.Clone(c)
	p := &Packing{Root: root, Bound: g.BroadcastBound(root, c)}
	if len(g.Devices) == 1 {
		return p, nil
	}
	left := p.Bound
	for len(p.Trees) < maxTrees && left > p.Bound*1e-9 {
		var t *Tree
		x := 0.0
		for _, x = range g.rates(root, res, left) {
			if t = g.grow(root, res, x, left); t != nil {
				break
			}
		}
		if t == nil {
			break
		}
		p.Trees = append(p.Trees, *t)
		p.Rate += x
		left -= x
	}
	if len(p.Trees) == 0 {
		return nil, fmt.Errorf("synth: no spanning tree from device %d", root)
	}
	return p, nil
}

// rates are the rates a next tree is tried at, highest first: what is
// left of the bound, the capacities left on the edges below it, and
// halves of the bound left, down to 1/64.
func (g *Graph) rates(root int, res []float64, left float64) []float64 {
	xs := []float64{left}
	for _, c := range res {
		if c > eps && c < left {
			xs = append(xs, c)
		}
	}
	for k := 2.0; k <= 64; k *= 2 {
		xs = append(xs, left/k)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	slices.Reverse(xs)
	return xs
}

func bottleneck(res []float64, route []int) float64 {
	b := math.Inf(1)
	for _, e := range route {
		b = min(b, res[e])
	}
	return b
}

// grow grows one tree of rate x from root on res, taking its capacity
// from res; nil (res untouched) if it cannot span every device keeping
// the bound left-x for the trees to come.
func (g *Graph) grow(root int, res []float64, x, left float64) *Tree {
	n := len(g.Devices)
	work := slices.Clone(res)
	t := &Tree{Root: root, Parent: make([]int, n), Rate: x}
	depth := make([]int, n)
	in := make([]bool, n)
	for i := range t.Parent {
		t.Parent[i] = -1
	}
	in[root] = true
	for added := 1; added < n; added++ {
		type arc struct{ u, v, hops int }
		var cands []arc
		for u := range n {
			for v := range n {
				if in[u] && !in[v] && bottleneck(work, g.Route(u, v)) >= x*(1-1e-9) {
					cands = append(cands, arc{u, v, len(g.Route(u, v))})
				}
			}
		}
		slices.SortStableFunc(cands, func(a, b arc) int {
			if a.hops != b.hops {
				return a.hops - b.hops
			}
			if g.prefer != nil {
				if pa, pb := g.outLeft(a.v), g.outLeft(b.v); pa != pb {
					return cmp.Compare(pb, pa)
				}
			}
			return depth[b.u] - depth[a.u]
		})
		found := false
		for _, a := range cands {
			take(work, g.Route(a.u, a.v), x)
			if left-x <= left*1e-9 || g.BroadcastBound(root, work) >= (left-x)*(1-1e-9) {
				t.Parent[a.v], depth[a.v], in[a.v], found = a.u, depth[a.u]+1, true, true
				break
			}
			take(work, g.Route(a.u, a.v), -x)
		}
		if !found {
			return nil
		}
	}
	copy(res, work)
	return t
}

func take(res []float64, route []int, x float64) {
	for _, e := range route {
		res[e] -= x
	}
}

// outLeft is the capacity left (g.prefer) on the edges out of device d.
func (g *Graph) outLeft(d int) float64 {
	sum := 0.0
	for e, f := range g.From {
		if f == g.Devices[d] {
			sum += g.prefer[e]
		}
	}
	return sum
}
