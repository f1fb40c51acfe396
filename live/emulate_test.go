package live

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
)

func TestParseEmulation(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Emulation
		err  string
	}{
		{in: "latency=5ms,bandwidth=10MB/s", want: Emulation{Latency: 5 * time.Millisecond, Bandwidth: 10e6}},
		{in: " latency = 500us , bandwidth=100Mbit/s, mtu=9000, queue=20ms",
			want: Emulation{Latency: 500 * time.Microsecond, Bandwidth: 12.5e6, MTU: 9000, Queue: 20 * time.Millisecond}},
		{in: "latency=5ms", err: "latency and bandwidth are required"},
		{in: "latency=5ms,bandwidth=10MB/s,latency=1ms", err: "latency given twice"},
		{in: "latency=5ms,bandwidth=fast", err: "bandwidth"},
		{in: "latency=5ms,bandwidth=1MB/s,mtu=100", err: "QUIC needs 1280"},
		{in: "latency=5ms,bandwidth=1MB/s,color=red", err: `unknown key "color"`},
		{in: "latency", err: "not key=value"},
	} {
		got, err := ParseEmulation(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && got != c.want:
			t.Errorf("%q = %+v, want %+v", c.in, got, c.want)
		}
	}
	e := Emulation{Latency: 2 * time.Millisecond, Bandwidth: 2.5e7, MTU: 1500}
	if back, err := ParseEmulation(e.String()); err != nil || back != e {
		t.Errorf("%q read back as %+v, %v", e.String(), back, err)
	}
}

// TestRunEmulated runs a small sweep on 3 in-process ranks over an
// emulated network: the data must be right, and no collective can beat
// the network's latency.
func TestRunEmulated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in real time")
	}
	s, err := scenario.Parse("emu.toml", []byte(`
name = "emu"
[network]
model = "alpha-beta"
latency = "2ms"
bandwidth = "20MB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling"]
world = [3]
bytes = [8, "16KiB"]
`))
	if err != nil {
		t.Fatal(err)
	}
	// MinTime adds iterations while rank 0's timed iterations took less
	// than it in all: an iteration here takes about 10 ms on a quiet
	// machine, so MinTime adds some, unless the load makes two fill it.
	const minTime = 60 * time.Millisecond
	job, err := NewJob(s, 3, Options{Warmup: 1, Iters: 2, MinTime: minTime, MaxIters: 12})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	compared := 0
	rep, err := RunEmulated(context.Background(), Emulation{Latency: 2 * time.Millisecond, Bandwidth: 20e6}, job,
		Output{Table: &table, Scenario: s, Compare: func(_ *scenario.Scenario, _ string, _ io.Writer, rs []results.Row) ([]string, error) {
			compared += len(rs)
			return []string{"compared"}, nil
		}}, realnet.Config{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, table.String())
	}
	if len(rep.Results) != 4 || compared != 4 || !slices.Equal(rep.Warnings, []string{"compared"}) {
		t.Fatalf("%d results, %d compared (warnings %q), want 4 each", len(rep.Results), compared, rep.Warnings)
	}
	// No bulk path: every message on QUIC, as results.csv would record.
	for _, r := range rep.Results {
		if tr := r.Transport(); tr == nil || *tr != (Thresholds{Bulk: -1}) {
			t.Errorf("%s %d B: thresholds %+v, want the bulk path never (-1) and eager mode off", r.Algorithm, r.Bytes, r.Transport())
		}
	}
	for _, c := range rep.Results {
		// The ring on 3 ranks takes 4 latencies, halving-doubling folding
		// 3 into 2 also 4: at least 8 ms on this network.
		if c.Wrong != 0 || c.Time < 8e-3 {
			t.Errorf("%s %d B: wrong %d, time %v: faster than the network allows", c.Algorithm, c.Bytes, c.Wrong, c.Time)
		}
		total := 0.0
		for _, x := range c.Times {
			total += x
		}
		// The times are the slowest rank's, at least rank 0's own.
		if c.Repeats < 2 || c.Repeats > 12 || len(c.Times) != c.Repeats || (c.Repeats == 2 && total < minTime.Seconds()) {
			t.Errorf("%s %d B: %d timed iterations (%d times) taking %v in all, want 3 to 12, or 2 that took %v", c.Algorithm, c.Bytes, c.Repeats, len(c.Times), total, minTime)
		}
	}
	if !strings.Contains(table.String(), "emulated network") {
		t.Errorf("table:\n%s", table.String())
	}
}
