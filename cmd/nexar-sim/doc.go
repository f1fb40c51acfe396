// Command nexar-sim runs scenario files in the simulator: sweeps of
// collective algorithms over world sizes and message sizes on a modelled
// network, written as CSV and JSON, drawn as figures, and turned into the
// tuning table of the "auto" dispatchers.
//
// Usage:
//
//	nexar-sim run SCENARIO.toml --out DIR   simulate, write results, figures, tuning.toml
//	nexar-sim step SCENARIO.toml... --out DIR  simulate the training step of a [workload]:
//	                                        step time, exposed communication, bubble, best bucket
//	nexar-sim validate SCENARIO.toml...     check files, list every problem
//	nexar-sim list                          collectives, algorithms, models, topologies, faults
//	nexar-sim plot RESULTS.csv --out DIR    draw the figures again
//	nexar-sim merge --out DIR SHARD_DIR...  join the shards of a run
//	nexar-sim calibrate LOGS... --out F     fit a network model to nccl-tests and OSU logs
//	nexar-sim help [COMMAND]                help, with examples
//
// Points run in parallel (--jobs), with results in a deterministic order;
// --shard I/N splits a run across machines and merge joins the parts;
// --resume continues an interrupted run; --trace writes the timeline of one
// point as a Chrome trace, and --links the bytes and busy time of every
// link of the network (flow model) for chosen points as links.csv. Every
// output is written atomically.
//
// Exit status: 0 on success, 1 when a simulation fails (deadlock, wrong
// data), 2 for bad input or usage, in which case nothing is written, 130
// when interrupted.
//
// The command is package nexarsim; this one only calls nexarsim.Main, as
// a user's module with algorithms of its own does (docs/adding-an-algorithm.md).
package main
