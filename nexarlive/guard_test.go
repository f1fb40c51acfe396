package nexarlive

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/verify"
)

// onMachine makes the guard see m for the rest of the test.
func onMachine(t *testing.T, m machine) {
	t.Helper()
	was := thisMachine
	thisMachine = func() machine { return m }
	t.Cleanup(func() { thisMachine = was })
}

// TestGuardRanks: ranks above the cores are a warning that says what
// sharing cores does to the times; more than 4 per core, or more than the
// memory holds, are refused unless --oversubscribe.
func TestGuardRanks(t *testing.T) {
	laptop := machine{cores: 2, memAvail: 8 << 30}
	for _, c := range []struct {
		name          string
		np            int
		perRank       int64
		m             machine
		oversubscribe bool
		warning, err  string
	}{
		{"fewer ranks than cores", 2, 32 << 20, laptop, false, "", ""},
		{"the README's 4 ranks on 2 cores", 4, 32 << 20, laptop, false, "4 ranks on 2 core(s): the ranks share cores, so a latency measured includes the time a rank waits to be scheduled, and a bandwidth is shared", ""},
		{"4 per core", 8, 32 << 20, laptop, false, "8 ranks on 2 core(s)", ""},
		{"over 4 per core", 9, 32 << 20, laptop, false, "", "--np 9 is more than 4 ranks per core on this machine's 2 core(s): each rank would wait its turn on a core"},
		{"5000 ranks", 5000, 32 << 20, laptop, false, "", "give fewer ranks, or --oversubscribe (mpirun's flag) to run them anyway"},
		{"5000 ranks, --oversubscribe", 5000, 32 << 20, laptop, true, "warning: --oversubscribe: --np 5000 is more than 4 ranks per core", ""},
		{"more than the memory", 4, 3 << 30, laptop, false, "", "--np 4 ranks need about 12.0 GiB (an estimated 3.00 GiB per rank, with its buffers), more than the 8.00 GiB this machine has available"},
		{"memory unknown", 4, 3 << 30, machine{cores: 4}, false, "", ""},
		{"no core count", 1, 32 << 20, machine{}, false, "", ""},
	} {
		warning, err := guardRanks("run", c.np, c.perRank, c.m, c.oversubscribe)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
		if c.warning == "" && warning != "" || !strings.Contains(warning, c.warning) {
			t.Errorf("%s: warning %q, want %q", c.name, warning, c.warning)
		}
	}
}

