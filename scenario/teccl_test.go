package scenario

import (
	"strings"
	"testing"
)

// TestTECCLAlgorithm: a sweep names a TE-CCL solution as "teccl:file"
// and an MSCCL++ plan as "mscclpp:file", registered as teccl_<base> and
// mscclpp_<base>; one of another collective or world size is refused.
func TestTECCLAlgorithm(t *testing.T) {
	doc := func(coll, world, alg string) string {
		return scheduleScenario("t", coll, world, `"ring", "`+alg+`"`, `"48KiB"`)
	}
	file := "../schedule/testdata/t.toml"
	for _, c := range []struct{ coll, world, alg, want string }{
		{"allgather", "4", "teccl:teccl/ring4_allgather_1chunk.json", "teccl_ring4_allgather_1chunk"},
		{"allreduce", "3", "mscclpp:mscclpp/ring_allreduce_3gpu.json", "mscclpp_ring_allreduce_3gpu"},
	} {
		s, err := Parse(file, []byte(doc(c.coll, c.world, c.alg)))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Sweeps[0].Algorithms[1].Name; got != c.want {
			t.Errorf("%s: algorithm %q, want %q", c.alg, got, c.want)
		}
	}
	for _, c := range []struct{ coll, world, alg, want string }{
		{"allreduce", "4", "teccl:teccl/ring4_allgather_1chunk.json", "a schedule of allgather, where the sweep runs allreduce"},
		{"allgather", "8", "teccl:teccl/ring4_allgather_1chunk.json", `world size 8: algorithm "teccl_ring4_allgather_1chunk" is a schedule for 4 GPUs`},
		{"allreduce", "4", "mscclpp:mscclpp/ring_allreduce_3gpu.json", `world size 4: algorithm "mscclpp_ring_allreduce_3gpu" is a schedule for 3 GPUs`},
		{"allgather", "4", "teccl:nothere.json", "teccl:nothere.json: open"},
		{"allgather", "4", "nosuchformat:x.json", "nosuchformat:x.json"},
	} {
		_, err := Parse(file, []byte(doc(c.coll, c.world, c.alg)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: got %v, want %q", c.alg, c.coll, err, c.want)
		}
	}
}
