package sim

import (
	"math"
	"math/bits"
)

// router computes the routes of one run over a topology. The distances to
// a destination are computed the first time a route to it is asked for,
// and kept; the flow model keeps the paths. A device is reached through
// the nodes with edges into it, so its distances are composed from theirs
// (see compose) when that takes one search: a host's through its leaf
// switch, a GPU's through its NIC (and so its rail's leaf) and its
// NVSwitch. One search then serves every device behind one switch, which
// on a fat tree of thousands of hosts, or a cluster of thousands of GPUs,
// is a search per leaf rather than per device. Failed edges are left out;
// failing one clears the distances.
type router struct {
	t       *Topology
	failed  []bool
	dist    map[int32][]int32 // destination node -> cost to it from each node
	devDist []*toDevice       // per device, its distances (see distTo)
	// scratch for Dijkstra
	heap []routeItem
	// maxCost is the largest edge cost; when it is small, distances are
	// found with a bucket per cost (Dial's algorithm) in buckets, which
	// gives Dijkstra's distances (least costs are unique) without a heap.
	maxCost int
	buckets [][]int32
	// The edges out of and into each node as the searches read them, in
	// the order of Topology's out and in: those of node u are
	// outHops[outStart[u]:outStart[u+1]] (in likewise). They and fwd
	// keep the walks off the larger Edge and Node.
	outStart, inStart []int32
	outHops, inHops   []hop
	fwd               []bool // per node: it forwards (is not a device)
	// The hops out of node u to nodes that forward are
	// fwdHops[fwdStart[u]:fwdStart[u+1]], each with its place in u's
	// out; outPos is each edge's place in its tail's out. A walk reads
	// only those, and the edges into its destination (see walk).
	fwdStart []int32
	fwdHops  []walkHop
	outPos   []int32
	// ties keeps, per searched distances (by their first element's
	// address) and node u, the hops out of u a walk over them may take
	// (see tieMask).
	ties map[*int32][]uint32
	// anyFailed is set once an edge has failed.
	anyFailed bool
	// searchCount, when not nil, counts the searches (Flow.searches).
	searchCount *int64
}

// walkHop is a hop a walk may take: its edge, the node it leads to, its
// cost, and its place among the edges out of its tail.
type walkHop struct {
	edge, node, cost, pos int32
}

// hop is an edge out of (or into) a node: the edge, the node at its other
// end, its cost, and whether that node forwards.
type hop struct {
	edge, node, cost int32
	fwd              bool
}

func (r *router) outOf(u int) []hop { return r.outHops[r.outStart[u]:r.outStart[u+1]] }
func (r *router) inOf(u int) []hop  { return r.inHops[r.inStart[u]:r.inStart[u+1]] }

// dialMaxCost is the largest edge cost for which distToNode uses buckets.
const dialMaxCost = 64

// toDevice is the distances to a node (a device, or a switch for
// routeToNode): 0 from the node itself, else the least of through[n] +
// offset over its parts and of cost over its near hops whose from is n.
// A node with few edges in is reached through its neighbours, so its
// distances are theirs plus the edge's cost (see compose): a GPU's through
// its NIC and its NVSwitch, those through the leaf and the GPUs; one
// search then serves every device behind one switch.
type toDevice struct {
	parts []distPart
	near  []nearHop
	node  int
}

// distPart is the cost to a node through one that was searched.
type distPart struct {
	through []int32
	offset  int32
}

// nearHop is the cost to a node from a node next to it that is not
// searched through (a device, which does not forward, or a neighbour
// composed from its own).
type nearHop struct {
	from, cost int32
}

// at is the cost from node n to the device.
func (d *toDevice) at(n int) int32 {
	if n == d.node {
		return 0
	}
	if len(d.parts) == 1 && len(d.near) == 0 { // most devices (see prune)
		p := &d.parts[0]
		if x := p.through[n]; x != unreachable {
			return x + p.offset
		}
		return unreachable
	}
	best := int32(unreachable)
	for _, p := range d.parts {
		if x := p.through[n]; x != unreachable && x+p.offset < best {
			best = x + p.offset
		}
	}
	for _, h := range d.near {
		if int(h.from) == n && h.cost < best {
			best = h.cost
		}
	}
	return best
}

type routeItem struct {
	d    int32
	node int32
}

const unreachable = math.MaxInt32

