package sim

import (
	"slices"
	"testing"
)

// TestDialEqualsDijkstra checks that the bucket search gives the heap's
// distances to every node, that the distances to a device composed from
// its neighbours' are those a search from the device finds, and so that
// routes between every pair of devices are the same, on each kind of
// built-in topology, with and without a failed link.
func TestDialEqualsDijkstra(t *testing.T) {
	link := LinkParams{Bandwidth: 10e9, Latency: 300 * Nanosecond}
	specs := []TopologySpec{
		Crossbar{Bandwidth: 1e9},
		Ring{Link: link},
		Torus{Dims: []int{4, 3}, Link: link},
		FatTree{Radix: 8, Link: link},
		FatTree{Tiers: 3, Radix: 6, Link: link},
		FatTree{Tiers: 3, Radix: 8, Oversubscription: 3, Link: link, Routing: RouteDestMod},
		Dragonfly{Groups: 5, Routers: 4, Hosts: 2, GlobalLinks: 1, Local: link, Global: link},
		Hierarchical{DevicesPerNode: 4, Intra: LinkParams{Bandwidth: 50e9}, NICs: 2, Inter: FatTree{Radix: 4, Link: link}},
		GPUCluster{Nodes: 6, GPUsPerNode: 4, NVLink: link, NICs: 2, NIC: link, PCIe: link, Fabric: RailFatTree{Rails: 2, Radix: 4, NIC: link, Link: link}},
	}
	for _, spec := range specs {
		top, err := spec.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		for _, fail := range []int{-1, len(top.edges) / 2, len(top.edges) - 1, 0} {
			dial, heap := newRouter(top), newRouter(top)
			heap.maxCost = -1
			if dial.maxCost < 0 || dial.maxCost > dialMaxCost {
				t.Fatalf("%s: costs up to %d, beyond the bucket search", top.Name, dial.maxCost)
			}
			if fail >= 0 {
				dial.fail(fail)
				heap.fail(fail)
			}
			for n := range top.nodes {
				if a, b := dial.distToNode(n), heap.distToNode(n); !slices.Equal(a, b) {
					t.Fatalf("%s, edge %d failed: distances to node %d differ:\n%v\n%v", top.Name, fail, n, a, b)
				}
			}
			for d, node := range top.devices {
				comp, full := dial.distTo(d), heap.distToNode(node)
				for n := range top.nodes {
					if comp.at(n) != full[n] {
						t.Fatalf("%s, edge %d failed: cost from node %d to device %d: %d composed, %d searched", top.Name, fail, n, d, comp.at(n), full[n])
					}
				}
			}
			for s := range top.devices {
				for d := range top.devices {
					if s != d && !slices.Equal(dial.route(s, d, nil), heap.route(s, d, nil)) {
						t.Fatalf("%s: routes %d->%d differ", top.Name, s, d)
					}
				}
			}
		}
	}
}
