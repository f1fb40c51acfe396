// Package cuda is nexar-go's GPU device: the CUDA driver binding, device
// buffers, streams and events, the reduction kernels, and the GPU side of
// staging messages through host memory (Stager). It imports only package
// device; package staging builds on it to run every algorithm of package
// algos on GPU buffers over any host transport (realnet's QUIC, or the
// simulator with host data).
//
// # Layers
//
// The driver binding loads the CUDA driver library (libcuda.so.1, or the
// path in NEXAR_CUDA_LIB) at run time with github.com/ebitengine/purego: no
// CUDA toolkit and no C compiler are needed to build, and the same binary
// runs where there is no GPU. Where there is no driver or no device,
// Available, Count and Open return errors that wrap ErrNoDriver or
// ErrNoDevice (test with errors.Is); every failed driver call is an *Error
// naming the call and the driver's name for its result code.
//
// A Device is one GPU's primary context. It allocates device memory
// (Buffer, a device.Buffer whose Slice aliases it) and page-locked host
// memory (Pinned), creates Streams and Events, and offers synchronous
// Reduce, Copy, CopyToHost and CopyFromHost; a Stream queues the same
// operations asynchronously, an Event marks a point in a stream (to wait
// for, to make another stream wait for, to time with Elapsed). Every
// method makes the context current on the calling goroutine's OS thread
// for the duration of the call, so any goroutine may use a Device.
//
// # Reduction kernels
//
// One kernel per element type and operator of package device (12 x 4),
// dst = dst op src with exactly device.ReduceHost's semantics: integers
// wrap; f32 and f64 use one IEEE operation rounded to nearest even; f16
// and bf16 are widened to f32, combined, and rounded to nearest even; min
// and max return a NaN if either operand is one and order -0 below +0. So
// a GPU reduction gives the host's bits (up to which NaN a NaN is).
//
// The kernels are PTX (ISA 7.0, target sm_70: Volta and later), generated
// from one text/template (ptxgen.go) into kernels.ptx, embedded in the
// binary and compiled by the driver's JIT (cuModuleLoadDataEx, with the
// compiler's log in the error if it fails) on first use or LoadKernels.
// Each thread of a grid-stride loop combines 16 bytes at a time
// (ld.global.v4.u32 or .v2.u64) over the part of the operands where dst
// and src are both 16-byte aligned, and single elements before and after
// it (everything is scalar when dst and src are aligned differently). The
// grid is 256-thread blocks, as many as the work needs up to the blocks
// the GPU holds at once (SMs times the occupancy the driver reports for
// the kernel, or, failing that, the attributes' threads and blocks per SM).
//
// # Staging
//
// A Stager (NewStager) is what a link needs to move device buffers over a
// transport of host memory: device memory pooled for reuse (Alloc),
// page-locked host memory (AllocPinned), asynchronous copies between the
// two whose completion a Fence reports (ToHost, FromHost), and reductions
// and device-to-device copies (Reduce, Copy), on three streams of its own
// (compute, and one per copy direction so that both copy engines work at
// once) with the ordering its documentation states. Package staging's Link
// cuts messages into chunks and pipelines them through a Stager; the cost
// model of staged messages in the simulator is described there.
//
// # What is verified, and where
//
// Verified on a machine without GPU, driver or CUDA toolkit (go test):
//   - builds and vets with CGO_ENABLED=0 and 1; the no-driver path
//     (ErrNoDriver from a missing library or one without cuInit);
//   - the binding end to end against a mock libcuda (package cudamock,
//     built with the system C compiler when one is present) that requires
//     the context current on the calling thread, counts live objects and
//     runs kernel launches in the PTX interpreter below: Device, Buffer,
//     Pinned, Stream, Event, Stager and the reduction path;
//   - the PTX: parsed, structurally checked (every entry with its five
//     .u64 parameters, balanced braces, registers declared and in range,
//     labels defined, every kernel ending in ret) and type-checked against
//     the ISA's operand rules as ptx_check_test.go encodes them; and run by
//     an interpreter of the PTX subset (ptx_interp_test.go) for every type
//     and operator over many lengths, alignments and grid shapes, equal to
//     device.ReduceHost bit for bit on random data with zeros, infinities,
//     NaNs and subnormals, each byte of dst stored exactly once and
//     nothing outside the operands touched;
//   - above this package: package staging's Link on a Stager over the
//     mock (every allreduce algorithm at p = 2 and 4), and nexar-live's
//     --device cuda path on the mock (see their documentation).
//
// Not verified without a GPU: the PTX has never been compiled by the
// driver's JIT or ptxas, the kernels have never run on a GPU, the binding
// has never called the real libcuda (symbol names and signatures follow
// cuda.h; the mock follows the same reading), the cross-stream ordering
// (stream waits on events) has never run on concurrent hardware, and
// there is no performance figure. The tests and benchmarks that need a GPU
// skip with the reason ("no CUDA driver: ...").
//
// On a machine with a GPU. Build the test binaries and the command where
// Go is (from the repository root), and carry bin/ to the GPU machine:
//
//	CGO_ENABLED=0 go test -c -o bin/cuda.test ./device/cuda/
//	CGO_ENABLED=0 go test -c -o bin/staging.test ./staging/
//	CGO_ENABLED=0 go build -o bin/nexar-live ./cmd/nexar-live
//
// There, from the repository root (the scenario files are read from it):
//
//	bin/cuda.test -test.v -test.run 'NoDriver|Device|Stager'   # binding, memory, every kernel vs the host, the Stager
//	bin/staging.test -test.v -test.run 'DeviceAllreduce'      # every allreduce at p = 2 and 4 on one GPU
//	bin/cuda.test -test.run '^$' -test.bench . -test.benchtime 10x     # H2D/D2H pinned GB/s; kernels vs D2D copy (0.8 target)
//	bin/staging.test -test.run '^$' -test.bench AllreduceBusbw -test.benchtime 5x  # busbw, GPU vs CPU buffers, 64 MiB
//	bin/nexar-live run --np 4 --device cuda live/examples/loopback-gpu.toml --out out/gpu --iters 5
//	bin/nexar-live run --np 4 live/examples/loopback-gpu.toml --out out/host --iters 5
//
// and compare the two runs' busbw size by size; set the scenario's
// host_bandwidth to BenchmarkStaging's figure and run 'bin/nexar-live
// compare live/examples/loopback-gpu.toml out/gpu/results.csv' to see the
// staged prediction against the measurement. Without a GPU the GPU tests
// and benchmarks skip, and nexar-live --device cuda exits with status 2.
//
// The test binaries embed what they need (the kernels, and the mock's
// source, which they build with cc where there is one). CGO_ENABLED=0
// leaves cgo out, but the binaries are still linked dynamically against
// the C library (libc, libdl.so.2, libpthread), as is any binary that
// imports this package, because purego needs the C runtime to load the
// driver: the GPU machine needs glibc, not Go or a C compiler.
package cuda
