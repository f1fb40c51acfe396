package scenario

import (
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/sim"
)

// TopologyInfo describes a topology that the flow model's topology key
// may name, for listings and help.
type TopologyInfo struct {
	Name    string
	Summary string
	// Keys are the keys it reads from [network].
	Keys []KeyInfo
}

// topologySpec is a built-in topology of package sim: its keys and how to
// read them. Keys are read with a prefix ("" in [network], "inter_" for
// the inter-node topology of a hierarchical one). build returns nil if a
// key was bad (reporting it), and the bandwidth of a device's link into
// the network (0 if unlimited or not one figure).
type topologySpec struct {
	TopologyInfo
	build func(t *table, prefix string) (sim.TopologySpec, float64)
}

// Keys of links, read as "<name>_bandwidth" and "<name>_latency".
func linkKeys(name, what string, required bool, zero string) []KeyInfo {
	return []KeyInfo{
		{name + "_bandwidth", required, "bandwidth of " + what + `: "400Gbit/s"` + zero},
		{name + "_latency", false, "latency of " + what + `, per crossing: "500ns" (default 0)`},
	}
}

var topologies []topologySpec

func init() {
	nic := linkKeys("nic", "each device's link to its router or switch", false, "; left out: unlimited")
	topologies = []topologySpec{
		{
			TopologyInfo: TopologyInfo{"crossbar", "every device on one switch, non-blocking unless given a backplane; with the flow model's default slots, alpha-beta's network",
				[]KeyInfo{
					{"bandwidth", true, `per-port bandwidth: "12.5GB/s"`},
					{"latency", true, `port-to-port latency of a message: "5us"`},
					{"ports", false, "number of devices (default one per rank)"},
					{"backplane_bandwidth", false, `capacity that all messages share: "2GB/s" (default: none, non-blocking); ranks of one machine over loopback share its cores and memory this way`},
				}},
			build: buildCrossbar,
		},
		{
			TopologyInfo: TopologyInfo{"ring", "devices on a bidirectional ring of routers; messages take the shorter way round",
				append(append([]KeyInfo{{"size", false, "number of devices (default one per rank)"}},
					linkKeys("link", "each ring link", true, "")...), nic...)},
			build: buildRing,
		},
		{
			TopologyInfo: TopologyInfo{"torus", "a 2D or 3D torus of routers, one device each, minimal routes",
				append(append([]KeyInfo{{"dims", true, "the sizes of the dimensions, the first varying fastest: [4, 4] or [4, 4, 2]"}},
					linkKeys("link", "each torus link", true, "")...), nic...)},
			build: buildTorus,
		},
		{
			TopologyInfo: TopologyInfo{"fat_tree", "a folded-Clos network of switches, 2 tiers (leaf-spine) or 3 (k-ary fat tree), hosts at the leaves",
				append(append([]KeyInfo{
					{"radix", true, "ports per switch: 16"},
					{"tiers", false, "2 (leaf-spine, default) or 3"},
					{"oversubscription", false, "host ports per uplink at the leaves: 1 (default, non-blocking), 3 for 3:1"},
					{"routing", false, `"ecmp" (hash, default) or "dmodk" (destination mod k)`},
				}, linkKeys("link", "each switch-to-switch link", true, "")...),
					linkKeys("nic", "each host's link to its leaf", false, "; left out: as link_bandwidth")...)},
			build: buildFatTree,
		},
		{
			TopologyInfo: TopologyInfo{"dragonfly", "groups of routers, all-to-all inside a group, global links between groups, minimal routes",
				append(append(append([]KeyInfo{
					{"groups", true, "number of groups: 9"},
					{"routers", true, "routers per group: 4"},
					{"hosts", false, "devices per router (default 1)"},
					{"global_links", true, "global ports per router: 2"},
					{"routing", false, `"ecmp" (default) or "dmodk"`},
				}, linkKeys("local", "each intra-group link", true, "")...),
					linkKeys("global", "each inter-group link", true, "")...), nic...)},
			build: buildDragonfly,
		},
	}
	// hierarchical comes last: its inter-node topology is one of the above.
	var interNames []string
	for _, s := range topologies {
		interNames = append(interNames, s.Name)
	}
	topologies = append(topologies, topologySpec{
		TopologyInfo: TopologyInfo{"hierarchical", "nodes of several devices on an intra-node switch (NVLink/NVSwitch-like), NICs into an inter-node topology",
			hierarchicalKeys(interNames)},
		build: buildHierarchical,
	})
	// gpu_cluster last of all: its fabric is one of the flat topologies or
	// a rail-optimised fat tree.
	topologies = append(topologies, topologySpec{
		TopologyInfo: TopologyInfo{"gpu_cluster", "hosts of GPUs in NVLink domains (one logical NVSwitch a domain, which may span hosts), " +
			"a PCIe path from each GPU to its NIC, the NICs on a rail-optimised fat tree or another inter-node topology; a preset names a machine",
			gpuClusterKeys(interNames)},
		build: buildGPUCluster,
	})
}

