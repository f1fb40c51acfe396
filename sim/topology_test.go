package sim_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"context"
	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

var gb = sim.LinkParams{Bandwidth: 1e9, Latency: sim.Microsecond}

func build(t *testing.T, spec sim.TopologySpec, world int) *sim.Topology {
	t.Helper()
	top, err := spec.Build(world)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func TestTopologySizes(t *testing.T) {
	// Counts by hand from each topology's description.
	for _, c := range []struct {
		name                  string
		spec                  sim.TopologySpec
		world                 int
		devices, nodes, edges int
	}{
		// one switch; an edge each way per port
		{"crossbar", sim.Crossbar{Bandwidth: 1e9}, 5, 5, 6, 10},
		// a router per device; NIC links 2 edges each, 6 ring links
		{"ring", sim.Ring{Link: gb}, 6, 6, 12, 24},
		{"ring of 2", sim.Ring{Link: gb}, 2, 2, 4, 6},
		// 16 NIC links, 2 torus links per router
		{"torus 4x4", sim.Torus{Dims: []int{4, 4}, Link: gb}, 16, 16, 32, 96},
		// dimension 2 has one link per pair: 8 + 4 links
		{"torus 4x2", sim.Torus{Dims: []int{4, 2}, Link: gb}, 8, 8, 16, 40},
		{"torus 2x2x2", sim.Torus{Dims: []int{2, 2, 2}, Link: gb}, 8, 8, 16, 16 + 24},
		// radix 8: 8 leaves of 4 hosts, 4 spines; 32 host links, 32 uplinks
		{"fat tree 2 tiers", sim.FatTree{Radix: 8, Link: gb}, 32, 32, 44, 128},
		// k = 4: 16 hosts, 8 edge, 8 agg, 4 core switches; 16+16+16 links
		{"fat tree 3 tiers", sim.FatTree{Tiers: 3, Radix: 4, Link: gb}, 16, 16, 36, 96},
		// radix 8, 3:1 -> 6 hosts per edge switch: 8 pods x 4 edge x 6
		{"fat tree 3 tiers 3:1", sim.FatTree{Tiers: 3, Radix: 8, Oversubscription: 3, Link: gb}, 100, 192, 192 + 32 + 16 + 8, 2 * (192 + 8*4*2 + 16*4)},
		// 9 groups of 4 routers of 2 hosts; 8 global ports per group, one
		// to each other group: 36 global, 54 local, 72 NIC links
		{"dragonfly", sim.Dragonfly{Groups: 9, Routers: 4, Hosts: 2, GlobalLinks: 2, Local: gb, Global: gb}, 72, 72, 108, 2 * (72 + 54 + 36)},
		// 2 nodes x (switch, 4 NICs, 4 GPUs) + the inter-node switch
		{"hierarchical", sim.Hierarchical{Nodes: 2, DevicesPerNode: 4, Intra: gb, Inter: sim.Crossbar{Bandwidth: 1e9}}, 8, 8, 19, 48},
	} {
		top := build(t, c.spec, c.world)
		if top.NumDevices() != c.devices || len(top.Nodes()) != c.nodes || len(top.Edges()) != c.edges {
			t.Errorf("%s: %d devices, %d nodes, %d edges; want %d, %d, %d", c.name, top.NumDevices(), len(top.Nodes()), len(top.Edges()), c.devices, c.nodes, c.edges)
		}
	}
}

func TestRoutes(t *testing.T) {
	ring := build(t, sim.Ring{Link: gb}, 8)
	torus := build(t, sim.Torus{Dims: []int{4, 4}, Link: gb}, 16)
	tree := build(t, sim.FatTree{Tiers: 3, Radix: 4, Link: gb}, 16)
	hier := build(t, sim.Hierarchical{Nodes: 2, DevicesPerNode: 4, Intra: gb, NICs: 1, Inter: sim.Crossbar{Bandwidth: 1e9}}, 8)
	for _, c := range []struct {
		name     string
		top      *sim.Topology
		src, dst int
		want     string // the route, or its length as "#n"
	}{
		{"crossbar", build(t, sim.Crossbar{Bandwidth: 1e9}, 4), 0, 3, "dev0->switch dev3<-switch"},
		{"ring forward", ring, 0, 3, "dev0->r0 r0->r1 r1->r2 r2->r3 r3->dev3"},
		{"ring backward", ring, 0, 6, "dev0->r0 r0->r7 r7->r6 r6->dev6"},
		{"ring opposite", ring, 0, 4, "#6"},
		// (0,0) to (2,2): 4 torus hops
		{"torus", torus, 0, 10, "#6"},
		{"torus wrap", torus, 0, 3, "dev0.0->r0.0 r0.0->r3.0 r3.0->dev3.0"},
		{"fat tree same leaf", tree, 0, 1, "host0->leaf0 leaf0->host1"},
		{"fat tree same pod", tree, 0, 2, "#4"},
		{"fat tree across pods", tree, 0, 15, "#6"},
		{"hierarchical intra", hier, 0, 3, "gpu0.0->nvs0 nvs0->gpu0.3"},
		{"hierarchical inter", hier, 1, 6, "gpu0.1->nic0.0 nic0.0->inter.switch inter.switch->nic1.0 nic1.0->gpu1.2"},
	} {
		route := c.top.Route(c.src, c.dst)
		got := strings.Join(route, " ")
		want := strings.ReplaceAll(c.want, "dev3<-switch", "switch->dev3")
		if strings.HasPrefix(want, "#") {
			got = fmt.Sprintf("#%d", len(route))
		}
		if got != want {
			t.Errorf("%s: route %d->%d is %q, want %q", c.name, c.src, c.dst, strings.Join(route, " "), want)
		}
	}
}

func TestDragonflyRoutesAreMinimal(t *testing.T) {
	// Every route is at most NIC, local, global, local, NIC, and crosses
	// at most one global link.
	top := build(t, sim.Dragonfly{Groups: 5, Routers: 4, Hosts: 2, GlobalLinks: 1, Local: gb, Global: gb}, 40)
	for s := range 40 {
		for d := range 40 {
			if s == d {
				continue
			}
			route := top.Route(s, d)
			global := 0
			for _, e := range route {
				a, b, _ := strings.Cut(e, "->")
				if strings.HasPrefix(a, "r") && strings.HasPrefix(b, "r") && strings.Split(a[1:], ".")[0] != strings.Split(b[1:], ".")[0] {
					global++
				}
			}
			if len(route) == 0 || len(route) > 5 || global > 1 || (s/8 != d/8) != (global == 1) {
				t.Fatalf("route %d->%d: %v", s, d, route)
			}
		}
	}
}

func TestDestModSpreadsShifts(t *testing.T) {
	// D-mod-k routes any shift permutation of a non-blocking fat tree
	// with at most one flow per edge; ECMP's hashing may collide.
	for _, spec := range []sim.FatTree{
		{Tiers: 2, Radix: 8, Link: gb, Routing: sim.RouteDestMod},
		{Tiers: 3, Radix: 4, Link: gb, Routing: sim.RouteDestMod},
		{Tiers: 3, Radix: 8, Link: gb, Routing: sim.RouteDestMod},
	} {
		top := build(t, spec, spec.Hosts())
		n := top.NumDevices()
		for shift := 1; shift < n; shift++ {
			load := map[string]int{}
			for s := range n {
				for _, e := range top.Route(s, (s+shift)%n) {
					load[e]++
					if load[e] > 1 {
						t.Fatalf("%s, shift %d: edge %s carries two flows", top.Name, shift, e)
					}
				}
			}
		}
	}
}

func TestTopologyValidation(t *testing.T) {
	for _, c := range []struct {
		spec  sim.TopologySpec
		world int
		want  string
	}{
		{sim.Crossbar{Bandwidth: 1e9, Ports: 4}, 5, "crossbar of 4 ports is too small for 5 ranks"},
		{sim.Crossbar{}, 4, "crossbar port bandwidth 0 B/s must be positive"},
		{sim.Ring{Link: sim.LinkParams{Bandwidth: 1, Latency: -1}}, 4, "ring link latency -1ps is negative"},
		{sim.Torus{Dims: []int{2, 2, 2, 2}, Link: gb}, 4, "1 to 3 dimensions"},
		{sim.Torus{Dims: []int{2, 2}, Link: gb}, 5, "too few for 5 ranks"},
		{sim.FatTree{Tiers: 4, Radix: 4, Link: gb}, 4, "want 2 or 3"},
		{sim.FatTree{Tiers: 3, Radix: 5, Link: gb}, 4, "even for 3 tiers"},
		{sim.FatTree{Radix: 8, Oversubscription: 2, Link: gb}, 4, "radix 8 cannot be split into host and up ports in the ratio 2:1"},
		{sim.FatTree{Radix: 8, Oversubscription: 0.5, Link: gb}, 4, "must be at least 1"},
		{sim.FatTree{Radix: 4, Link: gb}, 9, "has 8 hosts, too few for 9 ranks"},
		{sim.Dragonfly{Groups: 9, Routers: 2, GlobalLinks: 1, Local: gb, Global: gb}, 4, "too few to reach the other 8 groups"},
		{sim.Hierarchical{DevicesPerNode: 4, Intra: gb}, 8, "no inter-node topology"},
		{sim.Hierarchical{DevicesPerNode: 4, NICs: 5, Intra: gb, Inter: sim.Crossbar{Bandwidth: 1}}, 8, "5 NICs per node for 4 devices"},
		{sim.Hierarchical{Nodes: 2, DevicesPerNode: 4, Intra: gb, Inter: sim.Crossbar{Bandwidth: 1, Ports: 4}}, 8, "inter-node topology: crossbar of 4 ports is too small for 8 ranks"},
	} {
		_, err := c.spec.Build(c.world)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%#v: got %v, want an error containing %q", c.spec, err, c.want)
		}
	}
}

