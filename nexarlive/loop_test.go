package nexarlive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTune runs the whole loop on a tiny sweep over an emulated network
// (4 ranks as goroutines, 100 µs and 100 MB/s, where recursive doubling
// gives way to the ring near 64 KiB): measure, calibrate, simulate,
// verify, and the summary that says how far the model was before and
// after.
func TestTune(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for about 20 s")
	}
	out := filepath.Join(t.TempDir(), "tune")
	code, stdout, stderr := runCLI("tune", "--np", "4", "-b", "1K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1",
		"--algorithms", "ring,recursive_doubling", "--emulate", "latency=100us,bandwidth=100MB/s", "--span", "1", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, f := range []string{"p4/results.csv", "p4/compare.csv", "p4/" + tuneCalibCompare, tuneModelFile, tuneCalibrate, tuneTuningFile, "verify/verify.csv", tuneSummaryFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, tuneSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"1. `nexar-live run -b 1K", "2. `nexar-live calibrate --out", "3. `simulate ", "4. `nexar-live verify ",
		"chose ", "| 4 | 12 | ", "## The tuning table (tuning.toml)", "recursive_doubling -> ring",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in %s:\n%s", want, tuneSummaryFile, md)
		}
	}
	if strings.Contains(md, "Stopped:") {
		t.Errorf("the loop stopped:\n%s", md)
	}
}

// TestTuneBadInput: a command line that run or tune refuses, for any of
// the world sizes, exits 2 before anything runs or is written.
func TestTuneBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-b", "8", "-e", "64"}, "missing --np"},
		{[]string{"--np", "1", "-b", "8", "-e", "64"}, "--np \"1\": want world sizes of 2 or more"},
		{[]string{"--np", "2,4", "-b", "8", "-e", "64", "--iters", "0"}, "--iters 0: want at least 1"},
		{[]string{"--np", "2", "-b", "8", "-e", "64", "--span", "0"}, "--span \"0\""},
		{[]string{"--np", "2", "no-such.toml"}, "no-such.toml"},
	} {
		out := filepath.Join(t.TempDir(), "tune")
		args := append([]string{"tune"}, c.args...)
		if c.want != "missing --out" {
			args = append(args, "--out", out)
		}
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want %d and %q in\n%s%s", c.args, code, exitUsage, c.want, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: %s written", c.args, out)
		}
	}
}
