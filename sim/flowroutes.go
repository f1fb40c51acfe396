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
// most 32 MiB of pointers when every pair talks).
const denseRoutes = 2048

func (n *flowNet) clearRoutes() {
	n.swRoutes = nil
	n.shared = nil // routes around a failed link are this run's alone
	for i := range n.senders {
		n.senders[i].last = nil
	}
	if w := n.e.World(); w <= denseRoutes {
		n.routes = make([][]*flowRoute, w)
	} else {
		n.routeMap = map[uint64]*flowRoute{}
	}
}

// routeSlab is how many routes findRoute allocates at once.
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
// if there is none).
func (n *flowNet) cachedRoute(src, dst int) *flowRoute {
	var slot **flowRoute
	if n.routes != nil {
		row := n.routes[src]
		if row == nil {
			row = make([]*flowRoute, len(n.routes))
			n.routes[src] = row
		}
		slot = &row[dst]
	} else if n.shared != nil {
		// The shared routes are the cache: one lookup, not two.
		return n.shared.route(n, n.dev[src], n.dev[dst])
	} else {
		key := uint64(src)<<32 | uint64(uint32(dst))
		r := n.routeMap[key]
		if r == nil {
			r = n.findRoute(src, dst)
			n.routeMap[key] = r
		}
		slot = &r
	}
	if *slot == nil {
		*slot = n.findRoute(src, dst)
	}
	return *slot
}

func (n *flowNet) findRoute(src, dst int) *flowRoute {
	if n.shared == nil {
		return n.newRoute(n.dev[src], n.dev[dst])
	}
	return n.shared.route(n, n.dev[src], n.dev[dst])
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
		r.cons = all[len(path):len(path)]
		for _, e := range path {
			if !math.IsInf(n.topo.edges[e].Bandwidth, 1) {
				r.cons = append(r.cons, e)
			}
		}
	}
	r.weight = 1
	if n.latencyFirst && r.latency > 0 {
		r.weight = 1 / r.latency.Seconds()
	}
	return r
}

// sharedRoutes is the routes between the devices of one topology, shared
// by the runs of a process that simulate it with the same sharing: a
// route is a walk over the topology's distances (route.go), about a
// microsecond each on a fat tree of thousands of hosts, so that
// halving-doubling at 4096 ranks, which asks 49152 routes for 98304
// messages, spent a sixth of its run finding them. Routes are immutable
// once made. A run looks up its own cache first and this one on a miss
// (under the lock, which the points of a sweep running in parallel
// share); a run whose link fails stops using it (clearRoutes). The
// runs of a time estimate, which count the searches, do not use it.
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

// sharedRouteLimit is how many routes a process keeps, over all its
// topologies (at about 120 bytes each, some 60 MiB), and sharedTopologies
// for how many topologies: past either, the oldest topology's routes go.
const (
	sharedRouteLimit = 1 << 19
	sharedTopologies = 2
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

// route returns the route from device src to device dst, found by run n
// if no run found it yet.
func (s *sharedRoutes) route(n *flowNet, src, dst int) *flowRoute {
	key := uint64(src)<<32 | uint64(uint32(dst))
	s.mu.Lock()
	r := s.routes[key]
	s.mu.Unlock()
	if r != nil {
		return r
	}
	r = n.newRoute(src, dst)
	s.mu.Lock()
	if len(s.routes) < sharedRouteLimit/sharedTopologies {
		s.routes[key] = r
	}
	s.mu.Unlock()
	return r
}
