// Package cli is what nexar-sim and nexar-live share of their command
// lines: dispatch to a command, help, usage errors, flags that may stand
// before, between or after the positional arguments, --version with the
// commit a build stamps (Commit), and what their guard rails and progress
// lines read: the machine's memory and a run's ETA from its estimates.
package cli
