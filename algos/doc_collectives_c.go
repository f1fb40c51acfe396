package algos

// Documentation fragment for doc.go: broadcast, reduce, gather and scatter,
// and the Comm facade. (Kept out of the package comment until it is folded
// in; every formula below is checked by a table test on alpha-beta, to
// 1e-6 relative, in the _cost_test.go files named after each collective.)
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
// Broadcast binomial_tree (BinomialBroadcast): rank v receives the buffer
// from v - lowbit(v) and forwards it to v + lowbit(v)/2, ..., v + 1,
// largest subtree first. ceil(lg p)(α + nβ) for every p: the fewest whole
// message times, so the choice for small buffers.
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
// Reduce binomial_tree (BinomialReduce): the binomial broadcast backwards,
// nearest subtree first; each rank reduces its children's partial results
// into its buffer and sends the sum to its parent. lg p (α + nβ + nγ) for
// p = 2^k; for other p the messages of smaller subtrees overlap the
// root's reductions, and the time lies between ceil(lg p)(α + nβ) + nγ
// and ceil(lg p)(α + nβ + nγ), equal to ceil(lg p)(α + nβ) when
// reduction is free. Small buffers.
//
// Gather and scatter binomial_tree (BinomialGather, BinomialScatter): each
// rank forwards its whole subtree's blocks in one message (the root
// rotates its buffer into relative order; copies are free).
// ceil(lg p)α + ((p-1)/p)nβ for every p (the reference gives p = 2^k):
// the root's port is busy without a gap, and carries p - 1 blocks in
// ceil(lg p) messages. Optimal in both terms on alpha-beta.
//
// Gather and scatter linear (LinearGather, LinearScatter): every block
// goes straight between its rank and the root, all posted at once.
// (p-1)(α + (n/p)β): the same bandwidth term, a linear latency term; it
// wins only when α is negligible or the tree's relaying costs more than
// it saves. Gather and scatter flat are nexar's names for exactly this,
// and run the same code.
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
