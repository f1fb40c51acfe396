package sim

import "math"

// router computes the routes of one run over a topology. The distances to
// a destination are computed the first time a route to it is asked for,
// and kept; the flow model keeps the paths. A device reached by a single
// edge, from a transit node (a host on its leaf switch, a GPU on its NIC),
// is reached through that node, so the distances to every device behind
// one node are those to the node plus the edge's cost: one search serves
// them all, which on a fat tree of thousands of hosts is a search per leaf
// rather than per host. Failed edges are left out; failing one clears the
// distances.
type router struct {
	t      *Topology
	failed []bool
	dist   map[int32][]int32 // destination node -> cost to it from each node
	// scratch for Dijkstra
	heap []routeItem
	// maxCost is the largest edge cost; when it is small, distances are
	// found with a bucket per cost (Dial's algorithm) in buckets, which
	// gives Dijkstra's distances (least costs are unique) without a heap.
	maxCost int
	buckets [][]int32
}

// dialMaxCost is the largest edge cost for which distToNode uses buckets.
const dialMaxCost = 64

// toDevice is the distances to a device: through[n] + offset from every
// node n but the device's own, which is 0.
type toDevice struct {
	through []int32
	offset  int32
	node    int // the device's node
}

// at is the cost from node n to the device.
func (d toDevice) at(n int) int32 {
	if n == d.node {
		return 0
	}
	if x := d.through[n]; x != unreachable {
		return x + d.offset
	}
	return unreachable
}

type routeItem struct {
	d    int32
	node int32
}

const unreachable = math.MaxInt32

func newRouter(t *Topology) *router {
	r := &router{t: t, failed: make([]bool, len(t.edges)), dist: map[int32][]int32{}}
	for _, ed := range t.edges {
		if ed.Cost < 0 {
			r.maxCost = -1
			break
		}
		r.maxCost = max(r.maxCost, ed.Cost)
	}
	return r
}

// fail removes edge e from routing.
func (r *router) fail(e int) {
	if r.failed[e] {
		return
	}
	r.failed[e] = true
	clear(r.dist)
}

// route returns the edges of the path from device src to device dst, or
// nil if no path is left. src != dst.
func (r *router) route(src, dst int) []int32 {
	t := r.t
	dist := r.distTo(dst)
	s, d := t.devices[src], t.devices[dst]
	if dist.at(s) == unreachable {
		return nil
	}
	var key uint64
	if t.Routing == RouteDestMod {
		key = uint64(dst)
	} else {
		key = mix64(uint64(src)<<32 | uint64(uint32(dst)))
	}
	return r.walk(s, d, dist, key)
}

// routeToNode returns the edges of the path from device src to node
// node (a switch), or nil if no path is left; ties are broken as between
// devices (see Topology), with node's index as the destination's under
// RouteDestMod.
func (r *router) routeToNode(src, node int) []int32 {
	s := r.t.devices[src]
	dist := toDevice{through: r.distToNode(node), node: node}
	if dist.at(s) == unreachable {
		return nil
	}
	key := uint64(node)
	if r.t.Routing != RouteDestMod {
		key = mix64(uint64(src)<<32 | uint64(uint32(node)) | 1<<31)
	}
	return r.walk(s, node, dist, key)
}

// routeFromNode returns the edges of the path from node node (a switch)
// to device dst, or nil if no path is left.
func (r *router) routeFromNode(node, dst int) []int32 {
	dist := r.distTo(dst)
	if dist.at(node) == unreachable {
		return nil
	}
	key := uint64(dst)
	if r.t.Routing != RouteDestMod {
		key = mix64(uint64(node)<<32 | uint64(uint32(dst)) | 1<<31)
	}
	return r.walk(node, r.t.devices[dst], dist, key)
}

