package sim

import (
	"errors"
	"fmt"
	"math"
)

// The built-in topologies. Each is a parameter struct that implements
// TopologySpec; Build validates the parameters and returns the graph. The
// doc comment of each field names the TOML key of the scenario's [network]
// table it is meant to be read from ("topology = ..." selects the struct);
// LinkParams fields are read from "<prefix>_bandwidth" and
// "<prefix>_latency", with the prefix named on the field.

// Crossbar is every device on one switch (topology = "crossbar"): device
// i has an uplink i -> switch and a downlink switch -> i, each of
// Bandwidth. Latency is the device-to-device latency of a message, charged
// once, on the uplink.
//
// With the flow model this is alpha-beta's network: each device's uplink
// is its egress port and its downlink its ingress port.
//
// With a Backplane, every message also crosses one edge switch ->
// switch_out of that capacity, which all of them share, and the downlinks
// leave from switch_out. That is a switch whose fabric is slower than the
// sum of its ports, and it is how ranks on one machine behave when they
// talk over loopback: each byte costs the machine's cores and memory
// wherever it goes, so the machine moves a fixed number of bytes per
// second in all, whichever ranks send them (a ring's p simultaneous
// messages and a tree's one at a time then take the same time per byte).
type Crossbar struct {
	// Ports is the number of devices (key "ports"); 0 makes one per rank.
	Ports int
	// Bandwidth is the per-port bandwidth in bytes per second (key
	// "bandwidth", as alpha-beta's).
	Bandwidth float64
	// Latency is the port-to-port latency (key "latency", as alpha-beta's).
	Latency Time
	// Backplane is the capacity all messages share, in bytes per second
	// (key "backplane_bandwidth"); 0 or +Inf: non-blocking, no such edge.
	Backplane float64
}

// Build implements TopologySpec.
func (c Crossbar) Build(world int) (*Topology, error) {
	n := c.Ports
	if n == 0 {
		n = world
	}
	if err := (LinkParams{c.Bandwidth, c.Latency}).check("crossbar port", false); err != nil {
		return nil, err
	}
	if n < world || n < 1 {
		return nil, fmt.Errorf("crossbar of %d ports is too small for %d ranks", n, world)
	}
	if err := (LinkParams{Bandwidth: c.Backplane}).check("crossbar backplane", true); err != nil {
		return nil, err
	}
	shared := c.Backplane > 0 && !math.IsInf(c.Backplane, 1)
	name := fmt.Sprintf("crossbar(%d)", n)
	if shared {
		name = fmt.Sprintf("crossbar(%d, backplane %.4g B/s)", n, c.Backplane)
	}
	t := NewTopology(name)
	devs := make([]int, n)
	for i := range devs {
		devs[i] = t.AddNode(NodeDevice, fmt.Sprintf("dev%d", i))
	}
	sw := t.AddNode(NodeSwitch, "switch")
	out := sw
	if shared {
		out = t.AddNode(NodeSwitch, "switch_out")
		t.AddEdge(sw, out, c.Backplane, 0, 1)
	}
	for _, d := range devs {
		t.AddEdge(d, sw, c.Bandwidth, c.Latency, 1)
		t.AddEdge(out, d, c.Bandwidth, 0, 1)
	}
	return t, nil
}

// addRouters adds n devices, each with its own router behind a NIC link
// (an injection and an ejection edge of nic; zero bandwidth = unlimited),
// and returns the routers. It is the front of every direct network.
func addRouters(t *Topology, n int, nic LinkParams, name func(i int) string) []int {
	routers := make([]int, n)
	for i := range routers {
		d := t.AddNode(NodeDevice, "dev"+name(i))
		routers[i] = t.AddNode(NodeSwitch, "r"+name(i))
		t.Connect(d, routers[i], nic)
	}
	return routers
}

