// Package algos holds the collective algorithms of nexar-go, each written
// once against [Link], one rank's view of the network, so the same code runs
// in the discrete-event simulator (package sim), on real QUIC (package
// realnet) and on GPU buffers.
//
// The package imports neither the simulator nor the transport and never
// reads the wall clock: an algorithm only posts tagged sends and receives,
// waits for them, and asks its Link to reduce or copy buffers. Buffers are
// [device.Buffer]s: real bytes, phantom sizes (timing only), or device
// memory.
//
// # The catalogue
//
// Every collective is registered in a catalogue ([Lookup], [Register]) with
// the algorithms that perform it, by the names scenarios use. Each
// algorithm's documentation gives how it moves data, its time on the
// alpha-beta model (α latency, β seconds per byte, γ seconds per byte
// reduced; p ranks, n bytes as nccl-tests counts them), and when it wins.
//
// Ring allreduce ([RingAllreduce], "ring"): the buffer is cut into p blocks;
// in p-1 reduce-scatter steps every rank passes one block to its right
// neighbour and reduces the one arriving from its left, then in p-1
// allgather steps the reduced blocks go round once more. Time
// 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ: the bandwidth term is optimal, the
// latency term grows with p, so it wins for large messages on few ranks.
//
// # Tags
//
// Messages match by (source rank, tag), in order between a pair. Tags carry
// the communicator and the operation's sequence number in their high bits
// ([ScopeTag], [Scoped]); algorithms use only the low 16 bits.
package algos
