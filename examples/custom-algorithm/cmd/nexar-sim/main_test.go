package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/nexarsim"
)

func nexarSim(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := nexarsim.Run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("nexar-sim %q: exit %d\n%s", args, code, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// This module's nexar-sim lists the chain allreduce beside the catalogue's
// algorithms, and runs it beside the ring.
func TestListsAndRunsChain(t *testing.T) {
	list, _ := nexarSim(t, "list")
	for _, want := range []string{"chain", "reduce down a chain", "pipelined_ring"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	out := t.TempDir()
	nexarSim(t, "run", "-b", "8", "-e", "1M", "-f", "8", "--world", "2,5,8", "-c", "1",
		"--algorithms", "ring,chain", "--out", out, "-q", "--no-plots")
	data, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\nallreduce,chain,"); n != 3*6 {
		t.Errorf("%d rows of chain, want 18:\n%s", n, data)
	}
	// A scenario file names it as any other algorithm.
	nexarSim(t, "validate", "../../chain-vs-ring.toml")
}
