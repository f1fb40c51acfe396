package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// NodeKind says what a node of a topology is.
type NodeKind uint8

// Kinds of node.
const (
	// NodeDevice is an endpoint that ranks run on. Devices never forward
	// traffic between other nodes.
	NodeDevice NodeKind = iota
	// NodeSwitch forwards traffic: a switch, a router, an NVSwitch.
	NodeSwitch
	// NodeNIC is a network interface: it forwards between the devices it
	// serves and the network it plugs into.
	NodeNIC
)

func (k NodeKind) String() string {
	switch k {
	case NodeDevice:
		return "device"
	case NodeSwitch:
		return "switch"
	case NodeNIC:
		return "nic"
	}
	return "node"
}

// Node is a vertex of a topology.
type Node struct {
	Kind NodeKind
	Name string
	// Reduce is, for a switch that can reduce in the network (an NVSwitch
	// with NVLink SHARP, an InfiniBand switch with SHARP), the rate in
	// bytes per second at which it reduces one operand; 0 for a node that
	// does not reduce. See SetReduce.
	Reduce float64
	// Domain is, for a device, the node of the cluster it belongs to (the
	// NVLink domain of a GPU): devices with the same Domain share a fast
	// intra-node fabric. Topologies without such nodes give each device
	// its own Domain, its device number. See SetDomain.
	Domain int
}

// Edge is one direction of a physical link: traffic flows From -> To.
type Edge struct {
	// ID is the edge's index in Topology.Edges.
	ID       int
	From, To int
	// Bandwidth is the edge's capacity in bytes per second; +Inf means the
	// edge never limits a flow (it still adds its latency).
	Bandwidth float64
	// Latency is added to every message that crosses the edge.
	Latency Time
	// Cost is the edge's routing metric: routes minimise the sum of the
	// costs of their edges (1 for ordinary links).
	Cost int
	// Name is "from->to" with the names of the nodes.
	Name string
}

// LinkParams are the bandwidth and latency of one link, the same in both
// directions. A zero Bandwidth means unlimited where a topology documents
// it (NIC and host attachments); elsewhere it is an error.
type LinkParams struct {
	// Bandwidth in bytes per second (TOML suffix "_bandwidth").
	Bandwidth float64
	// Latency per crossing (TOML suffix "_latency").
	Latency Time
}

func (p LinkParams) check(what string, zeroOK bool) error {
	switch {
	case p.Latency < 0:
		return fmt.Errorf("%s latency %v is negative", what, p.Latency)
	case math.IsNaN(p.Bandwidth) || p.Bandwidth < 0 || (p.Bandwidth == 0 && !zeroOK):
		return fmt.Errorf("%s bandwidth %g B/s must be positive", what, p.Bandwidth)
	}
	return nil
}

// bw is the bandwidth of p as an edge capacity: zero means unlimited.
func (p LinkParams) bw() float64 {
	if p.Bandwidth == 0 {
		return math.Inf(1)
	}
	return p.Bandwidth
}

// Topology is a directed graph of devices, switches and NICs joined by
// edges with a bandwidth and a latency. Build one with the built-in
// constructors (Crossbar, Ring, Torus, FatTree, Dragonfly, Hierarchical) or
// by hand with AddNode and Connect. Once handed to a model it must not
// change; a model reads it from any number of runs at once.
//
// Devices are numbered in the order they were added, from 0: device i is
// Devices()[i]. Ranks run on devices; the flow model maps rank r to device
// r unless told otherwise (see Placement).
//
// Routing is deterministic: a message from device s to device d follows a
// path of least total edge Cost that passes only through switches and NICs.
// Where several such paths tie, the choice at each node is made among its
// tied next hops (in edge order) by a key: with RouteECMP the key is a
// stable hash of (s, d), like the per-flow hashing of ECMP switches; with
// RouteDestMod it is d itself, the deterministic "D-mod-k" routing of
// InfiniBand fat trees, which spreads any shift permutation evenly over
// the uplinks. At a node with n tied next hops the choice is key mod n,
// and the key is divided by n for the next node that has a choice (mixed
// radix), so successive levels do not correlate.
type Topology struct {
	// Name says what the topology is, for reports.
	Name string
	// Routing chooses among tied shortest paths.
	Routing Routing
	// HostBandwidth is the bandwidth between a device and its host's
	// memory (PCIe-class), in bytes per second; zero if not modelled.
	// Messages do not use it; it is there for staging copies.
	HostBandwidth float64

	nodes   []Node
	edges   []Edge
	out     [][]int32 // edge ids leaving each node, ascending
	in      [][]int32 // edge ids entering each node, ascending
	devices []int     // node id of device i
	byName  map[string]int
}