func TestFindEdges(t *testing.T) {
	top := build(t, sim.Crossbar{Bandwidth: 1e9}, 2)
	for _, c := range []struct {
		link string
		n    int
		err  string
	}{
		{"dev0->switch", 1, ""},
		{"dev0<->switch", 2, ""},
		{"switch-dev1", 2, ""},
		{"dev0->dev1", 0, "not connected"},
		{"dev9->switch", 0, "no such nodes"},
		{"dev0", 0, "want"},
	} {
		ids, err := top.FindEdges(c.link)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) || len(ids) != c.n {
			t.Errorf("%q: %v, %v; want %d edges, error %q", c.link, ids, err, c.n, c.err)
		}
	}
}

func FuzzFindEdges(f *testing.F) {
	top, _ := sim.FatTree{Radix: 4, Link: gb}.Build(8)
	for _, s := range []string{"leaf0->spine1", "host0<->leaf0", "a-b-c", "->", "<->", "-", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, link string) {
		ids, err := top.FindEdges(link)
		if err == nil && len(ids) == 0 {
			t.Fatalf("%q: no edges and no error", link)
		}
		for _, id := range ids {
			if id < 0 || id >= len(top.Edges()) {
				t.Fatalf("%q: edge %d out of range", link, id)
			}
		}
	})
}

