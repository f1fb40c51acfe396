//go:build linux

package nexarsim

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// With NEXAR_SIM_TEST_FSIZE set, the test binary running as nexar-sim may
// write files of that many bytes at most (RLIMIT_FSIZE): a write past it
// fails with EFBIG, as one to a full disk fails with ENOSPC.
func init() {
	if v := os.Getenv("NEXAR_SIM_TEST_FSIZE"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
		}
		if err != nil {
			panic(err)
		}
	}
}

// sixPoints is a quick study of six points.
const sixPoints = `name = "six"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 4, 8]
bytes = ["64KiB", "1MiB"]
`

// limitedSim runs nexar-sim with files of at most limit bytes; it returns
// the exit status and standard error.
func limitedSim(t *testing.T, limit int, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), beMain+"=1", "NEXAR_SIM_TEST_FSIZE="+strconv.Itoa(limit))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// checkpointOf returns what the checkpoint of the first n rows of results
// (a results.csv of this scenario, shard 1/1) holds.
func checkpointOf(t *testing.T, file string, results []byte, n int) []byte {
	t.Helper()
	s, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sweep.ReadCSV(bytes.NewReader(results))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), checkpointFile)
	ck, err := writeCheckpoint(path, fmt.Sprintf("%s hash=%s shard=1/1", checkpointMagic, s.Hash), rows[:n])
	if err != nil {
		t.Fatal(err)
	}
	ck.Close()
	return readFile(t, path)
}

// TestFullDiskKeepsCheckpoint: the disk fills up (here: a file size limit)
// while a run's checkpoint grows; the rows computed before stay in it, the
// error says where, and --resume then finishes with results
// byte-identical to an uninterrupted run's. And a --resume that cannot
// write its new checkpoint leaves the old one whole: it is written anew
// beside it and renamed, not rewritten in place.
func TestFullDiskKeepsCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "six.toml", sixPoints)
	whole := filepath.Join(dir, "whole")
	runOK(t, "run", file, "--out", whole, "--no-plots", "-q")
	want := readFile(t, filepath.Join(whole, "results.csv"))

	// Room for the checkpoint's first two rows and half the third.
	two, three := checkpointOf(t, file, want, 2), checkpointOf(t, file, want, 3)
	limit := (len(two) + len(three)) / 2
	out := filepath.Join(dir, "out")
	code, stderr := limitedSim(t, limit, "run", file, "--out", out, "--no-plots", "-q", "--jobs", "1")
	ck := filepath.Join(out, checkpointFile)
	kept, _ := os.ReadFile(ck)
	rows := max(strings.Count(string(kept), "\n")-2, 0)
	t.Logf("files of %d bytes at most: exit %d, %d rows kept in the checkpoint: %s", limit, code, rows, strings.TrimSpace(stderr))
	if code != exitFailed {
		t.Errorf("exit status %d, want %d", code, exitFailed)
	}
	if rows < 2 || !strings.Contains(stderr, "kept in "+ck) {
		t.Errorf("%d rows kept in %s, which stderr names: %v", rows, ck, strings.Contains(stderr, "kept in "+ck))
	}

	// --resume, the checkpoint (two rows) larger than what may be written
	// now.
	os.MkdirAll(out, 0o777)
	if err := os.WriteFile(ck, two, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr = limitedSim(t, len(two)/2, "run", file, "--out", out, "--no-plots", "-q", "--resume")
	after, _ := os.ReadFile(ck)
	t.Logf("--resume with files of %d bytes at most: exit %d; checkpoint %d bytes, was %d: %s", len(two)/2, code, len(after), len(two), strings.TrimSpace(stderr))
	if !bytes.Equal(after, two) {
		t.Fatalf("the checkpoint changed: %d bytes, was %d", len(after), len(two))
	}

	runOK(t, "run", file, "--out", out, "--no-plots", "-q", "--resume")
	if got := readFile(t, filepath.Join(out, "results.csv")); !bytes.Equal(got, want) {
		t.Errorf("results after --resume differ from an uninterrupted run's:\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(ck); err == nil {
		t.Error("the checkpoint is left after the run finished")
	}
}
