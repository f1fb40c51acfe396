// Package scenario reads scenario files: TOML descriptions of a simulated
// network and of the sweeps of collectives to run on it, which the
// nexar-sim command (and package sweep) turn into measurements.
//
// A scenario file looks like this:
//
//	name = "example"
//	description = "free text"     # optional
//	seed = 1                      # seeds every random draw; repeat k runs with seed + k
//	tuning = "tuning.toml"        # optional: the table "auto" selects by (relative to this file)
//	policy = "nccl"               # optional: "auto" asks NCCL's choice first (Policies)
//
//	[network]
//	model = "alpha-beta"
//	latency = "5us"               # alpha: ps, ns, us, ms, s
//	bandwidth = "12.5GB/s"        # 1/beta: B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, Gbit/s, ...
//	reduce_bandwidth = "25GB/s"   # 1/gamma; optional, "inf" (free) by default
//	switch_reduce_bandwidth = "400GB/s"  # optional: one switch reduces in the network
//	eager_limit = "64KiB"         # optional message protocol (ProtocolKeys): eager
//	envelope = "16B"              # below, rendezvous from it; bytes added per message
//
//	[network.transport]           # optional: realnet's two paths (Transport),
//	quic_latency = "30us"         # from which nexar-sim derives the tuning
//	quic_bandwidth = "1.65Gbit/s" # table's [transport] bulk_threshold; the
//	bulk_latency = "10us"         # sweeps run on them with model = "realnet"
//	bulk_bandwidth = "1.09GB/s"
//
//	[[fault]]                     # optional noise and faults, any number
//	kind = "jitter"
//	dist = "lognormal"
//	mean = "2us"
//	stddev = "1us"
//
//	[[sweep]]
//	collective = "allreduce"
//	algorithms = ["ring", "pipelined_ring", "auto"]  # "msccl:ring.xml": an MSCCL schedule (relative to this file; package schedule), run as msccl_ring; "teccl:sol.json": a TE-CCL solution, as teccl_sol; "mscclpp:plan.json": an MSCCL++ plan, as mscclpp_plan; "synth_tree": spanning trees packed for the flow model's topology (package schedule/synth; see SynthTree)
//	world = [2, 3, 8, "16..64 x2"]
//	bytes = [0, 1024, "8MiB", "1KiB..1GiB x4"]
//	dtype = ["f32", "bf16"]       # one or a list; default f32
//	op = "sum"                    # default sum
//	data = "phantom"              # default; or "host": move and check real data
//	symmetry = "auto"             # default: one rank for all where proved exact; or "off"
//	params = { segment = ["512KiB", "2MiB"] }  # one value or a list each
//	repeat = 5                    # runs per point, seeds seed..seed+4: median and spread
//	tuning = "other.toml"         # this sweep's auto table, instead of the file's
//	policy = "table"              # this sweep's policy, instead of the file's
//
// A sweep runs every combination of its dtypes, algorithm variants, world
// sizes and message sizes. An algorithm variant is an algorithm with one
// value of each parameter the sweep sets that it takes: with the params
// above, pipelined_ring runs twice, as "pipelined_ring(segment=512KiB)" and
// "pipelined_ring(segment=2MiB)" (the names results give them), while ring
// and auto, which take no segment, run once.
//
// The network models (Models) are "alpha-beta", "loggp", "flow" and
// "realnet" (realnet's two paths, from [network.transport]); the flow
// model runs on a topology (Topologies): a crossbar, a ring, a torus, a
// fat tree, a dragonfly, a hierarchical cluster of nodes or a GPU
// cluster (hosts of GPUs in NVLink domains, NICs on rails), its links
// shared by plain or latency-weighted max-min. A [network] table may
// start from a GPU machine (Presets: preset = "dgx-h100", "gb200-nvl72",
// cloud instances), whose keys are those of a GPU cluster, each figure
// with its source; every key the table sets overrides the preset's. The
// keys gpu, cpu and ranks_per_node and the table [network.nccl]
// (MachineKeys, NCCLKeys) describe the machine to algorithms that adapt
// to it (NCCL's): they become Network.Machine, which every run gets. Every model takes the
// message protocol keys (ProtocolKeys: eager and rendezvous, an envelope,
// SimGrid-style latency and bandwidth factors by size), which put a
// sim.Protocol over it. The keys of each are those sim's types document,
// one to one. Every model also takes mesh = "full" (default),
// "hypercube" or "kregular:K": ranks joined as that sparse mesh, messages
// between ranks that are not joined relayed hop by hop (sim.Relayed).
// [[fault]] tables
// (Faults) add noise and faults to any model, seeded by the scenario's
// seed; a sweep may repeat only on a network that draws random numbers.
// A [[fault]] of kind "rank_failure" with recovery = "shrink" strikes one
// point of the sweeps (Scenario.Shrink): the survivors recover and the
// later points run on one rank fewer (see sweep.Plan, sim.RunShrink).
// A [[fault]] of kind "rank_join" grows an elastic world (min_world to
// max_world) before one point (Scenario.Join): the members agree and
// rebuild, and that point and the later ones run on the larger world
// (see sweep.Plan, sim.RunGrow).
//
// A [workload] table describes a training step instead of, or beside,
// the sweeps of collectives: a model (a transformer from its paper's
// sizes, [[workload.layer]] tables, or an AICB workload file of SimAI),
// its parallel layouts, buckets, ZeRO stage, pipeline schedule and each
// process group's algorithms, any of them a list that the step's runs
// sweep (Workload, WorkloadKeys; package workload runs it, nexar-sim
// step is its command). The [network] key flops, which the GPU presets
// set, is one GPU's compute rate for work given in FLOPs.
//
// A file may hold several [[sweep]] tables. Parse and Load validate
// everything that can be checked without running anything: units, names
// against the algos catalogue and the network models, world sizes, sizes
// that are whole numbers of elements, tuning tables, unknown and missing
// keys. They report every problem at once as Errors, each naming its
// file, line and key. Checks that need a network built for a world size
// (Network.Check) are made by sweep.Plan, with the same kind of errors.
//
// Adding a network model means adding an entry to the models table in
// model.go; a topology, to the topologies table in topology.go.
package scenario
