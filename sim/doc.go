// Package sim is a deterministic discrete-event simulator of a network of
// ranks running collective algorithms.
//
// Every rank runs the same algorithm code that runs on hardware: the
// simulator implements [algos.Link] for each rank. A rank's program runs as
// a coroutine (iter.Pull), resumed by the engine when what it waits for has
// happened, so exactly one rank runs at a time and nothing depends on
// goroutine scheduling. Events are ordered by (virtual time, sequence
// number); virtual time is an integer number of picoseconds ([Time]). The
// same inputs give bit-identical results, run after run.
//
// How messages move and how long reductions take is the business of a
// network [Model]. [AlphaBeta] is the contention-free Hockney model of the
// project's reference cost model, on which the simulator reproduces the
// closed-form time of every algorithm. Other models plug in through the same
// [Network] interface.
//
// # Network models and their scenario keys
//
// Each model documents its exact semantics; the TOML keys of the
// scenario's [network] table meant for each field are named in the
// field's comment, so that a scenario maps onto the Go values one to one:
//
//   - model = "alpha-beta": [AlphaBeta] (latency, bandwidth,
//     reduce_bandwidth, switch_reduce_bandwidth).
//   - model = "flow": [Flow] on a [Topology] chosen by topology = "crossbar"
//     ([Crossbar]), "ring" ([Ring]), "torus" ([Torus]), "fat_tree"
//     ([FatTree]), "dragonfly" ([Dragonfly]), "hierarchical"
//     ([Hierarchical], whose inter-node topology is named by "inter" and
//     read from keys prefixed "inter_") or "gpu_cluster" ([GPUCluster]:
//     hosts of GPUs in NVLink domains, a PCIe path to their NICs, the
//     NICs on a rail-optimised fat tree, [RailFatTree], or another
//     inter-node topology; its devices carry their NVLink domain and its
//     switches what they reduce in the network); plus placement, send_slots,
//     recv_slots, sharing ([MaxMin] or [LatencyWeighted], SimGrid's CM02),
//     reduce_bandwidth. With topology = "crossbar" and only alpha-beta's
//     three keys it is [FlowCrossbar], which gives alpha-beta's times
//     exactly.
//   - model = "loggp": [LogGP] (latency, overhead, gap, bandwidth,
//     reduce_bandwidth); "overhead" on the other models wraps them in
//     [Overhead].
//   - model = "realnet": [TwoPaths], realnet's QUIC and bulk TCP paths
//     (the [network.transport] table, bulk_threshold, reduce_bandwidth).
//   - The message protocol of MPI libraries wraps any model: [Protocol]
//     (eager_limit, eager_moves, envelope, lat_factors, bw_factors,
//     handshake, handshake_delay): eager sends that complete at once,
//     rendezvous sends that wait for their receive, an envelope and
//     SimGrid-style factors by message size. With eager_limit = "64KiB"
//     and envelope = "16B" on the flow model with unlimited slots it is
//     SimGrid SMPI's network.
//   - Noise and faults wrap any model: [WithFaults] with the scenario's
//     seed and a [Fault] per [[fault]] table ([Jitter], [Straggler],
//     [Stragglers], [SlowLink], [LinkFailure], [RankFailure]).
//   - A sparse mesh wraps any model: [Relayed] (mesh = "hypercube",
//     "kregular:K"): messages between ranks that are not joined are
//     relayed hop by hop along package mesh's routes, store and forward,
//     each hop a message of the model.
//
// Messages from one rank to another with one tag match the receives posted
// for them in the order they were sent, whatever order the network
// delivers them in (MPI's rule). Networks that hold a message until its
// receive is posted learn of it through [Matcher].
//
// A rank that fails makes every operation that needs it return an error
// naming it ([RankFailedError]; a cut path gives a [PathCutError]), and
// ranks that return such errors pass them on ([PeerExitedError]), so a
// failure ends the run with a [RankErrors] rather than a hang. errors.As
// finds each error for a lost rank as an [algos.PeerLostError] naming it,
// as it finds realnet's. [RunShrink] recovers instead, as nexar's
// survivors do: heartbeat detection ([Recovery]), agreement and rebuild on
// the survivors, and the work run again on one rank fewer ([Shrunk]
// reports the times). Networks built on a topology account for their links
// in Result.Links, which [WriteLinksCSV] writes as links.csv.
//
// Buffers may be phantom ([device.Phantom]): then only time is simulated
// and a run of thousands of ranks allocates no payload. With host buffers
// (Config.HostData) messages carry real bytes and results can be checked.
//
// When every unfinished rank is blocked and nothing is left to happen, the
// run fails with a [DeadlockError] naming each blocked rank and what it
// waits for, instead of hanging.
//
// # What the links tell algorithms of the hardware
//
// Besides [algos.Link] and [algos.Spawner], every rank's link implements
// the optional interfaces NCCL-style algorithms look for:
//
//   - [algos.MachineLink]: Config.Machine, with its Node filled, when it
//     has none and the network is built on a topology ([Placer]: the flow
//     model), from the domain (Node.Domain, Topology.SetDomain) of the
//     device each rank is placed on; with no Config.Machine, a Machine of
//     those nodes alone; nil on a network without a topology. One Machine
//     per run, shared by every link, never modified.
//   - [algos.Delayer]: Delay(ctx, d) holds the calling process for d of
//     virtual time (d's nanoseconds, exactly), holding neither the rank's
//     compute, which runs one thing at a time, nor its ports: its other
//     processes, reductions and messages go on. The observer sees a span
//     of [SpanDelay].
//   - [algos.Signaler]: Signal returns a request that another process of
//     the rank completes, at no cost in time and with no message: how a
//     stream of algos.Streams waits for an event of another stream. A
//     deadlock report names such a wait (Wait.Signal).
//   - [algos.SwitchReducer]: in-network reduction and multicast (NVLink
//     SHARP, InfiniBand SHARP), on networks with switches that reduce
//     ([SwitchNetwork]): [AlphaBeta] with a SwitchBandwidth (one ideal
//     switch, in closed form) and [Flow] on a topology with reducing
//     switches (Topology.SetReduce; the contributions up and the result
//     down as one tree flow each, sharing links). Decorators pass them to
//     the model they wrap; [LogGP] and [TwoPaths] have none:
//     CanSwitchReduce is false and a request fails with [ErrNoSwitch].
//     The engine matches the operations of a group by (group, tag, k-th
//     posted), reduces host data in ascending rank order (so results can
//     be checked, and are the same whatever the timing), fails an
//     operation whose member fails (a [RankFailure]) or returns with an
//     error before taking its part, and names an operation whose group
//     never completes in a deadlock. Switch operations are not messages:
//     Result.Messages and the observer do not see them.
//
// The reference cost model's rows for in-network reduction, on
// alpha-beta with SwitchBandwidth R (switch_reduce_bandwidth), s bytes
// per rank, p ranks that all post at 0 on idle ports (see [AlphaBeta] for
// the rules they follow; each term rounds to the picosecond as
// TransferTime does):
//
//	operation (one switch op)               contributors  receivers  time
//	allreduce                               p             p          2(α + sβ) + (p-1)s/R
//	multicast (NVLS multimem.st)            1             p-1        2(α + sβ)
//	ld_reduce (NVLS multimem.ld_reduce)     p             1          2(α + sβ) + (p-1)s/R; the others α + sβ
//	reduce_scatter, one op per block of s   p             1 each     2(α + sβ) + (p-1)s/R + (p-1)(α + sβ)
//
// (the last as p operations posted in block order, each rank's p
// contributions queueing on its egress port: the k-th reaches the switch
// at k(α + sβ)). On [Flow] a crossbar whose switch reduces gives
// L + 2s/B + (c-1)s/R for c contributors.
//
// # Runs at scale
//
// A body whose operations depend neither on timing nor on data, as every
// algorithm of the catalogue's does, may be replayed ([Config.Replay]):
// the engine runs it once per rank against a recording link, on every
// CPU, keeps each rank's operations as a compact program (ranks that do
// the same thing relative to their rank share it), and replays the
// programs without coroutines, event for event as the coroutines would
// (a test pins both to the same results on the whole catalogue; delays
// and switch operations are recorded and replayed too). A
// halving-doubling allreduce on 2^20 ranks then takes about a gigabyte
// rather than fifteen, and a few times the floor of a heap operation per
// message:
//
//	go test ./sim -run '^$' -bench 'Scale' -benchtime 1x -sim.big
//
// A replayed run may go further ([Config.Symmetry]): where the programs
// prove that every rank does what rank 0 does, moved by the cyclic group
// (rings, Bruck, pairwise exchanges) or the xor group (recursive doubling,
// halving-doubling), and the model is plain [AlphaBeta], rank 0 alone is
// simulated and the account scaled ([Result.SymmetryGroup] says so); a
// test holds every such shortcut on the catalogue to the full run's
// result, exactly. Rooted collectives, uneven chunks and other models run
// in full.
//
// [Config.Context] stops a run within milliseconds, [Config.Progress]
// reports how far it is, and [EstimateRun] says what a run will cost
// (messages, events, memory) before it runs.
package sim
