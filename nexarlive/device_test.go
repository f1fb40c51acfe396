package nexarlive

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/device/cuda/cudamock"
	"github.com/nexar-go/nexar-go/live"
)

// cliProcess runs the command in a process of its own (the test binary,
// as TestMain makes it) with extra environment variables: the CUDA driver
// is loaded once per process, so each driver a test needs gets a process.
func cliProcess(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, o.String(), e.String()
}

// TestDeviceMissing: run and worker with --device cuda and no driver, or a
// driver without devices, exit with status 2 and say which is missing,
// before any rank starts (nothing is written).
func TestDeviceMissing(t *testing.T) {
	noDriver := []string{"NEXAR_CUDA_LIB=" + filepath.Join(t.TempDir(), "libcuda.so.1")}
	cases := []struct {
		name string
		env  func(t *testing.T) []string
		want string
	}{
		{"no driver", func(*testing.T) []string { return noDriver }, "no CUDA driver here ("},
		{"no device", func(t *testing.T) []string {
			lib, err := cudamock.Build()
			if err != nil {
				t.Skip(err)
			}
			return []string{"NEXAR_CUDA_LIB=" + lib, "NEXAR_MOCK_DEVICES=0"}
		}, "no GPU here (cuda: cuInit: CUDA_ERROR_NO_DEVICE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := c.env(t)
			out := filepath.Join(t.TempDir(), "out")
			for _, args := range [][]string{
				{"run", "--np", "2", "--device", "cuda", "../live/examples/loopback-ci.toml", "--out", out},
				{"worker", "--device", "cuda", "../live/examples/loopback-ci.toml", "--out", out},
			} {
				code, _, stderr := cliProcess(t, env, args...)
				if code != exitUsage || !strings.Contains(stderr, "--device cuda: "+c.want) {
					t.Errorf("%s: exit %d, want %d naming %q:\n%s", args[0], code, exitUsage, c.want, stderr)
				}
				if strings.Contains(stderr, "rank ") {
					t.Errorf("%s: a rank started:\n%s", args[0], stderr)
				}
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: %s exists: %v", args[0], out, err)
				}
			}
		})
	}
}

// TestRunMockGPU runs 'nexar-live run --np 2 --device cuda' on the mock
// driver: two worker processes, each opening the mock's GPU of its local
// rank, staging every message through pinned memory, checking the results
// on the host. The mock's kernels run only in a test process that hooks
// them, so the sweep has no reduction (broadcast and allgather move data
// only); package live's TestWorkerOnMockGPU runs reductions.
func TestRunMockGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	lib, err := cudamock.Build()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "gpu.toml")
	if err := os.WriteFile(file, []byte(`name = "gpu-data-movement"
[network]
model = "alpha-beta"
latency = "100us"
bandwidth = "500MB/s"

[[sweep]]
collective = "broadcast"
algorithms = ["binomial_tree", "scatter_allgather"]
world = [2]
bytes = [8, "200KiB"]

[[sweep]]
collective = "allgather"
algorithms = ["ring"]
world = [2]
bytes = [8, "200KiB"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cliProcess(t, []string{"NEXAR_CUDA_LIB=" + lib, "NEXAR_MOCK_DEVICES=2"},
		"run", "--np", "2", "--device", "cuda", file, "--out", out, "--warmup", "1", "--iters", "2", "--timeout", "30s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "buffers: GPU memory (--device cuda; rank 0 on cuda:0 (Mock GPU") {
		t.Errorf("the table does not say where the buffers are:\n%s", stdout)
	}
	if !strings.Contains(stdout, "the model has no host_bandwidth") {
		t.Errorf("the comparison does not say it leaves the copies out:\n%s", stdout)
	}
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Errorf("%d results, want 6", len(rs))
	}
	for _, r := range rs {
		if r.Wrong != 0 || r.Device != live.DeviceCUDA {
			t.Errorf("%s/%s %d B: wrong %d, device %q", r.Collective, r.Algorithm, r.Bytes, r.Wrong, r.Device)
		}
	}
}
