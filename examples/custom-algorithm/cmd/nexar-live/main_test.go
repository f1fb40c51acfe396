package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/nexarlive"
)

// nexar-live run starts its ranks as its own executable: in the test, the
// test binary, which runs the command when this variable is set.
const beMain = "CUSTOM_ALGORITHM_LIVE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" {
		nexarlive.Main()
	}
	os.Setenv(beMain, "1")
	os.Exit(m.Run())
}

// This module's nexar-live measures the chain allreduce on two real rank
// processes over QUIC, with every result checked.
func TestMeasuresChain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := nexarlive.Run([]string{"run", "--np", "2", "-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1",
		"--algorithms", "ring,chain", "--out", out, "--timeout", "30s"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "(algorithm chain, 2 ranks)") {
		t.Errorf("no table of chain:\n%s", stdout.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\nallreduce,chain,2,"); n != 5 {
		t.Errorf("%d rows of chain, want 5:\n%s", n, data)
	}
}
