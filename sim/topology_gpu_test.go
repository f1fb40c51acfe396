package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// dgx is an 8-GPU host in the shape of the dgx-h100 preset: NVLink 450
// GB/s and 300 ns each way, PCIe 64 GB/s and 500 ns, one 400 Gbit/s NIC
// per GPU at 850 ns into a rail-optimised fabric with 200 ns leaf-spine
// links (docs/gpu-presets.md has the arithmetic: 0.6 us a hop on NVLink,
// 2.7 us a hop on a rail).
func dgx(nodes int) sim.GPUCluster {
	nic := sim.LinkParams{Bandwidth: 50e9, Latency: 850 * sim.Nanosecond}
	return sim.GPUCluster{
		Nodes:       nodes,
		GPUsPerNode: 8,
		NVLink:      sim.LinkParams{Bandwidth: 450e9, Latency: 300 * sim.Nanosecond},
		PCIe:        sim.LinkParams{Bandwidth: 64e9, Latency: 500 * sim.Nanosecond},
		NIC:         nic,
		Fabric:      sim.RailFatTree{Rails: 8, Radix: 64, NIC: nic, Link: sim.LinkParams{Latency: 200 * sim.Nanosecond}},
	}
}

func TestGPUClusterSizes(t *testing.T) {
	rail := func(rails, radix int) sim.RailFatTree { return sim.RailFatTree{Rails: rails, Radix: radix, NIC: gb} }
	for _, c := range []struct {
		name                  string
		spec                  sim.GPUCluster
		world                 int
		devices, nodes, edges int
	}{
		// per host an NVSwitch, 4 NICs, 4 GPUs (9 nodes); the fabric: 4
		// rails of one leaf (radix 0: 2 hosts down, 2 up) and 2 spines.
		// Edges: 4 a GPU (NVLink and PCIe, each way), 2 a NIC, and
		// 2 x 4 leaves x 2 spines.
		{"2 hosts of 4", sim.GPUCluster{Nodes: 2, GPUsPerNode: 4, NVLink: gb, Fabric: rail(4, 0)}, 8, 8, 18 + 6, 8*4 + 8*2 + 16},
		// nodes left 0: as many hosts as the world needs, 2
		{"hosts for the world", sim.GPUCluster{GPUsPerNode: 4, NVLink: gb, Fabric: rail(4, 0)}, 5, 8, 24, 64},
		// NVLink domains of 2 hosts of 4 GPUs (2 NVSwitches for 4 hosts),
		// radix 4 (2 down, 2 up): 2 leaves a rail, 8 leaves, 2 spines.
		{"domains of 2 hosts", sim.GPUCluster{Nodes: 4, GPUsPerNode: 4, DomainGPUs: 8, NVLink: gb, Fabric: rail(4, 4)}, 16, 16, 2 + 16 + 16 + 10, 16*4 + 16*2 + 8*2*2},
		// DGX-2's shape: 8 GPUs and 4 NICs a host, a crossbar between the
		// 8 NICs (8 ports, 1 switch)
		{"shared NICs", sim.GPUCluster{Nodes: 2, GPUsPerNode: 8, NICs: 4, NVLink: gb, Fabric: sim.Crossbar{Bandwidth: 1e9}}, 16, 16, 2 + 8 + 16 + 1, 16*4 + 8*2},
		// one host, one rail: a single leaf, no spine
		{"one host", sim.GPUCluster{GPUsPerNode: 2, NICs: 1, NVLink: gb, Fabric: rail(1, 0)}, 2, 2, 1 + 1 + 2 + 1, 2*4 + 2},
	} {
		top := build(t, c.spec, c.world)
		if top.NumDevices() != c.devices || len(top.Nodes()) != c.nodes || len(top.Edges()) != c.edges {
			t.Errorf("%s: %d devices, %d nodes, %d edges; want %d, %d, %d", c.name, top.NumDevices(), len(top.Nodes()), len(top.Edges()), c.devices, c.nodes, c.edges)
		}
	}
}

