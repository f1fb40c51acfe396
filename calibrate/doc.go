// Package calibrate fits the parameters of a network model (alpha-beta,
// LogGP) to measured times of collectives, and reads those times from
// the logs people already have: nccl-tests, the OSU micro-benchmarks,
// and the results.csv of nexar-live and nexar-sim.
package calibrate
