package device

import "unsafe"

// The element-wise kernels. Each computes d[i] = d[i] op s[i] for
// i < len(d); s must be at least as long as d. The hot loops are unrolled
// eight times by hand: the Go compiler does not unroll or vectorize, and
// the unrolled loop spends fewer instructions on loop control per element,
// which lets more of the two input streams be in flight at once. The groups
// of eight are addressed with unsafe.Add from the base of the slices (always
// inside them), which saves the compiler's slice-bounds arithmetic; it made
// the memory-bound f32 sum about 5% faster.
//
// Sum and product of integers use the unsigned types for both signed and
// unsigned elements: two's complement wrapping makes the bits the same.

type floats interface{ ~float32 | ~float64 }

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

type ordered interface{ floats | signed | unsigned }

type ring interface{ floats | unsigned }

func sumT[T ring](d, s []T) {
	n := len(d)
	s = s[:n]
	pd, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(s))
	size := unsafe.Sizeof(d[0])
	i, n8 := 0, n&^7
	for ; i < n8; i += 8 {
		dd := (*[8]T)(unsafe.Add(pd, uintptr(i)*size))
		ss := (*[8]T)(unsafe.Add(ps, uintptr(i)*size))
		dd[0] += ss[0]
		dd[1] += ss[1]
		dd[2] += ss[2]
		dd[3] += ss[3]
		dd[4] += ss[4]
		dd[5] += ss[5]
		dd[6] += ss[6]
		dd[7] += ss[7]
	}
	for ; i < n; i++ {
		d[i] += s[i]
	}
}

func prodT[T ring](d, s []T) {
	n := len(d)
	s = s[:n]
	pd, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(s))
	size := unsafe.Sizeof(d[0])
	i, n8 := 0, n&^7
	for ; i < n8; i += 8 {
		dd := (*[8]T)(unsafe.Add(pd, uintptr(i)*size))
		ss := (*[8]T)(unsafe.Add(ps, uintptr(i)*size))
		dd[0] *= ss[0]
		dd[1] *= ss[1]
		dd[2] *= ss[2]
		dd[3] *= ss[3]
		dd[4] *= ss[4]
		dd[5] *= ss[5]
		dd[6] *= ss[6]
		dd[7] *= ss[7]
	}
	for ; i < n; i++ {
		d[i] *= s[i]
	}
}

// minT and maxT use the built-in min and max, which on floats follow IEEE
// 754-2019 minimum and maximum: a NaN operand gives a NaN, and -0 < +0.
func minT[T ordered](d, s []T) {
	n := len(d)
	s = s[:n]
	pd, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(s))
	size := unsafe.Sizeof(d[0])
	i, n8 := 0, n&^7
	for ; i < n8; i += 8 {
		dd := (*[8]T)(unsafe.Add(pd, uintptr(i)*size))
		ss := (*[8]T)(unsafe.Add(ps, uintptr(i)*size))
		dd[0] = min(dd[0], ss[0])
		dd[1] = min(dd[1], ss[1])
		dd[2] = min(dd[2], ss[2])
		dd[3] = min(dd[3], ss[3])
		dd[4] = min(dd[4], ss[4])
		dd[5] = min(dd[5], ss[5])
		dd[6] = min(dd[6], ss[6])
		dd[7] = min(dd[7], ss[7])
	}
	for ; i < n; i++ {
		d[i] = min(d[i], s[i])
	}
}

func maxT[T ordered](d, s []T) {
	n := len(d)
	s = s[:n]
	pd, ps := unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(s))
	size := unsafe.Sizeof(d[0])
	i, n8 := 0, n&^7
	for ; i < n8; i += 8 {
		dd := (*[8]T)(unsafe.Add(pd, uintptr(i)*size))
		ss := (*[8]T)(unsafe.Add(ps, uintptr(i)*size))
		dd[0] = max(dd[0], ss[0])
		dd[1] = max(dd[1], ss[1])
		dd[2] = max(dd[2], ss[2])
		dd[3] = max(dd[3], ss[3])
		dd[4] = max(dd[4], ss[4])
		dd[5] = max(dd[5], ss[5])
		dd[6] = max(dd[6], ss[6])
		dd[7] = max(dd[7], ss[7])
	}
	for ; i < n; i++ {
		d[i] = max(d[i], s[i])
	}
}

