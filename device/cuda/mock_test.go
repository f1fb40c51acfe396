package cuda

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda/cudamock"
)

// The mock driver (package cudamock) stands in for libcuda.so.1 where there
// is no GPU: built with the system C compiler and loaded through the same
// binding, it checks that every call passes its arguments as cuda.h
// declares them, that a context is current on the calling thread, and that
// objects are freed. Here its kernel launches run the PTX in the
// interpreter (ptx_interp_test.go), so that the kernels themselves are
// checked too. It is a check of this package's Go side (binding, memory,
// streams, kernels as PTX), not of the real driver or of the JIT.

var mock struct {
	once sync.Once
	drv  *driver
	ctl  *cudamock.Mock
	err  error

	launchMu    sync.Mutex // serializes interpreted launches
	entries     map[string]*ptxEntry
	maxElements int // launches over more elements fail, to keep tests quick
}

// mockDriver builds and loads the mock driver, or skips the test.
func mockDriver(t testing.TB) *driver {
	t.Helper()
	mock.once.Do(func() {
		path, err := cudamock.Build()
		if err != nil {
			mock.err = err
			return
		}
		if mock.drv, mock.err = loadDriver([]string{path}); mock.err != nil {
			return
		}
		if mock.ctl, mock.err = cudamock.Load(path); mock.err != nil {
			return
		}
		m, err := parsePTX(kernelsPTX)
		if err != nil {
			mock.err = err
			return
		}
		mock.entries = map[string]*ptxEntry{}
		for _, e := range m.entries {
			mock.entries[e.name] = e
		}
		mock.maxElements = 1 << 16
		mock.ctl.SetLaunch(interpretLaunch)
	})
	if mock.err != nil {
		t.Skip(mock.err)
	}
	return mock.drv
}

// interpretLaunch runs a launch of the mock driver in the PTX interpreter
// on the mock's device memory (host memory).
func interpretLaunch(l cudamock.Launch) error {
	mock.launchMu.Lock() // the interpreter caches register types in the entry
	defer mock.launchMu.Unlock()
	e := mock.entries[l.Kernel]
	if e == nil {
		return fmt.Errorf("launch of unknown kernel %q", l.Kernel)
	}
	dst, src, head, nvec, n := l.Params[0], l.Params[1], l.Params[2], l.Params[3], l.Params[4]
	size := 0
	for _, dt := range device.DTypes() {
		for _, op := range device.Ops() {
			if kernelName(dt, op) == l.Kernel {
				size = dt.Size()
			}
		}
	}
	if n > uint64(mock.maxElements) {
		return fmt.Errorf("launch over %d elements is too many to interpret", n)
	}
	mem := &gpuMem{}
	mem.add("dst", dst, unsafe.Slice((*byte)(cudamock.Pointer(uintptr(dst))), int(n)*size), true)
	mem.add("src", src, unsafe.Slice((*byte)(cudamock.Pointer(uintptr(src))), int(n)*size), false)
	return runGrid(e, mem, l.Grid, l.Block, dst, src, head, nvec, n)
}

// takeLaunchErrors returns and clears the errors of failed mock launches.
func takeLaunchErrors() []error { return mock.ctl.LaunchErrors() }

// mockCounters returns the mock's counters.
func mockCounters() cudamock.Counts { return mock.ctl.Counts() }