// Ring is devices on a bidirectional ring of routers (topology = "ring"):
// device i hangs off router i by a NIC link, and router i is linked to
// routers i-1 and i+1. Messages take the shorter way round (ties hashed).
type Ring struct {
	// Size is the number of devices (key "size"); 0 makes one per rank.
	Size int
	// Link is each ring link (keys "link_bandwidth", "link_latency").
	Link LinkParams
	// NIC is each device's attachment (keys "nic_bandwidth",
	// "nic_latency"); zero bandwidth is unlimited.
	NIC LinkParams
}

// Build implements TopologySpec.
func (r Ring) Build(world int) (*Topology, error) {
	n := r.Size
	if n == 0 {
		n = world
	}
	if err := errors.Join(r.Link.check("ring link", false), r.NIC.check("ring nic", true)); err != nil {
		return nil, err
	}
	if n < world || n < 1 {
		return nil, fmt.Errorf("ring of %d devices is too small for %d ranks", n, world)
	}
	t := NewTopology(fmt.Sprintf("ring(%d)", n))
	rt := addRouters(t, n, r.NIC, func(i int) string { return fmt.Sprint(i) })
	for i := range n {
		if j := (i + 1) % n; j != i && (n > 2 || i == 0) {
			t.Connect(rt[i], rt[j], r.Link)
		}
	}
	return t, nil
}

// Torus is a 2D or 3D torus of routers, one device each (topology =
// "torus"). Device i sits at coordinates (x0, x1, x2) with i = x0 + d0*(x1 +
// d1*x2): the first dimension varies fastest. Each router links to its two
// neighbours in each dimension, with wrap-around (a dimension of 2 has one
// link, of 1 none). Routes are minimal; the ways tied (directions,
// dimension orders) are chosen by the topology's Routing.
type Torus struct {
	// Dims are the sizes of the dimensions (key "dims", e.g. [4, 4, 2]).
	Dims []int
	// Link is each torus link (keys "link_bandwidth", "link_latency").
	Link LinkParams
	// NIC is each device's attachment (keys "nic_bandwidth",
	// "nic_latency"); zero bandwidth is unlimited.
	NIC LinkParams
}

// Build implements TopologySpec.
func (tr Torus) Build(world int) (*Topology, error) {
	if len(tr.Dims) < 1 || len(tr.Dims) > 3 {
		return nil, fmt.Errorf("torus needs 1 to 3 dimensions, got %d", len(tr.Dims))
	}
	n := 1
	for _, d := range tr.Dims {
		if d < 1 {
			return nil, fmt.Errorf("torus dimension %d is not positive", d)
		}
		n *= d
	}
	if err := errors.Join(tr.Link.check("torus link", false), tr.NIC.check("torus nic", true)); err != nil {
		return nil, err
	}
	if n < world {
		return nil, fmt.Errorf("torus %v has %d devices, too few for %d ranks", tr.Dims, n, world)
	}
	t := NewTopology(fmt.Sprintf("torus%v", tr.Dims))
	coords := func(i int) []int {
		c := make([]int, len(tr.Dims))
		for k, d := range tr.Dims {
			c[k], i = i%d, i/d
		}
		return c
	}
	index := func(c []int) int {
		i := 0
		for k := len(tr.Dims) - 1; k >= 0; k-- {
			i = i*tr.Dims[k] + c[k]
		}
		return i
	}
	rt := addRouters(t, n, tr.NIC, func(i int) string {
		c := coords(i)
		s := ""
		for k, x := range c {
			if k > 0 {
				s += "."
			}
			s += fmt.Sprint(x)
		}
		return s
	})
	for i := range n {
		c := coords(i)
		for k, d := range tr.Dims {
			if d == 1 || (d == 2 && c[k] == 1) {
				continue
			}
			nc := append([]int(nil), c...)
			nc[k] = (c[k] + 1) % d
			t.Connect(rt[i], rt[index(nc)], tr.Link)
		}
	}
	return t, nil
}

