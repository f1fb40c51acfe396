package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMSCCLAlgorithm: a sweep names an MSCCL schedule file as
// "msccl:file", relative to the scenario; one that does not fit its
// collective or worlds is refused, naming why.
func TestMSCCLAlgorithm(t *testing.T) {
	doc := func(coll, world, alg string) string {
		return scheduleScenario("m", coll, world, `"ring", "`+alg+`"`, `"4KiB"`)
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

// TestScheduleSizes: a swept size a schedule cannot run (outside its
// minBytes..maxBytes, or a count that does not cut into its chunks) is
// refused at validate, naming the sizes and why, not when its point runs.
func TestScheduleSizes(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "schedule", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	capped := strings.Replace(read("allreduce_ring_ll_2ch_4gpu.xml"), `maxBytes="0"`, `maxBytes="2048"`, 1)
	for name, text := range map[string]string{"capped.xml": capped, "a2a.xml": read("alltoall_inplace_2gpu.xml")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := func(coll, world, alg, bytes string) string {
		return scheduleScenario("m", coll, world, `"`+alg+`"`, bytes)
	}
	file := filepath.Join(dir, "m.toml")
	for _, c := range []struct{ coll, world, alg, bytes, want string }{
		{"allreduce", "4", "msccl:capped.xml", `"1KiB", "2KiB"`, ""},
		{"allreduce", "4", "msccl:capped.xml", `"1KiB", "4KiB", "8KiB"`, `4096 (f32), 8192 (f32): algorithm "msccl_capped" cannot run these sizes|capped.xml: a buffer of 4096 bytes, outside the schedule's minBytes 0 to maxBytes 2048`},
		{"alltoall", "2", "msccl:a2a.xml", `"32"`, ""},
		{"alltoall", "2", "msccl:a2a.xml", `"24"`, "do not cut into nchunksperloop 4 chunks"},
	} {
		_, err := Parse(file, []byte(doc(c.coll, c.world, c.alg, c.bytes)))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %s: %v", c.alg, c.bytes, err)
			}
			continue
		}
		for _, want := range strings.Split(c.want, "|") {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: got %v, want an error containing %q", c.alg, c.bytes, err, want)
			}
		}
	}
}

// scheduleScenario is a scenario of one sweep on alpha-beta, for the tests
// of the algorithms a sweep names by a schedule file: algorithms and bytes
// are the contents of the TOML lists.
func scheduleScenario(name, coll, world, algorithms, bytes string) string {
	return `name = "` + name + `"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "` + coll + `"
algorithms = [` + algorithms + `]
world = [` + world + `]
bytes = [` + bytes + `]
`
}