// sumSWAR adds narrow unsigned lanes packed in 64-bit words ("SIMD within
// a register"): hi has the top bit of every lane set. Adding the lanes
// without their top bits cannot carry across a lane; the top bits are then
// the xor of the two top bits and the carry into them.
func sumSWAR(d, s []uint64, hi uint64) {
	n := len(d)
	s = s[:n]
	lo := ^hi
	i := 0
	for ; i <= n-4; i += 4 {
		dd := (*[4]uint64)(d[i:])
		ss := (*[4]uint64)(s[i:])
		a0, b0 := dd[0], ss[0]
		a1, b1 := dd[1], ss[1]
		a2, b2 := dd[2], ss[2]
		a3, b3 := dd[3], ss[3]
		dd[0] = ((a0 & lo) + (b0 & lo)) ^ ((a0 ^ b0) & hi)
		dd[1] = ((a1 & lo) + (b1 & lo)) ^ ((a1 ^ b1) & hi)
		dd[2] = ((a2 & lo) + (b2 & lo)) ^ ((a2 ^ b2) & hi)
		dd[3] = ((a3 & lo) + (b3 & lo)) ^ ((a3 ^ b3) & hi)
	}
	for ; i < n; i++ {
		a, b := d[i], s[i]
		d[i] = ((a & lo) + (b & lo)) ^ ((a ^ b) & hi)
	}
}

// sumPacked adds elements of type T with sumSWAR over the 8-byte-aligned
// middle of the buffers, when dst and src are equally misaligned, and with
// sumT elsewhere. d and s must be aligned for T (ReduceHost sees to it).
func sumPacked[T unsigned](d, s []T, hi uint64) {
	size := int(unsafe.Sizeof(d[0]))
	// Elements before the first 8-byte boundary of d.
	head := int((-uintptr(unsafe.Pointer(unsafe.SliceData(d)))) & 7 / uintptr(size))
	if head > len(d) || (uintptr(unsafe.Pointer(unsafe.SliceData(d)))-uintptr(unsafe.Pointer(unsafe.SliceData(s))))&7 != 0 {
		sumT(d, s)
		return
	}
	sumT(d[:head], s[:head])
	d, s = d[head:], s[head:len(d)]
	words := len(d) * size / 8
	sumSWAR(as[uint64](d, words), as[uint64](s, words), hi)
	tail := words * 8 / size
	sumT(d[tail:], s[tail:])
}

// as reinterprets the memory of b as n elements of type T. The caller makes
// sure the memory holds at least n elements and is aligned for T.
func as[T, E any](b []E, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// bytesOf wraps a typed kernel as one on bytes. The byte slices must be
// aligned for T and hold a whole number of elements.
func bytesOf[T any](k func(d, s []T)) func(d, s []byte) {
	size := int(unsafe.Sizeof(*new(T)))
	return func(d, s []byte) {
		n := len(d) / size
		k(as[T](d, n), as[T](s, n))
	}
}

// kernelTable holds a kernel for every dtype and op, on bytes in host order.
type kernelTable [numDTypes][numOps]func(d, s []byte)

// kernels are the kernels ReduceHost runs: the assembly ones where the CPU
// has them (asmKernels), the portable ones elsewhere.
var kernels = func() kernelTable {
	if k := asmKernels(&portableKernels); k != nil {
		return *k
	}
	return portableKernels
}()

// portableKernels are the kernels in Go.
var portableKernels = kernelTable{
	F16:  {bytesOf(sumF16), bytesOf(prodF16), bytesOf(minF16), bytesOf(maxF16)},
	BF16: {bytesOf(sumBF16), bytesOf(prodBF16), bytesOf(minBF16), bytesOf(maxBF16)},
	F32:  {bytesOf(sumT[float32]), bytesOf(prodT[float32]), bytesOf(minT[float32]), bytesOf(maxT[float32])},
	F64:  {bytesOf(sumT[float64]), bytesOf(prodT[float64]), bytesOf(minT[float64]), bytesOf(maxT[float64])},
	I8:   {sumU8, bytesOf(prodT[uint8]), bytesOf(minT[int8]), bytesOf(maxT[int8])},
	I16:  {sumU16, bytesOf(prodT[uint16]), bytesOf(minT[int16]), bytesOf(maxT[int16])},
	I32:  {bytesOf(sumT[uint32]), bytesOf(prodT[uint32]), bytesOf(minT[int32]), bytesOf(maxT[int32])},
	I64:  {bytesOf(sumT[uint64]), bytesOf(prodT[uint64]), bytesOf(minT[int64]), bytesOf(maxT[int64])},
	U8:   {sumU8, bytesOf(prodT[uint8]), bytesOf(minT[uint8]), bytesOf(maxT[uint8])},
	U16:  {sumU16, bytesOf(prodT[uint16]), bytesOf(minT[uint16]), bytesOf(maxT[uint16])},
	U32:  {bytesOf(sumT[uint32]), bytesOf(prodT[uint32]), bytesOf(minT[uint32]), bytesOf(maxT[uint32])},
	U64:  {bytesOf(sumT[uint64]), bytesOf(prodT[uint64]), bytesOf(minT[uint64]), bytesOf(maxT[uint64])},
}

var sumU8 = bytesOf(func(d, s []uint8) { sumPacked(d, s, 0x8080808080808080) })

var sumU16 = bytesOf(func(d, s []uint16) { sumPacked(d, s, 0x8000800080008000) })
