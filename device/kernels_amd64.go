//go:build !purego

package device

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The float kernels in assembly (kernels_amd64.s), used when the CPU has
// AVX2 and F16C (Intel since Haswell, AMD since Excavator/Zen). The
// portable kernels are bound by their arithmetic: Go compiles floats to
// scalar SSE, widens f16 through a table lookup per element and narrows
// with a dozen integer instructions, and builds min and max of floats
// from several instructions each. The vector kernels do eight elements per
// instruction and convert f16 with the CPU's own instructions, so that on
// large operands they run at about the speed of memory. They compute the
// same bits: see kernels_amd64.s for how, and TestAsmMatchesPortable.

// hasAVX2F16C says whether the CPU (and the OS) support the assembly kernels.
var hasAVX2F16C = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// asmChunk is the number of elements each assembly kernel does per loop
// iteration: they take a multiple of it, and the portable kernel does the
// rest.
const asmChunk = 32

//go:noescape
func sumF32AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func prodF32AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func minF32AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func maxF32AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func sumF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func prodF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func minF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func maxF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func sumBF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func prodBF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func minBF16AVX2(d, s unsafe.Pointer, n int)

//go:noescape
func maxBF16AVX2(d, s unsafe.Pointer, n int)

// asmKernels returns the assembly kernels by dtype and op, each wrapped to
// finish the tail with the portable kernel in k; nil where the CPU lacks
// the instructions.
func asmKernels(k *kernelTable) *kernelTable {
	if !hasAVX2F16C {
		return nil
	}
	t := *k
	type entry struct {
		dt  DType
		op  Op
		asm func(d, s unsafe.Pointer, n int)
	}
	for _, e := range []entry{
		{F32, Sum, sumF32AVX2}, {F32, Prod, prodF32AVX2}, {F32, Min, minF32AVX2}, {F32, Max, maxF32AVX2},
		{F16, Sum, sumF16AVX2}, {F16, Prod, prodF16AVX2}, {F16, Min, minF16AVX2}, {F16, Max, maxF16AVX2},
		{BF16, Sum, sumBF16AVX2}, {BF16, Prod, prodBF16AVX2}, {BF16, Min, minBF16AVX2}, {BF16, Max, maxBF16AVX2},
	} {
		t[e.dt][e.op] = withTail(e.asm, k[e.dt][e.op], e.dt.Size())
	}
	return &t
}

// withTail runs asm over the largest multiple of asmChunk elements and the
// portable kernel over the rest.
func withTail(asm func(d, s unsafe.Pointer, n int), portable func(d, s []byte), size int) func(d, s []byte) {
	return func(d, s []byte) {
		n := len(d) / size / asmChunk * asmChunk
		if n > 0 {
			asm(unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(s)), n)
		}
		portable(d[n*size:], s[n*size:len(d)])
	}
}
