package nexarsim

import (
	"io"
	"os"
)

// Main runs the nexar-sim command on the process's arguments and exits
// with its status. A user's module calls it from its own main, after
// registering its algorithms (algos.RegisterAlgorithm), to get nexar-sim
// with them in the catalogue: they list, validate, run and plot as the
// catalogue's own do.
func Main() {
	os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status. Tests of a
// user's module call it to run their nexar-sim in process.
func Run(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr)
}