// buildCrossbar reads topology = "crossbar"; a device's link into it is
// its port.
func buildCrossbar(t *table, p string) (sim.TopologySpec, float64) {
	bw, ok1 := t.bandwidth(p+"bandwidth", true, 0)
	lat, ok2 := t.duration(p+"latency", true)
	ports, ok3 := t.integer(p+"ports", 0, 0, MaxWorld)
	backplane, ok4 := t.bandwidth(p+"backplane_bandwidth", false, 0)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, 0
	}
	return sim.Crossbar{Ports: int(ports), Bandwidth: bw, Latency: lat, Backplane: backplane}, bw
}

// buildRing reads topology = "ring"; a device's link into it is its NIC,
// or if unlimited its router's two ring links.
func buildRing(t *table, p string) (sim.TopologySpec, float64) {
	size, ok1 := t.integer(p+"size", 0, 0, MaxWorld)
	link, ok2 := t.link(p+"link", true)
	n, ok3 := t.link(p+"nic", false)
	if !ok1 || !ok2 || !ok3 {
		return nil, 0
	}
	return sim.Ring{Size: int(size), Link: link, NIC: n}, firstPositive(n.Bandwidth, 2*link.Bandwidth)
}

// buildTorus reads topology = "torus", of 2 or 3 dimensions; a device's
// link into it is its NIC, or if unlimited its router's links.
func buildTorus(t *table, p string) (sim.TopologySpec, float64) {
	dims, ok1 := t.list(p+"dims", "dimension sizes such as [4, 4, 2]", dimElem)
	link, ok2 := t.link(p+"link", true)
	n, ok3 := t.link(p+"nic", false)
	if !ok1 || !ok2 || !ok3 {
		return nil, 0
	}
	if len(dims) < 2 || len(dims) > 3 {
		t.errorf(joinPath(t.path, p+"dims"), "a torus has 2 or 3 dimensions, not %d", len(dims))
		return nil, 0
	}
	d := make([]int, len(dims))
	for i, x := range dims {
		d[i] = int(x)
	}
	return sim.Torus{Dims: d, Link: link, NIC: n}, firstPositive(n.Bandwidth, 2*float64(len(d))*link.Bandwidth)
}

// buildFatTree reads topology = "fat_tree", reporting a shape of no
// hosts on the radix key; a device's link into it is its NIC, or if
// unlimited a switch link.
func buildFatTree(t *table, p string) (sim.TopologySpec, float64) {
	radix, ok1 := t.integer(p+"radix", 0, 2, 1<<16)
	if _, ok := t.m[p+"radix"]; !ok {
		t.missing(p+"radix", "the ports per switch: radix = 16")
		ok1 = false
	}
	tiers, ok2 := t.integer(p+"tiers", 2, 2, 3)
	over, ok3 := t.float(p+"oversubscription", 1, 1, 1024)
	routing, ok4 := t.routing(p + "routing")
	link, ok5 := t.link(p+"link", true)
	n, ok6 := t.link(p+"nic", false)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return nil, 0
	}
	ft := sim.FatTree{Tiers: int(tiers), Radix: int(radix), Oversubscription: over, Link: link, NIC: n, Routing: routing}
	if ft.Hosts() == 0 {
		t.errorf(joinPath(t.path, p+"radix"), "a %d-tier fat tree of radix %d with oversubscription %g has no valid shape", tiers, radix, over)
		return nil, 0
	}
	return ft, firstPositive(n.Bandwidth, link.Bandwidth)
}

