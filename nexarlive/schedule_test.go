package nexarlive

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nexar-go/nexar-go/live"
)

// TestRunImportedSchedule measures schedules imported from other tools
// on 8 real rank processes over loopback, no element wrong: an MSCCL++
// execution plan (a ring allreduce over memory channels, run as
// mscclpp_ring_allreduce_8gpu) at 2 sizes, and a TE-CCL solution (a ring
// allgather, teccl_ring8_allgather_1chunk) at one.
func TestRunImportedSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	plan, err := filepath.Abs("../schedule/testdata/mscclpp/ring_allreduce_8gpu.json")
	if err != nil {
		t.Fatal(err)
	}
	sol, err := filepath.Abs("../schedule/testdata/teccl/ring8_allgather_1chunk.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(sc, []byte(`name = "imported"
seed = 1
[network]
model = "alpha-beta"
latency = "100us"
bandwidth = "500MB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["mscclpp:`+plan+`"]
world = [8]
bytes = [1020, "64KiB"]
data = "host"
[[sweep]]
collective = "allgather"
algorithms = ["teccl:`+sol+`"]
world = [8]
bytes = ["8KiB"]
data = "host"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--np", "8", sc, "--out", out, "--warmup", "1", "--iters", "2", "--timeout", "60s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	checkRun(t, out, 8, 3)
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Algorithm != map[string]string{"allreduce": "mscclpp_ring_allreduce_8gpu", "allgather": "teccl_ring8_allgather_1chunk"}[r.Collective] {
			t.Errorf("results.csv names algorithm %q", r.Algorithm)
		}
		t.Logf("%s %s p=%d %d B: %g s, wrong %d", r.Collective, r.Algorithm, r.World, r.Bytes, r.Time, r.Wrong)
	}
}
