package scenario_test

import (
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

func TestMeshKey(t *testing.T) {
	file := func(mesh string) []byte {
		return []byte(`name = "m"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "1GB/s"
` + mesh + `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [8]
bytes = [1024]
`)
	}
	for _, c := range []struct{ key, want string }{
		{``, "full"},
		{`mesh = "full"`, "full"},
		{`mesh = "hypercube"`, "hypercube"},
		{`mesh = "kregular:3"`, "kregular:3"},
	} {
		s, err := scenario.Parse("m.toml", file(c.key))
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		r, relayed := s.Network.Sim.(sim.Relayed)
		if s.Network.Mesh.String() != c.want || relayed != (c.want != "full") || (relayed && r.Mesh != s.Network.Mesh) {
			t.Errorf("%s: mesh %v, model %#v", c.key, s.Network.Mesh, s.Network.Sim)
		}
	}
	// Faults wrap the relayed network.
	s, err := scenario.Parse("m.toml", file("mesh = \"hypercube\"\n[[fault]]\nkind = \"jitter\"\ndist = \"constant\"\nmean = \"1us\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := s.Network.Sim.(sim.Faulty); !ok {
		t.Errorf("with a fault: %#v, want faults over the relayed network", s.Network.Sim)
	} else if _, ok := f.Model.(sim.Relayed); !ok {
		t.Errorf("with a fault: faults over %#v, want the relayed network", f.Model)
	}
	for _, c := range []struct{ key, want string }{
		{`mesh = "torus"`, `m.toml:6: network.mesh: mesh "torus": want full, hypercube or kregular:K`},
		{`mesh = "kregular:1"`, `m.toml:6: network.mesh: mesh "kregular:1": the degree after kregular: must be a whole number of at least 2`},
		{`mesh = 3`, `m.toml:6: network.mesh: want a mesh`},
	} {
		_, err := scenario.Parse("m.toml", file(c.key))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.key, err, c.want)
		}
	}
}
