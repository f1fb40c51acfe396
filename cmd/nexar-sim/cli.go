package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // a simulation failed
	exitUsage  = 2 // bad input or usage; nothing was written
)

// ResultsFile is the name of the file run writes in its output directory.
const resultsFile = "results.csv"

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
		return usageError(stderr, "help", "unknown command %q (want run, validate, list or help)", args[0])
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

func listCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, status, ok := parseCmd("list", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) > 0 {
		return usageError(stderr, "list", "unexpected argument %q", pos[0])
	}
	fmt.Fprintln(stdout, "Collectives (sweep: collective = NAME, algorithms = [NAME, ...]):")
	for _, name := range algos.CollectiveNames() {
		c, err := algos.Lookup(name)
		if err != nil {
			continue
		}
		var traits []string
		if c.Reduces {
			traits = append(traits, "reduces")
		}
		if c.Rooted {
			traits = append(traits, "rooted")
		}
		if !sweep.HasCheck(c) {
			traits = append(traits, "phantom data only")
		}
		line := "  " + c.Name
		if len(traits) > 0 {
			line += " (" + strings.Join(traits, ", ") + ")"
		}
		fmt.Fprintln(stdout, line)
		for _, a := range c.Algorithms {
			fmt.Fprintf(stdout, "    %-20s %s\n", a.Name, a.Summary)
			if a.PowerOfTwo {
				fmt.Fprintf(stdout, "    %-20s needs a power-of-two world size\n", "")
			}
			if len(a.Params) > 0 {
				names := make([]string, 0, len(a.Params))
				for n := range a.Params {
					names = append(names, n)
				}
				sort.Strings(names)
				for i, n := range names {
					names[i] = fmt.Sprintf("%s = %d", n, a.Params[n])
				}
				fmt.Fprintf(stdout, "    %-20s params (defaults): %s\n", "", strings.Join(names, ", "))
			}
		}
	}
	fmt.Fprintln(stdout, "\nNetwork models ([network] model = NAME):")
	for _, m := range scenario.Models() {
		fmt.Fprintf(stdout, "  %s: %s\n", m.Name, m.Summary)
		for _, k := range m.Keys {
			req := "optional"
			if k.Required {
				req = "required"
			}
			fmt.Fprintf(stdout, "    %-18s %s; %s\n", k.Name, req, k.Doc)
		}
	}
	return exitOK
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("out", "", "directory for "+resultsFile)
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.BoolVar(quiet, "q", false, "no progress lines")
	pos, status, ok := parseCmd("run", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(pos) == 0:
		return usageError(stderr, "run", "no scenario file given")
	case len(pos) > 1:
		return usageError(stderr, "run", "want one scenario file, got %d arguments: %s", len(pos), strings.Join(pos, " "))
	case *out == "":
		return usageError(stderr, "run", "missing --out DIR")
	}
	file := pos[0]
	s, points, ok := load(file, stderr)
	if !ok {
		return exitUsage
	}

	// Make sure the results can be written before simulating anything.
	created := false
	if _, err := os.Stat(*out); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	if err := os.MkdirAll(*out, 0o777); err != nil {
		return usageError(stderr, "run", "--out: %v", err)
	}
	tmp, err := os.CreateTemp(*out, "."+resultsFile+".*.tmp")
	if err != nil {
		if created {
			os.Remove(*out)
		}
		return usageError(stderr, "run", "--out: %v", err)
	}
	tmp.Chmod(0o644) // CreateTemp makes it private; results are not
	fail := func(format string, args ...any) int {
		tmp.Close()
		os.Remove(tmp.Name())
		if created {
			os.Remove(*out) // only if still empty
		}
		fmt.Fprintf(stderr, "nexar-sim run: "+format+"\n", args...)
		return exitFailed
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	w := sweep.NewCSVWriter(tmp)
	if err := w.WriteHeader(); err != nil {
		return fail("%v", err)
	}
	opt := sweep.Options{}
	if !*quiet {
		opt.Progress = func(i int, pts []sweep.Point) {
			fmt.Fprintf(stderr, "nexar-sim: sweep %d/%d (%s:%d): %s\n", i+1, len(s.Sweeps), file, s.Sweeps[i].Line, describe(s.Sweeps[i], len(pts)))
		}
	}
	if err := sweep.Run(ctx, points, opt, w.Write); err != nil {
		return fail("%v", err)
	}
	if err := w.Flush(); err != nil {
		return fail("%v", err)
	}
	if err := tmp.Close(); err != nil {
		return fail("%v", err)
	}
	dst := filepath.Join(*out, resultsFile)
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fail("%v", err)
	}
	if !*quiet {
		fmt.Fprintf(stderr, "nexar-sim: wrote %s: %d row(s) in %.2fs\n", dst, len(points), time.Since(start).Seconds())
	}
	return exitOK
}

// describe summarizes a sweep for a progress line.
func describe(sw *scenario.Sweep, points int) string {
	names := make([]string, len(sw.Algorithms))
	for i, a := range sw.Algorithms {
		names[i] = a.Name
	}
	types := sw.DType.String()
	if sw.Collective.Reduces {
		types += " " + sw.Op.String()
	}
	return fmt.Sprintf("%s %s, %d world size(s) x %d message size(s), %s %s: %d point(s)",
		sw.Collective.Name, strings.Join(names, ","), len(sw.World), len(sw.Bytes), types, sw.Data, points)
}
