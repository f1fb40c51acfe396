package sweep_test

import (
	"slices"
	"testing"
)

func TestPointMachine(t *testing.T) {
	const sweeps = `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [3, 8]
bytes = [1024]
`
	// A model without a topology: nodes from ranks_per_node, for each
	// point's world.
	points := planOn(t, `name = "m"
[network]
model = "alpha-beta"
latency = "2us"
bandwidth = "50GB/s"
gpu = "hopper"
cpu = "amd"
ranks_per_node = 4
`, sweeps)
	for _, p := range points {
		m := p.Machine()
		want := make([]int, p.World)
		for r := range want {
			want[r] = r / 4
		}
		if m == nil || m.GPU != "hopper" || m.CPU != "amd" || !slices.Equal(m.Node, want) {
			t.Errorf("world %d: machine %+v", p.World, m)
		}
	}
	// A GPU cluster: the machine's nodes are left to the simulator, which
	// takes them from the devices' NVLink domains.
	for _, p := range planOn(t, "name = \"m\"\n[network]\npreset = \"dgx-a100\"\n", sweeps) {
		if m := p.Machine(); m == nil || m.GPU != "ampere" || m.CPU != "amd" || m.Node != nil {
			t.Errorf("dgx-a100, world %d: machine %+v", p.World, m)
		}
	}
	// Nothing described: none.
	for _, p := range planOn(t, "name = \"m\"\n[network]\nmodel = \"alpha-beta\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n", sweeps) {
		if m := p.Machine(); m != nil {
			t.Errorf("world %d: machine %+v of a network that describes none", p.World, m)
		}
	}
}