// walk returns the edges of a least-cost path from node s to node d,
// whose costs are dist, choosing among tied next hops by key (see
// Topology).
func (r *router) walk(s, d int, dist toDevice, key uint64) []int32 {
	t := r.t
	path := make([]int32, 0, 8)
	var candBuf [16]int32
	cand := candBuf[:0]
	for u := s; u != d; {
		cand = cand[:0]
		du := dist.at(u)
		for _, e := range t.out[u] {
			ed := &t.edges[e]
			if x := dist.at(ed.To); x == unreachable || x+int32(ed.Cost) != du || r.failed[e] || (ed.To != d && !t.transit(ed.To)) {
				continue
			}
			cand = append(cand, e)
		}
		e := cand[0]
		if n := uint64(len(cand)); n > 1 {
			e = cand[key%n]
			key /= n
		}
		path = append(path, e)
		u = t.edges[e].To
	}
	return path
}

// distTo returns the least cost from every node to device dst, through
// transit nodes only, over edges that have not failed.
func (r *router) distTo(dst int) toDevice {
	t := r.t
	target := t.devices[dst]
	if in := t.in[target]; len(in) == 1 && !r.failed[in[0]] && t.transit(t.edges[in[0]].From) {
		ed := &t.edges[in[0]]
		return toDevice{through: r.distToNode(ed.From), offset: int32(ed.Cost), node: target}
	}
	return toDevice{through: r.distToNode(target), node: target}
}

// distToNode returns the least cost from every node to node target,
// through transit nodes only (and target itself), over edges that have
// not failed.
func (r *router) distToNode(target int) []int32 {
	if d, ok := r.dist[int32(target)]; ok {
		return d
	}
	t := r.t
	dist := make([]int32, len(t.nodes))
	for i := range dist {
		dist[i] = unreachable
	}
	dist[target] = 0
	if r.maxCost >= 0 && r.maxCost <= dialMaxCost {
		r.dial(target, dist)
		r.dist[int32(target)] = dist
		return dist
	}
	h := r.heap[:0]
	h = heapPush(h, routeItem{0, int32(target)})
	for len(h) > 0 {
		var it routeItem
		it, h = heapPop(h)
		v := int(it.node)
		if it.d != dist[v] {
			continue
		}
		if v != target && !t.transit(v) {
			continue // devices do not forward
		}
		for _, e := range t.in[v] {
			if r.failed[e] {
				continue
			}
			ed := &t.edges[e]
			if nd := it.d + int32(ed.Cost); nd < dist[ed.From] {
				dist[ed.From] = nd
				h = heapPush(h, routeItem{nd, int32(ed.From)})
			}
		}
	}
	r.heap = h
	r.dist[int32(target)] = dist
	return dist
}

// dial fills dist, set to unreachable but at target (0), with the least
// cost from every node to target as distToNode defines it, taking nodes
// in order of cost from a ring of maxCost+1 buckets.
func (r *router) dial(target int, dist []int32) {
	t := r.t
	if len(r.buckets) != r.maxCost+1 {
		r.buckets = make([][]int32, r.maxCost+1)
	}
	b := r.buckets
	b[0] = append(b[0][:0], int32(target))
	pending := 1
	for d := int32(0); pending > 0; d++ {
		i := int(d) % len(b)
		for len(b[i]) > 0 {
			v := int(b[i][len(b[i])-1])
			b[i] = b[i][:len(b[i])-1]
			pending--
			if dist[v] != d || (v != target && !t.transit(v)) {
				continue // stale, or a device, which does not forward
			}
			for _, e := range t.in[v] {
				if r.failed[e] {
					continue
				}
				ed := &t.edges[e]
				if nd := d + int32(ed.Cost); nd < dist[ed.From] {
					dist[ed.From] = nd
					j := int(nd) % len(b)
					b[j] = append(b[j], int32(ed.From))
					pending++
				}
			}
		}
	}
}

func (a routeItem) less(b routeItem) bool { return a.d < b.d || (a.d == b.d && a.node < b.node) }

// mix64 is the splitmix64 finaliser: a fixed, well-spread hash, the same
// on every platform and in every run.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Route returns the names of the edges a message from device src to device
// dst crosses, for inspection and tests; nil if there is no path.
func (t *Topology) Route(src, dst int) []string {
	if src == dst {
		return nil
	}
	p := newRouter(t).route(src, dst)
	names := make([]string, len(p))
	for i, e := range p {
		names[i] = t.edges[e].Name
	}
	return names
}