func TestGPUClusterDomains(t *testing.T) {
	// 4 hosts of 4 GPUs, NVLink domains of 8 GPUs: devices 0-7 in domain
	// 0, 8-15 in domain 1.
	top := build(t, sim.GPUCluster{Nodes: 4, GPUsPerNode: 4, DomainGPUs: 8, NVLink: gb, NVLS: 1e12, SHARP: 5e10,
		Fabric: sim.RailFatTree{Rails: 4, Radix: 4, NIC: gb}}, 16)
	for i := range 16 {
		if got := top.Domain(i); got != i/8 {
			t.Errorf("device %d in domain %d, want %d", i, got, i/8)
		}
	}
	// The NVSwitches reduce at NVLS, the fabric's switches at SHARP,
	// nothing else reduces.
	for _, n := range top.Nodes() {
		want := 0.0
		switch {
		case strings.HasPrefix(n.Name, "nvs"):
			want = 1e12
		case strings.HasPrefix(n.Name, "inter."):
			want = 5e10
		}
		if n.Reduce != want {
			t.Errorf("%s (%s) reduces at %g B/s, want %g", n.Name, n.Kind, n.Reduce, want)
		}
	}
	// Hierarchical: node n's devices are in domain n.
	hier := build(t, sim.Hierarchical{Nodes: 3, DevicesPerNode: 4, Intra: gb, Inter: sim.Crossbar{Bandwidth: 1e9}}, 12)
	for i := range 12 {
		if got := hier.Domain(i); got != i/4 {
			t.Errorf("hierarchical device %d in domain %d, want %d", i, got, i/4)
		}
	}
	// Other topologies: each device its own.
	tree := build(t, sim.FatTree{Radix: 4, Link: gb}, 8)
	for i := range 8 {
		if tree.Domain(i) != i {
			t.Errorf("fat tree device %d in domain %d", i, tree.Domain(i))
		}
	}
}

func TestGPUClusterRoutes(t *testing.T) {
	two := build(t, sim.GPUCluster{Nodes: 2, GPUsPerNode: 4, NVLink: gb, Fabric: sim.RailFatTree{Rails: 4, NIC: gb}}, 8)
	shared := build(t, sim.GPUCluster{Nodes: 2, GPUsPerNode: 8, NICs: 4, NVLink: gb, Fabric: sim.Crossbar{Bandwidth: 1e9}}, 16)
	for _, c := range []struct {
		name     string
		top      *sim.Topology
		src, dst int
		want     string // the route, or its length as "#n"
	}{
		{"one host", two, 0, 3, "gpu0.0->nvs0 nvs0->gpu0.3"},
		{"one rail", two, 0, 4, "gpu0.0->nic0.0 nic0.0->inter.rail0.leaf0 inter.rail0.leaf0->nic1.0 nic1.0->gpu1.0"},
		{"across rails", two, 1, 6, "#6"},
		{"shared NIC, one host", shared, 0, 1, "gpu0.0->nvs0 nvs0->gpu0.1"},
		{"shared NIC, across hosts", shared, 3, 11, "gpu0.3->nic0.1 nic0.1->inter.switch inter.switch->nic1.1 nic1.1->gpu1.3"},
	} {
		route := c.top.Route(c.src, c.dst)
		got := strings.Join(route, " ")
		if strings.HasPrefix(c.want, "#") {
			got = fmt.Sprintf("#%d", len(route))
		}
		if got != c.want {
			t.Errorf("%s: route %d->%d is %q, want %q", c.name, c.src, c.dst, strings.Join(route, " "), c.want)
		}
	}
}

func TestGPUClusterRoutesKeepToNVLinkAndRails(t *testing.T) {
	// NVL72's shape, scaled down: 6 hosts of 4 GPUs, NVLink domains of 2
	// hosts, one NIC per GPU, leaves of 2 hosts. Every route between GPUs
	// of one domain crosses only NVLink (the GPU's edge into its NVSwitch
	// and out of it); every other route leaves by the sender's own NIC
	// (its rail: the NIC of its GPU number) and arrives by the
	// receiver's.
	const g, hosts, per = 4, 6, 8
	top := build(t, sim.GPUCluster{Nodes: hosts, GPUsPerNode: g, DomainGPUs: per, NVLink: gb, PCIe: gb,
		Fabric: sim.RailFatTree{Rails: g, Radix: 4, NIC: gb, Routing: sim.RouteDestMod}}, g*hosts)
	for s := range g * hosts {
		for d := range g * hosts {
			if s == d {
				continue
			}
			route := top.Route(s, d)
			sName, dName := fmt.Sprintf("gpu%d.%d", s/g, s%g), fmt.Sprintf("gpu%d.%d", d/g, d%g)
			if s/per == d/per {
				want := fmt.Sprintf("%s->nvs%d nvs%d->%s", sName, s/per, s/per, dName)
				if strings.Join(route, " ") != want {
					t.Fatalf("route %d->%d in one domain: %v, want %s", s, d, route, want)
				}
				continue
			}
			first := fmt.Sprintf("%s->nic%d.%d", sName, s/g, s%g)
			last := fmt.Sprintf("nic%d.%d->%s", d/g, d%g, dName)
			if len(route) < 4 || route[0] != first || route[len(route)-1] != last {
				t.Fatalf("route %d->%d across domains: %v, want it to start %s and end %s", s, d, route, first, last)
			}
			for _, e := range route {
				if strings.Contains(e, "nvs") {
					t.Fatalf("route %d->%d across domains crosses NVLink: %v", s, d, route)
				}
			}
			// one rail and one leaf: leaf only; otherwise leaf, spine, leaf
			want := 6
			if s%g == d%g && (s/g)/2 == (d/g)/2 {
				want = 4
			}
			if len(route) != want {
				t.Fatalf("route %d->%d: %d hops, want %d: %v", s, d, len(route), want, route)
			}
		}
	}
}

