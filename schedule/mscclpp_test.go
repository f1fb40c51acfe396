package schedule_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/simtest"
)

// TestMSCCLPPPlans runs MSCCL++ execution plans written from the
// published format on the simulator, with every rank's data checked
// against the reference at several counts: a ring allreduce over memory
// channels (put, signal, wait, re; a barrier first) on 3 and 4 GPUs, and
// a direct allgather over port channels (copy, pws, wait, flush) on 3;
// and two of MSCCL++'s own plans, whose GPUs' channels name their type
// channel_type (rlxsignal, rlxwait, put, pws, pwsf, flush).
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
		// Public plans in the current format (testdata/README.md).
		{"language_tests_allgather.json", []int{2, 64, 1000}},
		{"multi_node_transfer.json", []int{4, 64, 1000}},
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

// TestMSCCLPPChannelType: a GPU's channel list may name a channel's type
// type (older plans) or channel_type (current ones, as the executor reads
// it): both read the same plan, which runs in the same time.
func TestMSCCLPPChannelType(t *testing.T) {
	n := network(t)
	data, err := os.ReadFile(filepath.Join("testdata", "mscclpp", "ring_allreduce_4gpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	current := strings.ReplaceAll(string(data), `"type": "memory"`, `"channel_type": "memory"`)
	if current == string(data) {
		t.Fatal(`no "type": "memory" in the plan`)
	}
	var times []sim.Time
	for i, text := range []string{string(data), current} {
		path := fmt.Sprintf("channel_type_%d.json", i)
		a, _, err := schedule.UseFormat("mscclpp", path, []byte(text), "allreduce")
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, n.Time(t, simtest.Case{Collective: "allreduce", Algorithm: a.Name, World: 4, Bytes: 4 * 1000, Data: true}))
	}
	simtest.AssertTime(t, "channel_type against type", times[1], times[0], 0)
}

// TestMSCCLPPReduceInPlace: in place, a re whose dst_buff is o and one of
// whose src_buff is i at the same chunk reduces into that memory: the
// source that is dst's memory is not overwritten by a copy of another
// before it is read. The 3-GPU ring's re ops are rewritten so (their
// sources swapped, dst_buff made o), and the data stays right.
func TestMSCCLPPReduceInPlace(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "mscclpp", "ring_allreduce_3gpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plan map[string]any
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	edited := 0
	for _, g := range plan["gpus"].([]any) {
		for _, tb := range g.(map[string]any)["threadblocks"].([]any) {
			for _, o := range tb.(map[string]any)["ops"].([]any) {
				op := o.(map[string]any)
				if op["name"] != "re" {
					continue
				}
				src := op["src_buff"].([]any)
				src[0], src[1] = src[1], src[0]
				op["dst_buff"].([]any)[0].(map[string]any)["type"] = "o"
				edited++
			}
		}
	}
	if edited == 0 {
		t.Fatal("no re op in the plan")
	}
	text, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := schedule.UseFormat("mscclpp", "re_in_place.json", text, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	n := network(t)
	for _, count := range []int{3, 7, 999} {
		if _, err := n.Simulate(simtest.Case{Collective: "allreduce", Algorithm: a.Name, World: 3, Bytes: 4 * count, Data: true}); err != nil {
			t.Errorf("count %d: %v", count, err)
		}
	}
	// Two sources that are dst's memory cannot both be read before it is
	// written: refused.
	both := strings.Replace(string(text), `"src_buff":[{"index":2,"size":1,"type":"s"}`, `"src_buff":[{"index":2,"size":1,"type":"o"}`, 1)
	if both == string(text) {
		t.Fatal("the second edit is not in the plan")
	}
	if _, err := schedule.ParseMSCCLPP("p.json", []byte(both)); err == nil || !strings.Contains(err.Error(), "overlaps dst_buff") {
		t.Errorf("two sources in dst's memory: got %v", err)
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
		{"pipeline", `"name": "nop"`, `"name": "pipeline"`, `gpus[0].threadblocks[0].ops[2]: op "pipeline" does not map onto the Link: a loop of the ops it holds`},
		// The older camelCase format, some with collective misspelt.
		{"camelCase", `"input_chunks": 4`, `"inputChunks": 4`, `p.json: gpus[0].inputChunks: the older camelCase MSCCL++ plan format (inputChunks, outputChunks, ops with i_buff and o_cids) is not supported`},
		{"colletive", `"collective": "allreduce"`, `"colletive": "allreduce"`, `p.json: colletive: the older camelCase MSCCL++ plan format`},
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
