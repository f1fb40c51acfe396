package schedule_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/simtest"
)

// TestMSCCLPPPlans runs MSCCL++ execution plans written from the
// published format on the simulator, with every rank's data checked
// against the reference at several counts: a ring allreduce over memory
// channels (put, signal, wait, re; a barrier first) on 3 and 4 GPUs, and
// a direct allgather over port channels (copy, pws, wait, flush) on 3.
func TestMSCCLPPPlans(t *testing.T) {
	n := network(t)
	for _, c := range []struct {
		file   string
		counts []int
	}{
		{"ring_allreduce_4gpu.json", []int{4, 13, 1000, 4099}},
		{"ring_allreduce_3gpu.json", []int{3, 7, 999}},
		{"ring_allreduce_8gpu.json", []int{8, 1003}},
		{"direct_allgather_port_3gpu.json", []int{6, 600, 6000}},
	} {
		path := filepath.Join("testdata", "mscclpp", c.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a, s, err := schedule.UseFormat("mscclpp", path, data, "")
		if err != nil {
			t.Fatal(err)
		}
		coll, _ := s.Collective()
		for _, count := range c.counts {
			got := n.Time(t, simtest.Case{Collective: coll, Algorithm: a.Name, World: s.NGPUs, Bytes: 4 * count, Data: true})
			if count == c.counts[len(c.counts)-1] {
				t.Logf("%s (%s) count %d: %v", c.file, a.Name, count, got)
			}
		}
	}
}

// TestMSCCLPPRing4MatchesExport: the 4-GPU ring allreduce plan moves the
// same messages as the catalogue's ring: the same time, to the picosecond.
func TestMSCCLPPRing4MatchesExport(t *testing.T) {
	n := network(t)
	path := filepath.Join("testdata", "mscclpp", "ring_allreduce_4gpu.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := schedule.UseFormat("mscclpp", path, data, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	for _, count := range []int{4, 1000, 1 << 16} {
		got := n.Time(t, simtest.Case{Collective: "allreduce", Algorithm: a.Name, World: 4, Bytes: 4 * count})
		ring := n.Time(t, simtest.Case{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 4 * count})
		simtest.AssertTime(t, "ring allreduce plan against the catalogue's ring", got, ring, 0)
	}
}

// TestMSCCLPPRefused: ops that do not map, and bad plans, are refused
// naming the file, the JSON path and why.
func TestMSCCLPPRefused(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "mscclpp", "ring_allreduce_4gpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"get", `"name": "put"`, `"name": "get"`, `p.json: gpus[0].threadblocks[0].ops[3]: op "get" does not map onto the Link: a GPU reading a peer's memory`},
		{"packet", `"name": "put"`, `"name": "ppkt"`, `op "ppkt" does not map onto the Link: LL packets`},
		{"nvls", `"name": "put"`, `"name": "glres"`, `switch (NVLS)`},
		{"barrier", `"name": "nop"`, `"name": "barrier"`, `gpus[0].threadblocks[0].ops[2]: op "barrier" does not map`},
		{"unknown", `"name": "nop"`, `"name": "frobnicate"`, `op "frobnicate": not an op`},
		{"collective", `"collective": "allreduce"`, `"collective": "broadcast"`, `p.json: collective: "broadcast": want allreduce`},
		{"type", `"input_chunks": 4`, `"input_chunks": "4"`, `p.json:`},
		{"syntax", `"inplace": true,`, `"inplace": true`, `invalid character`},
		{"bounds", `"index": 3,`, `"index": 9,`, `want within its 4 chunks`},
		{"buffer", `"buffer_id": 0,`, `"buffer_id": 5,`, `buffer_id: 5: want one of the threadblock's 2 remote buffer(s)`},
		{"switch channel", `"channel_type": "memory"`, `"channel_type": "switch"`, `channel_type "switch"`},
		{"lost wait", `"name": "wait"`, `"name": "nop"`, `GPU 3 signals GPU 0 `},
	} {
		text := strings.Replace(string(good), c.old, c.new, 1)
		if text == string(good) {
			t.Fatalf("%s: %q not in the plan", c.name, c.old)
		}
		_, err := schedule.ParseMSCCLPP("p.json", []byte(text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// FuzzParseMSCCLPP: any input is read or refused, never a panic.
func FuzzParseMSCCLPP(f *testing.F) {
	for _, file := range []string{"ring_allreduce_3gpu.json", "direct_allgather_port_3gpu.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mscclpp", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schedule.ParseMSCCLPP("f.json", data)
		if err == nil && s.NGPUs != len(s.GPUs) {
			t.Fatalf("%d GPUs, %d programs", s.NGPUs, len(s.GPUs))
		}
	})
}
