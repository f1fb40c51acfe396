package sim

import (
	"math"
	"slices"
	"testing"
	"unsafe"
)

// TestFlowEdgeLayout pins the edge record to one cache line and the
// filling's to half of one (see flowEdge and edgeFill), and a receiver's
// to one.
func TestFlowEdgeLayout(t *testing.T) {
	if s := unsafe.Sizeof(flowEdge{}); s != 64 {
		t.Errorf("flowEdge is %d bytes; want 64", s)
	}
	if s := unsafe.Sizeof(edgeFill{}); s != 32 {
		t.Errorf("edgeFill is %d bytes; want 32", s)
	}
	if s := unsafe.Sizeof(flowRecv{}); s != 64 {
		t.Errorf("flowRecv is %d bytes; want 64", s)
	}
}

// TestFlowRouteInline checks that findRoute keeps a short route in the
// route object, cons the path itself when every edge is finite, and the
// finite edges after the path when not.
func TestFlowRouteInline(t *testing.T) {
	link := LinkParams{Bandwidth: 10e9, Latency: 100 * Nanosecond}
	for _, c := range []struct {
		spec   TopologySpec
		shared bool
	}{
		{FatTree{Tiers: 2, Radix: 4, Link: link}, true},
		{GPUCluster{GPUsPerNode: 4, NVLink: LinkParams{Bandwidth: 100e9}, Fabric: RailFatTree{Rails: 4, Radix: 4, NIC: link}}, false},
	} {
		e, err := newEngine(Config{World: 8, Model: Flow{Topology: c.spec}}, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := e.net.(*flowNet)
		r := n.findRoute(0, 7)
		want := n.rt.route(n.dev[0], n.dev[7], nil)
		if !slices.Equal(r.path, want) || len(r.path) > len(r.buf) || &r.path[0] != &r.buf[0] {
			t.Errorf("%s: path %v in buf %v; want %v, inline", n.topo.Name, r.path, r.buf, want)
		}
		var cons []int32
		for _, e := range want {
			if !math.IsInf(n.topo.edges[e].Bandwidth, 1) {
				cons = append(cons, e)
			}
		}
		if !slices.Equal(r.cons, cons) || (&r.cons[0] == &r.path[0]) != c.shared {
			t.Errorf("%s: cons %v (shares the path: %v); want %v (%v)", n.topo.Name, r.cons, &r.cons[0] == &r.path[0], cons, c.shared)
		}
	}
}