func newRouter(t *Topology) *router {
	r := &router{t: t, failed: make([]bool, len(t.edges)), dist: map[int32][]int32{}, devDist: make([]*toDevice, len(t.devices))}
	for _, ed := range t.edges {
		if ed.Cost < 0 {
			r.maxCost = -1
			break
		}
		r.maxCost = max(r.maxCost, ed.Cost)
	}
	r.fwd = make([]bool, len(t.nodes))
	for u := range t.nodes {
		r.fwd[u] = t.transit(u)
	}
	hops := func(lists [][]int32, other func(ed *Edge) int) (start []int32, out []hop) {
		start = make([]int32, len(lists)+1)
		out = make([]hop, 0, len(t.edges))
		for u, list := range lists {
			for _, e := range list {
				ed := &t.edges[e]
				v := other(ed)
				out = append(out, hop{edge: e, node: int32(v), cost: int32(ed.Cost), fwd: r.fwd[v]})
			}
			start[u+1] = int32(len(out))
		}
		return start, out
	}
	r.outStart, r.outHops = hops(t.out, func(ed *Edge) int { return ed.To })
	r.inStart, r.inHops = hops(t.in, func(ed *Edge) int { return ed.From })
	r.outPos = make([]int32, len(t.edges))
	r.fwdStart = make([]int32, len(t.nodes)+1)
	for u := range t.nodes {
		for i, h := range r.outOf(u) {
			r.outPos[h.edge] = int32(i)
			if h.fwd {
				r.fwdHops = append(r.fwdHops, walkHop{h.edge, h.node, h.cost, int32(i)})
			}
		}
		r.fwdStart[u+1] = int32(len(r.fwdHops))
	}
	return r
}

// fail removes edge e from routing.
func (r *router) fail(e int) {
	if r.failed[e] {
		return
	}
	r.failed[e] = true
	r.anyFailed = true
	clear(r.dist)
	clear(r.ties)
	clear(r.devDist)
}

// route returns the edges of the path from device src to device dst, or
// nil if no path is left. src != dst. The path is appended to buf.
func (r *router) route(src, dst int, buf []int32) []int32 {
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
	return r.walk(s, d, dist, key, buf)
}

// routeToNode returns the edges of the path from device src to node
// node (a switch), or nil if no path is left; ties are broken as between
// devices (see Topology), with node's index as the destination's under
// RouteDestMod.
func (r *router) routeToNode(src, node int) []int32 {
	s := r.t.devices[src]
	dist := &toDevice{parts: []distPart{{through: r.distToNode(node)}}, node: node}
	if dist.at(s) == unreachable {
		return nil
	}
	key := uint64(node)
	if r.t.Routing != RouteDestMod {
		key = mix64(uint64(src)<<32 | uint64(uint32(node)) | 1<<31)
	}
	return r.walk(s, node, dist, key, nil)
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
	return r.walk(node, r.t.devices[dst], dist, key, nil)
}

// walk returns the edges of a least-cost path from node s to node d,
// whose costs are dist, choosing among tied next hops by key (see
// Topology). The hops tied at a node are taken in the order of its out
// edges: those to nodes that forward, then any into d (a device, which
// no other walk passes through), put in their place. The path is
// appended to path (a new slice if nil).
func (r *router) walk(s, d int, dist *toDevice, key uint64, path []int32) []int32 {
	if path == nil {
		path = make([]int32, 0, 8)
	}
	var candBuf [16]walkHop
	cand := candBuf[:0]
	into := r.inOf(d) // the edges into d, when d does not forward
	if r.fwd[d] {
		into = nil
	}
	du := dist.at(s)
	// Most devices' distances are one part's (see prune): read them here
	// rather than through at, a call and its branches per hop.
	var through []int32
	var offset int32
	var ties []uint32
	if len(dist.parts) == 1 && len(dist.near) == 0 {
		through, offset = dist.parts[0].through, dist.parts[0].offset
		if into != nil && len(through) > 0 {
			ties = r.tiesOf(through)
		}
	}
	for u := s; u != d; {
		if ties != nil && !tailOf(into, u) {
			if m := r.tieMask(ties, through, u); m != 0 {
				h := r.fwdHops[int(r.fwdStart[u])+pickBit(m, &key)]
				path = append(path, h.edge)
				u, du = int(h.node), du-h.cost
				continue
			}
		}
		cand = cand[:0]
		for _, h := range r.fwdHops[r.fwdStart[u]:r.fwdStart[u+1]] {
			if r.anyFailed && r.failed[h.edge] {
				continue
			}
			var x int32
			switch {
			case through == nil || int(h.node) == dist.node:
				x = dist.at(int(h.node))
			case through[h.node] != unreachable:
				x = through[h.node] + offset
			default:
				continue
			}
			if x == unreachable || x+h.cost != du {
				continue
			}
			cand = append(cand, h)
		}
		for _, h := range into { // h.node is the edge's tail
			if int(h.node) != u || h.cost != du || (r.anyFailed && r.failed[h.edge]) {
				continue // d's own cost is 0
			}
			w := walkHop{h.edge, int32(d), h.cost, r.outPos[h.edge]}
			k := len(cand)
			cand = append(cand, w)
			for ; k > 0 && cand[k-1].pos > w.pos; k-- {
				cand[k] = cand[k-1]
			}
			cand[k] = w
		}
		h := cand[0]
		if n := uint64(len(cand)); n > 1 {
			h = cand[key%n]
			key /= n
		}
		path = append(path, h.edge)
		u, du = int(h.node), du-h.cost // the next hop's distance, as dist.at(u) gives it
	}
	return path
}

