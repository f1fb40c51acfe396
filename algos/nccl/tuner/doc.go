// Package tuner is NCCL's tuner as a policy: a pure function from a
// communicator (its ranks and nodes, the figures NCCL's graph search
// produces, the GPUs' compute capability, the CPUs) and a call (the
// collective and its bytes) to what NCCL would run (algorithm, protocol,
// channels) and the time NCCL predicts for it. It reproduces NCCL 2.30.7's
// ncclTopoTuneModel (src/graph/tuning.cc), ncclTopoGetAlgoTime,
// updateCollCostTable and topoGetAlgoInfo (src/enqueue.cc) with the
// constants of nccl.Constants230, computing in float32 where NCCL computes
// in float so that its figures round as NCCL's do.
//
// It is a package of its own, beside algos/nccl rather than in it,
// because it is a different kind of thing: algos/nccl holds NCCL's
// algorithms, which run on an algos.Link message by message; this
// package holds NCCL's choice among them, which runs nothing and needs no
// Link. It imports algos/nccl for the constants and the protocols, and is
// what package algos's "auto" consults when a scenario sets policy =
// "nccl" (see Policy); the algorithms do not need it.
//
// # The model
//
// Tune computes a Model from a System: for each collective, algorithm
// and protocol, NCCL's bandwidth (GB/s of algorithm bandwidth; 0 where the
// pair is disabled) and latency (microseconds), from the base and
// hardware latencies, the per-protocol and per-generation bandwidth caps
// (llMaxBws by generation on one node and by CPU vendor across nodes,
// perChMax*), the LL, LL128, tree and PAT factors, the network overhead of
// rings across nodes, and the enable rules (PAT only with one GPU a node
// and no network offload unless NCCL_PAT_ENABLE says otherwise, NVLS and
// NVLS tree Simple only and with an NVLS graph of two channels or more,
// NVLS tree off on one node, CollNet only where enabled, LL128 only up to
// NVB inside and PXN (PXB before Hopper) to the NICs). Model.Table prints
// it as NCCL's TUNING lines do, so the two can be compared line by line.
//
// Model.Time is ncclTopoGetAlgoTime: latency plus bytes over bandwidth,
// with the tree correction factors by size and the ring plateau of Simple
// across nodes. Model.Choose is NCCL's choice: the pair of least time
// (first in NCCL's order on ties) among those the call can use, then the
// channels (cut down from the communicator's while the message is below
// channels x threads x the protocol's threshold, the NVLS channel count
// for NVLS) and threads.
//
// NCCL_ALGO and NCCL_PROTO are read as NCCL reads them (System.Algo and
// Proto): the pairs they leave out are never chosen. What is left at its
// default: the rest of the environment (NCCL_NTHREADS,
// NCCL_THREAD_THRESHOLDS, NCCL_LL128_C2C), tuner plugins,
// registered buffers (the CTA policy that may pick NVLS for them), the
// CUDA 11.8 exception of LL128, and operations aggregated beyond
// NCCL_MAX_DEV_WORK_BATCH_COLLS.
//
// # Graph figures from a cluster's description
//
// NCCL's model reads what its graph search found (channels and their
// bandwidths, link types), which a log prints but a datasheet does not.
// Cluster describes a GPU cluster as nexar's presets do (GPUs a node,
// NVLink, PCIe and NIC bandwidths, NVLS) and Cluster.System derives the
// figures by a model of the search (see SystemNodes): NCCL's view of each
// link, then the fastest speeds of search.cc's ladders whose channels
// fit, duplicated as ncclTopoDupChannels does. On NVSwitch nodes this
// gives the channel counts NCCL logs report (12 x 20 GB/s on A100, 12 x 30
// on H100, 24 and 24 channels to run); it is a model of the search, not
// the search.
//
// # Logs
//
// ParseLog reads what NCCL prints of its model: the cost table
// (NCCL_DEBUG_SUBSYS=TUNING; the block format of 2.19 and later and the
// single-row format before it), the predicted times of older INFO logs
// ("1024 Bytes -> Algo 0 proto 0 time 25.331232") and the choices of newer
// ones ("AllReduce: 1048576 Bytes -> Algo RING proto LL
// channel{Lo..Hi}={0..7}"). The package's tests hold the model against the
// logs of testdata/logs, each with its source.
package tuner