func TestPlacements(t *testing.T) {
	rr, err := sim.RoundRobinPlacement(8, 2, 4)
	if err != nil || !slices.Equal(rr, sim.Placement{0, 4, 1, 5, 2, 6, 3, 7}) {
		t.Fatalf("round robin: %v, %v", rr, err)
	}
	a, _ := sim.RandomPlacement(6, 10, 7)
	b, _ := sim.RandomPlacement(6, 10, 7)
	c, _ := sim.RandomPlacement(6, 10, 8)
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Fatalf("random placements: seed 7 %v and %v, seed 8 %v", a, b, c)
	}
	if _, err := sim.RoundRobinPlacement(9, 2, 4); err == nil {
		t.Fatal("9 ranks fitted in 2 groups of 4")
	}
}

func TestPlacementChangesTime(t *testing.T) {
	// Two nodes of 4 devices, one NIC each (crossbar between NICs, Bn, Ln;
	// free intra-node links). A ring allreduce of n bytes on 8 ranks:
	// placed node-major, one ring hop per node leaves it and the ring goes
	// at the pace of that hop, 2(p-1)(Ln + (n/p)/Bn); dealt round robin,
	// every hop crosses, the 4 flows leaving a node share its NIC, and it
	// takes 2(p-1)(Ln + 4(n/p)/Bn).
	const p, n = 8, 8 << 20
	bn, ln := 10e9, 2*sim.Microsecond
	top := sim.Hierarchical{Nodes: 2, DevicesPerNode: 4, NICs: 1, Intra: sim.LinkParams{Bandwidth: 0}, Inter: sim.Crossbar{Bandwidth: bn, Latency: ln}}
	rr, _ := sim.RoundRobinPlacement(p, 2, 4)
	body := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(n), device.F32, device.Sum)
	}
	for _, c := range []struct {
		place sim.Placement
		share float64
	}{{nil, 1}, {rr, 4}} {
		got := runModel(t, sim.Flow{Topology: top, Placement: c.place}, p, body).End.Seconds()
		want := 2 * (p - 1) * (ln.Seconds() + c.share*n/p/bn)
		if relErr(got, want) > 1e-6 {
			t.Errorf("placement %v: %.6g s, want %.6g s", c.place, got, want)
		}
	}
}
