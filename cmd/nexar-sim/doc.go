// Command nexar-sim runs scenario files in the simulator: sweeps of
// collective algorithms over world sizes and message sizes on a modelled
// network, written as CSV.
//
// Usage:
//
//	nexar-sim run SCENARIO.toml --out DIR   simulate, write DIR/results.csv
//	nexar-sim validate SCENARIO.toml...     check files, list every problem
//	nexar-sim list                          collectives, algorithms, models
//	nexar-sim help [COMMAND]                help, with examples
//
// Exit status: 0 on success, 1 when a simulation fails (deadlock, wrong
// data), 2 for bad input or usage, in which case nothing is written.
package main
