// Command nexar-live runs nexar-go's collective algorithms on real ranks,
// over QUIC, and holds the measurements against the simulator: it
// measures a scenario's sweeps (nccl-tests-style output, results.csv with
// a wrong column), compares them with the simulator's predictions,
// calibrates the simulator's network models, verifies the crossovers of
// a tuning table nexar-sim derived, runs on an emulated network, and
// measures the training steps of a scenario's [workload] (nexar-live step)
// against the simulator's prediction of them.
//
// Run 'nexar-live help' for the commands; package live has the library
// and the documentation of cluster runs (Slurm, torchrun, mpirun).
//
// The command is package nexarlive; this one only calls nexarlive.Main, as
// a user's module with algorithms of its own does (docs/adding-an-algorithm.md).
package main
