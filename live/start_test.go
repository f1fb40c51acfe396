package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
)

// TestSpinMargin: the spin margin covers all but the latest tenth of the
// recent wakes, within its bounds.
func TestSpinMargin(t *testing.T) {
	var s starter
	for i := range spinWindow {
		s.learnOversleep(int64(i) * int64(time.Microsecond)) // 0..31 µs
	}
	// The 90th percentile of 0..31 µs is 28 µs; plus a tenth.
	if want := int64(28*time.Microsecond) * 11 / 10; s.spin != want {
		t.Errorf("spin %v, want %v", time.Duration(s.spin), time.Duration(want))
	}
	for range spinWindow {
		s.learnOversleep(int64(time.Second))
	}
	if s.spin != maxSpin {
		t.Errorf("after late wakes: spin %v, want the bound %v", time.Duration(s.spin), time.Duration(maxSpin))
	}
	for range spinWindow {
		s.learnOversleep(0)
	}
	if s.spin != minSpin {
		t.Errorf("after punctual wakes: spin %v, want the bound %v", time.Duration(s.spin), time.Duration(minSpin))
	}
}

// TestLead: the lead doubles when an instant arrives with too little to
// spare, and shrinks back towards its least when instants arrive early.
func TestLead(t *testing.T) {
	s := starter{lead: int64(time.Millisecond), minLead: int64(300 * time.Microsecond)}
	s.adjustLead(-5)
	if s.lead != int64(2*time.Millisecond) {
		t.Errorf("late: lead %v", time.Duration(s.lead))
	}
	for range 100 {
		s.adjustLead(int64(time.Millisecond))
	}
	if s.lead != s.minLead {
		t.Errorf("early: lead %v, want %v", time.Duration(s.lead), time.Duration(s.minLead))
	}
	for range 100 {
		s.adjustLead(-1)
	}
	if s.lead != maxLead {
		t.Errorf("always late: lead %v, want %v", time.Duration(s.lead), time.Duration(maxLead))
	}
}

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
