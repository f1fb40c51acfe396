package nexarlive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
)

// meshScenario is every allreduce algorithm on 8 ranks, at a size below
// and one above the bulk threshold.
func meshScenario(t *testing.T) (string, int) {
	t.Helper()
	c, err := algos.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range c.Algorithms {
		names = append(names, `"`+a.Name+`"`)
	}
	text := `name = "mesh"
seed = 9

[network]
model = "alpha-beta"
latency = "100us"
bandwidth = "500MB/s"
switch_reduce_bandwidth = "1GB/s"   # the in-network algorithms' switch, for compare.csv

[[sweep]]
collective = "allreduce"
algorithms = [` + strings.Join(names, ", ") + `]
world = [8]
bytes = [1020, "256KiB"]
data = "host"
`
	path := filepath.Join(t.TempDir(), "mesh.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, 2 * len(names)
}

// TestRunMesh: the whole allreduce catalogue on 8 rank processes
// connected as a hypercube and as a 3-regular graph, relaying the other
// pairs' messages: every point measured, nothing wrong.
func TestRunMesh(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	file, points := meshScenario(t)
	for _, spec := range []string{"hypercube", "kregular:3"} {
		t.Run(spec, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI("run", "--np", "8", "--mesh", spec, file, "--out", out,
				"--warmup", "1", "--iters", "1", "--timeout", "60s")
			if code != exitOK {
				t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			checkRun(t, out, 8, points)
		})
	}
}
