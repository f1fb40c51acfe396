package nexarlive

import (
	"flag"
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/live"
)

// deviceFlagHelp documents --device in the help of run and worker.
const deviceFlagHelp = `  --device D           where each rank's buffers live: host (default) or cuda:
                       the GPU of its local rank (its launcher's: LOCAL_RANK,
                       OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
                       PMI_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, then
                       SLURM_LOCALID; modulo the GPUs; the first GPU without
                       one), every message staged through pinned
                       host memory, results checked on a host copy; without a
                       CUDA driver or a GPU the command exits with status 2
                       before any rank starts (NEXAR_CUDA_LIB names a driver
                       library outside the loader's path)
`

// deviceFlag registers --device on fs (run and worker).
func deviceFlag(fs *flag.FlagSet) *string {
	return fs.String("device", live.DeviceHost, "where each rank's buffers live: host, or cuda (the GPU of its local rank, every message staged through pinned host memory)")
}

// checkDevice checks the value of --device and that this machine has that
// device, before any rank starts. It returns false, with the exit status,
// when the command must stop: 2 for a device it does not know, and for
// cuda without a driver or a GPU, naming which is missing.
func checkDevice(stderr io.Writer, cmd, device string) (int, bool) {
	if _, err := live.ParseDevice(device); err != nil {
		return cmdline.UsageError(stderr, cmd, "--device: %v", err), false
	}
	if err := live.CheckDevice(device); err != nil {
		fmt.Fprintf(stderr, "nexar-live %s: %v\n", cmd, err)
		return exitUsage, false
	}
	return exitOK, true
}
