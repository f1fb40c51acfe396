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
// Buffers may be phantom ([device.Phantom]): then only time is simulated
// and a run of thousands of ranks allocates no payload. With host buffers
// (Config.HostData) messages carry real bytes and results can be checked.
//
// When every unfinished rank is blocked and nothing is left to happen, the
// run fails with a [DeadlockError] naming each blocked rank and what it
// waits for, instead of hanging.
package sim
