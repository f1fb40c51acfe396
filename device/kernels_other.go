//go:build !amd64 || purego

package device

// asmKernels returns nil: there are no assembly kernels for this
// architecture (or the purego build tag asks for none).
func asmKernels(*kernelTable) *kernelTable { return nil }