// TestRankBytes: a rank's estimate is its base and twice its largest
// point's buffers.
func TestRankBytes(t *testing.T) {
	s, err := scenario.Parse("s.toml", []byte(strings.Replace(resumeScenario, "bytes = [1020, 4096]", `bytes = ["1MiB", "64MiB"]`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	job, err := live.NewJob(s, 2, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// allreduce in place: a buffer, its pristine copy and the reference,
	// 3 x 64 MiB, twice.
	if got, want := rankBytes(job, false), int64(32<<20+2*3*64<<20); got != want {
		t.Errorf("a rank process: %d, want %d", got, want)
	}
	if got, want := rankBytes(job, true), int64(4<<20+2*3*64<<20); got != want {
		t.Errorf("an emulated rank: %d, want %d", got, want)
	}
}

// TestRefusedRunsWriteNothing: a run refused for its --np, its --emulate,
// or a foreign checkpoint exits 2 and writes nothing (a bad --emulate
// used to leave scenario.toml behind).
func TestRefusedRunsWriteNothing(t *testing.T) {
	onMachine(t, machine{cores: 2, memAvail: 2 << 30})
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--np", "5000", "-b", "8", "-e", "64"}, "--np 5000 is more than 4 ranks per core on this machine's 2 core(s)"},
		{[]string{"run", "--np", "2", "-b", "8", "-e", "64", "--emulate", "latency=1ms"}, "--emulate: emulate: \"latency=1ms\": latency and bandwidth are required"},
		{[]string{"run", "--np", "2", "-b", "8", "-e", "64", "--emulate", "latency=1ms,bandwidth=fast"}, "--emulate: emulate: bandwidth"},
		{[]string{"run", "--np", "8", "-b", "8", "-e", "64M", "--emulate", "latency=1ms,bandwidth=1GB/s"}, "--np 8 ranks need about 2.98 GiB (an estimated 382 MiB per rank, with its buffers), more than the 2.00 GiB this machine has available"},
		{[]string{"step", "--np", "9", "../live/examples/loopback-step.toml"}, "--np 9 is more than 4 ranks per core"},
		{[]string{"verify", "--np", "2,16", "tuning.toml"}, "--np 16 is more than 4 ranks per core"},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, stderr := runCLI(append(c.args, "--out", out)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d\n%s%s\nwant exit %d and %q", c.args, code, stdout, stderr, exitUsage, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%q: a refused run wrote %s", c.args, out)
			os.RemoveAll(out)
		}
	}
}

// TestOversubscribedRunWarns: more ranks than cores (the README's 4 on a
// 2-core laptop) run, with the warning; the run says what it will take
// before its first point, and a model far off the measurements ends with
// the commands that calibrate one.
func TestOversubscribedRunWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	onMachine(t, machine{cores: 2, memAvail: 8 << 30})
	out := t.TempDir()
	file := filepath.Join(t.TempDir(), "three.toml")
	if err := os.WriteFile(file, []byte(strings.Replace(resumeScenario, "world = [2]", "world = [3]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The model (100 us, 500 MB/s) is far off the emulated network (5 ms).
	code, stdout, stderr := runCLI("run", "--np", "3", file, "--out", out, "--warmup", "1", "--iters", "2", "--emulate", "latency=5ms,bandwidth=100MB/s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"nexar-live run: warning: 3 ranks on 2 core(s): the ranks share cores",
		"nexar-live run: 6 point(s) to measure: roughly",
		"nexar-live run: the model of " + file + " is ",
		"nexar-live calibrate --model " + calibrateModels + " --out " + filepath.Join(out, "calibrated.toml") + " " + filepath.Join(out, live.ResultsFile),
		"nexar-live compare " + filepath.Join(out, "calibrated.toml") + " " + filepath.Join(out, live.ResultsFile),
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestProgressLines: the progress of a run, on a clock the test moves:
// the plan as the first point starts, then a line at most every 10 s with
// the ETA from the estimates, not from the first point alone.
func TestProgressLines(t *testing.T) {
	s, err := scenario.Parse("s.toml", []byte(resumeScenario))
	if err != nil {
		t.Fatal(err)
	}
	job, err := live.NewJob(s, 2, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := newProgress(&b, "run", s, job, 0)
	if len(p.secs) != 6 {
		t.Fatalf("estimates %v", p.secs)
	}
	// Each point estimated at 10 s.
	for i := range p.secs {
		p.secs[i] = 10
	}
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	p.started(0)
	now = now.Add(5 * time.Second)
	p.started(1) // within 10 s of the first line: no line
	// Point 3 starts 60 s in: two points done, at 30 s a point where 10
	// s were estimated.
	now = now.Add(55 * time.Second)
	p.started(2)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	if !strings.Contains(lines[0], "nexar-live run: 6 point(s) to measure: roughly 1.0 min by the model's predictions") {
		t.Errorf("plan %q", lines[0])
	}
	// A third of the estimated work is done, more than a quarter: the
	// pace alone, 40 s left x 3 = 120 s.
	if !strings.Contains(lines[1], "point 3 of 6 (allreduce/recursive_doubling world=2 bytes=1020 f32 sum host), 2 done, elapsed 1m00s, ETA 2m00s") {
		t.Errorf("progress %q", lines[1])
	}
	// Without estimates, no ETA before a point is done.
	p = &progress{w: &b, cmd: "run", points: job.Points, now: p.now}
	p.started(0)
	if _, ok := p.eta(now); ok {
		t.Error("an ETA with nothing done and no estimate")
	}
}

// TestCompareError reads compare.csv's median error, as the hint does.
func TestCompareError(t *testing.T) {
	var b bytes.Buffer
	cs := []verify.Comparison{{Predicted: 1}, {Predicted: 3}, {Predicted: 2}, {Predicted: 5}}
	for i := range cs {
		cs[i].Time, cs[i].Bytes, cs[i].World = 2, 8, 2
	}
	if err := verify.WriteCompareCSV(&b, cs); err != nil {
		t.Fatal(err)
	}
	// |1/2-1|, |3/2-1|, 0, |5/2-1|: 0.5, 0.5, 0, 1.5; median 0.5.
	med, n, err := compareError(&b)
	if err != nil || n != 4 || med != 0.5 {
		t.Errorf("median %g of %d, %v", med, n, err)
	}
	if h := calibrateHint("compare", "m.toml", 0.2, 10, []string{"r.csv"}, "d"); h != "" {
		t.Errorf("a hint at 20%%: %q", h)
	}
	h := calibrateHint("compare", "m.toml", 0.5, 10, []string{"r.csv"}, "d")
	if !strings.Contains(h, "the model of m.toml is 50% off these measurements") || !strings.Contains(h, "--out "+filepath.Join("d", "calibrated.toml")+" r.csv") {
		t.Errorf("hint %q", h)
	}
}

// FuzzCompareError: any compare.csv reads without a panic.
func FuzzCompareError(f *testing.F) {
	f.Add("collective,algorithm,world,bytes,dtype,params,op,predicted_s,measured_s,ratio\nallreduce,ring,2,8,f32,,sum,1e-6,2e-6,0.5\n")
	f.Add("predicted_s,measured_s\n1,0\nx,1\n")
	f.Fuzz(func(t *testing.T, text string) {
		med, n, err := compareError(strings.NewReader(text))
		if err == nil && n > 0 && !(med >= 0) {
			t.Fatalf("median %g of %d points", med, n)
		}
	})
}

// TestComparePlotUnwritable: a compare.png that cannot be written fails
// the command (it used to be a warning, and exit status 0).
func TestComparePlotUnwritable(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	file, out := writeResumeScenario(t), t.TempDir()
	// A directory where compare.png goes: its rename into place fails.
	if err := os.Mkdir(filepath.Join(out, verify.ComparePlotFile), 0o777); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("run", "--np", "2", file, "--out", out, "--warmup", "1", "--iters", "2", "--emulate", "latency=1ms,bandwidth=100MB/s")
	if code == exitOK || !strings.Contains(stderr, verify.ComparePlotFile) {
		t.Errorf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// compare, from the results the run wrote; the model (100 us) is far
	// off the emulated network (1 ms): the hint names the commands.
	results := filepath.Join(out, live.ResultsFile)
	code, stdout, stderr = runCLI("compare", file, results, "--out", out)
	if code == exitOK || !strings.Contains(stderr, verify.ComparePlotFile) {
		t.Errorf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "nexar-live calibrate --model " + calibrateModels + " --out " + filepath.Join(out, "calibrated.toml") + " " + results; !strings.Contains(stderr, want) {
		t.Errorf("compare: no hint %q:\n%s", want, stderr)
	}
}

// TestResumeForeign: --resume with the partial file of another scenario,
// or of other flags, is refused (exit 2, the file left as it was), and
// the refusal says what differs.
func TestResumeForeign(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	file, out := writeResumeScenario(t), t.TempDir()
	emulate := []string{"--emulate", "latency=1ms,bandwidth=100MB/s", "--no-compare", "--warmup", "1"}
	if code, stdout, stderr := runCLI(append([]string{"run", "--np", "2", file, "--out", out, "--iters", "2"}, emulate...)...); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(out, live.PartialResultsFile)
	lines := strings.SplitAfter(string(data), "\n")
	kept := strings.Join(lines[:3], "") // the header and two rows
	if err := os.WriteFile(partial, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.toml")
	if err := os.WriteFile(other, []byte(strings.Replace(resumeScenario, "bytes = [1020, 4096]", "bytes = [1024, 4096]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{file, "--iters", "3"}, "its row 1 is not this run's point 1 (allreduce/ring world=2 bytes=1020 f32 sum host): 2 timed iterations, not --iters 3"},
		{[]string{other, "--iters", "2"}, "size 1020 B, not 1 KiB"},
	} {
		code, stdout, stderr := runCLI(append(append([]string{"run", "--np", "2", "--out", out, "--resume"}, c.args...), emulate...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "is not of this run") {
			t.Errorf("%q: exit %d\n%s%s\nwant exit %d and %q", c.args, code, stdout, stderr, exitUsage, c.want)
		}
		if got, _ := os.ReadFile(partial); string(got) != kept {
			t.Errorf("%q: the partial file changed", c.args)
		}
		if got, _ := os.ReadFile(filepath.Join(out, live.ResultsFile)); !bytes.Equal(got, data) {
			t.Errorf("%q: results.csv changed", c.args)
		}
	}
}
