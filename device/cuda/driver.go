package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API (libcuda.so.1), loaded at run time with purego so that
// building needs no CUDA toolkit and no C compiler, and one binary runs on
// machines with and without a GPU. Every function is called through
// purego.SyscallN with its arguments as uintptr; cuda.h's CUdevice, CUresult
// and enums are 32-bit ints, handles (CUcontext, CUstream, ...) are
// pointers, CUdeviceptr is 64 bits, size_t is 64 bits on the platforms this
// runs on (linux/amd64 and linux/arm64).

// libEnv names an environment variable that, when set, is the path of the
// driver library to load instead of libcuda.so.1 (for a driver outside the
// loader's search path).
const libEnv = "NEXAR_CUDA_LIB"

// proc is one driver function.
type proc struct {
	name string
	addr uintptr
}

// driver holds the loaded library's functions. The field names are the
// cuda.h names; the versioned symbols (_v2) are the ones cuda.h's macros
// select since CUDA 4.0 (64-bit sizes and device pointers).
type driver struct {
	lib uintptr

	cuInit, cuDriverGetVersion                                                             proc
	cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute, cuDeviceTotalMem proc
	cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuCtxSetCurrent, cuCtxSynchronize proc
	cuStreamCreate, cuStreamSynchronize, cuStreamDestroy, cuStreamWaitEvent                proc
	cuMemAlloc, cuMemFree, cuMemAllocHost, cuMemFreeHost, cuMemGetInfo                     proc
	cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemcpyDtoDAsync                                proc
	cuEventCreate, cuEventRecord, cuEventQuery, cuEventSynchronize                         proc
	cuEventElapsedTime, cuEventDestroy                                                     proc
	cuModuleLoadDataEx, cuModuleUnload, cuModuleGetFunction, cuLaunchKernel                proc
	cuOccupancyMaxActiveBlocksPerMultiprocessor                                            proc
	cuGetErrorName, cuGetErrorString                                                       proc
}

func (d *driver) procs() []*proc {
	return []*proc{
		&d.cuInit, &d.cuDriverGetVersion,
		&d.cuDeviceGetCount, &d.cuDeviceGet, &d.cuDeviceGetName, &d.cuDeviceGetAttribute, &d.cuDeviceTotalMem,
		&d.cuDevicePrimaryCtxRetain, &d.cuDevicePrimaryCtxRelease, &d.cuCtxSetCurrent, &d.cuCtxSynchronize,
		&d.cuStreamCreate, &d.cuStreamSynchronize, &d.cuStreamDestroy, &d.cuStreamWaitEvent,
		&d.cuMemAlloc, &d.cuMemFree, &d.cuMemAllocHost, &d.cuMemFreeHost, &d.cuMemGetInfo,
		&d.cuMemcpyHtoDAsync, &d.cuMemcpyDtoHAsync, &d.cuMemcpyDtoDAsync,
		&d.cuEventCreate, &d.cuEventRecord, &d.cuEventQuery, &d.cuEventSynchronize,
		&d.cuEventElapsedTime, &d.cuEventDestroy,
		&d.cuModuleLoadDataEx, &d.cuModuleUnload, &d.cuModuleGetFunction, &d.cuLaunchKernel,
		&d.cuOccupancyMaxActiveBlocksPerMultiprocessor,
		&d.cuGetErrorName, &d.cuGetErrorString,
	}
}

// symbols are the exported names of the driver functions, in procs order.
var symbols = []string{
	"cuInit", "cuDriverGetVersion",
	"cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2",
	"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize",
	"cuStreamCreate", "cuStreamSynchronize", "cuStreamDestroy_v2", "cuStreamWaitEvent",
	"cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocHost_v2", "cuMemFreeHost", "cuMemGetInfo_v2",
	"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2",
	"cuEventCreate", "cuEventRecord", "cuEventQuery", "cuEventSynchronize",
	"cuEventElapsedTime", "cuEventDestroy_v2",
	"cuModuleLoadDataEx", "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel",
	"cuOccupancyMaxActiveBlocksPerMultiprocessor",
	"cuGetErrorName", "cuGetErrorString",
}

