package schedule_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/simtest"
)

// TestTECCLReplay replays TE-CCL solutions written from the published
// output format on the alpha-beta network they were solved for: 4 GPUs
// in a unidirectional ring 0->1->2->3->0, every link alpha = 5us and
// beta = 1/12.5 GB/s, chunks of 12500 bytes (1us on a link), epochs of
// 1us; so a chunk sent in epoch e is at the next GPU from epoch e+6.
//
//   - One chunk a GPU: each chunk's three hops are in sequence, each
//     alpha + chunk*beta = 6 epochs: TE-CCL's 18 epochs, 18us; the
//     simulator's the same, to the picosecond (and on an 8-GPU ring,
//     seven hops: 42us both).
//   - Two chunks a GPU: TE-CCL pipelines a link, its alpha a propagation
//     delay that the next chunk's transmission overlaps, and finishes in
//     19 epochs, 19us. The simulator's alpha-beta holds the sender's port
//     for alpha + m*beta a message, so a GPU's six sends go one after
//     another, 6 x 6us = 36us: the difference, 17us, is the model's, not
//     the replay's.
func TestTECCLReplay(t *testing.T) {
	n := network(t)
	for _, c := range []struct {
		file string
		want sim.Time // the simulator's time
	}{
		{"ring4_allgather_1chunk.json", 18 * sim.Microsecond},
		{"ring4_allgather_2chunks.json", 36 * sim.Microsecond},
		{"ring8_allgather_1chunk.json", 42 * sim.Microsecond}, // 7 hops of 6 epochs
	} {
		path := filepath.Join("testdata", "teccl", c.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sol, err := schedule.ParseTECCL(path, data)
		if err != nil {
			t.Fatal(err)
		}
		a, s, err := schedule.UseFormat("teccl", path, data, "allgather")
		if err != nil {
			t.Fatal(err)
		}
		bytes := len(sol.GPUs) * sol.Chunks * 12500
		got := n.Time(t, simtest.Case{Collective: "allgather", Algorithm: a.Name, World: s.NGPUs, Bytes: bytes, Data: true})
		teccl := sim.FromSeconds(sol.Finish)
		t.Logf("%s: TE-CCL %v (%d epochs of %v), simulated %v, difference %v", c.file, teccl, sol.Epochs, sim.FromSeconds(sol.Epoch), got, got-teccl)
		simtest.AssertTime(t, c.file, got, c.want, 0)
		if sol.Chunks == 1 {
			simtest.AssertTime(t, c.file+" against TE-CCL", got, teccl, 0)
		}
	}
}

// TestTECCLErrors: a bad solution is refused naming the file, the JSON
// path or line, and what was expected.
func TestTECCLErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "teccl", "ring4_allgather_1chunk.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"syntax", `"1-Epoch_Duration": 1e-06,`, `"1-Epoch_Duration": 1e-06`, "s.json:3: invalid character"},
		{"type", `"3-Epochs_Required": 18`, `"3-Epochs_Required": "18"`, "s.json:4: 3-Epochs_Required: want int"},
		{"epoch", `"1-Epoch_Duration": 1e-06`, `"1-Epoch_Duration": 0`, "1-Epoch_Duration: want a positive"},
		{"flow", `"Chunk 0 from 3 traveled over 3->0 in epoch 0"`, `"Chunk 0 from 3 went over 3->0 in epoch 0"`, `7-Flows[3]: "Chunk 0 from 3 went`},
		{"node", `"Chunk 0 from 3 traveled over 3->0 in epoch 0"`, `"Chunk 0 from 3 traveled over 3->7 in epoch 0"`, "node 7 is not a GPU"},
		{"chunk", `"Chunk 0 from 3 traveled over 3->0 in epoch 0"`, `"Chunk 1 from 3 traveled over 3->0 in epoch 0"`, "chunk 1, where 6-Demand_Met names 1 chunks"},
		{"early", `"Chunk 0 from 3 traveled over 0->1 in epoch 6"`, `"Chunk 0 from 3 traveled over 0->1 in epoch 0"`, "GPU 0 sends chunk 0 of GPU 3 in epoch 0 before it has received it"},
		{"demand", `"6-Demand_Met": {`, `"6-Demand_Met": {"GPU 8": {},`, "GPU 0 does not demand chunk 0 of GPU 8: the reader takes allgather solutions"},
		{"gpu key", `"GPU 3": {`, `"GPU x": {`, `["GPU x"]: want a key "GPU n"`},
	} {
		text := strings.Replace(string(good), c.old, c.new, 1)
		if text == string(good) {
			t.Fatalf("%s: %q not in the solution", c.name, c.old)
		}
		_, err := schedule.ParseTECCL("s.json", []byte(text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestTECCLAlltoall: an alltoall solution (6-Flows and 7-chunk paths in
// place of 6-Demand_Met and 7-Flows, as TE-CCL writes it) is refused as
// such, not as a solution that lacks 6-Demand_Met.
func TestTECCLAlltoall(t *testing.T) {
	_, err := schedule.LoadTECCL(filepath.Join("testdata", "teccl", "alltoall_2gpu_shape.json"))
	want := "alltoall_2gpu_shape.json: 6-Flows: a TE-CCL alltoall solution (6-Flows and 7-chunk paths, no 6-Demand_Met): TE-CCL alltoall solutions are not supported"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

// TestTECCLAgain: a solution that carries a chunk to a GPU that has it
// (as TE-CCL's may), through a switch, with the keys this reader does
// not read, is read; the copy is moved into scratch and the data stays
// right.
func TestTECCLAgain(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "teccl", "ring4_allgather_1chunk.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(good), `"7-Flows": [`, `"7-Flows": [
    "Chunk 0 from 0 traveled over 3->0 in epoch 18 via switches 4",
    "Chunk 0 from 1 traveled over 3->0 in epoch 19 via switches 4",`, 1)
	text = strings.Replace(text, `"6-Demand_Met"`, `"8-Chunk paths": {"Demand at 1 for chunk 0 from 0 met by epoch 5": ["0->1 in epoch 0"]}, "6-Demand_Met"`, 1)
	sol, err := schedule.ParseTECCL("again.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	again := 0
	for _, f := range sol.Flows {
		if f.Again {
			again++
		}
	}
	if again != 2 {
		t.Errorf("%d flows marked Again, want 2", again)
	}
	a, s, err := schedule.UseFormat("teccl", "again.json", []byte(text), "allgather")
	if err != nil {
		t.Fatal(err)
	}
	if s.GPUs[0].SChunks != 2 {
		t.Errorf("gpu 0 has %d scratch chunks, want 2", s.GPUs[0].SChunks)
	}
	got := network(t).Time(t, simtest.Case{Collective: "allgather", Algorithm: a.Name, World: 4, Bytes: 4 * 12500, Data: true})
	// GPU 3's two extra sends follow its three: 5 x 6us.
	simtest.AssertTime(t, "with copies", got, 30*sim.Microsecond, 0)
}

// FuzzParseTECCL: any input is read or refused, never a panic, and a
// solution read becomes a schedule that checks.
func FuzzParseTECCL(f *testing.F) {
	for _, file := range []string{"ring4_allgather_1chunk.json", "ring4_allgather_2chunks.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "teccl", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"1-Epoch_Duration": 1, "3-Epochs_Required": 1, "4-Collective_Finish_Time": 1, "6-Demand_Met": {"GPU 0": {"GPU 1": {"Chunk 0": 1}}, "GPU 1": {"GPU 0": {"Chunk 0": 1}}}, "7-Flows": ["Chunk 0 from 0 traveled over 0->1 in epoch 0 via switches 2"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sol, err := schedule.ParseTECCL("f.json", data)
		if err != nil {
			return
		}
		if len(sol.GPUs)*sol.Chunks > 4096 {
			return
		}
		if _, err := sol.Schedule(); err != nil {
			t.Fatalf("a solution read makes no schedule: %v", err)
		}
	})
}
