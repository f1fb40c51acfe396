// Package cudamock is a mock of the CUDA driver library (libcuda.so.1) for
// tests on machines without a GPU: of package cuda's binding, and of the
// code above it that puts collectives on GPU buffers (package staging,
// nexar-live's --device cuda).
//
// The mock (testdata/mockcuda.c, embedded) is built with the system C compiler and
// loaded in place of the driver: cuda.OpenLibrary(path, 0) opens its one
// device. It declares every function as cuda.h does and checks what it can
// of how it is called: a context must be current on the calling thread,
// arguments must be in range, and counters of live objects (Counts) let a
// test check that everything it created was freed. "Device memory" is host
// memory from malloc, filled with 0xEE; copies run at once, so streams and
// events are always complete. It has one device, or as many as
// NEXAR_MOCK_DEVICES says in the environment of the process that loads it
// (for a child process, which cannot call SetDevices).
//
// Kernel launches call back into Go (SetLaunch): package cuda's own tests
// run the kernels' PTX in an interpreter there, to check the kernels;
// everyone else runs the reduction a kernel stands for with
// device.ReduceHost (ReduceHost), which Start installs.
//
// The mock is a check of the Go side only. It cannot show that the real
// driver accepts the calls, nor that the kernels compile or run on a GPU.
package cudamock

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/nexar-go/nexar-go/device"
)

//go:embed testdata/mockcuda.c
var source []byte

// Build compiles the mock with the system C compiler (cc) and returns the
// path of the shared library. The library is built once per version of the
// source, into a directory of the system's temporary directory named after
// the source's hash, and reused by later calls and test processes. Build
// fails if there is no C compiler.
func Build() (string, error) {
	build.once.Do(func() { build.path, build.err = compile() })
	return build.path, build.err
}

var build struct {
	once sync.Once
	path string
	err  error
}

func compile() (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", fmt.Errorf("no C compiler to build the mock CUDA driver: %v", err)
	}
	sum := sha256.Sum256(source)
	dir := filepath.Join(os.TempDir(), "nexar-mockcuda-"+hex.EncodeToString(sum[:6]))
	lib := filepath.Join(dir, "libmockcuda.so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build beside the final name and rename, so that a test process that
	// finds the library finds it whole.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src, out := filepath.Join(tmp, "mockcuda.c"), filepath.Join(tmp, "libmockcuda.so")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	if msg, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", out, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the mock CUDA driver: %v\n%s", err, msg)
	}
	if err := os.Rename(out, lib); err != nil {
		return "", err
	}
	return lib, nil
}

// Mock is the test controls of a loaded mock library.
type Mock struct {
	setDevices   func(int32)
	functionName func(uintptr) *byte
	counters     func(*[7]int64)
	setHook      func(uintptr)
}

// Load opens the mock library at path and returns its controls. The
// dynamic loader gives package cuda, which opens the same path, the same
// instance, so the controls act on the driver it uses.
func Load(path string) (*Mock, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, err
	}
	m := &Mock{}
	purego.RegisterLibFunc(&m.setDevices, h, "mock_set_devices")
	purego.RegisterLibFunc(&m.functionName, h, "mock_function_name")
	purego.RegisterLibFunc(&m.counters, h, "mock_counters")
	purego.RegisterLibFunc(&m.setHook, h, "mock_set_launch_hook")
	return m, nil
}

// Start builds and loads the mock and makes its kernel launches run
// ReduceHost; it returns the library's path (for cuda.OpenLibrary) and the
// controls. It skips tb if the mock cannot be built (no C compiler), and
// reports failed launches as errors of tb when tb ends.
func Start(tb testing.TB) (string, *Mock) {
	tb.Helper()
	path, err := Build()
	if err != nil {
		tb.Skip(err)
	}
	m, err := Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	m.SetLaunch(ReduceHost)
	tb.Cleanup(func() {
		for _, err := range m.LaunchErrors() {
			tb.Error(err)
		}
	})
	return path, m
}

// SetDevices sets the number of devices the mock reports (1 at first); with
// 0, cuInit fails with CUDA_ERROR_NO_DEVICE.
func (m *Mock) SetDevices(n int) { m.setDevices(int32(n)) }

