package cuda

import (
	"errors"
	"fmt"
)

// ErrNoDriver is returned (wrapped) when the CUDA driver library cannot be
// used: libcuda.so.1 is not installed, lacks a function this package needs,
// is the toolkit's stub library, or is older than the CUDA runtime it
// serves. Test with errors.Is.
var ErrNoDriver = errors.New("cuda: no CUDA driver")

// ErrNoDevice is returned (wrapped) when the driver loads but there is no
// usable device: none is installed, CUDA_VISIBLE_DEVICES hides them all, or
// the requested ordinal does not exist. Test with errors.Is.
var ErrNoDevice = errors.New("cuda: no CUDA device")

// ErrFreed is returned when an operation uses memory that was already freed.
var ErrFreed = errors.New("cuda: use of freed memory")

// Driver result codes this package looks at (CUresult in cuda.h).
const (
	cudaSuccess             = 0
	cudaErrorOutOfMemory    = 2
	cudaErrorNotInitialized = 3
	cudaErrorStubLibrary    = 34
	cudaErrorInsufficient   = 35 // CUDA_ERROR_INSUFFICIENT_DRIVER
	cudaErrorNoDevice       = 100
	cudaErrorInvalidDevice  = 101
	cudaErrorInvalidPTX     = 218
	cudaErrorNotReady       = 600
)

// Error is a failed driver call: which function, its CUresult code, and the
// driver's name and description of the code.
type Error struct {
	// Call is the driver function, for example "cuMemAlloc_v2".
	Call string
	// Code is the CUresult the call returned.
	Code int
	// Name and Description are what cuGetErrorName and cuGetErrorString
	// say about Code ("CUDA_ERROR_OUT_OF_MEMORY", "out of memory"); empty
	// if the driver does not know the code.
	Name, Description string
	// Log is the JIT compiler's error log, for module loads that fail.
	Log string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s: error %d", e.Call, e.Code)
	if e.Name != "" {
		s = fmt.Sprintf("cuda: %s: %s (%d)", e.Call, e.Name, e.Code)
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Is makes errors.Is(err, ErrNoDevice) true for CUDA_ERROR_NO_DEVICE and
// CUDA_ERROR_INVALID_DEVICE, and errors.Is(err, ErrNoDriver) true for the
// stub library and an insufficient driver.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNoDevice:
		return e.Code == cudaErrorNoDevice || e.Code == cudaErrorInvalidDevice
	case ErrNoDriver:
		return e.Code == cudaErrorStubLibrary || e.Code == cudaErrorInsufficient
	}
	return false
}
