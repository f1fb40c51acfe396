package sim

import "testing"

// TestDevicesConnectedWithout: the check says yes only where every host
// still reaches every other, and no where one is cut off or a leaf loses
// all its spines.
func TestDevicesConnectedWithout(t *testing.T) {
	tree, err := FatTree{Radix: 4, Link: LinkParams{Bandwidth: 1e9}}.Build(8)
	if err != nil {
		t.Fatal(err)
	}
	// 4 hosts of 4 GPUs, each GPU's first edge to its host's NVSwitch
	// (which only that host's GPUs reach), a NIC a GPU on 4 rails of 2
	// leaves (radix 4: 2 hosts down, 2 spines up).
	gpus, err := GPUCluster{Nodes: 4, GPUsPerNode: 4, NVLink: LinkParams{Bandwidth: 1e9},
		Fabric: RailFatTree{Rails: 4, Radix: 4, NIC: LinkParams{Bandwidth: 1e9}, Link: LinkParams{Bandwidth: 1e9}}}.Build(16)
	if err != nil {
		t.Fatal(err)
	}
	// 4 nodes of 4 devices on an intra-node switch (each device's first
	// edge), 2 NICs a node into a 2-tier fat tree.
	hier, err := Hierarchical{DevicesPerNode: 4, Intra: LinkParams{Bandwidth: 50e9}, NICs: 2,
		Inter: FatTree{Radix: 4, Link: LinkParams{Bandwidth: 1e9}}}.Build(16)
	if err != nil {
		t.Fatal(err)
	}
	one := NewTopology("one")
	one.AddNode(NodeDevice, "gpu0")
	for _, tc := range []struct {
		name  string
		t     *Topology
		links []string
		want  bool
	}{
		{"nothing failed", tree, nil, true},
		{"one spine link", tree, []string{"leaf0<->spine0"}, true},
		{"one direction of two spine links", tree, []string{"leaf0->spine0", "spine1->leaf2"}, true},
		{"a host's link", tree, []string{"host0<->leaf0"}, false},
		{"a host's uplink only", tree, []string{"host3->leaf1"}, false},
		{"a leaf's every spine", tree, []string{"leaf1<->spine0", "leaf1<->spine1"}, false},
		{"one device", one, nil, true},
		{"gpus: nothing failed", gpus, nil, true},
		{"gpus: one spine link", gpus, []string{"inter.rail3.leaf0<->inter.spine1"}, true},
		{"gpus: a GPU's NVLink", gpus, []string{"gpu0.0<->nvs0"}, true},
		{"gpus: a GPU's NIC", gpus, []string{"gpu0.0->nic0.0", "nic0.0->gpu0.0"}, false},
		{"gpus: a NIC's leaf", gpus, []string{"inter.rail0.leaf0<->nic0.0"}, false},
		{"hierarchical: nothing failed", hier, nil, true},
		{"hierarchical: one spine link", hier, []string{"inter.leaf0<->inter.spine0"}, true},
		{"gpus: a leaf's every spine", gpus, []string{"inter.rail2.leaf1<->inter.spine0", "inter.rail2.leaf1<->inter.spine1"}, false},
	} {
		var failed []int
		for _, l := range tc.links {
			ids, err := tc.t.FindEdges(l)
			if err != nil {
				t.Fatal(err)
			}
			failed = append(failed, ids...)
		}
		if got := tc.t.devicesConnectedWithout(failed); got != tc.want {
			t.Errorf("%s: connected %t, want %t", tc.name, got, tc.want)
		}
	}
}
