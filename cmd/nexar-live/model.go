package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

func compareCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	out := fs.String("out", "", "directory for compare.csv and compare.png (default: print only)")
	pos, status, ok := cmdline.ParseCmd("compare", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) != 2 {
		return cmdline.UsageError(stderr, "compare", "want a scenario file and a results file, got %d arguments", len(pos))
	}
	s, err := scenario.Load(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	rs, err := live.ReadResultsFile(pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
		return exitUsage
	}
	cs, err := live.Predict(s, rs)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "model %q of %s against %s\n", s.Network.Model, pos[0], pos[1])
	if note := live.StagingNote(s, rs); note != "" {
		fmt.Fprintln(stdout, note)
	}
	printSummary(stdout, cs)
	if *out != "" {
		if err := os.MkdirAll(*out, 0o777); err != nil {
			return cmdline.UsageError(stderr, "compare", "--out: %v", err)
		}
		var b bytes.Buffer
		if err := live.WriteCompareCSV(&b, cs); err != nil {
			fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
			return exitRanks
		}
		if err := os.WriteFile(filepath.Join(*out, live.CompareFile), b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "nexar-live compare: %v\n", err)
			return exitRanks
		}
		if err := live.ComparePlot(filepath.Join(*out, live.ComparePlotFile), cs); err != nil {
			fmt.Fprintf(stderr, "nexar-live compare: no plot: %v\n", err)
		}
		fmt.Fprintf(stderr, "nexar-live compare: wrote %s and %s\n", filepath.Join(*out, live.CompareFile), filepath.Join(*out, live.ComparePlotFile))
	}
	return exitOK
}

// printSummary prints the error of a model over points, and its worst
// points.
func printSummary(w io.Writer, cs []live.Comparison) {
	s := live.Summarize(cs)
	fmt.Fprintf(w, "%v\n", s)
	if len(s.Worst) == 0 {
		return
	}
	fmt.Fprintf(w, "worst points:\n")
	for _, c := range s.Worst {
		fmt.Fprintf(w, "  %-16s %-30s p=%-3d %10s  predicted %9s  measured %9s  (%+.0f%%)\n", c.Collective, c.Algorithm, c.World,
			plots.FormatBytes(float64(c.Bytes)), plots.FormatSeconds(c.Predicted), plots.FormatSeconds(c.Time), 100*(c.Ratio()-1))
	}
}

func calibrateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	model := fs.String("model", "alpha-beta", `model to fit: "alpha-beta" or "loggp"`)
	out := fs.String("out", "", "write the calibrated scenario file here")
	name := fs.String("name", "calibrated", "name of the calibrated scenario")
	format := fs.String("format", "", `input format: "results", "nccl-tests" or "osu" (default: guessed per file)`)
	var opt calibrate.LogOptions
	fs.StringVar(&opt.Collective, "collective", "", "collective of logs that do not name it")
	fs.StringVar(&opt.Algorithm, "algorithm", "", `algorithm a log's library ran, as the catalogue names it (default "ring", or the collective's first)`)
	fs.IntVar(&opt.World, "world", 0, "number of ranks of logs that do not say (OSU)")
	fs.StringVar(&opt.DType, "dtype", "", "element type of OSU logs without a datatype line")
	fs.BoolVar(&opt.InPlace, "in-place", false, "fit nccl-tests' in-place times rather than out-of-place")
	minBytes := fs.Int("min-bytes", 0, "leave out samples below this size")
	verbose := fs.Bool("v", false, "print every sample's residual")
	pos, status, ok := cmdline.ParseCmd("calibrate", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) == 0 {
		return cmdline.UsageError(stderr, "calibrate", "no measurement file given")
	}
	var samples []calibrate.Sample
	for _, file := range pos {
		ss, err := readSamples(file, *format, opt)
		if err != nil {
			fmt.Fprintf(stderr, "nexar-live calibrate: %v\n", err)
			return exitUsage
		}
		for _, s := range ss {
			if s.Bytes >= *minBytes && s.Time > 0 {
				samples = append(samples, s)
			}
		}
	}
	fit, err := calibrate.Calibrate(samples, *model, calibrate.CalibrateOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live calibrate: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s model fitted to %d samples from %s (%d Gauss-Newton steps):\n", fit.Model.Name, len(samples), strings.Join(pos, ", "), fit.Iterations)
	for i, p := range fit.Model.Params {
		v := fit.Values[i]
		if p.PerByte {
			fmt.Fprintf(stdout, "  %-6s = %-12s %-17s %s\n", p.Symbol, fmt.Sprintf("%.4g ns/B", v*1e9), p.Name, rateText(v))
		} else {
			fmt.Fprintf(stdout, "  %-6s = %-12s %s\n", p.Symbol, plots.FormatSeconds(v), p.Name)
		}
	}
	for _, n := range fit.Notes {
		fmt.Fprintf(stdout, "  note: %s\n", n)
	}
	cs := comparisons(fit.Residuals())
	fmt.Fprint(stdout, "residuals: ")
	printSummary(stdout, cs)
	if *verbose {
		for i, c := range cs {
			fmt.Fprintf(stdout, "  %-40s %-16s predicted %9s  measured %9s  (%+.1f%%)\n", samples[i].String(), samples[i].Source,
				plots.FormatSeconds(c.Predicted), plots.FormatSeconds(c.Time), 100*(c.Ratio()-1))
		}
	}
	if *out != "" {
		var b bytes.Buffer
		if err := fit.WriteScenario(&b, *name); err != nil {
			fmt.Fprintf(stderr, "nexar-live calibrate: %v\n", err)
			return exitRanks
		}
		if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "nexar-live calibrate: %v\n", err)
			return exitRanks
		}
		fmt.Fprintf(stderr, "nexar-live calibrate: wrote %s (nexar-sim run %s --out DIR)\n", *out, *out)
	}
	return exitOK
}

// comparisons sets a fit's residuals out as compare's points.
func comparisons(rs []calibrate.Residual) []live.Comparison {
	cs := make([]live.Comparison, len(rs))
	for i, r := range rs {
		s := r.Sample
		cs[i] = live.Comparison{Result: live.Result{Row: sweep.Row{Collective: s.Collective, Algorithm: s.Algorithm, World: s.World,
			Bytes: s.Bytes, DType: s.DType.String(), Time: s.Time, Params: sweep.FormatParams(s.Params)}}, Predicted: r.Predicted}
	}
	return cs
}

func rateText(perByte float64) string {
	switch {
	case perByte <= 0:
		return "(inf)"
	case perByte < 1e-9:
		return fmt.Sprintf("(%.4g GB/s)", 1e-9/perByte)
	}
	return fmt.Sprintf("(%.4g MB/s)", 1e-6/perByte)
}

// readSamples reads one measurement file in the given or guessed format.
func readSamples(file, format string, opt calibrate.LogOptions) ([]calibrate.Sample, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if format == "" {
		if format = calibrate.LogFormat(data); format == "" {
			return nil, fmt.Errorf("%s: neither a results.csv, an nccl-tests log nor an OSU log (use --format)", file)
		}
	}
	switch format {
	case "results":
		rs, err := live.ReadResults(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		rows := make([]sweep.Row, len(rs))
		for i, r := range rs {
			rows[i] = r.Row
		}
		return calibrate.SamplesFromRows(rows, file)
	case "nccl-tests":
		return calibrate.ParseNCCLTests(file, bytes.NewReader(data), opt)
	case "osu":
		return calibrate.ParseOSU(file, bytes.NewReader(data), opt)
	}
	return nil, fmt.Errorf("--format %q: want results, nccl-tests or osu", format)
}
