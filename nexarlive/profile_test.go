package nexarlive

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunProfile: run --profile DIR leaves one CPU profile per rank in
// DIR, each a gzipped profile as go tool pprof reads, and beside each the
// rank's CPU per timed iteration of the point.
func TestRunProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	dir := filepath.Join(out, "profiles")
	code, stdout, stderr := runCLI("run", "--np", "2", "-b", "1M", "-e", "1M", "--algorithms", "ring", "-n", "2", "-w", "1",
		"--timing", "loop", "--out", out, "--timeout", "30s", "--profile", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range []string{"rank-0.pprof", "rank-1.pprof"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(f)
		var n int64
		if err == nil {
			n, err = io.Copy(io.Discard, z)
		}
		f.Close()
		if err != nil || n == 0 {
			t.Errorf("%s: not a gzipped profile (%d bytes unzipped): %v", name, n, err)
		}
	}
	for _, name := range []string{"rank-0.cpu", "rank-1.cpu"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(string(b))
		var cpu float64
		if !strings.HasPrefix(line, "allreduce ring world=2 bytes=1048576 iters=2 cpu_ms=") || strings.Count(line, "\n") != 0 {
			t.Errorf("%s: %q, want one line for the allreduce ring point", name, b)
		} else if _, err := fmt.Sscanf(line[strings.Index(line, "cpu_ms="):], "cpu_ms=%g", &cpu); err != nil || cpu <= 0 {
			t.Errorf("%s: cpu_ms in %q: %v, want a positive number", name, line, err)
		}
	}
}
