package nexarsim

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/internal/calibratecmd"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Exit statuses.
const (
	exitOK          = cli.ExitOK
	exitFailed      = 1             // a simulation failed, or the outputs could not be written
	exitUsage       = cli.ExitUsage // bad input or usage; nothing was written
	exitInterrupted = 130           // interrupted; run --resume continues
)

// cmdline is the command line: its name, help, and usage errors.
var cmdline = cli.Program{Name: "nexar-sim", Help: mainHelp, CommandHelp: commandHelp, HelpHint: " (want run, step, validate, list, plot, merge, calibrate or help)"}

// run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return cmdline.Run(args, stdout, stderr, map[string]cli.Command{
		"run":      runCmd,
		"step":     stepCmd,
		"validate": validateCmd,
		"list":     listCmd,
		"plot":     plotCmd,
		"merge":    mergeCmd,
		// Calibrate is nexar-live's too: users without the live runner
		// turn their benchmark logs into a model here.
		"calibrate": calibratecmd.Command(&cmdline, exitFailed),
	})
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
	files, status, ok := cmdline.ParseCmd("validate", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return cmdline.UsageError(stderr, "validate", "no scenario file given")
	}
	status = exitOK
	for _, f := range files {
		s, points, ok := load(f, stderr)
		if !ok {
			status = exitUsage
			continue
		}
		fmt.Fprintf(stdout, "%s: ok: %q, %d sweep(s), %d point(s)\n", f, s.Name, len(s.Sweeps), len(points))
		if w := s.Workload; w != nil {
			fmt.Fprintf(stdout, "%s:%d: [workload]: %s, %d step point(s)%s (nexar-sim step)\n", f, w.Line, w.Model, len(w.Points), axesText(w))
		}
		if len(points) > 0 {
			reportCosts(stdout, stderr, s, f, points)
		}
	}
	return status
}
