package algos

// This file holds no code: it is the part of the package documentation
// about reduce_scatter, allgather, alltoall, barrier and scan, to be folded
// into doc.go. Notation as there: p ranks, n bytes as nccl-tests counts
// them, α latency, β seconds per byte sent, γ seconds per byte reduced,
// K = ceil(lg p).
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
// "recursive_halving"): K rounds that each hand over half of the blocks
// still held. For p = 2^k partners are r XOR d at d = p/2, ..., 1 (Thakur,
// Rabenseifner and Gropp). For other p the rounds run in dissemination
// form, the transpose of Bruck's allgather: at d = 2^(K-1), ..., 1 rank r
// sends the partials of the min(d, p-d) blocks r+d, r+d+1, ... to rank
// r+d and reduces those from rank r-d. Either way each rank sends and
// reduces p-1 blocks, so the time is Kα + ((p-1)/p)n(β + γ) for every p
// (the reference row for powers of two, derived here for the rest): the
// fewest rounds and the least data, it wins whenever latency counts.
//
// # allgather
//
// Ring ([AllgatherRing], "ring"): each block travels once around the ring.
// Time (p-1)α + ((p-1)/p)nβ; for large messages.
//
// Recursive doubling ([AllgatherRecursiveDoubling],
// "recursive_doubling"): for p = 2^k, in round d = 1, 2, ..., p/2 rank r
// swaps everything it has with rank r XOR d; time lg p α + ((p-1)/p)nβ.
// For other p the XOR partner may not exist, and it runs bruck, as Open
// MPI's recursive doubling does, with bruck's time.
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
// Linear ([AlltoallLinear], "linear"): every send and receive is posted
// at once, sends in the order r+1, ..., r+p-1. On alpha-beta a rank's
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