// FatTree is a folded-Clos network of switches of Radix ports (topology =
// "fat_tree"), with hosts (devices) at the leaves.
//
// With Tiers = 2 (leaf-spine): each leaf gives d of its ports to hosts and
// u to spines, with d/u = Oversubscription and d+u = Radix; there are Radix
// leaves and u spines, each leaf linked once to each spine: Radix*d hosts.
//
// With Tiers = 3 (k-ary fat tree, k = Radix): k pods; each pod has k/2
// edge switches and u aggregation switches; an edge switch gives d ports
// to hosts and u to the pod's aggregation switches (d/u =
// Oversubscription, d+u = k); each aggregation switch links to the k/2
// edge switches of its pod and to k/2 core switches, of which there are
// u*k/2, core c serving aggregation switch c div (k/2) of every pod: k*(k/2)*d
// hosts. Oversubscription 1 gives the classic non-blocking k^3/4 hosts.
//
// Host i is port i mod d of leaf (edge switch) i div d. Routes go up only
// as far as needed; the uplink is chosen by Routing: "dmodk" spreads a
// pod's traffic to any block of consecutive hosts evenly, "ecmp" hashes.
type FatTree struct {
	// Tiers is 2 or 3 (key "tiers"); 0 means 2.
	Tiers int
	// Radix is the number of ports of every switch (key "radix").
	Radix int
	// Oversubscription is the ratio of host ports to uplinks at the leaves
	// (key "oversubscription"); 0 means 1 (non-blocking).
	Oversubscription float64
	// Link is every switch-to-switch link (keys "link_bandwidth",
	// "link_latency").
	Link LinkParams
	// NIC is every host's link to its leaf (keys "nic_bandwidth",
	// "nic_latency"); left zero it is the same as Link, and a zero
	// bandwidth alone is Link's bandwidth.
	NIC LinkParams
	// Routing is "ecmp" or "dmodk" (key "routing").
	Routing Routing
}

// split returns the host and up ports of a leaf.
func (f FatTree) split() (down, up int, err error) {
	r := f.Oversubscription
	if r == 0 {
		r = 1
	}
	if !(r >= 1) || math.IsInf(r, 0) {
		return 0, 0, fmt.Errorf("fat tree oversubscription %g must be at least 1", r)
	}
	upf := float64(f.Radix) / (r + 1)
	up = int(math.Round(upf))
	down = f.Radix - up
	if up < 1 || math.Abs(float64(down)/float64(up)-r) > 1e-9 {
		return 0, 0, fmt.Errorf("fat tree radix %d cannot be split into host and up ports in the ratio %g:1", f.Radix, r)
	}
	return down, up, nil
}

// Hosts is the number of hosts the tree has, or 0 if its parameters are
// invalid.
func (f FatTree) Hosts() int {
	down, _, err := f.split()
	if err != nil {
		return 0
	}
	if f.Tiers == 3 {
		return f.Radix * (f.Radix / 2) * down
	}
	return f.Radix * down
}

