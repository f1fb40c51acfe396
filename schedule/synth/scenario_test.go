package synth

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

var update = flag.Bool("update", false, "rewrite scenarios/synth-trees' schedules")

// TestScenarioSchedules writes the synthesized allgathers that the
// scenarios of scenarios/synth-trees run (go test -run ScenarioSchedules
// -update), and checks that the committed ones are what the packing
// writes today: byte for byte, so the packing is deterministic.
func TestScenarioSchedules(t *testing.T) {
	torus := sim.Torus{Dims: []int{4, 4}, Link: sim.LinkParams{Bandwidth: 25e9, Latency: sim.Microsecond}}
	for _, c := range []struct {
		name   string
		spec   sim.TopologySpec
		world  int
		failed string
	}{
		{"fat_tree", FatTree2to1, 8, ""},
		{"torus", torus, 16, ""},
		{"torus_failed_link", torus, 16, "r1.0<->r2.0"},
		{"dgx", DGXLike, 8, ""},
	} {
		topo, err := c.spec.Build(c.world)
		if err != nil {
			t.Fatal(err)
		}
		if c.failed != "" {
			if topo, err = Without(topo, c.failed); err != nil {
				t.Fatal(err)
			}
		}
		g, err := FromTopology(topo, c.world)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := g.AllgatherPacking()
		if err != nil {
			t.Fatal(err)
		}
		s, err := g.AllgatherSchedule("synth_tree_"+c.name, pk, mscclChunks)
		if err != nil {
			t.Fatal(err)
		}
		var xml bytes.Buffer
		if err := s.WriteXML(&xml); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "scenarios", "synth-trees", "synth_tree_"+c.name+".xml")
		if *update {
			if err := os.WriteFile(path, xml.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, xml.Bytes()) {
			t.Errorf("%s differs from what the packing writes: go test ./schedule/synth -run ScenarioSchedules -update", path)
		}
	}
}
