// Package staging runs the collectives of package algos on GPU buffers over
// any transport that moves host memory (realnet's QUIC, or the simulator
// with host data), by staging each message through page-locked host memory.
//
// It sits above both halves it joins: algos (the Link interface and the
// algorithms) and device/cuda (the driver, device memory, streams and the
// reduction kernels, which know nothing of links). A Link is a decorator of
// algos.Link, like the other decorators of links (algos.Scoped, the
// simulator's faults); nothing below it imports it.
//
// # The Link
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
// event (cuda.Stager provides the streams, memory and ordering). The Link
// calls its inner link only from the caller's goroutine (algos.Link's
// contract), so it makes progress inside its own methods. Every inner
// receive of a message is posted in Irecv and every send chunk as soon as
// its copy is done; Wait posts all pending send chunks (waiting only for
// local copies) before it waits on the network. The Link thus never waits
// on the network while holding back a message a peer needs, and cannot
// deadlock where the algorithm on the inner link alone would not, even over
// a transport whose sends complete only when the receiver is ready
// (realnet's bulk path and flow control). The cost is pinned memory for the
// messages in flight (pooled, freed by Close) instead of two chunk buffers
// per message. Every message is cut the same way whatever its buffer (host
// buffers are sliced, not copied), and must be received into a buffer of
// exactly its length.
//
// The staging logic sits behind a small interface (mover: device and
// pinned allocation, asynchronous copies with fences, reductions) that
// cuda.Stager implements on a GPU and the tests implement on host memory,
// with copies that complete late, so it is tested without a GPU.
//
// # Cost in the simulator
//
// The simulator has no GPU: a staged message costs what its chunks cost
// on the network, plus the copies. With host bandwidth H (pinned
// D2H/H2D, as device/cuda's BenchmarkStaging measures), network bandwidth
// B and latency α, a message of n bytes in chunks of c moves through three
// stages (D2H, network, H2D) in about
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
// Link stages them through host memory too. sim.Staged models this Link
// on any network model: every message pays the copy of its first chunk at
// the sender and of its last at the receiver (min(n, c)/H each, on the
// ranks' compute) and moves no faster than H; nexar-live's compare of a
// --device cuda run wraps the scenario's model in it, with the
// hierarchical topology's host_bandwidth as H.
//
// # Tests
//
// Without a GPU (go test): every allreduce algorithm of the catalogue
// through the Link with the host fake at 2, 3 and 4 ranks on the simulator
// (counts 0, 1, odd, chunks with odd tails), and over realnet on loopback
// at 2 and 4 ranks with rendezvous sends; message cutting, ordering of
// messages with one tag, mixed host and device buffers, errors; and the
// Link on cuda.Stager over the mock driver of package cudamock (every
// allreduce at p = 2 and 4, memory reuse, nothing leaked by Close). With a
// GPU the same allreduce test runs on it (TestDeviceAllreduce/gpu), and
// BenchmarkAllreduceBusbw compares GPU and CPU buffers over loopback; see
// device/cuda's package documentation for the commands.
package staging
