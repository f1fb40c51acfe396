package cuda

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/nexar-go/nexar-go/device"
)

// The mock driver (testdata/mockcuda.c) stands in for libcuda.so.1 where
// there is no GPU: built with the system C compiler and loaded through the
// same binding, it checks that every call passes its arguments as cuda.h
// declares them, that a context is current on the calling thread, and that
// objects are freed; its kernel launches run the PTX in the interpreter.
// It is a check of this package's Go side (binding, memory, streams,
// staging through the GPU mover), not of the real driver or of the JIT.

// mockSource is testdata/mockcuda.c, embedded so that a compiled test
// binary builds the mock wherever it runs.
//
//go:embed testdata/mockcuda.c
var mockSource []byte

var mock struct {
	once sync.Once
	drv  *driver
	lib  uintptr
	err  error

	setDevices   func(int32)
	functionName func(uintptr) *byte
	counters     func(*[7]int64)

	mu          sync.Mutex // guards launchErrs
	launchMu    sync.Mutex // serializes interpreted launches
	entries     map[string]*ptxEntry
	launchErrs  []error
	maxElements int // launches over more elements fail, to keep tests quick
}

// mockDriver builds and loads the mock driver, or skips the test.
func mockDriver(t testing.TB) *driver {
	t.Helper()
	mock.once.Do(func() {
		cc, err := exec.LookPath("cc")
		if err != nil {
			mock.err = fmt.Errorf("no C compiler to build the mock driver: %v", err)
			return
		}
		dir, err := mockDir()
		if err != nil {
			mock.err = err
			return
		}
		lib, src := filepath.Join(dir, "libmockcuda.so"), filepath.Join(dir, "mockcuda.c")
		if err := os.WriteFile(src, mockSource, 0o644); err != nil {
			mock.err = err
			return
		}
		out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, src).CombinedOutput()
		if err != nil {
			mock.err = fmt.Errorf("building the mock driver: %v\n%s", err, out)
			return
		}
		if mock.drv, mock.err = loadDriver([]string{lib}); mock.err != nil {
			return
		}
		h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			mock.err = err
			return
		}
		purego.RegisterLibFunc(&mock.setDevices, h, "mock_set_devices")
		purego.RegisterLibFunc(&mock.functionName, h, "mock_function_name")
		purego.RegisterLibFunc(&mock.counters, h, "mock_counters")
		var setHook func(uintptr)
		purego.RegisterLibFunc(&setHook, h, "mock_set_launch_hook")
		setHook(purego.NewCallback(mockLaunch))
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
	})
	if mock.err != nil {
		t.Skip(mock.err)
	}
	return mock.drv
}

// mockDir is a temporary directory for the mock library, removed by
// TestMain.
var mockDir = sync.OnceValues(func() (string, error) {
	return os.MkdirTemp("", "nexar-mockcuda-")
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := mockDir(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

type mockCounts struct {
	allocs, pinned, streams, events, launches, copies, retained int64
}

func mockCounters() mockCounts {
	var c [7]int64
	mock.counters(&c)
	return mockCounts{c[0], c[1], c[2], c[3], c[4], c[5], c[6]}
}

// mockLaunch is the mock driver's cuLaunchKernel: it runs the kernel's PTX
// in the interpreter on the mock's device memory (host memory).
func mockLaunch(fn, grid, block, params uintptr) uintptr {
	mock.launchMu.Lock() // the interpreter caches register types in the entry
	defer mock.launchMu.Unlock()
	name := goString(mock.functionName(fn))
	err := func() error {
		e := mock.entries[name]
		if e == nil {
			return fmt.Errorf("launch of unknown kernel %q", name)
		}
		ps := (*[5]*uint64)(pointer(params))
		dst, src, head, nvec, n := *ps[0], *ps[1], *ps[2], *ps[3], *ps[4]
		size := 0
		for _, dt := range device.DTypes() {
			for _, op := range device.Ops() {
				if kernelName(dt, op) == name {
					size = dt.Size()
				}
			}
		}
		if n > uint64(mock.maxElements) {
			return fmt.Errorf("launch over %d elements is too many to interpret", n)
		}
		mem := &gpuMem{}
		mem.add("dst", dst, unsafe.Slice((*byte)(pointer(uintptr(dst))), int(n)*size), true)
		mem.add("src", src, unsafe.Slice((*byte)(pointer(uintptr(src))), int(n)*size), false)
		return runGrid(e, mem, int(grid), int(block), dst, src, head, nvec, n)
	}()
	if err != nil {
		mock.mu.Lock()
		mock.launchErrs = append(mock.launchErrs, fmt.Errorf("%s: %w", name, err))
		mock.mu.Unlock()
		return 719
	}
	return 0
}

// takeLaunchErrors returns and clears the errors of failed mock launches.
func takeLaunchErrors() []error {
	mock.mu.Lock()
	defer mock.mu.Unlock()
	e := mock.launchErrs
	mock.launchErrs = nil
	return e
}

// pointer converts an address the mock driver handed over (of its own
// memory, or of Go memory the Go side passed it and keeps alive) back to a
// pointer.
func pointer(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
