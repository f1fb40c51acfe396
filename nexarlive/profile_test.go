package nexarlive

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestRunProfile: run --profile DIR leaves one CPU profile per rank in
// DIR, each a gzipped profile as go tool pprof reads.
func TestRunProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := t.TempDir()
	dir := filepath.Join(out, "profiles")
	code, stdout, stderr := runCLI("run", "--np", "2", "-b", "1M", "-e", "1M", "--algorithms", "ring", "-n", "2", "-w", "1",
		"--out", out, "--timeout", "30s", "--profile", dir)
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
}
