package nexarsim

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/units"
)

func plotCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	out := fs.String("out", "", "output directory")
	ceiling := fs.String("ceiling", "", "link bandwidth drawn on the busbw figures")
	budget := fs.Float64("budget", autoBudgetPct, "slowdown of auto drawn as acceptable, in percent")
	subtitle := fs.String("subtitle", "", "line under the figures' titles")
	quiet := fs.Bool("quiet", false, "say nothing on success")
	fs.BoolVar(quiet, "q", false, "say nothing on success")
	pos, status, ok := cmdline.ParseCmd("plot", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(pos) != 1:
		return cmdline.UsageError(stderr, "plot", "want one results file, got %d arguments", len(pos))
	case *out == "":
		return cmdline.UsageError(stderr, "plot", "missing --out DIR")
	case *budget < 0:
		return cmdline.UsageError(stderr, "plot", "--budget %g: want a percentage of at least 0", *budget)
	}
	csvPath := pos[0]
	// The ceiling and the subtitle: the flags, else the link bandwidth,
	// scenario and network of the run that wrote the file, if its
	// manifest is beside it.
	opt := plots.Options{AutoBudgetPct: *budget, Subtitle: *subtitle}
	m, err := readManifest(filepath.Dir(csvPath))
	if err != nil {
		m = nil
	}
	if *ceiling != "" {
		bw, err := units.ParseBandwidth(*ceiling)
		if err != nil {
			return cmdline.UsageError(stderr, "plot", "--ceiling: %v", err)
		}
		opt.CeilingGBps = bw / 1e9
	} else if m != nil {
		opt.CeilingGBps = m.LinkBandwidth / 1e9
	}
	if opt.Subtitle == "" && m != nil {
		opt.Subtitle = m.subtitle()
	}
	pts, err := plots.ReadCSVFile(csvPath)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-sim plot: %v\n", err)
		return exitUsage
	}
	o, err := newOutputs(*out)
	if err != nil {
		return cmdline.UsageError(stderr, "plot", "--out: %v", err)
	}
	if err := stagePlots(o, pts, opt); err != nil {
		o.abort()
		fmt.Fprintf(stderr, "nexar-sim plot: %v\n", err)
		return exitFailed
	}
	if len(o.files) == 0 {
		o.abort()
		fmt.Fprintf(stderr, "nexar-sim plot: %s: nothing to draw\n", csvPath)
		return exitFailed
	}
	// Move the figures in; plot keeps no manifest of its own, so that it
	// never removes what a run wrote in the same directory.
	if err := o.commitFiles(); err != nil {
		fmt.Fprintf(stderr, "nexar-sim plot: %v\n", err)
		return exitFailed
	}
	if !*quiet {
		fmt.Fprintf(stderr, "nexar-sim: wrote %s: %s\n", *out, strings.Join(o.files, ", "))
	}
	return exitOK
}
