package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/device/cuda"
	"github.com/nexar-go/nexar-go/device/cuda/cudamock"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
)

func TestParseDevice(t *testing.T) {
	for _, d := range Devices {
		if got, err := ParseDevice(d); err != nil || got != d {
			t.Errorf("ParseDevice(%q) = %q, %v", d, got, err)
		}
	}
	if _, err := ParseDevice("gpu"); err == nil || !strings.Contains(err.Error(), "want host or cuda") {
		t.Errorf("ParseDevice(gpu): %v", err)
	}
	if err := CheckDevice(DeviceHost); err != nil {
		t.Errorf("CheckDevice(host): %v", err)
	}
}

func TestGPUOrdinal(t *testing.T) {
	tests := []struct {
		env  map[string]string
		gpus int
		want int
		why  string // part of the explanation
		err  string
	}{
		{nil, 1, 0, "no local rank", ""},
		{nil, 8, 0, "the first of 8", ""},
		{map[string]string{"LOCAL_RANK": "3"}, 8, 3, "LOCAL_RANK=3 of 8", ""},
		{map[string]string{"LOCAL_RANK": "9"}, 8, 1, "LOCAL_RANK=9", ""},              // more ranks than GPUs: shared
		{map[string]string{"SLURM_LOCALID": "5"}, 2, 1, "SLURM_LOCALID=5", ""},        // Slurm
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "2"}, 4, 2, "OMPI_COMM", ""}, // Open MPI
		{map[string]string{"LOCAL_RANK": "1", "SLURM_LOCALID": "0"}, 4, 1, "LOCAL_RANK", ""},
		// An MPI launcher's local rank over the SLURM_LOCALID of the srun
		// that started its daemons; MPICH's, Intel MPI's, MVAPICH2's and
		// Cray PMI's too.
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "3", "SLURM_LOCALID": "0", "SLURM_PROCID": "0"}, 8, 3, "OMPI_COMM_WORLD_LOCAL_RANK=3", ""},
		{map[string]string{"PMI_RANK": "6", "MPI_LOCALRANKID": "2", "MPI_LOCALNRANKS": "4"}, 8, 2, "MPI_LOCALRANKID=2", ""},
		{map[string]string{"PMI_RANK": "6", "MPI_LOCALRANKID": "2", "SLURM_LOCALID": "0"}, 8, 2, "MPI_LOCALRANKID=2", ""},
		{map[string]string{"MV2_COMM_WORLD_RANK": "3", "MV2_COMM_WORLD_LOCAL_RANK": "1"}, 8, 1, "MV2_COMM_WORLD_LOCAL_RANK=1", ""},
		{map[string]string{"PMI_RANK": "5", "PMI_SIZE": "8", "PMI_LOCAL_RANK": "1", "SLURM_LOCALID": "0"}, 8, 1, "PMI_LOCAL_RANK=1", ""},
		{nil, 2, 0, "MPI_LOCALRANKID", ""}, // the explanation lists every variable
		{map[string]string{"LOCAL_RANK": "x"}, 4, 0, "", `LOCAL_RANK="x": want a local rank`},
		{map[string]string{"MPI_LOCALRANKID": "-2"}, 4, 0, "", `MPI_LOCALRANKID="-2"`},
		{map[string]string{"SLURM_LOCALID": "-1"}, 4, 0, "", `SLURM_LOCALID="-1"`},
	}
	for _, tt := range tests {
		got, why, err := gpuOrdinal(func(k string) string { return tt.env[k] }, tt.gpus)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %q", tt.env, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%v on %d GPUs: %d (%q), %v; want %d (%q)", tt.env, tt.gpus, got, why, err, tt.want, tt.why)
		}
	}
}