// Counts are the mock's counters: live objects, and operations run.
type Counts struct {
	Allocs, Pinned, Streams, Events int64 // device and pinned allocations, streams and events not yet freed
	Launches, Copies                int64 // kernel launches and copies so far
	Retained                        int64 // primary context references
}

// Counts returns the mock's counters.
func (m *Mock) Counts() Counts {
	var c [7]int64
	m.counters(&c)
	return Counts{c[0], c[1], c[2], c[3], c[4], c[5], c[6]}
}

// Launch is a kernel launch as the mock sees it: the kernel's name, the
// grid and block sizes (one-dimensional), and the kernel's parameters.
// Package cuda's reduction kernels take five: dst and src (device
// addresses, which in the mock are host addresses), the number of elements
// before the part both operands have 16-byte aligned, the number of 16-byte
// vectors in that part, and the number of elements.
type Launch struct {
	Kernel      string
	Grid, Block int
	Params      [5]uint64
}

// SetLaunch makes fn run every kernel launch, in the launching goroutine;
// a launch for which fn returns an error fails with
// CUDA_ERROR_LAUNCH_FAILED, and LaunchErrors returns the error.
func (m *Mock) SetLaunch(fn func(Launch) error) {
	hook.mu.Lock()
	hook.fn, hook.m = fn, m
	hook.mu.Unlock()
	hook.once.Do(func() { hook.callback = purego.NewCallback(launch) })
	m.setHook(hook.callback)
}

// LaunchErrors returns the errors of the launches that failed since the
// last call, and forgets them.
func (m *Mock) LaunchErrors() []error {
	hook.mu.Lock()
	defer hook.mu.Unlock()
	errs := hook.errs
	hook.errs = nil
	return errs
}

// hook is the process's one launch callback (purego callbacks cannot be
// freed) and what it calls.
var hook struct {
	once     sync.Once
	callback uintptr
	mu       sync.Mutex
	fn       func(Launch) error
	m        *Mock
	errs     []error
}

// launch is the mock's launch hook: int hook(uintptr_t fn, uintptr_t grid,
// uintptr_t block, uintptr_t params), params being cuLaunchKernel's array
// of pointers to the parameter values.
func launch(fn, grid, block, params uintptr) uintptr {
	hook.mu.Lock()
	run, m := hook.fn, hook.m
	hook.mu.Unlock()
	l := Launch{Kernel: cString(m.functionName(fn)), Grid: int(grid), Block: int(block)}
	ps := (*[5]*uint64)(Pointer(params))
	for i, p := range ps {
		l.Params[i] = *p
	}
	err := run(l)
	if err == nil {
		return 0
	}
	hook.mu.Lock()
	hook.errs = append(hook.errs, fmt.Errorf("%s: %w", l.Kernel, err))
	hook.mu.Unlock()
	return 719 // CUDA_ERROR_LAUNCH_FAILED
}

// ReduceHost runs a launch of one of package cuda's reduction kernels
// (named nexar_reduce_DTYPE_OP, dst = dst op src over n elements) with
// device.ReduceHost on the mock's memory.
func ReduceHost(l Launch) error {
	name, ok := strings.CutPrefix(l.Kernel, "nexar_reduce_")
	dtName, opName, ok2 := strings.Cut(name, "_")
	if !ok || !ok2 {
		return errors.New("not a reduction kernel")
	}
	dt, err := device.ParseDType(dtName)
	if err != nil {
		return err
	}
	op, err := device.ParseOp(opName)
	if err != nil {
		return err
	}
	n := int(l.Params[4]) * dt.Size()
	dst := unsafe.Slice((*byte)(Pointer(uintptr(l.Params[0]))), n)
	src := unsafe.Slice((*byte)(Pointer(uintptr(l.Params[1]))), n)
	device.ReduceHost(dst, src, dt, op)
	return nil
}

// Pointer converts an address the mock handed over (of its own memory, or
// of Go memory the Go side passed it and keeps alive) back to a pointer.
func Pointer(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// cString reads a NUL-terminated C string.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}