// buildDragonfly reads topology = "dragonfly"; a device's link into it is
// its NIC.
func buildDragonfly(t *table, p string) (sim.TopologySpec, float64) {
	groups, ok1 := t.requiredInt(p+"groups", 2, 1<<16, "the number of groups: groups = 9")
	routers, ok2 := t.requiredInt(p+"routers", 1, 1<<16, "routers per group: routers = 4")
	hosts, ok3 := t.integer(p+"hosts", 1, 1, 1<<16)
	gl, ok4 := t.requiredInt(p+"global_links", 1, 1<<16, "global ports per router: global_links = 2")
	routing, ok5 := t.routing(p + "routing")
	local, ok6 := t.link(p+"local", true)
	global, ok7 := t.link(p+"global", true)
	n, ok8 := t.link(p+"nic", false)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || !ok8 {
		return nil, 0
	}
	return sim.Dragonfly{Groups: int(groups), Routers: int(routers), Hosts: int(hosts), GlobalLinks: int(gl),
		Local: local, Global: global, NIC: n, Routing: routing}, n.Bandwidth
}

// hierarchicalKeys are the keys of topology = "hierarchical", whose
// inter-node topology is one of interNames.
func hierarchicalKeys(interNames []string) []KeyInfo {
	return append([]KeyInfo{
		{"devices_per_node", true, "devices per node: 8"},
		{"nodes", false, "number of nodes (default as many as the world needs)"},
		{"nics_per_node", false, "NICs per node (default one per device)"},
		{"host_bandwidth", false, `device <-> NIC bandwidth, PCIe-class: "64GB/s" (default unlimited)`},
		{"host_latency", false, `device <-> NIC latency: "1us" (default 0)`},
		{"inter", true, "the topology between the NICs: " + strings.Join(interNames, ", ") + `; its keys take the prefix "inter_": inter_bandwidth, inter_radix, ...`},
	}, linkKeys("intra", "each device's link to its node's switch", false, "; left out: unlimited")...)
}

// gpuClusterKeys are the keys of topology = "gpu_cluster".
func gpuClusterKeys(interNames []string) []KeyInfo {
	keys := []KeyInfo{
		{"gpus_per_node", true, "GPUs of a host: 8"},
		{"nodes", false, "number of hosts (default as many as the world needs); a world may use fewer GPUs than nodes x gpus_per_node"},
		{"nvlink_domain", false, "GPUs of an NVLink domain, a whole number of hosts (default one host's): 72 for GB200 NVL72"},
		{"nvlink_bandwidth", true, `each GPU's NVLink bandwidth into its domain's NVSwitch, one way: "450GB/s" (H100: 900 GB/s both ways)`},
		{"nvlink_latency", false, `latency of a GPU's link into the NVSwitch, charged going in and again coming out, so a GPU-to-GPU hop costs twice it: "300ns" (default 0)`},
		{"nvls_bandwidth", false, `NVLink SHARP: the rate at which a domain's NVSwitch reduces, bytes of one operand per second; its latency is that of the NVLink edges in and out: "450GB/s" (default: the switch does not reduce)`},
		{"pcie_bandwidth", false, `each GPU's PCIe path to its NIC, one way: "64GB/s" (default unlimited)`},
		{"pcie_latency", false, `latency of that path, per crossing: "500ns" (default 0)`},
		{"nics_per_node", false, "NICs (rails) of a host, 1 to gpus_per_node, shared by consecutive GPUs when fewer (default one per GPU)"},
		{"nic_bandwidth", false, `each NIC's port into the fabric, one way: "400Gbit/s" (required with inter = "rail"; with another inter, left out: that topology's own endpoint links)`},
		{"nic_latency", false, `latency of a NIC's port, per crossing (a NIC and its cable and switch port): "850ns" (default 0)`},
		{"inter", false, `the fabric between the NICs: "rail" (default: NIC j of every host on rail j's leaves, leaves joined by spines) or ` + strings.Join(interNames, ", ") + ` read from keys prefixed "inter_"`},
		{"inter_radix", false, `with inter = "rail": ports of a leaf switch, split into hosts and uplinks by inter_oversubscription: 64 (default 0: one leaf a rail for all hosts)`},
		{"inter_oversubscription", false, `with inter = "rail": host ports per uplink at the leaves: 1 (default, non-blocking)`},
		{"inter_link_bandwidth", false, `with inter = "rail": each leaf-spine link, one way (default nic_bandwidth)`},
		{"inter_link_latency", false, `with inter = "rail": latency of a leaf-spine link, per crossing: "200ns" (default 0)`},
		{"inter_routing", false, `with inter = "rail": "ecmp" (default) or "dmodk"`},
		{"sharp_bandwidth", false, `InfiniBand SHARP: the rate at which every switch of the fabric reduces, bytes of one operand per second; its latency is that of the edges in and out: "50GB/s" (default: the switches do not reduce)`},
	}
	return keys
}

