package sweep_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestSynthTreeScenario: a sweep names synth_tree, the spanning trees
// packed for the scenario's own topology, for each collective the trees
// make; on a torus, and on the torus with a link failed from the start,
// every point runs with real data, checked, and the allreduce at 1 MiB
// beats the ring by the bound's four links against one.
func TestSynthTreeScenario(t *testing.T) {
	for _, fault := range []string{"", "\n[[fault]]\nkind = \"link_failure\"\nlink = \"r1.0<->r2.0\"\n"} {
		s, err := scenario.Parse("synth.toml", []byte(`name = "synth"
[network]
model = "flow"
topology = "torus"
dims = [4, 4]
link_bandwidth = "25GB/s"
link_latency = "1us"
reduce_bandwidth = "100GB/s"
send_slots = -1
recv_slots = -1
`+fault+`
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "synth_tree"]
world = [16]
bytes = [0, 4, 4100, "1MiB"]
data = "host"

[[sweep]]
collective = "broadcast"
algorithms = ["synth_tree"]
world = [16]
bytes = [4, 4100]
root = 5
data = "host"

[[sweep]]
collective = "reduce_scatter"
algorithms = ["synth_tree"]
world = [16]
bytes = [64, 4096]
data = "host"
`))
		if err != nil {
			t.Fatal(err)
		}
		points, err := sweep.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		times := map[string]float64{}
		var rows int
		err = sweep.Run(context.Background(), points, sweep.Options{Jobs: 2}, func(r sweep.Row) error {
			rows++
			if r.Collective == "allreduce" && r.Bytes == 1<<20 {
				times[r.Algorithm] = r.Time
			}
			return nil
		})
		if err != nil {
			t.Fatalf("fault %q: %v", fault, err)
		}
		if rows != len(points) || rows != 12 {
			t.Fatalf("%d rows of %d points", rows, len(points))
		}
		if !(times["synth_tree"] > 0 && times["synth_tree"] < times["ring"]/2) {
			t.Errorf("fault %q: allreduce of 1 MiB: synth_tree %v s, ring %v s", fault, times["synth_tree"], times["ring"])
		}
	}
}
