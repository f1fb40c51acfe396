// Package nccl holds NCCL's collective algorithms and protocols, written
// against [algos.Link] like the rest of the catalogue, so that they run in
// the simulator message by message, on any of its networks, and on real
// ranks: rings and double binary trees over several channels, PAT, and
// in-network reduction (NVLS, CollNet), over the protocols LL, LL128 and
// Simple. Importing the package registers them in the catalogue (package
// scenario imports it, so every command has them).
//
// Facts (tables, buffer and chunk sizes, ring and tree shapes, the order
// of steps) come from NCCL itself, release 2.30.7 (NVIDIA/nccl at commit
// 5067397: src/graph/tuning.cc, trees.cc, connect.cc, src/enqueue.cc,
// src/device/*.h, src/include/collectives.h); the code is this project's.
//
// # The catalogue
//
// Names are nccl_<algorithm>_<protocol> where NCCL offers a choice of
// protocol, and take one parameter, "channels" (0: the machine's
// [algos.Machine] Channels, else 1):
//
//	allreduce       nccl_ring_{ll,ll128,simple}, nccl_tree_{ll,ll128,simple},
//	                nccl_nvls, nccl_nvls_tree, nccl_collnet_direct
//	allgather       nccl_ring_{ll,ll128,simple}, nccl_pat, nccl_nvls
//	reduce_scatter  nccl_ring_{ll,ll128,simple}, nccl_pat, nccl_nvls
//	broadcast       nccl_ring_{ll,ll128,simple}, nccl_tree_{ll,ll128,simple}
//	reduce          nccl_ring_{ll,ll128,simple}, nccl_tree_{ll,ll128,simple}
//
// # Channels, chunks and slices
//
// A call's buffer is split over its channels as NCCL's enqueue.cc does: in
// cells of 32 KiB of traffic (an allreduce moves two bytes per byte, an
// allgather or reduce-scatter p, LL four times as many), an even share of
// the cells to each channel, so small calls use fewer channels. Each
// channel is a process of the rank (where the link can spawn one; a
// thread block on the GPU) with its own ring or tree and its own
// connections. A ring allreduce, allgather or reduce-scatter moves its
// part in chunks of 4 FIFO slots, each step of a chunk in 2 slices (Simple;
// a slice at least 32 KiB, the last loop's chunks shrunk to fit); LL and
// LL128 move one slot a step; broadcast, reduce and trees move chunks of
// one slot. A connection has NCCL_STEPS = 8 slots, so a sender has at most
// 8 slots (4 Simple slices) in flight to one peer; a slot is free again
// once its message has landed.
//
// # Protocols, as they are on the wire
//
//   - LL: lines of 16 bytes, 8 of data and 8 of flag (ncclLLFifoLine:
//     data, flag, data, flag, 4 bytes each); the receiver polls the
//     flags, so no fence and no separate flag; a slot carries 32 KiB of
//     data in 64 KiB (a 512 KiB buffer).
//   - LL128: lines of 128 bytes, 120 of data and 8 of flag; a slot
//     carries 576000 bytes of data in 614400 (a buffer of 4.69 MB).
//   - Simple: data as it is, then, once it has landed (the fence), an 8
//     byte flag of its own; slots of 512 KiB (a 4 MiB buffer).
//
// On host buffers the lines are written and their flags checked by the
// receiver; on phantom buffers only their sizes move; on a GPU's buffers
// the data goes in front of buffers of the wire's size.
//
// What the wire does not show, the GPU's work and the proxy's, NCCL's
// model carries as measured constants; the simulator charges them from
// the [algos.Machine]'s GPU generation and CPU vendor (any of them
// overridden by name, [Figures], a scenario's [network.nccl] table), as
// delays of the channel's process (algos.Delayer) and as latency of a
// message in flight (algos.LateSender); links to real hardware do
// neither, there the work costs what it costs:
//
//   - a call's base latency (baseLatencies: ring LL 6.6 µs, LL128 14,
//     Simple 8.4), before its first step;
//   - inside a node, what a step holds its channel for beyond the link's
//     latency: NCCL's hwLatencies[NVLINK] for the algorithm and protocol
//     less LL's ring step (the link itself), and for Simple less its
//     flag's latency too (ring: LL 0, LL128 1.3 µs, Simple 2.2 µs; tree:
//     0, 0.65, 2.8);
//   - across nodes, the proxy's posting of a step, which holds the
//     channel (netOverhead: 1 µs with Intel CPUs, 2 µs with AMD, three
//     times that under Simple), and the rest of hwLatencies[NET] beyond
//     the link's 2.7 µs as latency in flight (the receiving proxy's flush
//     and flag); across nodes nothing waits for Simple's data to land;
//   - rates at which a channel's threads move data, overlapping the
//     transfer: LL's bus bandwidth per GPU (llMaxBws: 141 GB/s on one
//     Hopper node), LL128's per channel of a ring (36.7 GB/s on Hopper)
//     and of a tree, a tree's per channel.
//
// On one DGX H100 (the scenario preset) an 8 B allreduce then takes what
// NCCL's latency model gives, to the nanosecond: ring 15.0, 40.6, 56.0 µs
// and tree 15.2, 31.5, 64.4 µs (LL, LL128, Simple); across two nodes the
// ring's LL 39.9 µs against NCCL's 40.0, the tree's 25.2 against 25.2,
// 49.2 against 48.5, 95.8 against 92.4. At large sizes the ring's
// protocols come out as NCCL's bandwidth formulas have them with the
// model's 450 GB/s NVLink as the bus: LL : LL128 : Simple = 0.328 : 0.902
// : 1 simulated at 8 GiB (16 channels) against 0.313 : 0.920 : 1, and
// LL128 overtakes LL at 4.1 MB against the formula's 3.1 MB (the
// simulated ring at 2-4 MiB is still filling its channels' pipelines,
// which the formula's lat + n/bw does not see).
//
// # Algorithms and their time on alpha-beta
//
// On the alpha-beta model (α latency, β seconds per byte, a rank's one
// port carrying a message of m bytes for α + mβ; free reductions), with
// one channel and no GPU figures, the times below are exact to the
// picosecond (the package's cost tests hold them). Let c be a rank's
// chunk in bytes, w(c) its bytes on the wire (LL: 16⌈c/8⌉, LL128:
// 128⌈c/120⌉, Simple: c) and f = α + 8β Simple's flag.
//
// Ring (RingAllreduce, ..., "nccl_ring_*"): each channel's ring enters
// every node on the GPU whose rail it left the previous node by, and
// different channels use different GPUs and rails to cross. Per chunk, an
// allreduce takes 2(p-1) steps (a send, p-2 receive-reduce-sends, a
// receive-reduce-copy-send, p-2 receive-copy-sends, a receive), an
// allgather and a reduce-scatter p-1. Where a step is one slice (c at
// most a slot's data for LL and LL128, 32 KiB for Simple, whose second
// slice is then empty, its flag the same word as the first's):
//
//	allreduce       LL, LL128: 2(p-1)(α + w(c)β)   Simple: 2(p-1)(α + cβ + f)
//	allgather, RS   LL, LL128:  (p-1)(α + w(c)β)   Simple:  (p-1)(α + cβ + f)
//
// with c = n/p; in the bandwidth regime a rank's port is never idle:
// allreduce LL (2(p-1)/p)(n/32 KiB)(α + 64 KiB β), LL128
// (2(p-1)/p)(n/576000)(α + 614400β), Simple (2(p-1)/p)(n/1 MiB)(α + 1 MiB
// β + f). Several channels share alpha-beta's one port: in the small
// regime each step puts every channel's message on it, 2(p-1)·nc(α +
// w(c)β) for nc equal channels. Broadcast and reduce pipeline k chunks
// of a slot along the ring: (p-2+k)(α + w(s)β) (LL, LL128; s the slot's
// data) and (p-2+k)(α + sβ + f) (Simple, s = 512 KiB).
//
// Double binary tree (TreeAllreduce, "nccl_tree_*"; trees.cc's Btree and
// its mirror, or shift for odd counts, over the nodes; a chain inside each
// node from its head; the balanced pattern between nodes; half the
// channels on each tree). Each chunk is reduced up the tree and
// broadcast down it; the root turns it around at once and the other ranks
// run the way up and the way down as two processes, so chunks go up and
// down together. Inside one node (a chain) one chunk takes 2(p-1)(α +
// w(c)β), Simple 2(p-1)(α + cβ + f), and two Simple chunks
// (2(p-1)+1)(α + cβ + f); over p = 2^K nodes of one rank, one LL chunk
// takes (4K-2)(α + w(c)β) (a parent's two children share its port, and
// the root has one child). TreeBroadcast and TreeReduce go one way
// ((p-1) messages of a chunk along a chain): NCCL's TreeDown and TreeUp
// patterns, which its kernels no longer use (NCCL 2.30 broadcasts and
// reduces on rings).
//
// PAT (PatAllgather, PatReduceScatter, "nccl_pat", Simple only): Bruck's
// algorithm with its dimensions reversed, the allgather far first, the
// reduce-scatter near first. The step at distance 2^d carries the blocks
// at offsets 2^d + s (s a multiple of 2^(d+1), 2^d + s < p), aggregated
// into messages of at most a Simple buffer: with blocks of b bytes that
// fit, Σ_d (α + b·|{s}|β + f) over ⌈lg p⌉ steps; large blocks go in
// chunks of 64-512 KiB (halved while 32 chunks, 16 for the
// reduce-scatter, exceed the channel's bytes), each its ⌈lg p⌉ steps.
//
// In-network reduction (NVLSAllreduce "nccl_nvls", NVLSTreeAllreduce
// "nccl_nvls_tree", CollNetDirectAllreduce "nccl_collnet_direct",
// NVLSAllgather, NVLSReduceScatter): an allreduce runs in three phases
// per chunk, each a process of the channel: a reduce-scatter inside each
// node (NVLS: the NVSwitch reduces what each shard's owner loads,
// multimem.ld_reduce; CollNet: direct NVLink transfers to the owner), an
// allreduce of each shard between nodes (SHARP: the fabric's switches
// reduce; NVLS tree: NCCL's double binary tree over the shards' owners),
// an allgather inside each node (NVLS: the owner's store multicast by the
// NVSwitch, multimem.st; CollNet: direct). Chunks are NVLS's 128 KiB
// (32 KiB across nodes; NVLS tree's 128 KiB, 64 KiB from 4 nodes;
// smaller for small calls). They need a network
// whose switches reduce (algos.SwitchReducer): on a model without one
// they fail; on real links a rank stands in for the switch, so the data
// flow runs and is checked. On alpha-beta with one ideal switch that
// reduces at R (package sim), with one rank a node, NVLS and CollNet are
// SHARP alone: k chunks of s bytes, k(2(α + sβ) + (p-1)s/R); NVLS tree
// over two nodes, 2(α + sβ + f) a chunk. Inside one node of p >= 3 ranks,
// with a free switch, one chunk of n bytes takes 2p(α + (n/p)β) (each
// rank's port sends its p shards in turn, then takes the p-1 shards
// multicast to it); the allgather of blocks of b bytes p(α + bβ), the
// reduce-scatter (p+1)(α + bβ) + (p-1)b/R.
package nccl