// Build implements TopologySpec.
func (f FatTree) Build(world int) (*Topology, error) {
	tiers := f.Tiers
	if tiers == 0 {
		tiers = 2
	}
	if tiers != 2 && tiers != 3 {
		return nil, fmt.Errorf("fat tree tiers %d: want 2 or 3", f.Tiers)
	}
	if f.Radix < 2 || (tiers == 3 && f.Radix%2 != 0) {
		return nil, fmt.Errorf("fat tree radix %d: want at least 2 (and even for 3 tiers)", f.Radix)
	}
	nic := f.NIC
	if nic == (LinkParams{}) {
		nic = f.Link
	} else if nic.Bandwidth == 0 {
		nic.Bandwidth = f.Link.Bandwidth
	}
	if err := errors.Join(f.Link.check("fat tree link", false), nic.check("fat tree nic", false)); err != nil {
		return nil, err
	}
	down, up, err := f.split()
	if err != nil {
		return nil, err
	}
	f.Tiers = tiers
	hosts := f.Hosts()
	if hosts < world {
		return nil, fmt.Errorf("fat tree (%d tiers, radix %d, oversubscription %g) has %d hosts, too few for %d ranks", tiers, f.Radix, f.Oversubscription, hosts, world)
	}
	t := NewTopology(fmt.Sprintf("fat_tree(tiers=%d, radix=%d, %d:%d)", tiers, f.Radix, down, up))
	t.Routing = f.Routing
	leaves := hosts / down
	leaf := make([]int, leaves)
	for i := range hosts {
		if i%down == 0 {
			leaf[i/down] = t.AddNode(NodeSwitch, fmt.Sprintf("leaf%d", i/down))
		}
		d := t.AddNode(NodeDevice, fmt.Sprintf("host%d", i))
		t.Connect(d, leaf[i/down], nic)
	}
	if tiers == 2 {
		for s := range up {
			spine := t.AddNode(NodeSwitch, fmt.Sprintf("spine%d", s))
			for _, l := range leaf {
				t.Connect(l, spine, f.Link)
			}
		}
		return t, nil
	}
	half := f.Radix / 2
	pods := f.Radix
	agg := make([][]int, pods)
	for p := range pods {
		agg[p] = make([]int, up)
		for a := range up {
			agg[p][a] = t.AddNode(NodeSwitch, fmt.Sprintf("agg%d.%d", p, a))
			for e := range half {
				t.Connect(leaf[p*half+e], agg[p][a], f.Link)
			}
		}
	}
	for c := range up * half {
		core := t.AddNode(NodeSwitch, fmt.Sprintf("core%d", c))
		for p := range pods {
			t.Connect(agg[p][c/half], core, f.Link)
		}
	}
	return t, nil
}

// Dragonfly is groups of routers, all-to-all within a group by local
// links, with global links between groups (topology = "dragonfly"). Each
// router serves Hosts devices and has GlobalLinks global ports; a group's
// Routers*GlobalLinks global ports are dealt to the other Groups-1 groups
// in turn, m = floor(Routers*GlobalLinks / (Groups-1)) links to each
// (ports left over stay unused): the c-th link between groups i and j
// leaves group i from its global port o*m + c, o being j's offset (j-i-1)
// mod Groups, and port t is port t mod GlobalLinks of router t div
// GlobalLinks. Device i is host i mod Hosts of router i div Hosts, routers
// numbered group by group. Routing is minimal: global links have routing
// cost 2, local ones 1, so a route takes at most one global hop (local,
// global, local), never global, local, global.
type Dragonfly struct {
	// Groups is the number of groups (key "groups").
	Groups int
	// Routers is the number of routers per group (key "routers").
	Routers int
	// Hosts is the number of devices per router (key "hosts"); 0 means 1.
	Hosts int
	// GlobalLinks is the number of global ports per router (key
	// "global_links").
	GlobalLinks int
	// Local is each intra-group link (keys "local_bandwidth",
	// "local_latency").
	Local LinkParams
	// Global is each inter-group link (keys "global_bandwidth",
	// "global_latency").
	Global LinkParams
	// NIC is each device's attachment (keys "nic_bandwidth",
	// "nic_latency"); zero bandwidth is unlimited.
	NIC LinkParams
	// Routing is "ecmp" or "dmodk" (key "routing").
	Routing Routing
}