// tiesOf returns the tie masks of the distances through (see tieMask),
// made on first use.
func (r *router) tiesOf(through []int32) []uint32 {
	if r.ties == nil {
		r.ties = map[*int32][]uint32{}
	}
	key := &through[0]
	ties := r.ties[key]
	if ties == nil {
		ties = make([]uint32, len(through))
		r.ties[key] = ties
	}
	return ties
}

// tieMask returns the hops out of node u to nodes that forward that a
// walk over distances through takes a next hop from (those on a least
// cost path: through[h.node] + h.cost == through[u], which a part's
// offset leaves the same), as bit i for the hop fwdHops[fwdStart[u]+i],
// with bit 31 set; 0 if u has more than 31 such hops, or none. It is kept in
// ties[u], found the first time u is walked through.
func (r *router) tieMask(ties []uint32, through []int32, u int) uint32 {
	if m := ties[u]; m != 0 {
		return m
	}
	hops := r.fwdHops[r.fwdStart[u]:r.fwdStart[u+1]]
	if len(hops) > 31 {
		return 0
	}
	m := uint32(1) << 31
	for i, h := range hops {
		if r.anyFailed && r.failed[h.edge] {
			continue
		}
		if x := through[h.node]; x != unreachable && x+h.cost == through[u] {
			m |= 1 << i
		}
	}
	if m == 1<<31 {
		return 0 // no hop: let the walk fail as it does
	}
	ties[u] = m
	return m
}

// pickBit returns the place of the set bit of m (less bit 31) that the
// walk's key chooses among them, as walk chooses among tied hops, and
// takes the choice out of key.
func pickBit(m uint32, key *uint64) int {
	m &^= 1 << 31
	if n := uint64(bits.OnesCount32(m)); n > 1 {
		j := *key % n
		*key /= n
		for ; j > 0; j-- {
			m &= m - 1
		}
	}
	return bits.TrailingZeros32(m)
}

// tailOf reports whether an edge of into leaves node u.
func tailOf(into []hop, u int) bool {
	for _, h := range into {
		if int(h.node) == u {
			return true
		}
	}
	return false
}

// distTo returns the least cost from every node to device dst, through
// transit nodes only, over edges that have not failed.
func (r *router) distTo(dst int) *toDevice {
	if d := r.devDist[dst]; d != nil {
		return d
	}
	t := r.t
	target := t.devices[dst]
	var d toDevice
	if r.searches(target, composeDepth) <= 1 {
		d = r.compose(target, composeDepth)
	} else if in := t.in[target]; len(in) == 1 && !r.failed[in[0]] && t.transit(t.edges[in[0]].From) {
		ed := &t.edges[in[0]]
		d = toDevice{parts: []distPart{{r.distToNode(ed.From), int32(ed.Cost)}}, node: target}
	} else {
		d = toDevice{parts: []distPart{{through: r.distToNode(target)}}, node: target}
	}
	d.near = d.prune()
	r.devDist[dst] = &d
	return &d
}

