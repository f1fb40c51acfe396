package scenario

import (
	"strings"
	"testing"
)

// TestMSCCLAlgorithm: a sweep names an MSCCL schedule file as
// "msccl:file", relative to the scenario; one that does not fit its
// collective or worlds is refused, naming why.
func TestMSCCLAlgorithm(t *testing.T) {
	doc := func(coll, world, alg string) string {
		return `name = "m"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "` + coll + `"
algorithms = ["ring", "` + alg + `"]
world = [` + world + `]
bytes = ["4KiB"]
`
	}
	file := "../schedule/testdata/m.toml"
	s, err := Parse(file, []byte(doc("allreduce", "4", "msccl:allreduce_ring_ll_2ch_4gpu.xml")))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sweeps[0].Algorithms[1].Name; got != "msccl_allreduce_ring_ll_2ch_4gpu" {
		t.Errorf("algorithm %q", got)
	}
	for _, c := range []struct{ coll, world, alg, want string }{
		{"allreduce", "4, 8", "msccl:allreduce_ring_ll_2ch_4gpu.xml", `world size 8: algorithm "msccl_allreduce_ring_ll_2ch_4gpu" is a schedule for 4 GPUs`},
		{"allgather", "4", "msccl:allreduce_ring_ll_2ch_4gpu.xml", "a schedule of allreduce, where the sweep runs allgather"},
		{"allreduce", "4", "msccl:nothere.xml", "msccl:nothere.xml: open"},
	} {
		_, err := Parse(file, []byte(doc(c.coll, c.world, c.alg)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: got %v, want %q", c.alg, c.coll, err, c.want)
		}
	}
}
