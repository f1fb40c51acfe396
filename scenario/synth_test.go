package scenario

import (
	"strings"
	"testing"
)

// TestSynthTreeRefused: synth_tree packs trees on the flow model's
// topology, so a network without one, a placement other than the linear
// one, a link that fails during the run, a world larger than the
// topology and a collective the trees do not make are refused, naming
// why.
func TestSynthTreeRefused(t *testing.T) {
	flow := "[network]\nmodel = \"flow\"\ntopology = \"torus\"\ndims = [2, 2]\nlink_bandwidth = \"25GB/s\"\nlink_latency = \"1us\"\n"
	for _, c := range []struct{ net, coll, world, want string }{
		{"[network]\nmodel = \"alpha-beta\"\nlatency = \"5us\"\nbandwidth = \"12.5GB/s\"\n", "allreduce", "4",
			`the network model "alpha-beta" has no topology to pack trees on`},
		{flow + "placement = \"random\"\n", "allreduce", "4", `not placement = "random"`},
		{flow + "[[fault]]\nkind = \"link_failure\"\nlink = \"r0.0<->r1.0\"\nat = \"1us\"\n", "allgather", "4", "on the links that fail at 0 only"},
		{flow, "allreduce", "4, 8", "sweep[0].world: synth_tree for world 8"},
		{flow, "alltoall", "4", "no synthesized alltoall"},
	} {
		doc := "name = \"s\"\n" + c.net + "\n[[sweep]]\ncollective = \"" + c.coll + "\"\nalgorithms = [\"synth_tree\"]\nworld = [" + c.world + "]\nbytes = [\"4KiB\"]\n"
		_, err := Parse("s.toml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %q: got %v, want %q", c.coll, c.net, err, c.want)
		}
	}
	s, err := Parse("s.toml", []byte("name = \"s\"\n"+flow+"\n[[sweep]]\ncollective = \"allgather\"\nalgorithms = [\"ring\", \"synth_tree\"]\nworld = [2, 4]\nbytes = [\"4KiB\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Sweeps[0].Algorithms[1]; a.Name != SynthTree || a.Family != "synth" {
		t.Errorf("algorithm %s of family %s", a.Name, a.Family)
	}
}