// Build implements TopologySpec.
func (df Dragonfly) Build(world int) (*Topology, error) {
	hosts := max(df.Hosts, 1)
	if df.Groups < 1 || df.Routers < 1 || df.Hosts < 0 || df.GlobalLinks < 0 {
		return nil, fmt.Errorf("dragonfly groups %d, routers %d, hosts %d, global links %d: want positive counts", df.Groups, df.Routers, df.Hosts, df.GlobalLinks)
	}
	ports := df.Routers * df.GlobalLinks
	if df.Groups > 1 && ports < df.Groups-1 {
		return nil, fmt.Errorf("dragonfly: a group has %d global ports, too few to reach the other %d groups", ports, df.Groups-1)
	}
	if err := errors.Join(df.Local.check("dragonfly local", false), df.Global.check("dragonfly global", false), df.NIC.check("dragonfly nic", true)); err != nil {
		return nil, err
	}
	n := df.Groups * df.Routers * hosts
	if n < world {
		return nil, fmt.Errorf("dragonfly has %d devices, too few for %d ranks", n, world)
	}
	t := NewTopology(fmt.Sprintf("dragonfly(g=%d, a=%d, p=%d, h=%d)", df.Groups, df.Routers, hosts, df.GlobalLinks))
	t.Routing = df.Routing
	router := make([]int, df.Groups*df.Routers)
	for i := range router {
		router[i] = t.AddNode(NodeSwitch, fmt.Sprintf("r%d.%d", i/df.Routers, i%df.Routers))
		for h := range hosts {
			d := t.AddNode(NodeDevice, fmt.Sprintf("dev%d", i*hosts+h))
			t.Connect(d, router[i], df.NIC)
		}
	}
	for g := range df.Groups {
		for a := range df.Routers {
			for b := a + 1; b < df.Routers; b++ {
				t.Connect(router[g*df.Routers+a], router[g*df.Routers+b], df.Local)
			}
		}
	}
	if df.Groups > 1 {
		m := ports / (df.Groups - 1)
		port := func(g, t int) int { return router[g*df.Routers+t/df.GlobalLinks] }
		for i := range df.Groups {
			for j := i + 1; j < df.Groups; j++ {
				oi := (j - i - 1 + df.Groups) % df.Groups
				oj := (i - j - 1 + df.Groups) % df.Groups
				for c := range m {
					a, b := port(i, oi*m+c), port(j, oj*m+c)
					t.AddEdge(a, b, df.Global.Bandwidth, df.Global.Latency, 2)
					t.AddEdge(b, a, df.Global.Bandwidth, df.Global.Latency, 2)
				}
			}
		}
	}
	return t, nil
}

// Hierarchical is nodes of several devices (topology = "hierarchical"):
// inside a node the devices share a switch (NVSwitch-like) by Intra links;
// between nodes they talk through NICs plugged into an inter-node topology.
//
// Device i is local device i mod DevicesPerNode of node i div
// DevicesPerNode (node-major). Each node has NICs network interfaces;
// local device l is attached to NIC l*NICs div DevicesPerNode of its node
// by a link of HostBandwidth (PCIe-class; zero is unlimited), so NICs =
// DevicesPerNode gives one NIC per device (rail style) and NICs = 1 one per
// node. The attachment has routing cost 2, so traffic between devices of
// one node always takes the intra-node switch. NIC j of node n is device
// n*NICs + j of the Inter topology, built for Nodes*NICs endpoints: its
// link into Inter (the Inter topology's NIC or port link) is the NIC's
// bandwidth; a switch of Inter that reduces in the network (SetReduce)
// still does. Devices never forward. The devices of node n are in domain
// n (see Node.Domain).
type Hierarchical struct {
	// Nodes is the number of nodes (key "nodes"); 0 makes as many as the
	// world needs.
	Nodes int
	// DevicesPerNode (key "devices_per_node").
	DevicesPerNode int
	// Intra is each device's link to its node's switch (keys
	// "intra_bandwidth", "intra_latency"); zero bandwidth is unlimited.
	Intra LinkParams
	// NICs is the number of NICs per node (key "nics_per_node"); 0 means
	// one per device.
	NICs int
	// HostBandwidth is the device <-> host (and NIC) bandwidth, PCIe-class
	// (key "host_bandwidth"); zero is unlimited.
	HostBandwidth float64
	// HostLatency is the latency of a device-NIC crossing (key
	// "host_latency").
	HostLatency Time
	// Inter is the topology between the NICs (key "inter" names it, e.g.
	// "crossbar", "fat_tree"; its keys are read with the prefix "inter_",
	// e.g. "inter_bandwidth", "inter_radix").
	Inter TopologySpec
}

