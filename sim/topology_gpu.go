package sim

import (
	"errors"
	"fmt"
	"math"
)

// GPUCluster is a cluster of GPU hosts (topology = "gpu_cluster"): hosts
// of GPUsPerNode GPUs, whose GPUs share an NVLink domain, each GPU with a
// PCIe path to a NIC, and the NICs of all hosts joined by a Fabric (a
// rail-optimised fat tree, RailFatTree, or any other topology).
//
// Device i is GPU i mod GPUsPerNode of host i div GPUsPerNode
// (host-major), named "gpu<host>.<gpu>". The graph:
//
//   - NVLink domain. DomainGPUs consecutive GPUs (DomainGPUs/GPUsPerNode
//     whole hosts; the last domain may have fewer) share one logical
//     NVSwitch, "nvs<domain>", each GPU linked to it by NVLink, each way:
//     the per-GPU NVLink bandwidth, and a latency charged on the way in
//     and again on the way out, so that a GPU-to-GPU hop costs twice
//     NVLink's latency. The NVSwitches of a domain and their trays are one
//     non-blocking switch here, as NVIDIA's NVLink Switch System presents
//     them; GB200 NVL72 is 18 hosts of 4 GPUs in one domain of 72. The
//     devices of domain d have Domain d (see Node.Domain). With NVLS > 0
//     the NVSwitch reduces in the network (NVLink SHARP) at that rate
//     (Node.Reduce); its latency is that of the NVLink edges into and out
//     of it, nothing more.
//   - PCIe. Host h has NICs network interfaces, "nic<host>.<nic>"; GPU l
//     reaches NIC l*NICs div GPUsPerNode of its host (NICs shared when
//     there are fewer NICs than GPUs) by a PCIe link of PCIe's bandwidth
//     and latency each way, with routing cost 2, so that a message
//     between two GPUs of one domain always takes NVLink, never PCIe
//     through a shared NIC.
//   - Fabric. NIC j of host h is device h*NICs + j of Fabric, built for
//     Nodes*NICs endpoints; the fabric's other nodes are added with the
//     prefix "inter.". A message between domains leaves its GPU by that
//     GPU's own NIC, its rail, and reaches its destination by the
//     destination's. If NIC's bandwidth is not zero, every edge between a
//     NIC and the fabric, each way, has NIC's bandwidth and latency in
//     place of the fabric's own. With SHARP > 0 every switch of the fabric
//     reduces in the network (InfiniBand SHARP) at that rate; its latency
//     is that of the edges into and out of it.
//
// GPUs never forward: a message between hosts of different domains leaves
// by the sender's NIC even when another GPU of its host sits on the
// destination's rail (NCCL's PXN, which forwards over NVLink first, is an
// algorithm's choice, not the network's).
type GPUCluster struct {
	// Nodes is the number of hosts (key "nodes"); 0 makes as many as the
	// world needs. A world may use fewer GPUs than the cluster has.
	Nodes int
	// GPUsPerNode is the number of GPUs of a host (key "gpus_per_node").
	GPUsPerNode int
	// DomainGPUs is the number of GPUs of an NVLink domain (key
	// "nvlink_domain"), a multiple of GPUsPerNode; 0 is one host's.
	DomainGPUs int
	// NVLink is each GPU's link into its domain's NVSwitch, the same each
	// way (keys "nvlink_bandwidth", "nvlink_latency"): the GPU's NVLink
	// bandwidth in one direction, and half the latency of a GPU-to-GPU
	// hop.
	NVLink LinkParams
	// NVLS is the rate at which the domain's NVSwitch reduces, in bytes
	// of one operand per second (key "nvls_bandwidth"); 0 means the
	// switch does not reduce, +Inf that it reduces for free.
	NVLS float64
	// PCIe is each GPU's path to its NIC, each way (keys
	// "pcie_bandwidth", "pcie_latency"); zero bandwidth is unlimited.
	PCIe LinkParams
	// NICs is the number of NICs of a host, its rails (key
	// "nics_per_node"), at most GPUsPerNode; 0 means one per GPU.
	NICs int
	// NIC is each NIC's port into the fabric, each way (keys
	// "nic_bandwidth", "nic_latency"); a zero bandwidth keeps the
	// fabric's own endpoint links.
	NIC LinkParams
	// Fabric is the network between the NICs (key "inter": "rail" for a
	// RailFatTree, the default, or another topology read from keys
	// prefixed "inter_").
	Fabric TopologySpec
	// SHARP is the rate at which the fabric's switches reduce, in bytes
	// of one operand per second (key "sharp_bandwidth"); 0 means they do
	// not.
	SHARP float64
}

