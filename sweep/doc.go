// Package sweep turns a scenario into measurements: Plan expands its sweeps
// into points (a collective, an algorithm, a world size, a message size),
// RunPoint simulates one point and returns its Row, Run runs points in
// order, and CSVWriter writes rows as nccl-tests-style CSV
// (collective,algorithm,world,bytes,dtype,time_s,algbw_gbps,busbw_gbps).
//
// Points with data = "host" move real bytes: a Check per collective fills
// each rank's input and verifies its output (RegisterCheck; allreduce has
// one built in, AllreduceCheck), and a mismatch fails the point with an
// error naming the point and the rank. Plan rejects host data for
// collectives without a check.
//
// RunPoint depends only on its point, so parallel runs, shards and other
// outputs can be built on top of it.
package sweep