// buildGPUCluster reads topology = "gpu_cluster".
func buildGPUCluster(t *table, p string) (sim.TopologySpec, float64) {
	g, ok1 := t.requiredInt(p+"gpus_per_node", 1, 1<<16, "GPUs per host: gpus_per_node = 8")
	nodes, ok2 := t.integer(p+"nodes", 0, 0, MaxWorld)
	dom, ok3 := t.integer(p+"nvlink_domain", 0, 0, MaxWorld)
	nvlink, ok4 := t.link(p+"nvlink", true)
	nvls, ok5 := t.bandwidth(p+"nvls_bandwidth", false, 0)
	pcie, ok6 := t.link(p+"pcie", false)
	nics, ok7 := t.integer(p+"nics_per_node", 0, 0, 1<<16)
	interName, ok8 := t.str(p+"inter", false, "rail", `the fabric between the NICs: "rail"`)
	sharp, ok9 := t.bandwidth(p+"sharp_bandwidth", false, 0)
	good := ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9
	var nic sim.LinkParams
	var fabric sim.TopologySpec
	if ok8 && interName == "rail" {
		var ok bool
		nic, ok = t.link(p+"nic", true)
		radix, okR := t.integer(p+"inter_radix", 0, 0, 1<<16)
		over, okO := t.float(p+"inter_oversubscription", 1, 1, 1024)
		link, okL := t.link(p+"inter_link", false)
		routing, okT := t.routing(p + "inter_routing")
		if ok && okR && okO && okL && okT {
			rails := int(nics)
			if rails == 0 {
				rails = int(g)
			}
			fabric = sim.RailFatTree{Rails: rails, Radix: int(radix), Oversubscription: over, NIC: nic, Link: link, Routing: routing}
			if radix > 0 && (sim.FatTree{Radix: int(radix), Oversubscription: over}).Hosts() == 0 {
				t.errorf(joinPath(t.path, p+"inter_radix"), "a leaf of radix %d cannot be split into host ports and uplinks in the ratio %g:1 (want 0, one leaf a rail, or a radix that splits)", radix, over)
				good = false
			}
		} else {
			good = false
		}
	} else if ok8 {
		var ok bool
		nic, ok = t.link(p+"nic", false)
		good = good && ok
		is := lookupTopology(interName)
		if is == nil || is.Name == "hierarchical" || is.Name == "gpu_cluster" {
			names := []string{"rail"}
			for _, s := range topologies {
				if s.Name != "hierarchical" && s.Name != "gpu_cluster" {
					names = append(names, s.Name)
				}
			}
			t.errorf(joinPath(t.path, p+"inter"), "unknown inter-node topology %q (want one of %s)", interName, strings.Join(names, ", "))
			return nil, 0
		}
		if fabric, _ = is.build(t, p+"inter_"); fabric == nil {
			return nil, 0
		}
	}
	if ok1 && ok7 && nics > g {
		t.errorf(joinPath(t.path, p+"nics_per_node"), "%d NICs per node for %d GPUs per node (want 1 to %d)", nics, g, g)
		good = false
	}
	if ok1 && ok3 && dom != 0 && (dom < g || dom%g != 0) {
		t.errorf(joinPath(t.path, p+"nvlink_domain"), "an NVLink domain of %d GPUs is not a whole number of hosts of %d GPUs", dom, g)
		good = false
	}
	if !good {
		return nil, 0
	}
	// No single link bounds busbw, as on a hierarchical network.
	return sim.GPUCluster{Nodes: int(nodes), GPUsPerNode: int(g), DomainGPUs: int(dom), NVLink: nvlink, NVLS: nvls,
		PCIe: pcie, NICs: int(nics), NIC: nic, Fabric: fabric, SHARP: sharp}, 0
}