var (
	driverOnce sync.Once
	theDriver  *driver
	driverErr  error
)

// getDriver loads and initialises the driver once per process.
func getDriver() (*driver, error) {
	driverOnce.Do(func() {
		theDriver, driverErr = loadDriver(libraryNames())
	})
	return theDriver, driverErr
}

// libraries holds the drivers OpenLibrary loaded, by path.
var libraries struct {
	sync.Mutex
	byPath map[string]*driver
}

// libraryDriver loads and initialises the driver library at path once per
// process.
func libraryDriver(path string) (*driver, error) {
	libraries.Lock()
	defer libraries.Unlock()
	if d := libraries.byPath[path]; d != nil {
		return d, nil
	}
	d, err := loadDriver([]string{path})
	if err != nil {
		return nil, err
	}
	if libraries.byPath == nil {
		libraries.byPath = map[string]*driver{}
	}
	libraries.byPath[path] = d
	return d, nil
}

// libraryNames are the library paths to try, in order.
func libraryNames() []string {
	if p := os.Getenv(libEnv); p != "" {
		return []string{p}
	}
	// libcuda.so.1 is what the driver package installs; libcuda.so is the
	// development symlink, present where the toolkit is.
	return []string{"libcuda.so.1", "libcuda.so"}
}

// loadDriver opens the first of names that loads, resolves every function
// and calls cuInit. Every failure wraps ErrNoDriver or ErrNoDevice.
func loadDriver(names []string) (*driver, error) {
	var errs []error
	d := &driver{}
	for _, name := range names {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				err = fmt.Errorf("%s: %v", name, err)
			}
			errs = append(errs, err)
			continue
		}
		d.lib = lib
		break
	}
	if d.lib == 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%w: %s", ErrNoDriver, strings.Join(msgs, "; "))
	}
	for i, p := range d.procs() {
		addr, err := purego.Dlsym(d.lib, symbols[i])
		if err != nil || addr == 0 {
			return nil, fmt.Errorf("%w: the driver library has no %s (it may be too old): %v", ErrNoDriver, symbols[i], err)
		}
		*p = proc{name: symbols[i], addr: addr}
	}
	if err := d.call(d.cuInit, 0); err != nil {
		var ce *Error
		if errors.As(err, &ce) && !ce.Is(ErrNoDevice) && !ce.Is(ErrNoDriver) {
			return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
		}
		return nil, err
	}
	return d, nil
}

// call calls p with args and turns a CUresult other than CUDA_SUCCESS into
// an *Error naming p.
//
// Pointers passed as uintptr(unsafe.Pointer(&x)) in a call of call are kept
// alive, and moved off the stack, for the duration of the call: that is the
// meaning of the uintptrescapes directive (purego.SyscallN has it too).
//
//go:uintptrescapes
func (d *driver) call(p proc, args ...uintptr) error {
	return d.result(p.name, d.raw(p, args...))
}

// raw calls p and returns its CUresult.
//
//go:uintptrescapes
func (d *driver) raw(p proc, args ...uintptr) int {
	r, _, _ := purego.SyscallN(p.addr, args...)
	return int(int32(uint32(r)))
}

// result converts the CUresult code of the call named name to an error.
func (d *driver) result(name string, code int) error {
	if code == cudaSuccess {
		return nil
	}
	e := &Error{Call: name, Code: code}
	var s *byte
	if d.raw(d.cuGetErrorName, uintptr(code), uintptr(unsafe.Pointer(&s))) == cudaSuccess {
		e.Name = goString(s)
	}
	s = nil
	if d.raw(d.cuGetErrorString, uintptr(code), uintptr(unsafe.Pointer(&s))) == cudaSuccess {
		e.Description = goString(s)
	}
	return e
}

// goString copies the NUL-terminated C string at p (at most 64 KiB of it).
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < 1<<16 && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cBytes returns s as a NUL-terminated byte slice.
func cBytes(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