// prune returns d's near hops less those that a part reaches at no
// more cost (a GPU's from its NIC, a host's from its leaf, when the leaf
// was searched): at gives the same costs without them, and need not walk
// them on every call.
func (d *toDevice) prune() []nearHop {
	keep := d.near[:0]
	for _, h := range d.near {
		best := int32(unreachable)
		for _, p := range d.parts {
			if x := p.through[h.from]; x != unreachable && x+p.offset < best {
				best = x + p.offset
			}
		}
		if int(h.from) == d.node || h.cost < best {
			keep = append(keep, h)
		}
	}
	return keep
}

// composeDepth and composeEdges bound compose: a device's distances are
// composed from those of its neighbours up to two edges back (a GPU's
// NIC's leaf), through nodes of at most 16 edges in (an NVSwitch's GPUs).
const (
	composeDepth = 2
	composeEdges = 16
)

// searches is how many searches compose(x, depth) makes.
func (r *router) searches(x, depth int) int {
	t := r.t
	if depth < 0 || len(t.in[x]) > composeEdges {
		return 1
	}
	k := 0
	for _, e := range t.in[x] {
		if y := t.edges[e].From; !r.failed[e] && t.transit(y) {
			k += min(r.searches(y, depth-1), 1)
		}
	}
	return k
}

// compose returns the least costs to node x from those to the nodes with
// an edge into it that has not failed: through a transit node y, y's
// plus the edge's cost (y's own composed in turn, depth levels back, if
// that takes at most one search; else searched); from a device, only from
// itself, the edge's cost. A least-cost path to x ends with one such edge
// after a least-cost path to its tail that avoids x (costs are not
// negative), so these are the costs a search to x finds. Past depth, or
// with more than composeEdges edges in, x is searched.
func (r *router) compose(x, depth int) toDevice {
	t := r.t
	if depth < 0 || len(t.in[x]) > composeEdges {
		return toDevice{parts: []distPart{{through: r.distToNode(x)}}, node: x}
	}
	d := toDevice{node: x}
	for _, e := range t.in[x] {
		if r.failed[e] {
			continue
		}
		ed := &t.edges[e]
		y, c := ed.From, int32(ed.Cost)
		d.near = append(d.near, nearHop{int32(y), c})
		if !t.transit(y) {
			continue
		}
		var sub toDevice
		if r.searches(y, depth-1) <= 1 {
			sub = r.compose(y, depth-1)
		} else {
			sub = toDevice{parts: []distPart{{through: r.distToNode(y)}}}
		}
		for _, p := range sub.parts {
			d.parts = append(d.parts, distPart{p.through, p.offset + c})
		}
		for _, h := range sub.near {
			d.near = append(d.near, nearHop{h.from, h.cost + c})
		}
	}
	return d
}

// distToNode returns the least cost from every node to node target,
// through transit nodes only (and target itself), over edges that have
// not failed.
func (r *router) distToNode(target int) []int32 {
	if d, ok := r.dist[int32(target)]; ok {
		return d
	}
	if r.searchCount != nil {
		*r.searchCount++
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
// in order of cost from a ring of buckets: a power of two of them, at
// least maxCost+1, so that a cost's bucket is a mask, not a division.
// An edge's failure is looked up only for an edge that would shorten a
// distance.
func (r *router) dial(target int, dist []int32) {
	if k := 1 << bits.Len(uint(r.maxCost)); len(r.buckets) != k {
		r.buckets = make([][]int32, k)
	}
	b := r.buckets
	mask := int32(len(b) - 1)
	b[0] = append(b[0][:0], int32(target))
	pending := 1
	for d := int32(0); pending > 0; d++ {
		i := d & mask
		for len(b[i]) > 0 {
			v := int(b[i][len(b[i])-1])
			b[i] = b[i][:len(b[i])-1]
			pending--
			if dist[v] != d || (v != target && !r.fwd[v]) {
				continue // stale, or a device, which does not forward
			}
			for _, h := range r.inOf(v) {
				nd := d + h.cost
				if nd >= dist[h.node] || (r.anyFailed && r.failed[h.edge]) {
					continue
				}
				dist[h.node] = nd
				if !h.fwd {
					continue // a device: popped, it would only be skipped
				}
				j := nd & mask
				b[j] = append(b[j], h.node)
				pending++
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
	p := newRouter(t).route(src, dst, nil)
	names := make([]string, len(p))
	for i, e := range p {
		names[i] = t.edges[e].Name
	}
	return names
}
