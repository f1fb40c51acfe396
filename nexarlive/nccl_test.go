package nexarlive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFromFlags measures a sweep of nccl-tests' flags on 2 rank
// processes, with no scenario file.
func TestRunFromFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI("run", "--np", "2", "-b", "8", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "-c", "1",
		"--algorithms", "ring,recursive_doubling", "--out", out, "--timeout", "30") // seconds, as nccl-tests
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2 warm-up iterations") && !strings.Contains(stdout, "1 warm-up iteration") {
		t.Errorf("-w 1 not applied:\n%s", stdout)
	}
	checkRun(t, out, 2, 2*5)
	if _, err := os.Stat(filepath.Join(out, flagsScenarioFile)); err != nil {
		t.Error(err)
	}
}

func TestFlagsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--np", "0", "-b", "8", "--out", "x"}, "--np 0: want at least 1 rank"},
		{[]string{"run", "--np", "2", "-b", "8", "../live/examples/loopback-ci.toml", "--out", "x"}, "leave out -b"},
		{[]string{"run", "--np", "2", "-b", "6", "-e", "6", "--out", "x"}, "-b/-e/-f/-i: 6: not a multiple"},
		{[]string{"run", "--np", "2", "-d", "quad", "--out", "x"}, "-d quad"},
		{[]string{"run", "--np", "2", "-b", "8", "--timeout", "1m30", "--out", "x"}, `"1m30": want a duration such as 2m, or seconds`},
		{[]string{"run", "--np", "2", "-b", "8", "--timeout", "99999999999", "--out", "x"}, `want seconds from 0 to 10000000`},
		{[]string{"run", "--np", "0", "-b", "8", "--timeout", "0", "--out", "x"}, "--np 0: want at least 1 rank"}, // 0 taken
	} {
		code, stdout, stderr := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%q: exit %d, output\n%s%s\nwant exit %d and %q", c.args, code, stdout, stderr, exitUsage, c.want)
		}
	}
	if _, err := os.Stat("x"); err == nil {
		t.Error("a refused run created its output directory")
		os.RemoveAll("x")
	}
	if code, stdout, _ := runCLI("--version"); code != exitOK || !strings.HasPrefix(stdout, "nexar-live (nexar-go") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

// TestHelpExamplesExist: every scenario file the help's examples name is
// in the repository.
func TestHelpExamplesExist(t *testing.T) {
	texts := []string{mainHelp}
	for _, h := range commandHelp {
		texts = append(texts, h)
	}
	for _, text := range texts {
		for _, w := range strings.Fields(text) {
			if (strings.HasPrefix(w, "live/") || strings.HasPrefix(w, "scenarios/")) && strings.HasSuffix(w, ".toml") {
				if _, err := os.Stat(filepath.Join("..", w)); err != nil {
					t.Errorf("help names %s: %v", w, err)
				}
			}
		}
	}
}