// Build implements TopologySpec.
func (h Hierarchical) Build(world int) (*Topology, error) {
	if h.DevicesPerNode < 1 {
		return nil, fmt.Errorf("hierarchical devices per node %d must be positive", h.DevicesPerNode)
	}
	nodes := h.Nodes
	if nodes == 0 {
		nodes = (world + h.DevicesPerNode - 1) / h.DevicesPerNode
	}
	if nodes < 1 || nodes*h.DevicesPerNode < world {
		return nil, fmt.Errorf("hierarchical: %d nodes of %d devices are too few for %d ranks", nodes, h.DevicesPerNode, world)
	}
	nics := h.NICs
	if nics == 0 {
		nics = h.DevicesPerNode
	}
	if nics < 1 || nics > h.DevicesPerNode {
		return nil, fmt.Errorf("hierarchical: %d NICs per node for %d devices; want 1 to %d", h.NICs, h.DevicesPerNode, h.DevicesPerNode)
	}
	host := LinkParams{h.HostBandwidth, h.HostLatency}
	if err := errors.Join(h.Intra.check("intra-node", true), host.check("host", true)); err != nil {
		return nil, err
	}
	if h.Inter == nil {
		return nil, errors.New("hierarchical: no inter-node topology")
	}
	inter, err := h.Inter.Build(nodes * nics)
	if err != nil {
		return nil, fmt.Errorf("hierarchical inter-node topology: %w", err)
	}
	t := NewTopology(fmt.Sprintf("hierarchical(%dx%d, %d NICs/node, inter %s)", nodes, h.DevicesPerNode, nics, inter.Name))
	t.Routing = inter.Routing
	t.HostBandwidth = h.HostBandwidth
	nic := make([]int, nodes*nics)
	for n := range nodes {
		sw := t.AddNode(NodeSwitch, fmt.Sprintf("nvs%d", n))
		for j := range nics {
			nic[n*nics+j] = t.AddNode(NodeNIC, fmt.Sprintf("nic%d.%d", n, j))
		}
		for l := range h.DevicesPerNode {
			d := t.AddNode(NodeDevice, fmt.Sprintf("gpu%d.%d", n, l))
			t.SetDomain(t.NumDevices()-1, n)
			t.Connect(d, sw, h.Intra)
			ni := nic[n*nics+l*nics/h.DevicesPerNode]
			t.AddEdge(d, ni, host.bw(), h.HostLatency, 2)
			t.AddEdge(ni, d, host.bw(), h.HostLatency, 2)
		}
	}
	embed(t, inter, nic, nil)
	return t, nil
}

// embed copies the graph of inter into t: its devices become the nodes
// nic (device k of inter is nic[k]); its other nodes, and devices beyond
// len(nic), are added with the prefix "inter." (spare devices as
// switches), keeping what they reduce (SetReduce). Edges keep their
// parameters, except that port, if not nil, replaces those of every edge
// that touches one of the nic nodes. It returns the index in t of each
// node of inter.
func embed(t *Topology, inter *Topology, nic []int, port *LinkParams) []int {
	ids := make([]int, len(inter.nodes))
	for i := range ids {
		ids[i] = -1
	}
	isNIC := make([]bool, len(inter.nodes))
	for k, d := range inter.devices {
		if k < len(nic) {
			ids[d] = nic[k]
			isNIC[d] = true
		}
	}
	for i, nd := range inter.nodes {
		if ids[i] < 0 {
			kind := nd.Kind
			if kind == NodeDevice { // a spare endpoint of the inter topology
				kind = NodeSwitch
			}
			ids[i] = t.AddNode(kind, "inter."+nd.Name)
			if nd.Reduce > 0 {
				t.nodes[ids[i]].Reduce = nd.Reduce
			}
		}
	}
	for _, e := range inter.edges {
		bw, lat := e.Bandwidth, e.Latency
		if port != nil && (isNIC[e.From] || isNIC[e.To]) {
			bw, lat = port.bw(), port.Latency
		}
		t.AddEdge(ids[e.From], ids[e.To], bw, lat, e.Cost)
	}
	return ids
}
