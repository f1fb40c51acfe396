package sim

import (
	"math"
	"slices"
	"sync"
)

// The flow model's routes: each run keeps the route of every pair of
// ranks it sends between, found once; and the runs of one process on
// one topology (the points of a sweep, a benchmark's iterations) share
// the routes between devices through sharedRoutes, since a route is the
// topology's alone until a link fails.

// denseRoutes is the largest world whose routes are cached in rows (at
// most 32 MiB of pointers when every pair talks); a variable for tests.
var denseRoutes = 2048

func (n *flowNet) clearRoutes() {
	n.swRoutes = nil
	n.shared = nil // routes around a failed link are this run's alone
	for i := range n.senders {
		n.senders[i].last, n.senders[i].near = nil, nil
	}
	if w := n.e.World(); w <= denseRoutes {
		n.routes = make([][]*flowRoute, w)
	} else {
		n.routeMap = map[uint64]*flowRoute{}
	}
}

// nearRoutes is how many routes a sender keeps in its own list
// (flowSender.near): halving-doubling's partners at 2^16 ranks.
const nearRoutes = 16

// routeSlab is how many routes newRoute allocates at once.
const routeSlab = 256

// noRoute marks a cached pair with no path left.
var noRoute = &flowRoute{}

func (n *flowNet) route(src, dst int) *flowRoute {
	sd := &n.senders[src]
	if sd.last == nil || sd.lastDst != dst {
		sd.last, sd.lastDst = n.cachedRoute(src, dst), dst
	}
	if sd.last == noRoute {
		return nil
	}
	return sd.last
}

// cachedRoute is the route from src to dst, found once per pair (noRoute
// if there is none): in src's row of routes in worlds of up to
// denseRoutes ranks; else in src's near list, and past it in the routes
// shared with other runs or, where there are none or they are full, in
// the run's map (sparseRoute).
func (n *flowNet) cachedRoute(src, dst int) *flowRoute {
	if n.routes != nil {
		row := n.routes[src]
		if row == nil {
			row = make([]*flowRoute, len(n.routes))
			n.routes[src] = row
		}
		if row[dst] == nil {
			row[dst] = n.findRoute(src, dst)
		}
		return row[dst]
	}
	sd := &n.senders[src]
	for _, nr := range sd.near {
		if nr.dst == dst {
			return nr.r
		}
	}
	r := n.sparseRoute(src, dst)
	if len(sd.near) < nearRoutes {
		sd.near = append(sd.near, nearRoute{dst, r}) // a ring's one or two, halving-doubling's log2(p)
	}
	return r
}

// sparseRoute is the route from src to dst in a world too large for
// rows: from the shared routes, which are then the only cache (one
// lookup, not two), or from the run's map when there are none or they
// are full.
func (n *flowNet) sparseRoute(src, dst int) *flowRoute {
	if n.shared != nil {
		if r := n.shared.get(n.dev[src], n.dev[dst]); r != nil {
			return r
		}
	}
	key := uint64(src)<<32 | uint64(uint32(dst))
	r := n.routeMap[key]
	if r == nil {
		r = n.newRoute(n.dev[src], n.dev[dst])
		if n.shared == nil || !n.shared.put(n.dev[src], n.dev[dst], r) {
			n.routeMap[key] = r
		}
	}
	return r
}

// findRoute is the route from src to dst for a row of routes: the
// shared one, or one found and shared.
func (n *flowNet) findRoute(src, dst int) *flowRoute {
	if n.shared != nil {
		if r := n.shared.get(n.dev[src], n.dev[dst]); r != nil {
			return r
		}
	}
	r := n.newRoute(n.dev[src], n.dev[dst])
	if n.shared != nil {
		n.shared.put(n.dev[src], n.dev[dst], r)
	}
	return r
}

// newRoute finds the route from device src to device dst (noRoute if
// there is none).
func (n *flowNet) newRoute(src, dst int) *flowRoute {
	path := n.rt.route(src, dst, n.pathBuf[:0])
	if path == nil {
		return noRoute
	}
	n.pathBuf = path[:0]
	// Routes come from slabs: one allocation, and one object for the
	// collector to mark, per routeSlab routes.
	if len(n.routeSlab) == 0 {
		n.routeSlab = make([]flowRoute, routeSlab)
	}
	r := &n.routeSlab[0]
	n.routeSlab = n.routeSlab[1:]
	k := 0
	for _, e := range path {
		ed := &n.topo.edges[e]
		r.latency += ed.Latency
		if !math.IsInf(ed.Bandwidth, 1) {
			k++
		}
	}
	need := len(path)
	if k < len(path) {
		need += k
	}
	buf := r.buf[:0]
	if need > cap(buf) {
		buf = make([]int32, 0, need)
	}
	all := append(buf, path...)
	r.path = all[:len(path):len(path)]
	r.cons = r.path
	if k < len(path) {
		r.cons = n.finite(all[len(path):len(path)], path)
	}
	r.weight = n.weight(r.latency)
	return r
}

