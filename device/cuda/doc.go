// Package cuda puts the collectives of nexar-go on GPU memory: device
// buffers, reduction kernels, and a Link that runs every algorithm of
// package algos on GPU buffers over any host transport (realnet's QUIC, or
// the simulator with host data).
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
// # Staging Link
//
// NewLink(inner, dev) wraps an algos.Link that moves host memory. Its Alloc
// returns device memory (pooled per Link), Reduce launches the kernel and
// Copy copies device to device, both on the Link's compute stream, and
// Isend and Irecv stage device buffers through pinned memory:
//
//	send:    device --D2H--> pinned --inner.Isend--> network
//	receive: network --inner.Irecv--> pinned --H2D--> device
//
// in chunks (DefaultChunk, WithChunk), each its own inner message, so that
// the copy of one chunk overlaps the network transfer of its neighbours
// (double buffering, with the copy engine and the network as the two
// stages); the D2H and H2D copies run on two more streams, one per
// direction, and wait for the compute stream's earlier work through an
// event. The Link calls its inner link only from the caller's goroutine
// (algos.Link's contract), so it makes progress inside its own methods.
// Every inner receive of a message is posted in Irecv and every send chunk
// as soon as its copy is done; Wait posts all pending send chunks (waiting
// only for local copies) before it waits on the network. The Link thus
// never waits on the network while holding back a message a peer needs,
// and cannot deadlock where the algorithm on the inner link alone would
// not, even over a transport whose sends complete only when the receiver
// is ready (realnet's bulk path and flow control). The cost is pinned
// memory for the messages in flight (pooled, freed by Close) instead of
// two chunk buffers per message. Every message is cut the same way
// whatever its buffer (host buffers are sliced, not copied), and must be
// received into a buffer of exactly its length.
//
// The staging logic sits behind a small interface (mover: device and
// pinned allocation, asynchronous copies with fences, reductions) that
// the GPU implements and the tests implement on host memory, with copies
// that complete late, so it is tested without a GPU.
//
// # Cost in the simulator
//
// The simulator has no GPU: a staged message costs what its chunks cost
// on the network, plus the copies. With host bandwidth H (pinned
// D2H/H2D, as BenchmarkStaging measures), network bandwidth B and latency
// α, a message of n bytes in chunks of c moves through three stages (D2H,
// network, H2D) in about
//
//	α + n/min(B, H) + 2c/H      (chunk pipeline: fill, steady state, drain)
//
// against α + n/B unstaged: staging costs two chunk copies of latency when
// PCIe is faster than the network, and caps the rate at H when it is not.
// The hierarchical topology (sim.Hierarchical) has the parameter for it:
// HostBandwidth (scenario key host_bandwidth) is the device-to-NIC link
// that inter-node messages cross, so a flow-model run there charges the
// steady-state min(B, H); the fill and drain (2c/H per message) are not
// modelled, and neither is the staging of messages between devices of one
// node, which the simulator sends over the intra-node switch while this
// Link stages them through host memory too. Set HostBandwidth to the
// measured pinned copy rate to model this Link; Topology.HostBandwidth
// carries it for a future model of the copies themselves.
//
// # What is verified, and where
//
// Verified on a machine without GPU, driver or CUDA toolkit (go test):
//   - builds and vets with CGO_ENABLED=0 and 1; the no-driver path
//     (ErrNoDriver from a missing library or one without cuInit);
//   - the binding end to end against a mock libcuda (testdata/mockcuda.c,
//     built with the system C compiler when one is present) that requires
//     the context current on the calling thread, counts live objects and
//     runs kernel launches in the PTX interpreter below: Device, Buffer,
//     Pinned, Stream, Event, the reduction path and the staging Link with
//     the GPU mover, allreduce included;
//   - the PTX: parsed, structurally checked (every entry with its five
//     .u64 parameters, balanced braces, registers declared and in range,
//     labels defined, every kernel ending in ret) and type-checked against
//     the ISA's operand rules as ptx_check_test.go encodes them; and run by
//     an interpreter of the PTX subset (ptx_interp_test.go) for every type
//     and operator over many lengths, alignments and grid shapes, equal to
//     device.ReduceHost bit for bit on random data with zeros, infinities,
//     NaNs and subnormals, each byte of dst stored exactly once and
//     nothing outside the operands touched;
//   - the staging Link with the host fake: every allreduce algorithm of
//     the catalogue at 2, 3 and 4 ranks on the simulator (counts 0, 1,
//     odd, chunks with odd tails), and over realnet on loopback at 2 and 4
//     ranks with rendezvous sends; message cutting, ordering of messages
//     with one tag, mixed host and device buffers, errors.
//
// Not verified without a GPU: the PTX has never been compiled by the
// driver's JIT or ptxas, the kernels have never run on a GPU, the binding
// has never called the real libcuda (symbol names and signatures follow
// cuda.h; the mock follows the same reading), the cross-stream ordering
// (stream waits on events) has never run on concurrent hardware, and
// there is no performance figure. The tests and benchmarks that need a GPU
// skip with the reason ("no CUDA driver: ...").
//
// On a machine with a GPU (from the repository root):
//
//	CGO_ENABLED=0 go test -c -o bin/cuda.test ./device/cuda/
//	bin/cuda.test -test.v -test.run 'Device|NoDriver'      # kernels vs host, allreduce p=2,4 on the GPU
//	bin/cuda.test -test.run '^$' -test.bench . -test.benchtime 10x
//
// The test binary embeds everything it needs (the kernels, and the mock's
// source); it is linked dynamically against the C library (libc,
// libdl.so.2, libpthread), as is any binary that imports this package,
// because purego needs the C runtime to load the driver.
package cuda
