package nexarsim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

const bigRing = `name = "big"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [8, 65536]
bytes = ["64MiB"]
`

// TestValidateReportsCosts checks that validate says what each sweep
// will cost, and warns of a point that runs for hours: the 8.6 billion
// messages of a ring allreduce on 65,536 ranks.
func TestValidateReportsCosts(t *testing.T) {
	file := writeFile(t, t.TempDir(), "big.toml", bigRing)
	code, stdout, stderr := nexarSim("validate", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 2(p-1)p messages: 112 at 8 ranks, 8,589,803,520 at 65,536.
	if !strings.Contains(stdout, "sweep 1 ("+file+":8): 2 point(s): 8.59G messages") || !strings.Contains(stdout, "total: 8.59G messages") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "warning: "+file+":8: allreduce/ring world=65536 bytes=67108864 f32 sum phantom simulates 8.59G messages: roughly") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestMemoryWarnings checks the warnings of points over the machine's
// available memory, and of parallel points that may not fit together.
func TestMemoryWarnings(t *testing.T) {
	s, err := scenario.Parse("m.toml", []byte(bigRing))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	c := &costs{points: points, ests: []sweep.Estimate{
		{Estimate: sim.Estimate{Messages: 112, Memory: 3 << 30, Seconds: 1}, Runs: 1},
		{Estimate: sim.Estimate{Messages: 1e6, Memory: 9 << 30, Seconds: 2}, Runs: 1},
	}, errs: make([]error, 2), memTotal: 16 << 30, memAvail: 8 << 30}
	w := strings.Join(c.warnings(s, "m.toml", 1), "\n")
	if !strings.Contains(w, "m.toml:8: allreduce/ring world=65536 bytes=67108864 f32 sum phantom needs about 9.00 GiB of memory, more than the 8.00 GiB this machine has available (of 16.0 GiB)") ||
		strings.Contains(w, "world=8 ") {
		t.Errorf("warnings:\n%s", w)
	}
	c.ests[1].Memory = 4 << 30
	w = strings.Join(c.warnings(s, "m.toml", 4), "\n")
	if !strings.Contains(w, "run 4 at a time (--jobs 4) may not fit") {
		t.Errorf("warnings with --jobs 4:\n%s", w)
	}
	if w := c.warnings(s, "m.toml", 1); len(w) != 0 {
		t.Errorf("warnings of points that fit: %v", w)
	}
}

func TestParseMeminfo(t *testing.T) {
	total, avail := parseMeminfo(strings.NewReader("MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20480000 kB\nbad line\n"))
	if total != 24576000<<10 || avail != 20480000<<10 {
		t.Errorf("total %d, available %d", total, avail)
	}
}

func TestCountsAndSizes(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{count(950), "950"}, {count(12345), "12.3k"}, {count(8589803520), "8.59G"}, {count(999999), "1000k"},
		{bytesOf(512), "512 B"}, {bytesOf(15784004812), "14.7 GiB"}, {bytesOf(1 << 20), "1.00 MiB"},
		{seconds(0.25), "0.25s"}, {seconds(42), "42s"}, {seconds(5000), "1.4 h"}, {seconds(3 * 86400), "3.0 days"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestProgressWeighsPoints checks that the bar follows the estimated
// work: a small point done is a small share, and a long point under way
// counts for the messages it sent; the status names it.
func TestProgressWeighsPoints(t *testing.T) {
	s, _ := scenario.Parse("m.toml", []byte(bigRing))
	points, _ := sweep.Plan(s)
	var out bytes.Buffer
	p := newProgress(&out, false, 0, 2)
	c := &costs{points: points, ests: []sweep.Estimate{
		{Estimate: sim.Estimate{Messages: 100, Events: 100}, Runs: 1},
		{Estimate: sim.Estimate{Messages: 9900, Events: 9900}, Runs: 1},
	}, errs: make([]error, 2)}
	p.weigh(points, c, 1)
	p.step(1)
	if f := p.fraction(); f < 0.0099 || f > 0.0101 {
		t.Errorf("one small point done: %g of the work", f)
	}
	p.point(1, sweep.PointProgress{Run: 0, Runs: 1, Progress: sim.Progress{Now: 3 * sim.Millisecond, Messages: 4950, Recorded: 65536}})
	if f := p.fraction(); f < 0.50 || f > 0.51 {
		t.Errorf("half the long point: %g of the work", f)
	}
	st := p.status()
	if !strings.Contains(st, "1/2 points, 50% of the work; point 2 (allreduce/ring world=65536 bytes=67108864 f32 sum phantom): 3ms simulated, 4.95k of 9.90k messages") {
		t.Errorf("status %q", st)
	}
	p.point(1, sweep.PointProgress{Runs: 1, Progress: sim.Progress{Recorded: 1024}})
	if st := p.status(); !strings.Contains(st, "recorded 1024 of 65536 ranks") {
		t.Errorf("status while recording %q", st)
	}
	p.step(2)
	if f := p.fraction(); f != 1 {
		t.Errorf("all done: %g", f)
	}
	p.finish()
}

// TestTraceOptions checks the Perfetto trace and the --trace-* flags:
// ranks, a window, a refusal before anything runs, and a trace that
// passes its limit while running.
func TestTraceOptions(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", good)
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "--trace", "allreduce:ring:8:8MiB", "--trace-ranks", "0-1,5", "--trace-window", "100us:", "-q", "--no-plots")
	data := readFile(t, filepath.Join(out, "trace_allreduce_ring_p8_8388608B_f32.pftrace"))
	if len(data) == 0 || data[0] != 0x0a {
		t.Errorf("not a Trace message: % x", data[:min(8, len(data))])
	}
	if !bytes.Contains(data, []byte("rank 5")) || bytes.Contains(data, []byte("rank 4")) || !bytes.Contains(data, []byte("100us:0s")) {
		t.Error("the trace does not keep ranks 0, 1 and 5 alone, or lacks its window")
	}

	// Over the limit, with no window: refused before anything runs.
	code, _, stderr := nexarSim("run", file, "--out", filepath.Join(dir, "refused"), "--trace", "0", "--trace-limit", "1KiB")
	if code != exitUsage || !strings.Contains(stderr, "--trace 0: the trace of allreduce/ring world=2 bytes=0") && !strings.Contains(stderr, "over --trace-limit 1.00 KiB") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "refused")); !os.IsNotExist(err) {
		t.Error("a refused run wrote its output directory")
	}
	// With a window, the run goes ahead and the trace is left out if it
	// passes the limit.
	out2 := filepath.Join(dir, "over")
	stderr = runOK(t, "run", file, "--out", out2, "--trace", "allreduce:ring:8:8MiB", "--trace-window", "0:", "--trace-limit", "2KiB", "--no-plots")
	if !strings.Contains(stderr, "warning: the trace of allreduce/ring world=8 bytes=8388608 f32 sum phantom is not written: it passed --trace-limit 2.00 KiB") {
		t.Errorf("stderr: %s", stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(out2, "trace_*")); len(m) != 0 {
		t.Errorf("trace written: %v", m)
	}
	for _, bad := range [][]string{{"--trace-ranks", "3-1"}, {"--trace-window", "5us"}, {"--trace-window", "5us:2us"}, {"--trace-format", "xml"}, {"--trace-limit", "lots"}, {"--trace-ranks", "100"}} {
		code, _, stderr := nexarSim(append([]string{"run", file, "--out", filepath.Join(dir, "bad"), "--trace", "allreduce:ring:8:8MiB"}, bad...)...)
		if code != exitUsage || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: exit %d, %s", bad, code, stderr)
		}
	}
}
