package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device/cuda"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/staging"
)

// Where a run's buffers are (nexar-live run --device): host memory, or
// GPUs. On GPUs each rank's buffers are device memory of the GPU its local
// rank picks (gpuOrdinal), the collectives run on package staging's Link,
// which stages every message through pinned host memory over the rank's
// QUIC link, and the results are checked on a copy in host memory.
const (
	DeviceHost = "host"
	DeviceCUDA = results.DeviceCUDA
)

// Devices lists the values of --device.
var Devices = []string{DeviceHost, DeviceCUDA}

// ParseDevice returns name if it is one of Devices.
func ParseDevice(name string) (string, error) {
	for _, d := range Devices {
		if name == d {
			return name, nil
		}
	}
	return "", fmt.Errorf("%q is not a device (want %s)", name, strings.Join(Devices, " or "))
}

// gpus is how ranks find and open GPUs: through the CUDA driver of the
// system (or the one NEXAR_CUDA_LIB names); tests put package cudamock's
// mock driver here.
var gpus = struct {
	available func() error
	count     func() (int, error)
	open      func(ordinal int) (*cuda.Device, error)
}{cuda.Available, cuda.Count, cuda.Open}

// CheckDevice reports whether ranks can put their buffers on device here:
// nil for host memory; for cuda, nil if the CUDA driver loads and sees a
// GPU, and otherwise a *MissingDeviceError that says which is missing
// (and wraps cuda.ErrNoDriver or cuda.ErrNoDevice). Launchers call it
// before they start any rank.
func CheckDevice(device string) error {
	if device != DeviceCUDA {
		return nil
	}
	err := gpus.available()
	switch {
	case errors.Is(err, cuda.ErrNoDriver):
		return &MissingDeviceError{Missing: "CUDA driver", Err: err,
			Hint: "install the NVIDIA driver, or name its libcuda.so.1 in NEXAR_CUDA_LIB"}
	case errors.Is(err, cuda.ErrNoDevice):
		return &MissingDeviceError{Missing: "GPU", Err: err, Hint: "is CUDA_VISIBLE_DEVICES hiding them?"}
	case err != nil:
		return fmt.Errorf("--device cuda: %w", err)
	}
	return nil
}

// MissingDeviceError reports a run on GPUs where the driver or a GPU is
// missing.
type MissingDeviceError struct {
	Missing string // "CUDA driver" or "GPU"
	Err     error  // the driver's error
	Hint    string // what to do about it
}

func (e *MissingDeviceError) Error() string {
	detail := e.Err.Error()
	for _, prefix := range []error{cuda.ErrNoDriver, cuda.ErrNoDevice} {
		detail = strings.TrimPrefix(detail, prefix.Error()+": ")
	}
	return fmt.Sprintf("--device cuda: no %s here (%s); %s", e.Missing, detail, e.Hint)
}

func (e *MissingDeviceError) Unwrap() error { return e.Err }

// gpuOrdinal returns the GPU of a rank among the gpus of its host: its
// local rank (realnet.LocalRankFromEnv: that of the launcher
// realnet.LaunchFromEnv picks, else the first of realnet.LocalRankVars
// that is set) modulo gpus, so that the ranks of a host spread over its
// GPUs and share them when there are more ranks than GPUs; 0 without a
// local rank (all ranks on one GPU when there is one). It also says where
// the choice came from.
func gpuOrdinal(getenv func(string) string, gpus int) (int, string, error) {
	local, v, err := realnet.LocalRankFromEnv(getenv)
	if err != nil {
		return 0, "", err
	}
	if v == "" {
		return 0, fmt.Sprintf("no local rank (%s): the first of %d GPU(s)", strings.Join(realnet.LocalRankVars, ", "), gpus), nil
	}
	return local % gpus, fmt.Sprintf("%s=%d of %d GPU(s)", v, local, gpus), nil
}

// rankDevice is where one rank's buffers live: nothing for host memory,
// or an open GPU.
type rankDevice struct {
	gpu  *cuda.Device
	desc string // how it was chosen
}

// openRankDevice opens the device of this rank for a run on device: nil
// for host memory; for cuda, the GPU of its local rank (gpuOrdinal).
func openRankDevice(device string, getenv func(string) string) (*rankDevice, error) {
	if device != DeviceCUDA {
		return nil, nil
	}
	if err := CheckDevice(device); err != nil {
		return nil, err
	}
	n, err := gpus.count()
	if err != nil {
		return nil, err
	}
	i, why, err := gpuOrdinal(getenv, n)
	if err != nil {
		return nil, err
	}
	gpu, err := gpus.open(i)
	if err != nil {
		return nil, fmt.Errorf("--device cuda: opening GPU %d: %w", i, err)
	}
	return &rankDevice{gpu: gpu, desc: why}, nil
}

// describe says in a line of the table's header where the buffers of a
// rank on a GPU are.
func (d *rankDevice) describe(rank int) string {
	return fmt.Sprintf("buffers: GPU memory (--device cuda; rank %d on %v, by %s); every message staged through pinned host memory in chunks of %d KiB; results checked on a copy in host memory",
		rank, d.gpu, d.desc, staging.DefaultChunk>>10)
}

// stage returns what the rank's collectives run on: link and job as they
// are, on host memory; on a GPU, a staging Link over link, whose Alloc
// gives device memory (newRankData puts a point's buffers there), and job
// with every algorithm followed by the Link's Synchronize, so that a
// point's time includes the device work the collective queued last.
// Close link before the returned one, and the device last (close).
func (d *rankDevice) stage(link algos.Link, job *Job) (algos.Link, *Job, error) {
	if d == nil {
		return link, job, nil
	}
	sl, err := staging.NewLink(link, d.gpu)
	if err != nil {
		return nil, nil, err
	}
	j := *job
	j.Points = slices.Clone(job.Points)
	for i := range j.Points {
		a := *j.Points[i].Algorithm
		run := a.Run
		a.Run = func(ctx context.Context, l algos.Link, c algos.Call) error {
			if err := run(ctx, l, c); err != nil {
				return err
			}
			return sl.Synchronize()
		}
		j.Points[i].Algorithm = &a
	}
	return sl, &j, nil
}

// close closes staged (from stage) and then the device.
func (d *rankDevice) close(staged algos.Link) error {
	if d == nil {
		return nil
	}
	var err error
	if sl, ok := staged.(*staging.Link); ok {
		err = sl.Close()
	}
	return errors.Join(err, d.gpu.Close())
}