// Build implements TopologySpec.
func (c GPUCluster) Build(world int) (*Topology, error) {
	g := c.GPUsPerNode
	if g < 1 {
		return nil, fmt.Errorf("gpu cluster: %d GPUs per node; want at least 1", g)
	}
	dom := c.DomainGPUs
	if dom == 0 {
		dom = g
	}
	if dom < g || dom%g != 0 {
		return nil, fmt.Errorf("gpu cluster: an NVLink domain of %d GPUs is not a whole number of hosts of %d GPUs", dom, g)
	}
	nodes := c.Nodes
	if nodes == 0 {
		nodes = (world + g - 1) / g
	}
	if nodes < 1 || nodes*g < world {
		return nil, fmt.Errorf("gpu cluster: %d nodes of %d GPUs are too few for %d ranks", nodes, g, world)
	}
	nics := c.NICs
	if nics == 0 {
		nics = g
	}
	if nics < 1 || nics > g {
		return nil, fmt.Errorf("gpu cluster: %d NICs per node for %d GPUs; want 1 to %d", c.NICs, g, g)
	}
	err := errors.Join(c.NVLink.check("gpu cluster nvlink", false), c.PCIe.check("gpu cluster pcie", true),
		c.NIC.check("gpu cluster nic", true), checkReduce("gpu cluster nvls", c.NVLS), checkReduce("gpu cluster sharp", c.SHARP))
	if err != nil {
		return nil, err
	}
	if c.Fabric == nil {
		return nil, errors.New("gpu cluster: no fabric between the nodes")
	}
	fabric, err := c.Fabric.Build(nodes * nics)
	if err != nil {
		return nil, fmt.Errorf("gpu cluster fabric: %w", err)
	}
	perDomain := dom / g // hosts
	t := NewTopology(fmt.Sprintf("gpu_cluster(%dx%d, NVLink domain %d, %d NICs/node, fabric %s)", nodes, g, dom, nics, fabric.Name))
	t.Routing = fabric.Routing
	t.HostBandwidth = c.PCIe.Bandwidth
	nic := make([]int, nodes*nics)
	var nvs int
	for h := range nodes {
		d := h / perDomain
		if h%perDomain == 0 {
			nvs = t.AddNode(NodeSwitch, fmt.Sprintf("nvs%d", d))
			t.SetReduce(nvs, c.NVLS)
		}
		for j := range nics {
			nic[h*nics+j] = t.AddNode(NodeNIC, fmt.Sprintf("nic%d.%d", h, j))
		}
		for l := range g {
			gpu := t.AddNode(NodeDevice, fmt.Sprintf("gpu%d.%d", h, l))
			t.SetDomain(t.NumDevices()-1, d)
			t.Connect(gpu, nvs, c.NVLink)
			n := nic[h*nics+l*nics/g]
			t.AddEdge(gpu, n, c.PCIe.bw(), c.PCIe.Latency, 2)
			t.AddEdge(n, gpu, c.PCIe.bw(), c.PCIe.Latency, 2)
		}
	}
	var port *LinkParams
	if c.NIC.Bandwidth != 0 {
		port = &c.NIC
	}
	ids := embed(t, fabric, nic, port)
	if c.SHARP > 0 {
		for i, nd := range fabric.nodes {
			if nd.Kind == NodeSwitch {
				t.SetReduce(ids[i], c.SHARP)
			}
		}
	}
	return t, nil
}

// checkReduce checks the reduction rate of a switch: 0 (none), positive,
// or +Inf.
func checkReduce(what string, bw float64) error {
	if math.IsNaN(bw) || bw < 0 {
		return fmt.Errorf("%s bandwidth %g B/s must be 0 (none) or positive", what, bw)
	}
	return nil
}

