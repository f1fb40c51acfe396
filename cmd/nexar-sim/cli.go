package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1   // a simulation failed, or the outputs could not be written
	exitUsage       = 2   // bad input or usage; nothing was written
	exitInterrupted = 130 // interrupted; run --resume continues
)

// run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainHelp)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, mainHelp)
		return exitOK
	case "help":
		return helpCmd(rest, stdout, stderr)
	case "run":
		return runCmd(rest, stdout, stderr)
	case "validate":
		return validateCmd(rest, stdout, stderr)
	case "list":
		return listCmd(rest, stdout, stderr)
	case "plot":
		return plotCmd(rest, stdout, stderr)
	case "merge":
		return mergeCmd(rest, stdout, stderr)
	}
	return usageError(stderr, "", "unknown command %q", cmd)
}

// usageError reports bad usage of cmd ("" for the program) and returns
// exitUsage.
func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	prog := "nexar-sim"
	if cmd != "" {
		prog += " " + cmd
	}
	fmt.Fprintf(stderr, "%s: %s\n", prog, fmt.Sprintf(format, args...))
	fmt.Fprintf(stderr, "Run 'nexar-sim help %s' for usage.\n", cmd)
	return exitUsage
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, which it returns; everything after "--" is
// positional. It returns flag.ErrHelp for -h and --help.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseCmd parses the flags of cmd. It returns a status to exit with (and
// ok false) on -h or bad usage.
func parseCmd(cmd string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, status int, ok bool) {
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, commandHelp[cmd])
		return nil, exitOK, false
	}
	if err != nil {
		return nil, usageError(stderr, cmd, "%v", err), false
	}
	return pos, 0, true
}

func helpCmd(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		fmt.Fprint(stdout, mainHelp)
		return exitOK
	case 1:
		if h, ok := commandHelp[args[0]]; ok {
			fmt.Fprint(stdout, h)
			return exitOK
		}
		return usageError(stderr, "help", "unknown command %q (want run, validate, list, plot, merge or help)", args[0])
	}
	return usageError(stderr, "help", "want at most one command, got %d arguments", len(args))
}

// load reads, validates and plans the scenario at path. On bad input it
// prints every problem to stderr and returns ok false.
func load(path string, stderr io.Writer) (*scenario.Scenario, []sweep.Point, bool) {
	s, err := scenario.Load(path)
	var points []sweep.Point
	if err == nil {
		points, err = sweep.Plan(s)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		var errs scenario.Errors
		if errors.As(err, &errs) && len(errs) > 1 {
			fmt.Fprintf(stderr, "%s: %d problems\n", path, len(errs))
		}
		return nil, nil, false
	}
	return s, points, true
}

func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	files, status, ok := parseCmd("validate", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return usageError(stderr, "validate", "no scenario file given")
	}
	status = exitOK
	for _, f := range files {
		s, points, ok := load(f, stderr)
		if !ok {
			status = exitUsage
			continue
		}
		fmt.Fprintf(stdout, "%s: ok: %q, %d sweep(s), %d point(s)\n", f, s.Name, len(s.Sweeps), len(points))
	}
	return status
}
