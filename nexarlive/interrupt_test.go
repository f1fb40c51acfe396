//go:build linux

package nexarlive

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/step"
	"github.com/nexar-go/nexar-go/workload"
)

// TestRunInterrupted presses Ctrl-C on 'nexar-live run' once its first
// point is measured: the run ends with status 130, what was measured is in
// results.partial.csv (with the thresholds the ranks used), no temporary file is left in the output directory,
// and no rank process is left.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// Many iterations per point: the run is still going when interrupted.
	cmd := exec.Command(exe, "run", "--np", "3", "../live/examples/loopback-ci.toml", "--out", out,
		"--warmup", "1", "--iters", "50", "--timeout", "30s", "--no-compare")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	rows := 0
	for sc.Scan() && rows < 1 {
		if f := strings.Fields(sc.Text()); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			rows++
		}
	}
	if rows < 1 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the run printed %d rows before it ended\n%s", rows, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the run did not end within 30 s of SIGINT\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit status %d (%v), want %d\n%s", code, err, exitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
	rs, err := live.ReadResultsFile(filepath.Join(out, live.PartialResultsFile))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if len(rs) < 1 {
		t.Errorf("results.partial.csv has %d rows, want the one measured at least", len(rs))
	}
	// The thresholds the ranks used: nexar-live's defaults.
	for _, r := range rs {
		if tr := r.Transport(); tr == nil || *tr != (live.Thresholds{Bulk: 64 << 10}) {
			t.Errorf("results.partial.csv: thresholds %+v, want nexar-live's defaults (64 KiB, eager off)", r.Transport())
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != live.PartialResultsFile {
			t.Errorf("output directory holds %s", e.Name())
		}
	}
	if ps := processesNaming(out); len(ps) > 0 {
		t.Errorf("processes left running: %v", ps)
	}
}

// processesNaming returns the pids of the processes whose command line
// mentions s.
func processesNaming(s string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

// TestStepInterrupted presses Ctrl-C on 'nexar-live step' once its first
// point is measured: status 130, the point in step.partial.csv, no
// step.csv, no rank process left.
func TestStepInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.toml")
	if err := os.WriteFile(file, []byte(stepTestScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	// Steps of tens of ms: the run is still going when interrupted.
	cmd := exec.Command(exe, "step", "--np", "3", file, "--out", out, "--warmup", "0", "--iters", "20", "--timeout", "30s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	measured := false
	for !measured && sc.Scan() {
		measured = strings.HasPrefix(sc.Text(), "# measured point 0 ")
	}
	if !measured {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the run measured no point before it ended\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the run did not end within 30 s of SIGINT\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit status %d (%v), want %d, saying it was interrupted\n%s", code, err, exitInterrupted, stderr.String())
	}
	f, err := os.Open(filepath.Join(out, step.PartialFile))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	rows, err := workload.ReadCSV(f)
	f.Close()
	if err != nil || len(rows) < 1 || len(rows) >= 4 {
		t.Errorf("step.partial.csv: %d rows (%v), want from 1 to 3", len(rows), err)
	}
	if _, err := os.Stat(filepath.Join(out, step.File)); err == nil {
		t.Errorf("an interrupted run wrote %s", step.File)
	}
	if !strings.Contains(stderr.String(), "the points measured before are in") {
		t.Errorf("stderr does not name the partial file:\n%s", stderr.String())
	}
}
