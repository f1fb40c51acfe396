// Package workload simulates training steps: the compute and
// communication of every rank, on the streams and events of package algos
// (algos.Streams), so that it answers what a collective's time alone does
// not: how much of a step is communication that nothing hides.
//
// A [Spec] describes a step: the model as [Layer]s (parameters,
// activation bytes, forward and backward compute per micro-batch as a
// time or as FLOPs; [Transformer] builds a GPT's from its paper's sizes,
// [ReadAICB] reads SimAI's AICB workload files), its [Layout] (data,
// tensor, pipeline and expert parallel sizes, and the order of ranks that
// maps the groups onto the topology: TP inside a node, DP across), and
// how it trains:
//
//   - data parallelism with gradient buckets cut in reverse layer order
//     (Bucket, FirstBucket), each reduced on the DP stream as soon as its
//     layers' gradients are done (Overlap) or on the critical path;
//   - ZeRO-1/2 (reduce-scatter of the buckets, allgather of the updated
//     parameters before the layers that need them) and ZeRO-3 / FSDP
//     (each layer's parameters gathered before its forward and its
//     backward, Prefetch layers ahead; its gradients reduce-scattered);
//   - tensor parallelism: a layer's compute split TP ways, its allreduces
//     (or reduce-scatter and allgather, SequenceParallel) on the critical
//     path;
//   - pipeline parallelism with GPipe, 1F1B and Megatron's interleaved
//     1F1B, activations and their gradients sent point to point between
//     stages;
//   - expert parallelism: alltoalls over the EP group in each pass of a
//     mixture-of-experts layer, the experts' gradients reduced over DP_EP;
//   - each process group with its algorithm of each collective
//     (Algorithms: the catalogue's, NCCL's nccl_*, or auto);
//   - per-rank compute skew and stragglers, drawn from Seed; the
//     simulator's faults come with its network.
//
// [NewPlan] compiles a Spec for its layout: the layers of each pipeline
// stage (edge layers, embedding and head, with their neighbours), the
// buckets, the schedule. [Run] is one rank's step, written against
// algos.Link and its streams only, so that it runs on the simulator and,
// with Options.Compute emulating the compute, on real ranks. Each rank
// has a compute stream and a stream per kind of communication (named
// after its group: "tp", "ep", "dp", "dp_ag", "dp_ep", and the pipeline's
// "pp_recv_fwd", "pp_recv_bwd", "pp_send_fwd", "pp_send_bwd"); every
// collective takes its Comm's sequence number when queued, in the same
// order on every rank of its group.
//
// [Simulate] runs a step on the simulator, and [Stats] accounts for it
// from the streams' records: the step's time, each rank's compute, its
// exposed communication by process group and collective (the compute
// stream's waits for each group's streams), the pipeline bubble and the
// compute utilisation ([Result]). The records of chosen ranks make a
// timeline with a track per stream (package trace).
//
// On alpha-beta the step has closed forms, which the tests hold it to
// exactly: without overlap the step is its compute plus its
// communication; with overlap and buckets that fit under a layer's
// backward, the compute plus the last bucket's allreduce; GPipe's and
// 1F1B's bubble is (p-1)/(m+p-1) of the step with equal stages, the
// interleaved schedule's (p-1)/(vm+p-1); ZeRO-3 adds (2m-1)L allgathers of
// a layer's parameters to ZeRO-2's step.
package workload
