package nexarlive

import (
	"io"
	"os"
)

// Main runs the nexar-live command on the process's arguments and exits
// with its status. A user's module calls it from its own main, after
// registering its algorithms (algos.RegisterAlgorithm), to measure them
// on real ranks: the ranks nexar-live run starts are the same executable,
// so every rank has them.
func Main() {
	os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr)
}