func TestGPUClusterValidation(t *testing.T) {
	rail := sim.RailFatTree{Rails: 4, NIC: gb}
	for _, c := range []struct {
		spec  sim.TopologySpec
		world int
		want  string
	}{
		{sim.GPUCluster{NVLink: gb, Fabric: rail}, 4, "0 GPUs per node"},
		{sim.GPUCluster{GPUsPerNode: 4, DomainGPUs: 6, NVLink: gb, Fabric: rail}, 4, "domain of 6 GPUs is not a whole number of hosts of 4 GPUs"},
		{sim.GPUCluster{Nodes: 1, GPUsPerNode: 4, NVLink: gb, Fabric: rail}, 5, "1 nodes of 4 GPUs are too few for 5 ranks"},
		{sim.GPUCluster{GPUsPerNode: 4, NICs: 5, NVLink: gb, Fabric: rail}, 4, "5 NICs per node for 4 GPUs"},
		{sim.GPUCluster{GPUsPerNode: 4, Fabric: rail}, 4, "nvlink bandwidth 0 B/s must be positive"},
		{sim.GPUCluster{GPUsPerNode: 4, NVLink: gb, NVLS: -1, Fabric: rail}, 4, "nvls bandwidth -1 B/s"},
		{sim.GPUCluster{GPUsPerNode: 4, NVLink: gb}, 4, "no fabric"},
		{sim.GPUCluster{GPUsPerNode: 4, NVLink: gb, Fabric: sim.RailFatTree{Rails: 4, NIC: gb, Radix: 8, Oversubscription: 2}}, 4,
			"fabric: rail fat tree radix 8 cannot be split into host and up ports in the ratio 2:1"},
		{sim.RailFatTree{Rails: 4}, 4, "rail fat tree nic bandwidth 0 B/s must be positive"},
		{sim.RailFatTree{NIC: gb}, 4, "0 rails"},
		{sim.RailFatTree{Rails: 2, Radix: 1, NIC: gb}, 4, "radix 1"},
	} {
		_, err := c.spec.Build(c.world)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%#v: got %v, want an error containing %q", c.spec, err, c.want)
		}
	}
}

func TestGPUClusterRingBandwidth(t *testing.T) {
	// A ring allreduce of n bytes on p ranks takes 2(p-1)(L + (n/p)/B),
	// L and B those of its slowest hop (reductions free). On one host of
	// 8 GPUs every hop is on NVLink: L = 2 x 300 ns, B = 450 GB/s. On two
	// hosts (16 ranks) two hops leave their host, from GPU 7 to GPU 0 of
	// the other: off rail 7 onto rail 0, through a spine, L = 2 x 500 ns
	// PCIe + 2 x 850 ns NIC + 2 x 200 ns leaf-spine = 3.1 us, B = the
	// NIC's 50 GB/s. With one rank on GPU 0 of each of 4 hosts every hop
	// stays on rail 0: L = 2.7 us, NCCL's NET hop, and B = 50 GB/s.
	const n = 64 << 20
	body := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(n), device.F32, device.Sum)
	}
	for _, c := range []struct {
		name  string
		model sim.Flow
		p     int
		lat   sim.Time
		bw    float64
	}{
		{"one host", sim.Flow{Topology: dgx(1)}, 8, 600 * sim.Nanosecond, 450e9},
		{"two hosts", sim.Flow{Topology: dgx(2)}, 16, 3100 * sim.Nanosecond, 50e9},
		{"one rail", sim.Flow{Topology: dgx(4), Placement: sim.Placement{0, 8, 16, 24}}, 4, 2700 * sim.Nanosecond, 50e9},
	} {
		got := runModel(t, c.model, c.p, body).End.Seconds()
		want := 2 * float64(c.p-1) * (c.lat.Seconds() + float64(n)/float64(c.p)/c.bw)
		if relErr(got, want) > 1e-6 {
			t.Errorf("%s: %.9g s, want %.9g s", c.name, got, want)
		}
	}
}