// TestWorkerOnMockGPU runs a world of 3 workers in this process with
// --device cuda on the mock driver's two GPUs (ranks 0 and 2 share the
// first, by local rank): every point's buffers on the GPU, staged through
// pinned memory over QUIC, checked on the host; rank 0's table says where
// the buffers are, its results.csv has the device column, the comparison
// with the model adds the staging copies; and every worker gives back
// what it took from the driver.
func TestWorkerOnMockGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a QUIC world on loopback")
	}
	path, mock := cudamock.Start(t)
	mock.SetDevices(2)
	t.Cleanup(func() { mock.SetDevices(1) })
	saved := gpus
	gpus.available = func() error { return nil }
	gpus.count = func() (int, error) { return 2, nil }
	gpus.open = func(i int) (*cuda.Device, error) { return cuda.OpenLibrary(path, i) }
	t.Cleanup(func() { gpus = saved })

	dir := t.TempDir()
	file := filepath.Join(dir, "gpu.toml")
	if err := os.WriteFile(file, []byte(`name = "gpu"
seed = 3
[network]
model = "flow"
topology = "hierarchical"
devices_per_node = 1
host_bandwidth = "20GB/s"
inter = "crossbar"
inter_bandwidth = "1GB/s"
inter_latency = "50us"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling", "direct"]
world = [3]
bytes = [8, 1020, "96KiB"]

[[sweep]]
collective = "allgather"
algorithms = ["ring"]
world = [3]
bytes = ["96KiB"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ca, err := realnet.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ca.Credentials("rank")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seed := pc.LocalAddr().String()
	pc.Close()

	before := mock.Counts()
	const world = 3
	var table bytes.Buffer
	// Rank 0 hands its results to Output.Compare (nexar-live's predicts
	// them, with the staging copies: verify's tests), on the run's device.
	var compared []results.Row
	var comparedScenario *scenario.Scenario
	compare := func(s *scenario.Scenario, _ string, _ io.Writer, rs []results.Row) ([]string, error) {
		compared, comparedScenario = rs, s
		return nil, nil
	}
	reps := make([]*Report, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		env := map[string]string{"NEXAR_WORLD": fmt.Sprint(world), "NEXAR_RANK": fmt.Sprint(r), "NEXAR_SEED": seed, "LOCAL_RANK": fmt.Sprint(r)}
		out := Output{Dir: filepath.Join(dir, "out"), Compare: compare}
		if r == 0 {
			out.Table = &table
		}
		wg.Go(func() {
			reps[r], errs[r] = Worker(context.Background(), WorkerConfig{
				Scenario: file, Options: Options{Warmup: 1, Iters: 2},
				Net:    realnet.Config{Credentials: creds, Timeout: 30 * time.Second},
				Output: out, Getenv: func(k string) string { return env[k] },
				Device: DeviceCUDA,
			})
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, table.String())
		}
	}
	rep := reps[0]
	if len(rep.Results) != 10 {
		t.Errorf("%d results, want 10", len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Wrong != 0 || res.Device != DeviceCUDA || res.Time <= 0 {
			t.Errorf("%s/%s %d B: wrong %d, device %q, time %g", res.Collective, res.Algorithm, res.Bytes, res.Wrong, res.Device, res.Time)
		}
	}
	for _, want := range []string{"buffers: GPU memory (--device cuda; rank 0 on", "by LOCAL_RANK=0 of 2 GPU(s)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, table.String())
		}
	}
	rs, err := ReadResultsFile(filepath.Join(dir, "out", ResultsFile))
	if err != nil || len(rs) != len(rep.Results) || rs[0].Device != DeviceCUDA {
		t.Errorf("results.csv: %d results, %v", len(rs), err)
	}
	if len(compared) != len(rep.Results) || compared[0].Device != DeviceCUDA || comparedScenario == nil {
		t.Errorf("Compare had %d rows for %d results (%+v), scenario %v", len(compared), len(rep.Results), compared, comparedScenario)
	}
	after := mock.Counts()
	if after.Launches == before.Launches {
		t.Error("no kernel ran on the GPU")
	}
	if after.Allocs != before.Allocs || after.Pinned != before.Pinned || after.Streams != before.Streams || after.Events != before.Events || after.Retained != before.Retained {
		t.Errorf("the workers leaked: before %+v, after %+v", before, after)
	}
}