// Routing is how a topology chooses among tied shortest paths.
type Routing uint8

// Routing policies.
const (
	// RouteECMP hashes (source, destination) to pick among tied paths.
	RouteECMP Routing = iota
	// RouteDestMod picks by the destination device's index (D-mod-k).
	RouteDestMod
)

func (r Routing) String() string {
	if r == RouteDestMod {
		return "dmodk"
	}
	return "ecmp"
}

// ParseRouting parses the TOML key "routing": "ecmp" (or "") or "dmodk".
func ParseRouting(s string) (Routing, error) {
	switch s {
	case "", "ecmp":
		return RouteECMP, nil
	case "dmodk", "d_mod_k":
		return RouteDestMod, nil
	}
	return 0, fmt.Errorf("unknown routing %q (want ecmp or dmodk)", s)
}

// NewTopology returns an empty topology called name.
func NewTopology(name string) *Topology {
	return &Topology{Name: name, byName: map[string]int{}}
}

// AddNode adds a node and returns its index. A device is also given the
// next device number. Names must be unique.
func (t *Topology) AddNode(kind NodeKind, name string) int {
	if _, dup := t.byName[name]; dup {
		panic(fmt.Sprintf("sim: topology %s: node %q added twice", t.Name, name))
	}
	id := len(t.nodes)
	t.nodes = append(t.nodes, Node{Kind: kind, Name: name})
	t.out = append(t.out, nil)
	t.in = append(t.in, nil)
	t.byName[name] = id
	if kind == NodeDevice {
		t.nodes[id].Domain = len(t.devices)
		t.devices = append(t.devices, id)
	}
	return id
}

// SetReduce makes switch node n reduce in the network at bw bytes per
// second (an operand's bytes; +Inf reduces for free); bw <= 0 makes it
// a plain switch again. It panics if n is a device.
func (t *Topology) SetReduce(n int, bw float64) {
	if t.nodes[n].Kind == NodeDevice {
		panic(fmt.Sprintf("sim: topology %s: device %s cannot reduce in the network", t.Name, t.nodes[n].Name))
	}
	t.nodes[n].Reduce = max(bw, 0)
}

// SetDomain puts device i (a device number, not a node index) in domain
// d: the node of the cluster it belongs to (see Node.Domain).
func (t *Topology) SetDomain(i, d int) { t.nodes[t.devices[i]].Domain = d }

// Domain returns the domain of device i (see Node.Domain).
func (t *Topology) Domain(i int) int { return t.nodes[t.devices[i]].Domain }

// AddEdge adds one direction of a link, from -> to, and returns its index.
// bandwidth <= 0 or +Inf makes the edge unlimited; cost < 1 is taken as 1.
func (t *Topology) AddEdge(from, to int, bandwidth float64, latency Time, cost int) int {
	if bandwidth <= 0 {
		bandwidth = math.Inf(1)
	}
	cost = max(cost, 1)
	id := len(t.edges)
	t.edges = append(t.edges, Edge{ID: id, From: from, To: to, Bandwidth: bandwidth, Latency: latency, Cost: cost,
		Name: t.nodes[from].Name + "->" + t.nodes[to].Name})
	t.out[from] = append(t.out[from], int32(id))
	t.in[to] = append(t.in[to], int32(id))
	return id
}

// Connect adds a link between a and b: an edge each way with the same
// parameters (a zero bandwidth is unlimited).
func (t *Topology) Connect(a, b int, p LinkParams) {
	t.AddEdge(a, b, p.bw(), p.Latency, 1)
	t.AddEdge(b, a, p.bw(), p.Latency, 1)
}

// Nodes returns the nodes; the caller must not modify them.
func (t *Topology) Nodes() []Node { return t.nodes }

// Edges returns the edges; the caller must not modify them.
func (t *Topology) Edges() []Edge { return t.edges }

// Devices returns the node index of each device, in device order.
func (t *Topology) Devices() []int { return t.devices }

// NumDevices is the number of devices.
func (t *Topology) NumDevices() int { return len(t.devices) }

// Node returns the index of the node called name.
func (t *Topology) Node(name string) (int, bool) {
	i, ok := t.byName[name]
	return i, ok
}

