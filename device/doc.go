// Package device is the memory model of nexar-go: what a collective
// algorithm moves and combines, and the kernels that combine it on the host.
//
// # Elements and operators
//
// A DType is an element type: the floats f16, bf16, f32 and f64, and the
// signed and unsigned integers of 8, 16, 32 and 64 bits. An Op is an
// element-wise reduction operator: Sum, Prod, Min or Max. Both have short
// names ("bf16", "max") for flags and configuration files; ParseDType and
// ParseOp read them back.
//
// # Buffers
//
// Algorithms see memory only through the Buffer interface, so that the same
// algorithm code runs in several worlds:
//
//   - Host is real bytes in host memory. Copy and Reduce on host buffers move
//     and combine the bytes.
//   - Phantom has a length and no bytes. The simulator uses phantom buffers
//     to time collectives over many thousands of ranks without allocating
//     their data; Copy and Reduce check lengths and then do nothing.
//   - Device memory (CUDA): package device/cuda implements the same interface
//     over GPU memory, loading the driver at run time.
//
// Copy and Reduce return errors for mismatched lengths and unsupported
// buffer pairs; ReduceHost is the unchecked kernel entry point under Reduce.
//
// # Host reduction kernels
//
// ReduceHost computes dst = dst op src over little-endian elements. The
// semantics are exact and portable: integers wrap (two's complement); f32
// and f64 use one IEEE 754 operation in their own precision; f16 and bf16
// are widened to f32, combined, and rounded back to nearest even; Min and
// Max on floats return a NaN if either operand is one and order -0 below
// +0 (IEEE 754-2019 minimum and maximum). The conversions are exported as
// F16ToF32, F32ToF16, BF16ToF32 and F32ToBF16.
//
// The portable kernels are plain Go: loops unrolled eight times over the
// memory reinterpreted as typed slices, 8- and 16-bit integer sums done
// eight or four lanes at a time in 64-bit words, f16 widened through a
// table, f32 sum and product run over 2 KiB blocks whose cache lines are
// loaded first, and, on amd64, one VZEROUPPER before the loop (SSE code runs
// about three times slower when earlier code left the upper halves of the
// AVX registers dirty). Misaligned operands, and big-endian hosts, go
// through aligned scratch blocks.
//
// On amd64 CPUs with AVX2 and F16C (detected with golang.org/x/sys/cpu),
// every operator on f16, bf16 and f32 runs in assembly instead
// (kernels_amd64.s), 32 elements per loop iteration, the tail in Go: f16
// converted by the CPU (VCVTPH2PS, VCVTPS2PH rounding to nearest even),
// bf16 widened by a shift and narrowed with the integer rounding of
// F32ToBF16 (min and max need none), and min and max built from VMINPS and
// VMAXPS so that NaNs and signed zeros come out as the built-in min and max
// give them. They compute the same bits as the portable kernels (any NaN
// for a NaN); the build tag purego leaves them out. On 64 MiB operands
// these kernels, and the f64 and 64-bit integer sums, move bytes at about
// the speed of the built-in copy (whose large copies use non-temporal AVX
// stores); the portable f16 and bf16 kernels, limited by the conversions,
// run at about a tenth of it, and the portable f32 kernels, in scalar SSE,
// at 0.6 to 0.85 of it (max slowest). BenchmarkReduce,
// BenchmarkReducePortable and BenchmarkCopy in reduce_bench_test.go
// measure them, counting bytes read plus written:
//
//	go test ./device/ -run '^$' -bench 'BenchmarkReduce/(f16|bf16|f32)/|BenchmarkCopy' -benchtime 10x -count 10
//
// # How the kernels are checked
//
// The tests compare every dtype and op, over lengths that exercise the
// unrolled loops' tails, the blocking and misaligned operands, with a
// deliberately slow reference that decodes one element at a time and
// computes exactly with math/big, rounding by searching for the nearest
// representable value. Results must match bit for bit (any NaN matches a
// NaN). The half conversions are tested on all 65536 bit patterns, on f32
// values at and around every rounding boundary, and against
// github.com/x448/float16; TestNarrowExhaustive (NEXAR_EXHAUSTIVE=1) checks
// all 2^32 f32 inputs. FuzzReduceHost compares kernels and reference on
// fuzzer-chosen bytes. TestAsmMatchesPortable runs every 16-bit pattern
// against 64 others through the assembly and the portable kernels and
// demands the same bits, FuzzAsmMatchesPortable does so on fuzzer-chosen
// elements, and TestAsmExhaustive (NEXAR_EXHAUSTIVE=1) on all 2^32 pairs.
package device
