package scenario

import (
	"strings"
	"testing"
)

// TestTECCLAlgorithm: a sweep names a TE-CCL solution as "teccl:file",
// registered as teccl_<base>; one of another collective is refused.
func TestTECCLAlgorithm(t *testing.T) {
	doc := func(coll, alg string) string {
		return `name = "t"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "` + coll + `"
algorithms = ["ring", "` + alg + `"]
world = [4]
bytes = ["48KiB"]
`
	}
	file := "../schedule/testdata/teccl/t.toml"
	s, err := Parse(file, []byte(doc("allgather", "teccl:ring4_allgather_1chunk.json")))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sweeps[0].Algorithms[1].Name; got != "teccl_ring4_allgather_1chunk" {
		t.Errorf("algorithm %q", got)
	}
	for _, c := range []struct{ coll, alg, want string }{
		{"allreduce", "teccl:ring4_allgather_1chunk.json", "a schedule of allgather, where the sweep runs allreduce"},
		{"allgather", "teccl:nothere.json", "teccl:nothere.json: open"},
		{"allgather", "nosuchformat:x.json", "nosuchformat:x.json"},
	} {
		_, err := Parse(file, []byte(doc(c.coll, c.alg)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: got %v, want %q", c.alg, c.coll, err, c.want)
		}
	}
}
