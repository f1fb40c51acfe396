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
// Names mean what MPI libraries mean by them. Where SimGrid SMPI has the
// same algorithm, message for message, the catalogue gives SMPI's name
// (Algorithm.SMPI: "lr", "rab_rdb", "rdb", "NTSLR", "bruck",
// "ompi_basic_recursivehalving", ...), which scenarios accept too and
// nexar-sim's SimGrid peer check (scripts/simgrid) runs: on SMPI's own
// protocol the two agree to within 0.03% at every point of that check.
// The recursive algorithms come in both orders where MPI libraries differ:
// MPICH exchanges its largest messages with the nearest rank first
// (the "_nearest" variants of halving-doubling, recursive doubling and the
// binomial allreduce and broadcast; its binomial reduce is the default
// one), the farthest-first orders are the others. On alpha-beta the order
// changes no time at powers of two; on a fat tree whose leaves hold
// neighbouring ranks it decides which messages cross the uplinks.
//
// # Tags
//
// Messages match by (source rank, tag), in order between a pair. Tags carry
// the communicator and the operation's sequence number in their high bits
// ([ScopeTag], [Scoped]); algorithms use only the low 16 bits.
//
// # Allreduce
//
// Every allreduce works in place on any world size and any count (blocks
// differ by at most one element, some are empty when count < p) and is in
// the catalogue under "allreduce". Times are on the alpha-beta model with
// p ranks and n bytes; where the buffer is cut, n divisible so that every
// piece is equal.
//
// Ring ([RingAllreduce], "ring"): 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ.
// Bandwidth-optimal, latency linear in p: large messages on few ranks.
//
// Pipelined ring ([PipelinedRingAllreduce], "pipelined_ring", parameter
// "segment", 2 MiB): the ring's reduce-scatter cut into k = ceil((n/p) /
// segment) segments per block and run as one stream of (p-1)k segment
// steps, each posted before the previous one is reduced, so reduction
// overlaps transfer; the allgather moves whole blocks. With s = n/(pk),
// T = α + sβ, R = sγ and k >= 2: T + ((p-1)k - 1)max(T, R) + R +
// (p-1)(α + (n/p)β); when R <= T, (p-1)(k+1)α + 2((p-1)/p)nβ + sγ. It
// hides all the reduction but one segment's for (k-1)(p-1) more
// latencies: large messages whose reduction is a visible share of the
// time. nexar's choice from 8 MiB.
//
// Halving-doubling ([HalvingDoublingAllreduce], "halving_doubling",
// Rabenseifner): recursive-halving reduce-scatter and recursive-doubling
// allgather, 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ for p = 2^k. Off powers
// of two the extra ranks fold in and get the result back: the p' = 2^⌊lg p⌋
// time + 2α + 2nβ + nγ, exactly once n >= (lg p' - 1)p'α/(β + 2γ); below
// that, when fewer than p'/2 ranks fold, the ranks that did not fold run
// ahead and their messages can hold a folded partner's port when its
// partner's message arrives, up to (lg p' - 1)α later (a property of the
// model's eager, first-asked-first-served ports, not of the layout: with
// one extra rank every butterfly has it). The ring's bandwidth with
// logarithmic latency: medium messages on many ranks; nexar's choice above
// 8 ranks below 8 MiB.
//
// Halving-doubling nearest first ([HalvingDoublingNearestAllreduce],
// "halving_doubling_nearest", MPICH's, SMPI "rab_rdb"): the same rounds,
// the reduce-scatter at d = 1, 2, ..., p/2 and the allgather back down.
// The same time for p = 2^k; off powers of two at least the row above and
// at most another fold (2α + 2nβ + nγ) more, since its largest halves go
// first to ranks a folded partner may be about to use.
//
// Recursive doubling ([RecursiveDoublingAllreduce], "recursive_doubling"):
// whole-buffer exchanges at distances p/2 .. 1, lg p (α + nβ + nγ); off
// powers of two (⌊lg p⌋ + 2)(α + nβ) + (⌊lg p⌋ + 1)nγ, exactly. Fewest
// rounds: small messages. Its nearest-first order
// ([RecursiveDoublingNearestAllreduce], "recursive_doubling_nearest",
// MPICH's, SMPI "rdb") has exactly the same times.
//
// Binomial tree ([BinomialTreeAllreduce], "binomial_tree"): binomial reduce
// to rank 0 then binomial broadcast, lg p (2α + 2nβ + nγ) for p = 2^k.
// Twice recursive doubling's rounds for the same bytes per round, so never
// better on a flat network: the baseline that composing rooted collectives
// gives. Its reduce goes farthest subtree first, then MPICH's broadcast
// ([BinomialBroadcast]); MPICH's reduce then broadcast
// ([BinomialTreeNearestAllreduce], "binomial_tree_nearest":
// [BinomialReduce] then [BinomialBroadcast]) reduces nearest first, with
// the same time for p = 2^k and on a crossbar.
//
// Reduce-scatter + allgather ([RSAGAllreduce], "rs_ag"): a ring
// reduce-scatter into a block of one's own, then a ring allgather of the
// blocks, as two composed collectives; the ring's time exactly.
//
// Direct ([DirectAllreduce], "direct"): every rank sends its buffer to
// every other (to r+1, r+2, ... in turn, so no port is contended) and
// reduces arrivals while the next is on the wire: with T = α + nβ and
// R = nγ, T + (p-2)max(T, R) + R, that is (p-1)(α + nβ) + nγ when R <= T.
// One latency step deep but (p-1)n bytes per rank: tiny messages on few
// ranks. The only one whose ranks may differ in the last bits of float
// sums, each reducing in its own order.
//
// Bucketed ([BucketedAllreduce], "bucketed", parameter "tensors", 8):
// many tensors copied into one buffer, one inner allreduce, copied back
// (nexar's bucketed allreduce; the catalogue entry cuts its buffer into
// that many uneven tensors with [SplitTensors] and uses the ring). Copies
// are free on the model, so the inner algorithm's time on the total n:
// with the ring 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ, where t separate
// rings cost 2(t-1)(p-1)α more. Small tensors, always.
//
// Hierarchical ([HierarchicalAllreduce], "hierarchical", parameter
// "group", 8): ranks in groups of g (the largest divisor of p not above
// the parameter, see [HierarchicalGroup]; G = p/g groups), a ring
// reduce-scatter inside each group, a ring allreduce of each block across
// the groups, a ring allgather inside each group, over sub-communicators
// built with [Sub]: 2(g + G - 2)α + 2((p-1)/p)nβ + ((p-1)/p)nγ. The ring's
// bandwidth with fewer latencies; on real clusters, only n/g bytes per
// rank cross the slow inter-node links.
//
// Compressed ([Compressor], "compressed_topk" and "compressed_randomk",
// parameter "ppm", 10000, the share of elements sent in parts per
// million; random-k also "seed", 0): nexar's all_reduce_compressed, and
// the only lossy allreduce. Each rank adds its error-feedback residual to
// its buffer, keeps k = ⌈(ppm/10^6)·count⌉ elements, the k largest in
// magnitude (top-k) or k drawn by a seeded generator, the same on every
// rank (random-k), sends them as k (32-bit index, value) pairs to every
// rank by Bruck's allgather, and keeps the rest as its new residual; then
// every rank decompresses the p blocks in rank order into its buffer, so
// all ranks hold the same bits. With e-byte elements, m = k(4 + e) bytes
// per rank and K = ⌈lg p⌉:
//
//	c·nγ + Kα + (p-1)mβ + (p-1)Rγ
//
// c = 2 for top-k (the residual's add and one selection pass, charged as
// a reduction of n bytes) and 1 for random-k; R = ke with Sum (only the k
// named elements are reduced per block) and R = n with other ops (each
// block is expanded and reduced whole, as nexar does for every op). With
// ρ = k/count, a Sum and no latency, it beats the ring's
// 2((p-1)/p)nβ + ((p-1)/p)nγ when 2(p-1)(1/p - ρ(4+e)/(2e))nβ exceeds
// (c + (p-1)ρ - (p-1)/p)nγ: the allgather grows with p, so its bytes pay
// only below ρ = 2e/((4+e)p) (1/p for f32), and the compression costs
// about cnγ that only a slow wire hides. Its latency, Kα, is below the
// ring's 2(p-1)α, so it also wins small messages where the ring pays p
// latencies, and loses to recursive doubling's Kα + K·n(β + γ) until
// (p-1)ρ(4+e)/e < K. The catalogue entries run each call from a zero
// residual (one step of a fresh Compressor: every call alike, which
// sweeps and checks need; the time is any step's); a training loop keeps
// a Compressor per tensor across steps ([Comm.AllReduceCompressed]).
// Tuning tables never choose them; checks compare their results with the
// same compression of the same inputs (package algotest).
//
// Auto ([AutoAllreduce], "auto"): the dispatcher. It picks by a [Tuning]
// table, nexar's rule by default ([DefaultTuning]): pipelined ring from
// 8 MiB (2 MiB segments), ring on up to 8 ranks or when count < p,
// halving-doubling otherwise. Its time is the chosen algorithm's.
// allgather, reduce_scatter, broadcast and reduce have an "auto" too
// ([AutoAlgorithm]), which measures the message as nccl-tests and NCCL do
// (the whole buffer of p blocks for allgather and reduce_scatter): the
// collectives a [Policy] such as NCCL's (package algos/nccl/tuner)
// chooses for.
//
// # Sub-communicators
//
// [Split] (collective, every rank of the parent must call it) and [Sub]
// (local, when every rank knows the members) give Links over some of the
// ranks, with ranks renumbered and their own communicator id in tag bits
// 63..40, so that operations on different sub-communicators never match
// each other's messages.
//
// # Buffers and counts
//
// reduce_scatter reads Call.Send (p blocks) and writes its block to
// Call.Buf; allgather reads its block from Call.Send and writes all p to
// Call.Buf; alltoall sends block j of Call.Send to rank j and writes
// rank j's block to block j of Call.Buf. Send buffers are never written.
// As in nccl-tests, n is the whole (reduced or gathered) buffer for
// reduce_scatter and allgather and the send buffer for alltoall, and
// Layout rounds the count down to a multiple of p, reporting what was
// used; the bus factor of all three is (p-1)/p. A barrier moves no data:
// its layout is empty whatever the count and its bus factor is 0, so only
// its time means anything. scan works in place on Call.Buf, and its bus
// factor is 1, as for reduce (the least a rank can receive is n once).
//
// # reduce_scatter
//
// Ring ([ReduceScatterRing], "ring"): partial sums travel around the
// ring; in each of p-1 steps a rank forwards one partial block to its
// right neighbour and adds its own input to the one arriving from its
// left, so rank r ends with block r. Time (p-1)α + ((p-1)/p)n(β + γ):
// optimal bandwidth, neighbour traffic only; for large messages.
//
// Pairwise ([ReduceScatterPairwise], "pairwise"): in step s rank r sends
// its input block r+s straight to rank r+s and reduces block r arriving
// from rank r-s. Same time as ring on alpha-beta; nothing is forwarded,
// and every rank talks to every other directly, which suits switched
// networks and loses to ring's neighbour traffic on rings and tori.
//
// Recursive halving ([ReduceScatterRecursiveHalving],
// "recursive_halving", Open MPI's and MPICH's, SMPI
// "ompi_basic_recursivehalving"): lg p rounds that each hand over half of
// the blocks still held, partners r XOR d at d = p/2, ..., 1 (Thakur,
// Rabenseifner and Gropp): lg p α + ((p-1)/p)n(β + γ) for p = 2^k. For
// other p the e extra ranks fold their whole input into a partner first
// and get their block back last; with p' = 2^⌊lg p⌋ and m = n/p the time
// with free reductions and e >= p'/2 is
// (lg p' + 2)α + nβ + (p' - 1 + Σ_{d=1..p'/2} min(e, d))mβ + mβ, and
// within (lg p' - 1)α above it with fewer extra ranks.
//
// Dissemination ([ReduceScatterDissemination], "dissemination"): the same
// halving in dissemination form, the transpose of Bruck's allgather: at
// d = 2^(K-1), ..., 1 rank r sends the partials of the min(d, p-d) blocks
// r+d, r+d+1, ... to rank r+d and reduces those from rank r-d. Each rank
// sends and reduces p-1 blocks, so the time is Kα + ((p-1)/p)n(β + γ) for
// every p: the fewest rounds and the least data, it wins whenever latency
// counts and p is not a power of two.
//
// # allgather
//
// Ring ([AllgatherRing], "ring"): each block travels once around the ring.
// Time (p-1)α + ((p-1)/p)nβ; for large messages.
//
// Recursive doubling ([AllgatherRecursiveDoubling],
// "recursive_doubling", MPICH's, SMPI "rdb"): in round d = 1, 2, ..., p/2
// rank r swaps everything it has with rank r XOR d; for p = 2^k the time is
// lg p α + ((p-1)/p)nβ. For other p a round whose partner group is cut
// short by the end of the world passes the short group's blocks on inside
// the other group along a binomial tree: at least bruck's time and at most
// 2Kα + 3nβ (it has no simpler closed form; the tests pin the bounds).
//
// Bruck ([AllgatherBruck], "bruck"): blocks kept rotated so a rank's own
// comes first; in round d = 1, 2, 4, ... rank r sends its first
// min(d, p-d) blocks to rank r-d and appends as many from rank r+d, then
// rotates into place. Time Kα + ((p-1)/p)nβ for every p; the allgather for
// small messages.
//
// # alltoall
//
// Pairwise ([AlltoallPairwise], "pairwise"): in step s rank r sends to
// r+s and receives from r-s. Time (p-1)(α + (n/p)β); optimal bandwidth,
// the choice for large blocks.
//
// Linear ([AlltoallLinear], "linear", SMPI "basic_linear"): every send and
// receive is posted at once, sends in the order r+1, ..., r+p-1. On alpha-beta a rank's
// egress sends one message at a time in posting order, and the k-th
// messages of all ranks go to p different receivers, all free at that
// moment; so the model runs exactly the pairwise schedule and the time is
// (p-1)(α + (n/p)β) (derived; there is no reference row). It differs from
// pairwise only on networks where messages overlap.
//
// Bruck ([AlltoallBruck], "bruck"): blocks rotated so entry j is for
// rank r+j; in round d = 1, 2, 4, ... every entry whose bit d is set is
// packed into one message to rank r+d (and replaced by what rank r-d
// sends), so a block hops along the binary digits of its distance. With
// c_k = floor(p/2^(k+1))·2^k + max(0, p mod 2^(k+1) - 2^k) the number of
// such entries in round k, the time is the sum over k < K of
// (α + c_k(n/p)β) (derived for every p); for p = 2^k every c_k is p/2 and
// that is the reference row lg p(α + (n/2)β). It moves about lg p/2 times
// pairwise's data, so it wins only for small blocks on large worlds.
//
// # barrier
//
// Two-phase ([BarrierTwoPhase], "two_phase"): every rank signals rank 0,
// which then releases each; rank 0's ingress and then its egress take p-1
// empty messages in turn, 2(p-1)α. nexar's barrier up to 4 ranks.
//
// Dissemination ([BarrierDissemination], "dissemination"): in round
// d = 1, 2, 4, ... rank r signals r+d and waits for r-d; Kα for any p,
// the barrier beyond a handful of ranks.
//
// # scan
//
// Recursive doubling ([ScanRecursiveDoubling], "recursive_doubling",
// Hillis and Steele): in round d = 1, 2, 4, ... rank r sends its running
// partial to rank r+d and reduces the one from rank r-d. The parameter
// exclusive (0 or 1) picks MPI_Scan (ranks 0..r) or MPI_Exscan (ranks
// 0..r-1); on rank 0 an exclusive scan leaves the buffer as it was (MPI
// leaves it undefined; an identity element is not needed this way). The
// exclusive form keeps a second partial and reduces into it while the
// next transfer is on the wire.
//
// Its time on alpha-beta, while nγ < α + nβ, is K(α + nβ + nγ), the
// reference row, except: when 2^(K-1) < p <= 3·2^(K-2) (p = 3, 5, 6,
// 9..12, 17..24, 33..48, ...) one nγ less, since the ranks that feed the
// last rounds stopped receiving early and send without waiting for a
// reduction; and the exclusive scan at p = 2 takes α + nβ (nothing to
// reduce). These forms were derived by following the schedule; TestScanCost
// checks them at p = 1..33, 64, 127 and 128. When nγ >= α + nβ the
// early senders' messages reach ports still busy with earlier rounds and
// the time depends on the exact ratios: it has no closed form, and the
// simulator is the reference.
//
// # Rooted collectives
//
// Broadcast, reduce, gather and scatter take a root rank (Call.Root). The
// tree algorithms number ranks relative to the root, v = (rank - root)
// mod p, and run the same tree for every root. Message sizes follow
// nccl-tests: n is the buffer for broadcast and reduce (bus factor 1) and
// the root's buffer of p blocks for gather and scatter (bus factor
// (p-1)/p, the share of it that crosses the root's port). Gather takes
// Call.Send = this rank's block and Call.Buf = the root's p blocks (only
// read on the root; rank r's block at block r); scatter the other way
// round, Call.Send = the root's p blocks and Call.Buf = this rank's block.
// Their Layout rounds count down to a multiple of p. Reduce leaves the
// non-roots' buffers unspecified (partial results).
//
// Broadcast binomial_tree (BinomialBroadcast, MPICH's, SMPI
// "binomial_tree"): rank v receives the buffer from v - lowbit(v) and
// forwards it to v + lowbit(v)/2, ..., v + 1, largest subtree first, one
// blocking send after the other. ceil(lg p)(α + nβ) for every p: the
// fewest whole message times, so the choice for small buffers.
// binomial_tree_nearest (BinomialNearestBroadcast) serves the nearest
// subtree first, the root sending to 1, 2, 4, ...: the same time.
//
// Broadcast pipelined_chain (PipelinedChainBroadcast, parameter "segment",
// default 256 KiB): segments of s bytes flow down the chain root, root+1,
// ...; each rank forwards a segment while receiving the next.
// (p + k - 2)(α + sβ) for k segments; with a short last segment s' the
// chain is a proportionate flow shop, (k-1)T + T' + (p-2)T with
// T = α + sβ, T' = α + s'β. With s = sqrt(nα/((p-2)β)) the bandwidth term
// is about nβ whatever p: it wins for large buffers.
//
// Broadcast scatter_allgather (ScatterAllgatherBroadcast, van de Geijn): a
// binomial scatter of p blocks, then a ring allgather.
// (ceil(lg p) + p - 1)α + 2((p-1)/p)nβ for every p when n divides into p
// blocks of whole elements (the reference gives it for p = 2^k; for other
// p, ranks that have their block early start the ring early, but the
// block of rank 1, the last to arrive, still makes its p - 1 hops one
// after another). Twice the bytes of an ideal
// pipeline but no segment to tune: it wins for large buffers on moderate
// p.
//
// Broadcast flat (FlatBroadcast, nexar's below 4 ranks): the root sends
// the buffer to every rank, in rank order. (p-1)(α + nβ); the same as the
// binomial tree for p <= 3.
//
// Broadcast binary_tree (BinaryTreeBroadcast, nexar's from 4 ranks): rank
// v sends to 2v+1, then 2v+2. The rank reached through l left and r right
// edges has the buffer after (l + 2r) message times, so the time is
// (α + nβ) max(2(D-1), D + q(m-1)), with D = floor(lg(p+1)) full levels,
// m = p - 2^D + 1 ranks on the partial level and q(x) = max(popcount(x),
// bitlen(x) - 1); for p = 2^k - 1, 2(k-1)(α + nβ). About twice the
// binomial tree's depth: it never wins on alpha-beta, and is here to
// simulate nexar.
//
// Broadcast nexar (NexarBroadcast): flat below NexarBroadcastThreshold (4)
// ranks, binary_tree from it on; its cost is theirs.
//
// Reduce binomial_tree (BinomialReduce, MPICH's, SMPI "binomial"): the
// binomial broadcast backwards, nearest subtree first; each rank reduces its children's partial results
// into its buffer and sends the sum to its parent. lg p (α + nβ + nγ) for
// p = 2^k; for other p the messages of smaller subtrees overlap the
// root's reductions, and the time lies between ceil(lg p)(α + nβ) + nγ
// and ceil(lg p)(α + nβ + nγ), equal to ceil(lg p)(α + nβ) when
// reduction is free. Small buffers. binomial_tree_farthest
// (BinomialFarthestReduce) goes farthest subtree first: lg p (α + nβ + nγ)
// for p = 2^k, ceil(lg p)(α + nβ) with free reduction.
//
// Gather and scatter binomial_tree (BinomialGather, BinomialScatter): each
// rank forwards its whole subtree's blocks in one message (the root
// rotates its buffer into relative order; copies are free).
// ceil(lg p)α + ((p-1)/p)nβ for every p (the reference gives p = 2^k):
// the root's port is busy without a gap, and carries p - 1 blocks in
// ceil(lg p) messages. Optimal in both terms on alpha-beta.
//
// Gather and scatter linear (LinearGather, LinearScatter, Open MPI's
// basic linear, SMPI "ompi_basic_linear"): every block goes straight
// between its rank and the root, which takes or sends them one after the
// other in rank order. (p-1)(α + (n/p)β): the same bandwidth term, a
// linear latency term; it wins only when α is negligible or the tree's
// relaying costs more than it saves. Gather and scatter flat (FlatGather,
// FlatScatter) are nexar's: all blocks posted at once, the same time on
// alpha-beta.
//
// # Comm
//
// Comm is what application code calls: every collective of the catalogue
// (AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll,
// Gather, Scatter, Barrier, Scan, ExScan), each also non-blocking (the I
// methods, returning a *Handle), point-to-point Send and Recv, and Split.
// Each collective takes the Comm's next sequence number and runs through
// Scoped(link, comm id, seq), so operations in flight together never
// match each other's messages; user messages carry the top bit of the
// sequence field, which collectives never set, so any user tag up to
// MaxUserTag (2^39 - 1) is safe. Algorithms are fixed per collective with
// WithAlgorithm, or chosen by a Selector (a *Tuning table from nexar-sim,
// or NexarSelector, the default, which makes nexar's own choices). A
// non-blocking operation runs concurrently on the same rank when the Link
// is a Spawner (the simulator's and realnet's are); otherwise it is
// deferred and runs, in the order operations were started, when the rank
// next waits or blocks.
//
// # Streams and events
//
// [Streams] give a rank CUDA's streams and events, as numr's
// Communicator (StreamSyncOps) and PyTorch's DistributedDataParallel use
// them to overlap communication with computation: a compute stream and
// communication streams whose work runs in the order it was queued and
// concurrently with the other streams'; an [Event] recorded on one stream
// and waited on by another or by the host; collectives of any Comm
// launched on a stream without blocking the host. Compute is timed work
// (Stream.Compute, or Stream.ComputeFLOPs at the Machine's FLOPS): on the
// simulator it holds only the stream's process (a Delayer's Delay), so
// the rank's other streams, reductions and ports go on meanwhile; on real
// links it runs the function given WithCompute. The simulator wakes a
// stream waiting for an event with its [Signaler]; other links, with a
// message from the rank to itself. Package workload builds training
// steps on them.
package algos
