package calibratecmd

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/internal/cli"
)

// measured is a loopback run of nexar-live on the 2-core development
// machine: four allreduce algorithms on 2 ranks, 8 B to 16 MiB.
const measured = "testdata/loopback-np2.csv"

func runCalibrate(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	prog := &cli.Program{Name: "nexar-test", CommandHelp: map[string]string{"calibrate": Help("nexar-test")}}
	var stdout, stderr bytes.Buffer
	code := Command(prog, 3)(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// heldOut reads the ranking's held-out median error of model.
func heldOut(t *testing.T, stdout, model string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(model) + `\s+held out: median \|predicted/measured - 1\| = ([0-9.]+)%`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no held-out error of %s in\n%s", model, stdout)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestDefaultChoosesByHeldOutError: with no --model, calibrate ranks
// every model the samples suit by its error on points it did not fit,
// says which it chose and why, and writes that one; its error is at most
// alpha-beta's (the default before), and the fitted values no machine has
// are named.
func TestDefaultChoosesByHeldOutError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "model.toml")
	code, stdout, stderr := runCalibrate(t, "--out", out, measured)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`(?m)^chose (\S+): the least median error on points it did not fit, ([0-9.]+)% \(runners-up: .*alpha-beta [0-9.]+%`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no choice with its runners-up in\n%s", stdout)
	}
	chosen := m[1]
	if best, ab := heldOut(t, stdout, chosen), heldOut(t, stdout, "alpha-beta"); best > ab {
		t.Errorf("chose %s at %.1f%%, worse than alpha-beta's %.1f%%", chosen, best, ab)
	}
	for _, want := range []string{"no --model given", "of alpha-beta, alpha-beta-protocol, loggp, realnet, shared-host", chosen + " model fitted to 32 samples"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "calibrated") {
		t.Errorf("the scenario written:\n%s", b)
	}
}

// TestBounds: a fitted value outside the bounds is a warning, with the
// bound and where it comes from; a bad bound is a usage error.
func TestBounds(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout, or stderr on an error
	}{
		{[]string{"--model", "alpha-beta", "--memory-bandwidth", "1MB/s"}, 0,
			"is above the memory's bandwidth, 1 MB/s, given (--memory-bandwidth)"},
		{[]string{"--model", "shared-host"}, 0, "warning: reduce_bandwidth (gamma) = 722 MB/s is below 1 GB/s"},
		{[]string{"--model", "alpha-beta", "--memory-bandwidth", "fast"}, 2, `--memory-bandwidth "fast": want a bandwidth (25GB/s) or "measure"`},
	} {
		code, stdout, stderr := runCalibrate(t, append(c.args, measured)...)
		got := stdout
		if c.code != 0 {
			got = stderr
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, want %d and %q in\n%s%s", c.args, code, c.code, c.want, stdout, stderr)
		}
	}
}
