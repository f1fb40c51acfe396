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
			build: func(t *table, p string) (sim.TopologySpec, float64) {
				bw, ok1 := t.bandwidth(p+"bandwidth", true, 0)
				lat, ok2 := t.duration(p+"latency", true)
				ports, ok3 := t.integer(p+"ports", 0, 0, MaxWorld)
				backplane, ok4 := t.bandwidth(p+"backplane_bandwidth", false, 0)
				if !ok1 || !ok2 || !ok3 || !ok4 {
					return nil, 0
				}
				return sim.Crossbar{Ports: int(ports), Bandwidth: bw, Latency: lat, Backplane: backplane}, bw
			},
		},
		{
			TopologyInfo: TopologyInfo{"ring", "devices on a bidirectional ring of routers; messages take the shorter way round",
				append(append([]KeyInfo{{"size", false, "number of devices (default one per rank)"}},
					linkKeys("link", "each ring link", true, "")...), nic...)},
			build: func(t *table, p string) (sim.TopologySpec, float64) {
				size, ok1 := t.integer(p+"size", 0, 0, MaxWorld)
				link, ok2 := t.link(p+"link", true)
				n, ok3 := t.link(p+"nic", false)
				if !ok1 || !ok2 || !ok3 {
					return nil, 0
				}
				return sim.Ring{Size: int(size), Link: link, NIC: n}, firstPositive(n.Bandwidth, 2*link.Bandwidth)
			},
		},
		{
			TopologyInfo: TopologyInfo{"torus", "a 2D or 3D torus of routers, one device each, minimal routes",
				append(append([]KeyInfo{{"dims", true, "the sizes of the dimensions, the first varying fastest: [4, 4] or [4, 4, 2]"}},
					linkKeys("link", "each torus link", true, "")...), nic...)},
			build: func(t *table, p string) (sim.TopologySpec, float64) {
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
			},
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
			build: func(t *table, p string) (sim.TopologySpec, float64) {
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
			},
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
			build: func(t *table, p string) (sim.TopologySpec, float64) {
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
			},
		},
	}
	// hierarchical comes last: its inter-node topology is one of the above.
	var interNames []string
	for _, s := range topologies {
		interNames = append(interNames, s.Name)
	}
	topologies = append(topologies, topologySpec{
		TopologyInfo: TopologyInfo{"hierarchical", "nodes of several devices on an intra-node switch (NVLink/NVSwitch-like), NICs into an inter-node topology",
			append([]KeyInfo{
				{"devices_per_node", true, "devices per node: 8"},
				{"nodes", false, "number of nodes (default as many as the world needs)"},
				{"nics_per_node", false, "NICs per node (default one per device)"},
				{"host_bandwidth", false, `device <-> NIC bandwidth, PCIe-class: "64GB/s" (default unlimited)`},
				{"host_latency", false, `device <-> NIC latency: "1us" (default 0)`},
				{"inter", true, "the topology between the NICs: " + strings.Join(interNames, ", ") + `; its keys take the prefix "inter_": inter_bandwidth, inter_radix, ...`},
			}, linkKeys("intra", "each device's link to its node's switch", false, "; left out: unlimited")...)},
		build: buildHierarchical,
	})
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
