// This file holds the allreduce section of the package documentation, to
// be folded into doc.go. It is written as doc comment paragraphs.
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
// Recursive doubling ([RecursiveDoublingAllreduce], "recursive_doubling"):
// whole-buffer exchanges at distances p/2 .. 1, lg p (α + nβ + nγ); off
// powers of two (⌊lg p⌋ + 2)(α + nβ) + (⌊lg p⌋ + 1)nγ, exactly. Fewest
// rounds: small messages.
//
// Binomial tree ([BinomialTreeAllreduce], "binomial_tree"): binomial reduce
// to rank 0 then binomial broadcast, lg p (2α + 2nβ + nγ) for p = 2^k.
// Twice recursive doubling's rounds for the same bytes per round, so never
// better on a flat network: the baseline that composing rooted collectives
// gives.
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
// Auto ([AutoAllreduce], "auto"): the dispatcher. It picks by a [Tuning]
// table, nexar's rule by default ([DefaultTuning]): pipelined ring from
// 8 MiB (2 MiB segments), ring on up to 8 ranks or when count < p,
// halving-doubling otherwise. Its time is the chosen algorithm's.
//
// # Sub-communicators
//
// [Split] (collective, every rank of the parent must call it) and [Sub]
// (local, when every rank knows the members) give Links over some of the
// ranks, with ranks renumbered and their own communicator id in tag bits
// 63..40, so that operations on different sub-communicators never match
// each other's messages.

package algos