// FindEdges returns the edges a link name denotes: "a->b" is the edge from
// node a to node b; "a<->b" or "a-b" is both directions.
func (t *Topology) FindEdges(link string) ([]int, error) {
	both := false
	var a, b string
	if i := strings.Index(link, "<->"); i >= 0 {
		a, b, both = link[:i], link[i+3:], true
	} else if i := strings.Index(link, "->"); i >= 0 {
		a, b = link[:i], link[i+2:]
	} else if i := strings.LastIndex(link, "-"); i >= 0 {
		a, b, both = link[:i], link[i+1:], true
	} else {
		return nil, fmt.Errorf("link %q: want \"a->b\", \"a<->b\" or \"a-b\"", link)
	}
	na, okA := t.byName[strings.TrimSpace(a)]
	nb, okB := t.byName[strings.TrimSpace(b)]
	if !okA || !okB {
		return nil, fmt.Errorf("link %q: no such nodes in topology %s", link, t.Name)
	}
	var ids []int
	for _, e := range t.out[na] {
		if t.edges[e].To == nb {
			ids = append(ids, int(e))
		}
	}
	if both {
		for _, e := range t.out[nb] {
			if t.edges[e].To == na {
				ids = append(ids, int(e))
			}
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("link %q: nodes %s and %s are not connected", link, a, b)
	}
	return ids, nil
}

// transit reports whether node n forwards traffic between other nodes.
func (t *Topology) transit(n int) bool { return t.nodes[n].Kind != NodeDevice }

// Build implements TopologySpec: a built topology fits any world of at
// most its number of devices.
func (t *Topology) Build(world int) (*Topology, error) {
	if world > len(t.devices) {
		return nil, fmt.Errorf("topology %s has %d devices, too few for %d ranks", t.Name, len(t.devices), world)
	}
	return t, nil
}

func (t *Topology) String() string {
	return fmt.Sprintf("%s (%d devices, %d nodes, %d edges)", t.Name, len(t.devices), len(t.nodes), len(t.edges))
}

// TopologySpec describes a topology that can be built for a world size:
// the parameter structs of the built-in topologies, or a *Topology.
type TopologySpec interface {
	// Build returns a topology with at least world devices, or an error
	// saying which parameter is wrong.
	Build(world int) (*Topology, error)
}

// Placement maps ranks to devices.
type Placement []int

// LinearPlacement puts rank r on device r: the order each topology
// documents for its devices (node-major for hierarchical ones).
func LinearPlacement(world int) Placement {
	p := make(Placement, world)
	for i := range p {
		p[i] = i
	}
	return p
}

// RoundRobinPlacement deals ranks across groups of perGroup consecutive
// devices (nodes, leaves): rank r goes to group r mod groups, at slot r div
// groups, so consecutive ranks land in different groups. It needs world <=
// groups*perGroup.
func RoundRobinPlacement(world, groups, perGroup int) (Placement, error) {
	if groups < 1 || perGroup < 1 || world > groups*perGroup {
		return nil, fmt.Errorf("round-robin placement of %d ranks over %d groups of %d devices does not fit", world, groups, perGroup)
	}
	p := make(Placement, world)
	for r := range p {
		p[r] = (r%groups)*perGroup + r/groups
	}
	return p, nil
}

// RandomPlacement puts the ranks on a random choice of distinct devices,
// drawn from a PCG generator seeded with seed: the same seed gives the same
// placement.
func RandomPlacement(world, devices int, seed uint64) (Placement, error) {
	if world > devices {
		return nil, fmt.Errorf("random placement of %d ranks on %d devices does not fit", world, devices)
	}
	perm := rand.New(rand.NewPCG(seed, 0x706c6163656d656e)).Perm(devices) // stream "placemen"
	return Placement(perm[:world]), nil
}

// check reports whether p is a valid placement of world ranks on n devices:
// in range and one rank per device.
func (p Placement) check(world, n int) error {
	if len(p) != world {
		return fmt.Errorf("placement has %d entries for %d ranks", len(p), world)
	}
	used := make([]bool, n)
	for r, d := range p {
		if d < 0 || d >= n {
			return fmt.Errorf("placement puts rank %d on device %d, outside 0..%d", r, d, n-1)
		}
		if used[d] {
			return fmt.Errorf("placement puts two ranks on device %d", d)
		}
		used[d] = true
	}
	return nil
}
