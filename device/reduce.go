package device

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// ReduceHost computes dst = dst op src element-wise over host bytes holding
// little-endian elements of type dt.
//
// Integers wrap on overflow (two's complement, as in Go). f32 and f64 use one
// IEEE 754 operation in their own precision. f16 and bf16 are widened to
// float32, combined there, and rounded back to nearest even. Min and max on
// floats follow IEEE 754-2019 minimum and maximum (and Go's built-in min and
// max): if either operand is a NaN the result is a NaN, and -0 is less than
// +0; which NaN comes out is not specified.
//
// dst and src may be the same slice but must not otherwise overlap.
// ReduceHost panics if len(dst) != len(src), if the length is not a
// multiple of dt.Size(), or if dt or op is invalid; callers validate first
// (as Reduce does).
func ReduceHost(dst, src []byte, dt DType, op Op) {
	reduceWith(&kernels, dst, src, dt, op)
}

// reduceWith is ReduceHost with the kernels of table k, so that tests can
// run the portable kernels where assembly ones replace them.
func reduceWith(k *kernelTable, dst, src []byte, dt DType, op Op) {
	if dt >= numDTypes || op >= numOps {
		panic(fmt.Sprintf("device: reduce with invalid dtype %v or op %v", dt, op))
	}
	if len(dst) != len(src) {
		panic(fmt.Sprintf("device: reduce of %d bytes into %d", len(src), len(dst)))
	}
	size := dt.Size()
	if len(dst)%size != 0 {
		panic(fmt.Sprintf("device: reduce of %d bytes is not a whole number of %s elements", len(dst), dt))
	}
	if len(dst) == 0 {
		return
	}
	kernel := k[dt][op]
	if len(dst) >= avxCleanMin {
		clearUpperAVX()
	}
	if size > 1 && (!hostLittleEndian || !aligned(dst, size) || !aligned(src, size)) {
		reduceStaged(dst, src, size, kernel)
		return
	}
	if !touchFirst[dt][op] || len(dst) <= block {
		kernel(dst, src)
		return
	}
	// Block by block: first a load from every cache line of the block of
	// each operand, then the kernel over the block. The loads are a few
	// instructions per line, so many lines are requested from memory at
	// once, and dst and src are read in runs rather than interleaved.
	var t uint64
	for len(dst) > 0 {
		n := min(block, len(dst))
		t += touch(dst[:n], src[:n])
		kernel(dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
	}
	touchSink(t)
}

// touchFirst marks the kernels that ReduceHost runs block by block after
// touching each block (see above). Measured on 64 MiB operands on a Zen 4
// VM, in several processes (the physical placement of the buffers differs
// from one process to the next): streaming f32 sum and product ran at 0.47
// to 0.90 of copy's speed depending on the process, touched blocks at a
// steady 0.61 to 0.73. For the other kernels touching was no better or
// slower (f64 and 64-bit integer sums stream at copy's speed; f32 min and
// max, the packed 8- and 16-bit sums and the half kernels are bound by
// their arithmetic), so they stream.
var touchFirst = [numDTypes][numOps]bool{F32: {Sum: true, Prod: true}}

// block is the number of bytes reduced at a time by touched kernels: 2 KiB
// was as good as 1 KiB and better than 4 KiB. It is a multiple of 8, so of
// every element size.
const block = 2048

// touch loads one byte from every 64-byte line of d and s.
//
//go:noinline
func touch(d, s []byte) uint64 {
	s = s[:len(d)]
	var a, b uint64
	for i := 0; i < len(d); i += 64 {
		a += uint64(d[i])
		b += uint64(s[i])
	}
	return a + b
}

// touchSink consumes the result of touch so that the loads are kept.
//
//go:noinline
func touchSink(uint64) {}

// avxCleanMin is the length from which ReduceHost clears the upper halves
// of the AVX registers before the kernel (see clearUpperAVX).
const avxCleanMin = 512

func aligned(b []byte, size int) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))&uintptr(size-1) == 0
}

var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// stage is the number of bytes reduceStaged moves at a time.
const stage = 4096

// reduceStaged runs the kernel k for elements of size bytes (2, 4 or 8) on
// buffers that are misaligned or not in host byte order: it decodes a stage
// of each operand into aligned scratch memory in host order, reduces there,
// and encodes the result back.
func reduceStaged(dst, src []byte, size int, k func(d, s []byte)) {
	var sd, ss [stage / 8]uint64 // uint64 for 8-byte alignment
	bd := as[byte](sd[:], stage)
	bs := as[byte](ss[:], stage)
	for len(dst) > 0 {
		n := min(stage, len(dst))
		decode(bd[:n], dst[:n], size)
		decode(bs[:n], src[:n], size)
		k(bd[:n], bs[:n])
		encode(dst[:n], bd[:n], size)
		dst, src = dst[n:], src[n:]
	}
}

// decode converts little-endian elements in src to host-order elements in
// dst, which is aligned.
func decode(dst, src []byte, size int) {
	switch size {
	case 2:
		d := as[uint16](dst, len(dst)/2)
		for i := range d {
			d[i] = binary.LittleEndian.Uint16(src[2*i:])
		}
	case 4:
		d := as[uint32](dst, len(dst)/4)
		for i := range d {
			d[i] = binary.LittleEndian.Uint32(src[4*i:])
		}
	case 8:
		d := as[uint64](dst, len(dst)/8)
		for i := range d {
			d[i] = binary.LittleEndian.Uint64(src[8*i:])
		}
	}
}

// encode is the inverse of decode.
func encode(dst, src []byte, size int) {
	switch size {
	case 2:
		s := as[uint16](src, len(src)/2)
		for i, v := range s {
			binary.LittleEndian.PutUint16(dst[2*i:], v)
		}
	case 4:
		s := as[uint32](src, len(src)/4)
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], v)
		}
	case 8:
		s := as[uint64](src, len(src)/8)
		for i, v := range s {
			binary.LittleEndian.PutUint64(dst[8*i:], v)
		}
	}
}