// finite appends to cons the edges of path of finite bandwidth.
func (n *flowNet) finite(cons, path []int32) []int32 {
	for _, e := range path {
		if !math.IsInf(n.topo.edges[e].Bandwidth, 1) {
			cons = append(cons, e)
		}
	}
	return cons
}

// weight is the LatencyWeighted weight of a route of latency lat (see
// flowRoute.weight); 1 under MaxMin.
func (n *flowNet) weight(lat Time) float64 {
	if n.latencyFirst && lat > 0 {
		return 1 / lat.Seconds()
	}
	return 1
}

// sharedRoutes is the routes between the devices of one topology, shared
// by the runs of a process that simulate it with the same sharing: a
// route is a walk over the topology's distances (route.go), about a
// microsecond each on a fat tree of thousands of hosts, so that
// halving-doubling at 4096 ranks, which asks 49152 routes for 98304
// messages, spent a sixth of its run finding them. Routes are immutable
// once made. A run looks up its own cache first (rows, near lists) and
// this one on a miss (under the lock, which the points of a sweep
// running in parallel share); a run whose link fails stops using it
// (clearRoutes). The calibration runs of a time estimate, which count
// the searches, do not use it.
type sharedRoutes struct {
	// what the routes depend on, copied: a *Topology that a program
	// builds itself may change between its runs
	routing      Routing
	nodes        []Node
	edges        []Edge
	devices      []int
	latencyFirst bool

	mu     sync.Mutex
	routes map[uint64]*flowRoute // by device pair
}

// sharedRoutesEach is how many routes a store keeps (at about 120 bytes
// each, some 30 MiB; halving-doubling on 16384 ranks asks 229376): past
// it, a run keeps the routes it finds to itself. sharedTopologies is
// for how many topologies the process keeps stores: past it, the least
// recently used topology's store goes. (An estimate's timing run, of 64
// ranks, makes one of its own.)
// (Variables for tests.)
var (
	sharedRoutesEach = 1 << 18
	sharedTopologies = 3
)

var routeStores struct {
	mu     sync.Mutex
	stores []*sharedRoutes // oldest first
}

// sharedRoutesFor returns the store of t's routes for runs with the
// given sharing, made if no run made it: the same topology is an equal
// one, not only the same object, since every run builds its own.
func sharedRoutesFor(t *Topology, latencyFirst bool) *sharedRoutes {
	routeStores.mu.Lock()
	defer routeStores.mu.Unlock()
	for i, s := range routeStores.stores {
		if s.latencyFirst == latencyFirst && s.routesOf(t) {
			// The most recently used goes last, the last to go.
			routeStores.stores = append(slices.Delete(routeStores.stores, i, i+1), s)
			return s
		}
	}
	s := &sharedRoutes{
		routing: t.Routing, nodes: slices.Clone(t.nodes), edges: slices.Clone(t.edges), devices: slices.Clone(t.devices),
		latencyFirst: latencyFirst, routes: map[uint64]*flowRoute{},
	}
	if len(routeStores.stores) == sharedTopologies {
		routeStores.stores = slices.Delete(routeStores.stores, 0, 1)
	}
	routeStores.stores = append(routeStores.stores, s)
	return s
}

// routesOf reports whether s holds the routes of t: whether t has the
// same routing, nodes, edges and devices, so the same routes, latencies
// and finite edges.
func (s *sharedRoutes) routesOf(t *Topology) bool {
	return s.routing == t.Routing && len(s.edges) == len(t.edges) && len(s.nodes) == len(t.nodes) &&
		slices.Equal(s.devices, t.devices) && slices.Equal(s.nodes, t.nodes) && slices.Equal(s.edges, t.edges)
}

// get returns the route from device src to device dst, if a run found
// it.
func (s *sharedRoutes) get(src, dst int) *flowRoute {
	s.mu.Lock()
	r := s.routes[uint64(src)<<32|uint64(uint32(dst))]
	s.mu.Unlock()
	return r
}

// put shares r, the route from device src to device dst; it reports
// false, keeping nothing, once the store holds sharedRoutesEach routes.
func (s *sharedRoutes) put(src, dst int, r *flowRoute) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.routes) >= sharedRoutesEach {
		return false
	}
	s.routes[uint64(src)<<32|uint64(uint32(dst))] = r
	return true
}
