package device

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"
)

// Throughput convention: bytes read plus bytes written, per second.
// copy(dst, src) of n bytes reads n and writes n: 2n. ReduceHost of n bytes
// reads dst and src and writes dst: 3n. b.SetBytes (the MB/s column) and the
// custom "GB/s" metric both count that way, so the two are comparable: the
// reduction runs at the speed of memory when its GB/s is close to copy's.
//
// Both benchmarks use the same two 64 MiB buffers, far larger than the
// caches, allocated one after the other as a caller would.
//
//	go test ./device/ -run '^$' -bench . -benchtime 20x -count 3

const benchBytes = 64 << 20

var benchBufs struct {
	once     sync.Once
	dst, src []byte
}

func benchBuffers() (dst, src []byte) {
	benchBufs.once.Do(func() {
		benchBufs.dst = make([]byte, benchBytes)
		benchBufs.src = make([]byte, benchBytes)
	})
	return benchBufs.dst, benchBufs.src
}

// fillOne sets every element of b to the value one of type dt (dst gets
// one and a half for floats) so that no benchmark runs into subnormals,
// overflow or NaNs, and every page is touched before timing.
func fillOne(b []byte, dt DType, half bool) {
	var pattern uint64
	switch dt {
	case F16:
		pattern = 0x3c00
		if half {
			pattern = 0x3e00
		}
	case BF16:
		pattern = 0x3f80
		if half {
			pattern = 0x3fc0
		}
	case F32:
		pattern = 0x3f800000
		if half {
			pattern = 0x3fc00000
		}
	case F64:
		pattern = 0x3ff0000000000000
		if half {
			pattern = 0x3ff8000000000000
		}
	default:
		pattern = 1
	}
	size := dt.Size()
	for j := range size {
		b[j] = byte(pattern >> (8 * j))
	}
	for n := size; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// reportGBs reports and returns bytesPerOp*b.N over the timed duration.
func reportGBs(b *testing.B, bytesPerOp int) float64 {
	gbs := float64(bytesPerOp) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(gbs, "GB/s")
	return gbs
}

// BenchmarkReduce measures ReduceHost on 64 MiB operands: the sum of every
// element type, and every operator on the floats with assembly kernels
// (f16, bf16 and f32; see kernels_amd64.go).
//
// On a shared machine the memory bandwidth left to a benchmark changes from
// second to second, so besides GB/s each case also times a copy(dst, src)
// of the same buffers after every reduction, outside the benchmark timer,
// and reports that as copy-GB/s and the ratio of the two as x-copy: the
// reduction's speed as a fraction of copy's, measured at the same moments.
// An untimed copy comes first: it writes back the lines the reduction left
// dirty in the cache (which would slow the timed copy by up to a third) and
// resets dst, so that values never drift. BenchmarkCopy times copies alone.
func BenchmarkReduce(b *testing.B) {
	benchReduce(b, &kernels, reduceCases(DTypes(), F16, BF16, F32))
}

// BenchmarkReducePortable measures the portable kernels that assembly ones
// replace in ReduceHost, for comparison.
func BenchmarkReducePortable(b *testing.B) {
	benchReduce(b, &portableKernels, reduceCases(nil, F16, BF16, F32))
}

type reduceCase struct {
	dt DType
	op Op
}

// reduceCases returns the sums of the dtypes in sums, then the other
// operators of the dtypes in all.
func reduceCases(sums []DType, all ...DType) []reduceCase {
	var cases []reduceCase
	for _, dt := range sums {
		cases = append(cases, reduceCase{dt, Sum})
	}
	for _, dt := range all {
		for _, op := range Ops() {
			if op != Sum || sums == nil {
				cases = append(cases, reduceCase{dt, op})
			}
		}
	}
	return cases
}

func benchReduce(b *testing.B, k *kernelTable, cases []reduceCase) {
	dst, src := benchBuffers()
	for _, c := range cases {
		b.Run(fmt.Sprintf("%v/%v", c.dt, c.op), func(b *testing.B) {
			fillOne(dst, c.dt, true)
			fillOne(src, c.dt, false)
			var copyTime time.Duration
			b.SetBytes(3 * benchBytes)
			for b.Loop() {
				reduceWith(k, dst, src, c.dt, c.op)
				b.StopTimer()
				copy(dst, src)
				t0 := time.Now()
				copy(dst, src)
				copyTime += time.Since(t0)
				b.StartTimer()
			}
			reduceGBs := reportGBs(b, 3*benchBytes)
			copyGBs := float64(2*benchBytes) * float64(b.N) / copyTime.Seconds() / 1e9
			b.ReportMetric(copyGBs, "copy-GB/s")
			b.ReportMetric(reduceGBs/copyGBs, "x-copy")
		})
	}
}

// BenchmarkCopy measures the built-in copy on the same buffers: the speed
// of memory that ReduceHost is compared with.
func BenchmarkCopy(b *testing.B) {
	dst, src := benchBuffers()
	fillOne(src, U8, false)
	copy(dst, src)
	b.SetBytes(2 * benchBytes)
	for b.Loop() {
		copy(dst, src)
	}
	reportGBs(b, 2*benchBytes)
}

// BenchmarkConvert measures the half conversions over all 65536 f16 bit
// patterns (widening) and their float32 values (narrowing), next to those
// of github.com/x448/float16, per element.
func BenchmarkConvert(b *testing.B) {
	var in [1 << 16]uint16
	var wide [1 << 16]float32
	var out [1 << 16]uint16
	for i := range in {
		in[i] = uint16(i)
		wide[i] = F16ToF32(uint16(i))
	}
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				f()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in)), "ns/elem")
		})
	}
	run("F16ToF32", func() {
		for i, h := range in {
			wide[i] = F16ToF32(h)
		}
	})
	run("x448-Float32", func() {
		for i, h := range in {
			wide[i] = float16.Frombits(h).Float32()
		}
	})
	run("F32ToF16", func() {
		for i, f := range wide {
			out[i] = F32ToF16(f)
		}
	})
	run("x448-Fromfloat32", func() {
		for i, f := range wide {
			out[i] = float16.Fromfloat32(f).Bits()
		}
	})
	run("F32ToBF16", func() {
		for i, f := range wide {
			out[i] = F32ToBF16(f)
		}
	})
}