func buildHierarchical(t *table, p string) (sim.TopologySpec, float64) {
	dpn, ok1 := t.requiredInt(p+"devices_per_node", 1, 1<<16, "devices per node: devices_per_node = 8")
	nodes, ok2 := t.integer(p+"nodes", 0, 0, MaxWorld)
	nics, ok3 := t.integer(p+"nics_per_node", 0, 0, 1<<16)
	hbw, ok4 := t.bandwidth(p+"host_bandwidth", false, 0)
	hlat, ok5 := t.duration(p+"host_latency", false)
	intra, ok6 := t.link(p+"intra", false)
	interName, ok7 := t.str(p+"inter", true, "", "the inter-node topology: \"fat_tree\"")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 {
		return nil, 0
	}
	is := lookupTopology(interName)
	if is == nil || is.Name == "hierarchical" {
		var names []string
		for _, s := range topologies[:len(topologies)-1] {
			names = append(names, s.Name)
		}
		t.errorf(joinPath(t.path, p+"inter"), "unknown inter-node topology %q (want one of %s)", interName, strings.Join(names, ", "))
		return nil, 0
	}
	inter, _ := is.build(t, p+"inter_")
	if inter == nil {
		return nil, 0
	}
	if nics > dpn {
		t.errorf(joinPath(t.path, p+"nics_per_node"), "%d NICs per node for %d devices per node (want 1 to %d)", nics, dpn, dpn)
		return nil, 0
	}
	// No single link bounds busbw: flat algorithms are held to a device's
	// share of its node's NICs between nodes, while two-level ones count
	// the intra-node traffic too and go far above it.
	return sim.Hierarchical{Nodes: int(nodes), DevicesPerNode: int(dpn), Intra: intra, NICs: int(nics),
		HostBandwidth: hbw, HostLatency: hlat, Inter: inter}, 0
}

// firstPositive returns a if it is above 0, else b.
func firstPositive(a, b float64) float64 {
	if a > 0 {
		return a
	}
	return b
}

// Topologies lists the topologies the flow model's topology key may name.
func Topologies() []TopologyInfo {
	out := make([]TopologyInfo, len(topologies))
	for i, s := range topologies {
		out[i] = s.TopologyInfo
	}
	return out
}

func topologyNames() []string {
	names := make([]string, len(topologies))
	for i, s := range topologies {
		names[i] = s.Name
	}
	return names
}

func lookupTopology(name string) *topologySpec {
	for i := range topologies {
		if topologies[i].Name == name {
			return &topologies[i]
		}
	}
	return nil
}

// dimElem reads one dimension of a torus.
func dimElem(_ string, v any) ([]int64, error) {
	n, ok := v.(int64)
	if !ok {
		return nil, fmt.Errorf("want a whole number, got %s", typeName(v))
	}
	if n < 1 || n > 1<<16 {
		return nil, fmt.Errorf("dimension %d is out of range (want 1 to %d)", n, 1<<16)
	}
	return []int64{n}, nil
}
