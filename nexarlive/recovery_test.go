package nexarlive

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/live"
)

// shrinkScenario is a sweep of 8 points on 4 ranks: two sizes (one on
// each side of the bulk threshold) of four allreduce algorithms, one of
// which (recursive_doubling) works on any world size.
const shrinkScenario = `name = "shrink"
seed = 5

[network]
model = "alpha-beta"
latency = "100us"
bandwidth = "500MB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling", "rs_ag", "binomial_tree"]
world = [4]
bytes = [1020, "256KiB"]
data = "host"
`

func writeShrinkScenario(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shrink.toml")
	if err := os.WriteFile(path, []byte(shrinkScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunShrink: 4 rank processes, rank 2's killed (SIGKILL) as it starts
// point 3; with --recovery shrink the run finishes with status 0, the
// points from where the survivors resumed ran at 3 ranks with nothing
// wrong, and the failure and the rebuild are reported.
func TestRunShrink(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--np", "4", writeShrinkScenario(t), "--out", out, "--no-compare",
		"--warmup", "1", "--iters", "2", "--timeout", "30s",
		"--recovery", "shrink", "--kill", "2@3", "--heartbeat", "200ms", "--dead-after", "3s")
	if code != exitOK {
		t.Fatalf("exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// A killed rank's connection ends with a FIN ("closed") or, when it
	// died with bytes unread, a reset ("failed: ... connection reset"):
	// both are the kill seen, and which one is the kernel's choice.
	for _, want := range []string{"killing rank 2", "rank 2 lost: its connection", "agreed that 2 failed", "world 1 of 3 ranks connected"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "# recovery 1: lost rank 2") || !strings.Contains(stdout, "(algorithm rs_ag, 3 ranks)") {
		t.Errorf("the table does not report the recovery and the points at 3 ranks:\n%s", stdout)
	}
	evs, err := live.ReadRecoveryFile(filepath.Join(out, live.RecoveryFile))
	if err != nil || len(evs) != 1 {
		t.Fatalf("recovery.json: %v, %d events", err, len(evs))
	}
	ev := evs[0]
	if !slices.Equal(ev.Failed, []int{2}) || !slices.Equal(ev.Members, []int{0, 1, 3}) || ev.WorldBefore != 4 || ev.WorldAfter != 3 ||
		ev.RebuildS <= 0 || ev.AgreedS < 0 || ev.ResumePoint < 2 || ev.ResumePoint > 3 {
		t.Errorf("recovery event %+v", ev)
	}
	t.Logf("%s", ev)
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	// Points before the resume point ran at 4 ranks; from it on at 3 (one
	// point may have finished at 4 ranks on rank 0 and run again at 3).
	at3 := 0
	for i, r := range rs {
		if r.Wrong != 0 || r.Time <= 0 {
			t.Errorf("row %d: %s/%s p=%d: wrong %d, time %g", i, r.Collective, r.Algorithm, r.World, r.Wrong, r.Time)
		}
		switch {
		case r.World == 3:
			at3++
		case r.World != 4 || at3 > 0:
			t.Errorf("row %d: %s/%s at %d ranks after %d rows at 3", i, r.Collective, r.Algorithm, r.World, at3)
		}
	}
	if want := 8 - ev.ResumePoint; at3 != want {
		t.Errorf("%d rows at 3 ranks, want %d (points %d..7)", at3, want, ev.ResumePoint)
	}
}

// TestRunKillAbort: the same failure without --recovery ends the run
// with status 3, blaming rank 2.
func TestRunKillAbort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	code, _, stderr := runCLI("run", "--np", "4", writeShrinkScenario(t), "--out", out, "--no-compare",
		"--warmup", "1", "--iters", "2", "--timeout", "30s", "--kill", "2@3")
	if code != exitRanks || !strings.Contains(stderr, "live: rank 2 failed (killed by nexar-live --kill 2@3)") {
		t.Fatalf("exit status %d, want %d, blaming rank 2:\n%s", code, exitRanks, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, live.RecoveryFile)); err == nil {
		t.Error("recovery.json written by a run that did not recover")
	}
}

// TestRunElastic: an elastic world of 3 to 4 ranks; a fourth worker
// starts as rank 0 starts point 2 and enters at the next point boundary:
// the run finishes with status 0, the points before at 3 ranks, the
// points after at 4, nothing wrong, and the growth reported.
func TestRunElastic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "elastic.toml")
	if err := os.WriteFile(path, []byte(strings.Replace(shrinkScenario, "world = [4]", "world = [3]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--np", "3", path, "--out", out, "--no-compare",
		"--warmup", "1", "--iters", "2", "--timeout", "30s",
		"--recovery", "shrink", "--max-np", "4", "--join-late", "2", "--heartbeat", "200ms", "--dead-after", "3s")
	if code != exitOK {
		t.Fatalf("exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "agreed to take in 3") {
		t.Errorf("stderr does not report the member taken in:\n%s", stderr)
	}
	evs, err := live.ReadRecoveryFile(filepath.Join(out, live.RecoveryFile))
	if err != nil || len(evs) != 1 {
		t.Fatalf("recovery.json: %v, %d events", err, len(evs))
	}
	ev := evs[0]
	if !slices.Equal(ev.Joined, []int{3}) || len(ev.Failed) != 0 || ev.WorldBefore != 3 || ev.WorldAfter != 4 || ev.ResumePoint < 2 {
		t.Errorf("recovery event %+v", ev)
	}
	t.Logf("%s", ev)
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 {
		t.Errorf("%d rows, want 8 (a point boundary loses nothing and repeats nothing)", len(rs))
	}
	for i, r := range rs {
		want := 3
		if i >= ev.ResumePoint {
			want = 4
		}
		if r.Wrong != 0 || r.World != want {
			t.Errorf("row %d: %s/%s at %d ranks (want %d), wrong %d", i, r.Collective, r.Algorithm, r.World, want, r.Wrong)
		}
	}
}
