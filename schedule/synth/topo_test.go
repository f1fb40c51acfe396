package synth

import (
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

// topologies are the four of the issue, at the sizes the tests and the
// study use.
func topologies(t testing.TB) []struct {
	name  string
	topo  *sim.Topology
	world int
} {
	t.Helper()
	build := func(s sim.TopologySpec, world int) *sim.Topology {
		tp, err := s.Build(world)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	torus := sim.Torus{Dims: []int{4, 4}, Link: sim.LinkParams{Bandwidth: 25e9, Latency: sim.Microsecond}}
	failed, err := Without(build(torus, 16), "r1.0-r2.0")
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name  string
		topo  *sim.Topology
		world int
	}{
		{"fat_tree_2to1", build(FatTree2to1, 8), 8},
		{"torus_4x4", build(torus, 16), 16},
		{"dgx_2x4", build(DGXLike, 8), 8},
		{"torus_4x4_failed", failed, 16},
	}
}
