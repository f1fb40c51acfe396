package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/staging"
)

// TestPredictStaged checks the prediction of a ring allreduce of 2 ranks
// on GPUs, on the flow model over a hierarchical topology of one device
// per node (every message crosses the host links): each of the ring's two
// steps sends n/2 bytes, whose first chunk is copied to the host before
// it leaves and whose last is copied to the device after it arrives, so
// the run on GPUs is predicted 4·min(n/2, chunk)/H slower than the same
// run on host memory. Without host_bandwidth the copies are left out, and
// StagingNote says so.
func TestPredictStaged(t *testing.T) {
	const hierarchical = `name = "gpus"
[network]
model = "flow"
topology = "hierarchical"
devices_per_node = 1
host_bandwidth = "20GB/s"
inter = "crossbar"
inter_bandwidth = "1GB/s"
inter_latency = "10us"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [8]
`
	const flat = `name = "flat"
[network]
model = "alpha-beta"
latency = "10us"
bandwidth = "1GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [8]
`
	for _, c := range []struct {
		name, file string
		host       float64 // the scenario's host bandwidth, 0 if none
		note       string
	}{
		{"hierarchical", hierarchical, 20e9, "add the staging copies at the model's host_bandwidth (20 GB/s), in chunks of 1024 KiB"},
		{"flat", flat, 0, "the predictions leave out the staging copies"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenario.Parse(c.name+".toml", []byte(c.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{4 << 10, 8 << 20} {
				host := results.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: n, DType: "f32", Op: "sum", Time: 1}
				gpu := host
				gpu.Device = results.DeviceCUDA
				cs, err := Predict(s, []results.Row{host, gpu})
				if err != nil {
					t.Fatal(err)
				}
				want := 0.0
				if c.host > 0 {
					want = 4 * sim.TransferTime(min(n/2, staging.DefaultChunk), c.host).Seconds()
				}
				if got := cs[1].Predicted - cs[0].Predicted; math.Abs(got-want) > 1e-12 {
					t.Errorf("bytes %d: staged - unstaged = %g s, want %g s", n, got, want)
				}
			}
			gpu := results.Row{World: 2, Device: results.DeviceCUDA}
			if note := StagingNote(s, []results.Row{gpu}); !strings.Contains(note, c.note) {
				t.Errorf("note %q, want it to say %q", note, c.note)
			}
			if note := StagingNote(s, []results.Row{{World: 2}}); note != "" {
				t.Errorf("note %q for a run on host memory", note)
			}
		})
	}
}
