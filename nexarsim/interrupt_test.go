package nexarsim

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary runs as nexar-sim itself when this variable is set, so
// that the tests below can signal a real process.
const beMain = "NEXAR_SIM_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// longStudy has two quick points and a long one: a ring allreduce of 1024
// ranks (two million messages), which runs for about a second. Every rank
// runs (symmetry = "off"): with the symmetry shortcut the point takes a
// few milliseconds, over before the tests' signal.
const longStudy = `name = "long"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 4, 1024]
bytes = ["64MiB"]
symmetry = "off"
`

// startSim starts nexar-sim as a process with args; its stderr goes to
// the returned buffer.
func startSim(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), beMain+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// waitForRows waits until the checkpoint in out has n rows (its magic
// line and header besides), then a little longer, so that the next point
// is under way.
func waitForRows(t *testing.T, out string, n int, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(filepath.Join(out, checkpointFile))
		if strings.Count(string(data), "\n") >= n+2 {
			time.Sleep(300 * time.Millisecond)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatalf("the run did not reach %d rows", n)
}

// stages lists the staging directories left in out.
func stages(t *testing.T, out string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, stagePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestInterruptInsidePoint interrupts a run while its long point runs,
// with SIGINT and with SIGTERM: the run ends within a second with status
// 130, keeps the checkpoint of the points before and leaves no staging
// directory; run --resume then finishes with results byte-identical to an
// uninterrupted run's.
func TestInterruptInsidePoint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a two-million-message point three times")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "long.toml", longStudy)
	whole := filepath.Join(dir, "whole")
	runOK(t, "run", file, "--out", whole, "--no-plots", "-q")
	want := readFile(t, filepath.Join(whole, "results.csv"))

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(dir, "out-"+fmt.Sprint(int(sig)))
			cmd, stderr := startSim(t, "run", file, "--out", out, "--no-plots", "--jobs", "1")
			waitForRows(t, out, 2, cmd)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			took := time.Since(sent)
			code := cmd.ProcessState.ExitCode()
			t.Logf("exit %d %v after %v: %s", code, err, took, strings.TrimSpace(stderr.String()))
			if code != exitInterrupted {
				t.Fatalf("exit status %d, want %d", code, exitInterrupted)
			}
			if took > time.Second {
				t.Errorf("the run took %v to stop", took)
			}
			if !strings.Contains(stderr.String(), "interrupted after 2 of 3 points; run again with --resume") {
				t.Errorf("stderr: %s", stderr)
			}
			if s := stages(t, out); len(s) > 0 {
				t.Errorf("staging directories left: %v", s)
			}
			if _, err := os.Stat(filepath.Join(out, "results.csv")); !os.IsNotExist(err) {
				t.Error("an interrupted run wrote results.csv")
			}
			got := runOK(t, "run", file, "--out", out, "--no-plots", "--resume")
			if !strings.Contains(got, "resuming after 2 of 3 points") {
				t.Errorf("resume: %s", got)
			}
			if !bytes.Equal(readFile(t, filepath.Join(out, "results.csv")), want) {
				t.Error("the resumed run's results differ from an uninterrupted run's")
			}
		})
	}
}

// TestKilledRunsStagesAreCleaned kills a run outright (SIGKILL), which
// leaves its staging directory, and checks that the next run into the
// same directory removes it, and the ownerless one of an old run, but not
// the directory of a run still going (this test's own process).
func TestKilledRunsStagesAreCleaned(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "long.toml", longStudy)
	out := filepath.Join(dir, "out")
	cmd, _ := startSim(t, "run", file, "--out", out, "--no-plots", "--jobs", "1", "-q")
	waitForRows(t, out, 1, cmd)
	cmd.Process.Kill()
	cmd.Wait()
	killed := stages(t, out)
	if len(killed) != 1 {
		t.Fatalf("staging directories after SIGKILL: %v", killed)
	}
	// An ownerless directory of an old run, one of a new run, and one of
	// a live run.
	old := filepath.Join(out, stagePrefix+"old")
	recent := filepath.Join(out, stagePrefix+"recent")
	live := filepath.Join(out, stagePrefix+"live")
	for _, d := range []string{old, recent, live} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	host, _ := os.Hostname()
	writeFile(t, live, ownerFile, fmt.Sprintf("%d %s\n", os.Getpid(), host))
	long := time.Now().Add(-time.Hour)
	os.Chtimes(old, long, long)

	small := writeFile(t, dir, "small.toml", good)
	runOK(t, "run", small, "--out", out, "--no-plots", "-q")
	left := stages(t, out)
	if strings.Join(left, " ") != recent+" "+live && strings.Join(left, " ") != live+" "+recent {
		t.Errorf("staging directories left: %v; want only the recent ownerless one and the live one", left)
	}
}
