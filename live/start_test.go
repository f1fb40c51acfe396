package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
)

// TestTimingLoop measures nccl-tests' way on emulated ranks: one mean per
// point over the loop's iterations, nothing wrong, and the table says so.
func TestTimingLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in real time")
	}
	s, err := scenario.Parse("loop.toml", []byte(`
name = "loop"
[network]
model = "alpha-beta"
latency = "1ms"
bandwidth = "100MB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [3]
bytes = [8, "4KiB"]
`))
	if err != nil {
		t.Fatal(err)
	}
	job, err := NewJob(s, 3, Options{Warmup: 1, Iters: 4, Timing: TimingLoop})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	rep, err := RunEmulated(context.Background(), Emulation{Latency: time.Millisecond, Bandwidth: 100e6}, job,
		Output{Table: &table, Scenario: s}, realnet.Config{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, table.String())
	}
	for _, r := range rep.Results {
		// The ring on 3 ranks takes 4 latencies of 1 ms each.
		if r.Wrong != 0 || r.Repeats != 4 || len(r.Times) != 1 || r.Time < 4e-3 {
			t.Errorf("%d B: wrong %d, %d repeats, %d times, time %v", r.Bytes, r.Wrong, r.Repeats, len(r.Times), r.Time)
		}
	}
	for _, want := range []string{"timing loop:", "# timing: loop"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}
