package nexarsim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestProgressETA: the ETA is the estimates' time left, scaled by the
// pace measured only as far as the work done lets it be trusted. The
// first point done took ten times its estimate: extrapolating from it
// would say 15 min; the estimates say 90 s.
func TestProgressETA(t *testing.T) {
	s, _ := scenario.Parse("m.toml", []byte(bigRing))
	points, _ := sweep.Plan(s)
	c := &costs{points: points, ests: []sweep.Estimate{
		{Estimate: sim.Estimate{Messages: 100, Events: 100, Seconds: 10}, Runs: 1},
		{Estimate: sim.Estimate{Messages: 9000, Events: 9000, Seconds: 90}, Runs: 1},
	}, errs: make([]error, 2)}
	for _, tc := range []struct {
		name    string
		done    int
		running *sweep.PointProgress
		jobs    int
		elapsed time.Duration
		min     time.Duration
		max     time.Duration
	}{
		// Nothing done for 30 s: the estimate less the time under way.
		{"nothing done", 0, nil, 1, 30 * time.Second, 70 * time.Second, 70 * time.Second},
		// 10% done in 100 s, ten times slow: the pace weighs 40%,
		// 90 s x 10^0.4 = 226 s, not 900 s.
		{"first point slow", 1, nil, 1, 100 * time.Second, 225 * time.Second, 227 * time.Second},
		// Half the long point's messages sent, on time (55 s).
		{"on time", 1, &sweep.PointProgress{Runs: 1, Progress: sim.Progress{Messages: 4500}}, 1, 55 * time.Second, 45 * time.Second, 45 * time.Second},
		// Two at a time: the long point alone is left, 90 s.
		{"two jobs", 0, nil, 2, 0, 90 * time.Second, 90 * time.Second},
		// Two at a time, the long point half done at 45 s, on time: it
		// is the run's wall time, 45 s left (counting the small point
		// as half the work done would make the pace look slow).
		{"two jobs, the long point half done", 1, &sweep.PointProgress{Runs: 1, Progress: sim.Progress{Messages: 4500}}, 2, 45 * time.Second, 45 * time.Second, 45 * time.Second},
	} {
		p := newProgress(nil, true, 0, 2)
		p.weigh(points, c, tc.jobs)
		p.done = tc.done
		if tc.running != nil {
			p.running[1] = *tc.running
		}
		eta, ok := p.eta(tc.elapsed)
		if !ok || eta < tc.min || eta > tc.max {
			t.Errorf("%s: ETA %v, %v; want %v to %v", tc.name, eta, ok, tc.min, tc.max)
		}
	}
	p := newProgress(nil, true, 0, 2)
	if _, ok := p.eta(time.Second); ok {
		t.Error("an ETA without estimates")
	}
}

// TestEstimatesBeforePoints: a run says what its sweeps will cost before
// its first point has run (a single large point's estimate used to come
// after it had run).
func TestEstimatesBeforePoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "long.toml", strings.Replace(longStudy, "world = [2, 4, 1024]", "world = [2048]", 1))
	out := filepath.Join(dir, "out")
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd := exec.Command(os.Args[0], "run", file, "--out", out, "--jobs", "1", "--no-plots")
	cmd.Env = append(os.Environ(), beMain+"=1")
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		text, _ := os.ReadFile(errFile.Name())
		if strings.Contains(string(text), "1 point(s) to run, 1 at a time: roughly") {
			ck, _ := os.ReadFile(filepath.Join(out, checkpointFile))
			if rows := strings.Count(string(ck), "\n") - 2; rows > 0 {
				t.Fatalf("the checkpoint holds %d row(s) when the estimate is printed:\n%s", rows, text)
			}
			if !strings.Contains(string(text), "sweep 1/1 ("+file+":8): allreduce ring, 1 world size(s) x 1 message size(s), f32 sum phantom: 1 point(s): 8.38M messages") {
				t.Errorf("stderr:\n%s", text)
			}
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Wait()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no estimate printed")
}
