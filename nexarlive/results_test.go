//go:build linux

package nexarlive

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/results"
)

// With NEXAR_LIVE_TEST_FSIZE set, the test binary running as nexar-live
// may write files of that many bytes at most (RLIMIT_FSIZE): a write past
// it fails with EFBIG, as one to a full disk fails with ENOSPC.
func init() {
	if v := os.Getenv("NEXAR_LIVE_TEST_FSIZE"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
		}
		if err != nil {
			panic(err)
		}
	}
}

// resumeScenario has six points on 2 ranks.
const resumeScenario = `name = "resume"

[network]
model = "alpha-beta"
latency = "100us"
bandwidth = "500MB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling", "rs_ag"]
world = [2]
bytes = [1020, 4096]
data = "host"
`

func writeResumeScenario(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "resume.toml")
	if err := os.WriteFile(path, []byte(resumeScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rowsIn returns the rows of a results file, complete ones only (a file
// whose writer stopped half-way may end in a cut row).
func rowsIn(t *testing.T, path string) []live.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := live.ReadPartialResults(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rs
}

// resumeToEnd runs the scenario again with --resume and checks that
// results.csv then holds all six points, nothing wrong.
func resumeToEnd(t *testing.T, file, out string, extra ...string) string {
	t.Helper()
	args := append([]string{"run", "--np", "2", file, "--out", out, "--no-compare", "--warmup", "1", "--iters", "2", "--timeout", "30s", "--resume"}, extra...)
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("--resume: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Errorf("results.csv after --resume: %d rows, want 6", len(rs))
	}
	for _, r := range rs {
		if r.Wrong != 0 || r.World != 2 || r.Time <= 0 {
			t.Errorf("%s/%s %d B: wrong %d, world %d, time %g", r.Collective, r.Algorithm, r.Bytes, r.Wrong, r.World, r.Time)
		}
	}
	return stderr
}

// TestRunRankZeroKilled: rank 0 is killed as it starts point 3, an
// earlier run's results.partial.csv in the output directory. The rows it
// had measured are kept in results.partial.csv and the user is told so;
// the earlier run's file is kept too (results.partial.1.csv); --resume
// then measures the rest.
func TestRunRankZeroKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	file, out := writeResumeScenario(t), t.TempDir()
	older := []byte(strings.Join(results.LiveColumns(false, false), ",") + "\n")
	if err := os.WriteFile(filepath.Join(out, live.PartialResultsFile), older, 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(out, live.PartialResultsFile), past, past)
	code, _, stderr := runCLI("run", "--np", "2", file, "--out", out, "--no-compare", "--warmup", "1", "--iters", "2", "--timeout", "30s", "--kill", "0@3")
	if code != exitRanks {
		t.Fatalf("exit status %d, want %d\n%s", code, exitRanks, stderr)
	}
	partial := filepath.Join(out, live.PartialResultsFile)
	rs := rowsIn(t, partial)
	t.Logf("rank 0 killed at point 3: %d rows kept in %s\n%s", len(rs), partial, stderr)
	if len(rs) != 3 {
		t.Errorf("%d rows kept, want the 3 rank 0 measured", len(rs))
	}
	if !strings.Contains(stderr, "what was measured before is in "+partial) {
		t.Errorf("stderr does not point at %s", partial)
	}
	if b, err := os.ReadFile(filepath.Join(out, "results.partial.1.csv")); err != nil || !bytes.Equal(b, older) {
		t.Errorf("the earlier run's partial file: %v", err)
	}
	resumeToEnd(t, file, out)
}

// TestRunFullDisk: the disk fills up (here: a file size limit) while rank
// 0 writes its rows, an earlier run's complete results.csv in the output
// directory. That results.csv is left as it was; what was written goes to
// results.partial.csv, which stderr names; --resume then measures the
// rest.
func TestRunFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file, out := writeResumeScenario(t), t.TempDir()
	args := []string{"run", "--np", "2", file, "--out", out, "--no-compare", "--warmup", "1", "--iters", "2", "--emulate", "latency=1ms,bandwidth=100MB/s"}
	if code, stdout, stderr := runCLI(args...); code != exitOK {
		t.Fatalf("the first run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	complete, err := os.ReadFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	// The header and about two rows fit.
	limit := len(complete) / 2
	cmd.Env = append(os.Environ(), "NEXAR_LIVE_TEST_FSIZE="+strconv.Itoa(limit))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	after, _ := os.ReadFile(filepath.Join(out, live.ResultsFile))
	t.Logf("files of %d bytes at most: exit %d; results.csv %d bytes (was %d)\n%s", limit, cmd.ProcessState.ExitCode(), len(after), len(complete), stderr.String())
	if cmd.ProcessState.ExitCode() != exitRanks {
		t.Errorf("exit status %d, want %d", cmd.ProcessState.ExitCode(), exitRanks)
	}
	if !bytes.Equal(after, complete) {
		t.Fatalf("results.csv changed: %d bytes, was %d", len(after), len(complete))
	}
	partial := filepath.Join(out, live.PartialResultsFile)
	rs := rowsIn(t, partial)
	if len(rs) == 0 || !strings.Contains(stderr.String(), partial) {
		t.Errorf("%d rows in %s, which stderr names: %v", len(rs), partial, strings.Contains(stderr.String(), partial))
	}
	resumeToEnd(t, file, out, "--emulate", "latency=1ms,bandwidth=100MB/s")
}

// TestRunLauncherKilled: the launcher itself is killed (SIGKILL) while
// the ranks measure; rank 0 dies with it, its rows in a temporary file.
// The next run into the output directory saves them as
// results.partial.csv and says so, and with --resume goes on after them.
func TestRunLauncherKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file, out := writeResumeScenario(t), t.TempDir()
	cmd := exec.Command(exe, "run", "--np", "2", file, "--out", out, "--no-compare", "--warmup", "1", "--iters", "200", "--timeout", "30s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once rank 0 has written a row.
	deadline := time.Now().Add(60 * time.Second)
	for {
		names, _ := filepath.Glob(filepath.Join(out, ".results.csv.*.tmp"))
		if len(names) == 1 {
			if b, _ := os.ReadFile(names[0]); bytes.Count(b, []byte("\n")) >= 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("rank 0 wrote no row in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Rank 0's temporary file: the next run leaves it alone while its
	// writer is alive.
	names, _ := filepath.Glob(filepath.Join(out, ".results.csv.*.tmp"))
	cmd.Process.Kill()
	cmd.Wait()
	// The ranks die with it (the parent-death signal). A process that is
	// exiting has no command line left to name out while it is not yet a
	// zombie, so wait for rank 0 itself, as the next run judges it.
	for time.Now().Before(deadline) && (len(processesNaming(out)) > 0 || len(names) == 1 && live.WriterAlive(names[0])) {
		time.Sleep(20 * time.Millisecond)
	}
	// With the killed run's --iters: a partial file of other flags is
	// refused.
	stderr := resumeToEnd(t, file, out, "--iters", "200")
	t.Logf("after the launcher was killed, the next run:\n%s", stderr)
	if !strings.Contains(stderr, "whose launcher was killed") || !strings.Contains(stderr, "resuming after the") {
		t.Errorf("the next run did not say it saved and resumed the rows left:\n%s", stderr)
	}
}
