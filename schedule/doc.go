// Package schedule runs schedules written by synthesizers as algorithms:
// MSCCL XML files, as msccl-tools writes them and the MSCCL executor
// (Azure/msccl-executor-nccl) reads them, interpreted on the algos.Link,
// so that a schedule runs on every transport like a catalogue algorithm.
//
// A schedule is <algo> (name, proto, nchannels, nchunksperloop, ngpus,
// coll, inplace, outofplace, minBytes, maxBytes), one <gpu> per rank (its
// input, output and scratch buffers' sizes in chunks) holding threadblocks
// (<tb id send recv chan>) of steps (<step s type srcbuf srcoff dstbuf
// dstoff cnt depid deps hasdep>). As on the executor:
//
//   - the collective's whole buffer (count times ngpus for allgather,
//     reducescatter and alltoall) is cut into nchunksperloop chunks; chunk
//     c of the input (i), output (o) or scratch (s) buffer is chunk c of
//     that cut. Where the count does not divide, the executor falls back
//     to NCCL; here an allreduce's chunks are cut as evenly as possible
//     (the first ones an element longer, as the catalogue's ring cuts its
//     blocks), and the other collectives are refused;
//   - in place (an allreduce whose file says inplace="1", another
//     collective whose file says outofplace="0"), i and o name one
//     memory: the same for allreduce and alltoall, the rank's block of o
//     for allgather's i, of i for reducescatter's o. Steps are run on the
//     memory their chunks are, so that a step reading i and writing o
//     reads what it is about to overwrite, as on the executor;
//   - a threadblock runs its steps in order; a step with depid waits for
//     step deps of threadblock depid of the same GPU (depid its own
//     threadblock: an earlier step, done already, so no wait; the
//     executor would wait forever for a later one, which is refused);
//   - s sends, r receives, rcs receives and sends on, rrs receives,
//     reduces with src and sends the result, rrc receives and writes
//     src op received into dst, rrcs does both, cpy copies, re reduces
//     src into dst, nop only waits;
//   - messages of a connection (a pair of GPUs and a channel) match in
//     order; channels are concurrent (each has its own tag);
//   - a buffer whose chunks are larger than a loop's slice (the "slice"
//     parameter, in bytes; 0, the default, moves whole chunks) is moved in
//     loops of the whole program, each moving one slice of every chunk.
//
// Each threadblock runs as a process of its rank (the link's
// algos.Spawner, which the simulator and realnet have): it waits for what
// it receives and for the steps it depends on, which their threadblocks
// signal with messages of the rank to itself, free in the simulator. On a
// link that cannot spawn, the interpreter advances a rank's threadblocks
// in rounds instead (the local steps that may run, then the receives and
// sends of every threadblock whose next step may start, and a wait for
// all of them): right for schedules whose threadblocks move in lockstep,
// as the exported ones do, but it can wait where the executor would not.
// The protocol is read and written back but not modelled: the Link's
// network model charges the transfers.
//
// Parse and Load check a file fully (attributes, numbering, peers,
// buffer bounds, dependencies) and dry-run every GPU's program together,
// so that a receive nobody sends or a cycle of waits is reported at load
// with the steps each GPU waits on; errors name the file and line.
// Schedule.Algorithm, Register and Use make a schedule an algorithm of
// its collective (a scenario's sweep names one as "msccl:file.xml"); RingAllreduce and the other exporters write the
// catalogue's algorithms as schedules (WriteXML) for MSCCL and RCCL.
//
// TE-CCL's allgather solutions (ParseTECCL; see teccl.go for the JSON
// read; an alltoall solution is refused as such) become MSCCL allgather
// schedules: per link, a threadblock that sends the chunks of the
// solution's flows in the order of their epochs and one that receives
// them, a chunk forwarded once it has arrived. The epochs
// are not waited for, so on the network the solution was solved for the
// schedule finishes no later than TE-CCL's finish time, and at it where
// the network's model is TE-CCL's: on alpha-beta, a chain of sends one
// chunk a link each (the simulator holds a sender's port for alpha +
// m*beta a message, where TE-CCL overlaps a link's alpha with the next
// chunk).
//
// MSCCL++ execution plans (ParseMSCCLPP; the JSON read is described in
// mscclpp.go) become MSCCL schedules where their semantics map onto the
// Link's messages. What maps: put, pws and pwsf over memory or port
// channels, each put a message sent at the signal that follows it and
// received at the peer's matching wait (the j-th wait on a channel
// matches the j-th signal) into the chunks the put named (the data is
// read at the signal, not at the put: a plan that overwrites a put's
// source before signalling it runs differently); signal and wait
// with no put between them (barriers: dropped, the receives order the
// data); copy; re (dst = the reduction of its sources); nop and flush.
// What does not, refused naming the op: get and the read_* ops (a GPU
// reading a peer's memory), the LL packet ops, res, the switch (NVLS)
// ops and channels, sem_acquire, sem_release and barrier (syncs
// between threadblocks), and pipeline (a loop of ops over parts of the
// chunks); a threadblock exchanging with more than one peer each way; and
// the older camelCase plan format (inputChunks, ops with i_buff), refused
// as such. A GPU's channel list may name a channel's type channel_type,
// as current plans do and the executor reads, or type, as older ones do.
// UseFormat registers a file of any of the Formats (a scenario's
// "teccl:file.json", "mscclpp:plan.json").
package schedule
