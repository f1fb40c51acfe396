package synth

import (
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/sim"
)

// Graph is a topology's link graph: every node of the topology (devices,
// switches, NICs), every directed edge with its capacity in bytes per
// second, and the route the simulator gives a message between two
// devices, as edge indices. Its methods may not run at once from several
// goroutines (AllgatherPacking marks what it prefers on the graph while
// it packs).
type Graph struct {
	// Nodes is the number of nodes; Devices[i] is the node of device i.
	Nodes   int
	Devices []int
	// From, To and Cap are the edges' ends and capacities; an edge of
	// unlimited bandwidth has the sum of the finite capacities, which no
	// cut can exceed.
	From, To []int
	Cap      []float64
	routes   [][][]int
	// prefer, where set, is the capacity other packings left, which Pack
	// prefers arcs by (see packShared).
	prefer []float64
}

// FromTopology reads the link graph of t and the routes between its first
// world devices.
func FromTopology(t *sim.Topology, world int) (*Graph, error) {
	if world > t.NumDevices() {
		return nil, fmt.Errorf("synth: topology %s has %d devices, too few for %d ranks", t.Name, t.NumDevices(), world)
	}
	g := &Graph{Nodes: len(t.Nodes()), Devices: append([]int(nil), t.Devices()[:world]...)}
	byName := map[string]int{}
	finite := 0.0
	for _, e := range t.Edges() {
		if !math.IsInf(e.Bandwidth, 1) {
			finite += e.Bandwidth
		}
	}
	for _, e := range t.Edges() {
		byName[e.Name] = e.ID
		c := e.Bandwidth
		if math.IsInf(c, 1) {
			c = finite
		}
		g.From, g.To, g.Cap = append(g.From, e.From), append(g.To, e.To), append(g.Cap, c)
	}
	g.routes = make([][][]int, world)
	for s := range world {
		g.routes[s] = make([][]int, world)
		for d := range world {
			if s == d {
				continue
			}
			names := t.Route(s, d)
			if names == nil {
				return nil, fmt.Errorf("synth: topology %s: no route from device %d to device %d", t.Name, s, d)
			}
			for _, n := range names {
				g.routes[s][d] = append(g.routes[s][d], byName[n])
			}
		}
	}
	return g, nil
}

// Route returns the edges a message from device s to device d crosses.
func (g *Graph) Route(s, d int) []int { return g.routes[s][d] }

// Without returns a copy of t without the edges of link (named as
// sim.Topology.FindEdges names them: "a->b" one direction, "a-b" both):
// a topology with a failed link, whose routes go round it.
func Without(t *sim.Topology, link string) (*sim.Topology, error) {
	drop, err := t.FindEdges(link)
	if err != nil {
		return nil, err
	}
	gone := map[int]bool{}
	for _, e := range drop {
		gone[e] = true
	}
	c := sim.NewTopology(fmt.Sprintf("%s without %s", t.Name, link))
	c.Routing, c.HostBandwidth = t.Routing, t.HostBandwidth
	for _, n := range t.Nodes() {
		id := c.AddNode(n.Kind, n.Name)
		if n.Reduce > 0 {
			c.SetReduce(id, n.Reduce)
		}
	}
	for i := range t.NumDevices() {
		c.SetDomain(i, t.Domain(i))
	}
	for _, e := range t.Edges() {
		if !gone[e.ID] {
			c.AddEdge(e.From, e.To, e.Bandwidth, e.Latency, e.Cost)
		}
	}
	return c, nil
}

// maxFlow is the value of a maximum flow from node s to node t over
// capacities cap (Edmonds-Karp: shortest augmenting paths, residual
// capacities on the reverse of every edge).
func (g *Graph) maxFlow(capacity []float64, s, t int) float64 {
	if s == t {
		return math.Inf(1)
	}
	m := len(g.From)
	res := make([]float64, 2*m) // edge e forward at 2e, its reverse at 2e+1
	adj := make([][]int, g.Nodes)
	for e := range m {
		res[2*e] = capacity[e]
		adj[g.From[e]] = append(adj[g.From[e]], 2*e)
		adj[g.To[e]] = append(adj[g.To[e]], 2*e+1)
	}
	head := func(a int) int {
		if a%2 == 0 {
			return g.To[a/2]
		}
		return g.From[a/2]
	}
	total := 0.0
	prev := make([]int, g.Nodes)
	for {
		for i := range prev {
			prev[i] = -1
		}
		queue := []int{s}
		prev[s] = -2
		for len(queue) > 0 && prev[t] == -1 {
			u := queue[0]
			queue = queue[1:]
			for _, a := range adj[u] {
				if v := head(a); prev[v] == -1 && res[a] > eps {
					prev[v] = a
					queue = append(queue, v)
				}
			}
		}
		if prev[t] == -1 {
			return total
		}
		push := math.Inf(1)
		for v := t; v != s; v = head(prev[v] ^ 1) {
			push = min(push, res[prev[v]])
		}
		for v := t; v != s; v = head(prev[v] ^ 1) {
			res[prev[v]] -= push
			res[prev[v]^1] += push
		}
		total += push
	}
}

// eps is the capacity below which an edge counts as full (bytes per
// second: far below any link's).
const eps = 1e-3