// RailFatTree is a rail-optimised two-tier fat tree (the fabric of
// GPUCluster's inter = "rail"): endpoint h*Rails + j is NIC j, rail j,
// of host h, and each rail has its own leaf switches, "rail<j>.leaf<k>",
// so that NIC j of every host reaches NIC j of every other host through
// one leaf when the hosts share it. Each leaf gives d of its Radix ports
// to hosts and u to spines, d/u = Oversubscription, d+u = Radix; host h
// is on leaf h div d of each rail. The leaves of all rails are joined by
// u spines, "spine<s>", each linked once to every leaf, so traffic that
// changes rail, or leaf, goes leaf, spine, leaf. Spines are as wide as
// the leaves need (their radix is not checked). Radix 0 gives each rail
// one leaf for all hosts, with d = hosts and u = ceil(d/Oversubscription)
// uplinks. The uplink is chosen by Routing.
type RailFatTree struct {
	// Rails is the number of NICs of a host (GPUCluster sets it to its
	// nics_per_node).
	Rails int
	// Radix is the number of ports of a leaf (key "inter_radix"); 0 gives
	// each rail one leaf.
	Radix int
	// Oversubscription is host ports per uplink at the leaves (key
	// "inter_oversubscription"); 0 means 1, non-blocking.
	Oversubscription float64
	// NIC is each NIC's link to its leaf, each way (GPUCluster's keys
	// "nic_bandwidth", "nic_latency").
	NIC LinkParams
	// Link is each leaf-spine link, each way (keys "inter_link_bandwidth",
	// "inter_link_latency"); zero bandwidth is NIC's.
	Link LinkParams
	// Routing is "ecmp" or "dmodk" (key "inter_routing").
	Routing Routing
}

// shape returns the hosts of a leaf and its uplinks for hosts hosts.
func (r RailFatTree) shape(hosts int) (down, up int, err error) {
	over := r.Oversubscription
	if over == 0 {
		over = 1
	}
	if !(over >= 1) || math.IsInf(over, 0) {
		return 0, 0, fmt.Errorf("rail fat tree oversubscription %g must be at least 1", over)
	}
	if r.Radix == 0 {
		return hosts, int(math.Ceil(float64(hosts) / over)), nil
	}
	down, up, err = FatTree{Radix: r.Radix, Oversubscription: over}.split()
	if err != nil {
		return 0, 0, fmt.Errorf("rail %w", err)
	}
	return down, up, nil
}

// Build implements TopologySpec: world endpoints, ceil(world/Rails) hosts.
func (r RailFatTree) Build(world int) (*Topology, error) {
	if r.Rails < 1 {
		return nil, fmt.Errorf("rail fat tree of %d rails; want at least 1", r.Rails)
	}
	if r.Radix < 0 || r.Radix == 1 {
		return nil, fmt.Errorf("rail fat tree radix %d: want 0 (one leaf per rail) or at least 2", r.Radix)
	}
	link := r.Link
	if link.Bandwidth == 0 {
		link.Bandwidth = r.NIC.Bandwidth
	}
	if err := errors.Join(r.NIC.check("rail fat tree nic", false), link.check("rail fat tree link", false)); err != nil {
		return nil, err
	}
	hosts := max((world+r.Rails-1)/r.Rails, 1)
	down, up, err := r.shape(hosts)
	if err != nil {
		return nil, err
	}
	perRail := (hosts + down - 1) / down
	t := NewTopology(fmt.Sprintf("rail_fat_tree(%d rails x %d leaves, %d:%d)", r.Rails, perRail, down, up))
	t.Routing = r.Routing
	leaf := make([]int, r.Rails*perRail) // leaf k of rail j is leaf[j*perRail+k]
	for j := range r.Rails {
		for k := range perRail {
			leaf[j*perRail+k] = t.AddNode(NodeSwitch, fmt.Sprintf("rail%d.leaf%d", j, k))
		}
	}
	for h := range hosts {
		for j := range r.Rails {
			d := t.AddNode(NodeDevice, fmt.Sprintf("host%d.nic%d", h, j))
			t.Connect(d, leaf[j*perRail+h/down], r.NIC)
		}
	}
	if len(leaf) > 1 {
		for s := range up {
			spine := t.AddNode(NodeSwitch, fmt.Sprintf("spine%d", s))
			for _, l := range leaf {
				t.Connect(l, spine, link)
			}
		}
	}
	return t, nil
}
