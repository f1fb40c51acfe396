// Package calibratecmd is the calibrate command that nexar-sim and
// nexar-live share: its flags, its report and its help.
package calibratecmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/units"
)

// Command returns the calibrate command of prog; writeFailed is the exit
// status when the scenario cannot be written.
func Command(prog *cli.Program, writeFailed int) cli.Command {
	return func(args []string, stdout, stderr io.Writer) int {
		return run(prog, writeFailed, args, stdout, stderr)
	}
}

// holds are --hold flags: NAME=VALUE.
type holds map[string]string

func (h holds) String() string { return "" }

func (h holds) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" || value == "" {
		return fmt.Errorf("%q: want NAME=VALUE (latency=5us, bandwidth=12.5GB/s)", v)
	}
	h[name] = value
	return nil
}

// values converts the held values to the units of the parameters of
// models: a duration ("5us") for durations, a bandwidth ("12.5GB/s", or
// "inf") for the per-byte ones, a number for factors, a size ("64KiB",
// or "never") for settings. A name is read as the first model that has it
// reads it; one that no model has is an error.
func (h holds) values(models []string) (map[string]float64, error) {
	if len(h) == 0 {
		return nil, nil
	}
	var specs []*calibrate.ModelSpec
	for _, m := range models {
		spec, err := calibrate.LookupModel(m)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	out := map[string]float64{}
	for name, value := range h {
		var v float64
		var err error
		found := false
		for _, spec := range specs {
			if j := spec.Setting(name); j >= 0 {
				v, err, found = settingValue(value), nil, true
				if v < -1 {
					err = fmt.Errorf("%q is not a size (or \"never\")", value)
				}
				break
			}
			if j := spec.Param(name); j >= 0 {
				name = spec.Params[j].Name
				v, err = paramValue(spec.Params[j], value)
				found = true
				break
			}
		}
		if !found {
			names := make([]string, len(specs))
			for i, s := range specs {
				names[i] = s.ParamNames()
			}
			return nil, fmt.Errorf("--hold %s: the %s model has no such parameter (want %s)", name, strings.Join(models, ", "), strings.Join(names, "; "))
		}
		if err != nil {
			return nil, fmt.Errorf("--hold %s: %v", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// suited keeps the models that have every parameter and setting held,
// in their order; if none has them all, the first alone, whose error
// names what it has.
func (h holds) suited(models []string) []string {
	var out []string
	for _, m := range models {
		spec, err := calibrate.LookupModel(m)
		if err != nil {
			continue
		}
		all := true
		for name := range h {
			all = all && (spec.Param(name) >= 0 || spec.Setting(name) >= 0)
		}
		if all {
			out = append(out, m)
		}
	}
	if len(out) == 0 && len(models) > 0 {
		return models[:1]
	}
	return out
}

// paramValue reads a held value of p.
func paramValue(p calibrate.Param, value string) (float64, error) {
	switch {
	case p.Factor:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 1) {
			return 0, fmt.Errorf("%q is not a positive number", value)
		}
		return f, nil
	case !p.PerByte:
		d, err := units.ParseDuration(value)
		if err != nil {
			return 0, err
		}
		return d.Seconds(), nil
	case value == "inf":
		return 0, nil
	}
	bw, err := units.ParseBandwidth(value)
	if err != nil {
		return 0, err
	}
	return 1 / bw, nil
}

// settingValue reads a held size: bytes, -1 for "never" or "off", -2 if
// it is not a size.
func settingValue(value string) float64 {
	switch value {
	case "never", "off":
		return -1
	}
	n, err := units.ParseBytes(value)
	if err != nil {
		return -2
	}
	return float64(n)
}

func run(prog *cli.Program, writeFailed int, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	f := newFlags(fs)
	pos, status, ok := prog.ParseCmd("calibrate", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) == 0 {
		return prog.UsageError(stderr, "calibrate", "no measurement file given")
	}
	samples, err := readSamples(stdout, pos, *f.format, f.log, *f.minBytes)
	if err != nil {
		return fail(prog, stderr, "%v", err)
	}
	if *f.preset != "" {
		m := calibrate.Machine{Preset: *f.preset, Keys: map[string]any(f.sets)}
		return runMachine(m, samples, pos, *f.noFit, f.holdKeys, *f.jobs, *f.verbose, *f.out, *f.name, writeFailed, prog, stdout, stderr)
	}
	models, candidates, fopt, err := f.fitOptions(samples)
	if err != nil {
		return prog.UsageError(stderr, "calibrate", "%s", err)
	}
	bounds, err := f.bounds()
	if err != nil {
		return prog.UsageError(stderr, "calibrate", "%s", err)
	}
	if *f.model == "" && len(models) > 1 {
		fmt.Fprintf(stdout, "no --model given: the one of least error on points it did not fit, of %s\n", strings.Join(models, ", "))
	}
	fit, err := fitModel(stdout, samples, models, candidates, fopt, *f.model == "")
	var refused *calibrate.RefusedError
	if errors.As(err, &refused) {
		return fail(prog, stderr, "%v (hold a parameter with --hold NAME=VALUE)", err)
	}
	if err != nil {
		return fail(prog, stderr, "%v", err)
	}
	report(stdout, fit, pos, *f.verbose)
	warnings, err := fit.Implausible(bounds, fopt)
	if err != nil {
		return fail(prog, stderr, "%v", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if *f.out == "" {
		return cli.ExitOK
	}
	var b bytes.Buffer
	if err := fit.WriteScenario(&b, *f.name); err != nil {
		fmt.Fprintf(stderr, "%s calibrate: %v\n", prog.Name, err)
		return writeFailed
	}
	if err := atomicfile.WriteFile(*f.out, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "%s calibrate: %v\n", prog.Name, err)
		return writeFailed
	}
	fmt.Fprintf(stderr, "%s calibrate: wrote %s (nexar-sim run %s --out DIR)\n", prog.Name, *f.out, *f.out)
	return cli.ExitOK
}

// flags are the calibrate command's flags: the network models' (the
// default) and the GPU machine's (with --preset).
type flags struct {
	model, out, name, format, algorithms, preset *string
	memoryBandwidth                              *string
	folds, minBytes, jobs                        *int
	leastSquares, verbose, noFit                 *bool
	log                                          calibrate.LogOptions
	hold                                         holds
	sets                                         keySets
	holdKeys                                     []string
}

// newFlags defines the command's flags on fs.
func newFlags(fs *flag.FlagSet) *flags {
	f := &flags{hold: holds{}, sets: keySets{}}
	f.model = fs.String("model", "", `model(s) to fit, comma-separated: `+strings.Join(calibrate.ModelNames(), ", ")+
		`; with several, the one of least error on points it did not fit is reported (default: all the samples suit)`)
	f.memoryBandwidth = fs.String("memory-bandwidth", "", `the memory's bandwidth, above which a fitted bandwidth is implausible: a bandwidth, or "measure" (this machine's memcpy) (default 8TB/s)`)
	f.folds = fs.Int("folds", 5, "with several models: the folds of the cross-validation that ranks them")
	f.out = fs.String("out", "", "write the calibrated scenario file here")
	f.name = fs.String("name", "calibrated", "name of the calibrated scenario")
	f.format = fs.String("format", "", `input format: "results", "nccl-tests", "nccl-tests-json", "osu" or "imb" (default: guessed per file)`)
	fs.StringVar(&f.log.Collective, "collective", "", "benchmark of runs a log does not name")
	f.algorithms = fs.String("algorithm", "", "algorithm(s) the logs' library ran, comma-separated: the best-fitting is reported")
	fs.IntVar(&f.log.World, "world", 0, "number of ranks of every run (OSU logs do not say)")
	fs.IntVar(&f.log.Nodes, "nodes", 0, "with --preset: number of nodes every nccl-tests run spans (logs without NCCL's comm line or a full rank list do not say)")
	fs.StringVar(&f.log.DType, "dtype", "", "element type of runs whose log does not say")
	fs.BoolVar(&f.log.InPlace, "in-place", false, "fit nccl-tests' in-place times rather than out-of-place")
	f.minBytes = fs.Int("min-bytes", 0, "leave out samples below this size")
	fs.Var(f.hold, "hold", "hold a parameter at a value: latency=5us, bandwidth=12.5GB/s (repeatable)")
	f.leastSquares = fs.Bool("least-squares", false, "weigh every sample alike (plain least squares)")
	f.verbose = fs.Bool("v", false, "print every sample's residual")
	f.preset = fs.String("preset", "", "fit this GPU machine's figures (dgx-h100, ...) instead of a network model")
	fs.Var(f.sets, "set", "with --preset: a [network] key of the machine, KEY=VALUE (repeatable)")
	f.noFit = fs.Bool("no-fit", false, "with --preset: predict the samples on the machine as given, fitting nothing")
	fs.Func("hold-key", "with --preset: keep this figure at the machine's value (repeatable)", func(v string) error { f.holdKeys = append(f.holdKeys, v); return nil })
	f.jobs = fs.Int("jobs", 0, "with --preset: points simulated at once (default: one per CPU)")
	return f
}

// fail reports an error of the command, without the calibrate package's
// prefix, and returns the usage status.
func fail(prog *cli.Program, stderr io.Writer, format string, args ...any) int {
	msg := strings.TrimPrefix(fmt.Sprintf(format, args...), "calibrate: ")
	fmt.Fprintf(stderr, "%s calibrate: %s\n", prog.Name, msg)
	return cli.ExitUsage
}

// readSamples reads the measurement files, printing what runs and notes
// each holds, keeps the samples of minBytes or more, and merges repeated
// measurements of one point.
func readSamples(stdout io.Writer, files []string, format string, opt calibrate.LogOptions, minBytes int) ([]calibrate.Sample, error) {
	var samples []calibrate.Sample
	for _, file := range files {
		log, err := calibrate.ReadFile(file, format, opt)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "%s (%s):\n", file, log.Format)
		for _, r := range log.Runs {
			fmt.Fprintf(stdout, "  line %d: %s, %s on %d ranks (%s), %d samples\n", r.Line, r.Benchmark, r.Collective, r.World, r.WorldFrom, len(r.Samples))
			if r.NCCL != nil {
				fmt.Fprintf(stdout, "    its lines say: %s\n", r.NCCL)
			}
		}
		for _, n := range log.Notes {
			if line, msg, ok := strings.Cut(strings.TrimPrefix(n, file+":"), ": "); ok {
				n = fmt.Sprintf("line %s: %s", line, msg)
			}
			fmt.Fprintf(stdout, "  note, %s\n", n)
		}
		for _, s := range log.Samples() {
			if s.Bytes >= minBytes {
				samples = append(samples, s)
			}
		}
	}
	samples, merged := calibrate.MergeRepeats(samples)
	if merged != "" {
		fmt.Fprintf(stdout, "note: %s\n", merged)
	}
	return samples, nil
}

// fitOptions checks the flags of a network model's fit and returns the
// models and algorithms to try and the fit's options; its errors are
// usage errors.
func (f *flags) fitOptions(samples []calibrate.Sample) (models, candidates []string, opt calibrate.Options, err error) {
	if len(f.sets) > 0 || *f.noFit || len(f.holdKeys) > 0 {
		return nil, nil, opt, errors.New("--set, --hold-key and --no-fit need --preset")
	}
	candidates = splitList(*f.algorithms)
	models = splitList(*f.model)
	switch {
	case *f.model == "" && len(candidates) > 0:
		// Choose the model first, then the algorithm: with the
		// algorithms to choose from, the simplest model.
		models = []string{"alpha-beta"}
	case *f.model == "":
		models = f.hold.suited(calibrate.DefaultModels(samples))
	case len(models) == 0:
		return nil, nil, opt, errors.New("--model: no model given")
	}
	held, err := f.hold.values(models)
	if err != nil {
		return nil, nil, opt, err
	}
	if *f.folds < 2 {
		return nil, nil, opt, fmt.Errorf("--folds %d: want 2 or more", *f.folds)
	}
	opt = calibrate.Options{Hold: held, LeastSquares: *f.leastSquares, Folds: *f.folds}
	if len(models) > 1 && len(candidates) > 0 {
		return nil, nil, opt, errors.New("--algorithm with several models: choose the model first, then the algorithm")
	}
	return models, candidates, opt, nil
}

// fitModel fits the samples: with several models, the one of least
// error on the folds it did not fit; with several algorithms, the one
// that fits best; else the one model. It prints the ranking it made.
func fitModel(stdout io.Writer, samples []calibrate.Sample, models, candidates []string, opt calibrate.Options, auto bool) (*calibrate.Fit, error) {
	switch {
	case len(models) > 1:
		cs, err := calibrate.SelectModel(samples, models, opt)
		reportChoices(stdout, cs, opt.Folds)
		reportChoice(stdout, cs)
		if err != nil && auto {
			// None could be ranked (too few samples to hold any out, or
			// none determined): the simplest alone, whose own error
			// says what the samples lack.
			fmt.Fprintf(stdout, "no model could be ranked: the simplest, %s, fitted to every sample\n", models[0])
			return calibrate.Calibrate(samples, models[0], opt)
		}
		if err != nil {
			return nil, err
		}
		return cs[0].Fit, nil
	case len(candidates) > 0:
		cs, err := calibrate.FitCandidates(samples, models[0], candidates, opt)
		if len(cs) > 1 {
			reportCandidates(stdout, cs)
		}
		if err != nil {
			return nil, err
		}
		return cs[0].Fit, nil
	}
	return calibrate.Calibrate(samples, models[0], opt)
}

// reportCandidates prints the algorithms tried for the logs, best first,
// and how many the samples do not tell from the best.
func reportCandidates(stdout io.Writer, cs []calibrate.Candidate) {
	fmt.Fprintf(stdout, "algorithms assumed for the logs, best first:\n")
	ties := 0
	for _, c := range cs {
		switch {
		case c.Ties:
			ties++
			fmt.Fprintf(stdout, "  %-24s median |predicted/measured - 1| = %.1f%%, the same as the best's\n", c.Algorithm, 100*c.Median)
		case c.Fit != nil:
			fmt.Fprintf(stdout, "  %-24s median |predicted/measured - 1| = %.1f%%\n", c.Algorithm, 100*c.Median)
		default:
			fmt.Fprintf(stdout, "  %-24s %v\n", c.Algorithm, strings.TrimPrefix(c.Err.Error(), "calibrate: "))
		}
	}
	if ties > 0 {
		fmt.Fprintf(stdout, "  the samples do not tell %d of them from the best (more world sizes would); the first given of those is reported\n", ties)
	}
}

// report prints the fitted parameters, the notes and the residuals.
func report(w io.Writer, fit *calibrate.Fit, files []string, verbose bool) {
	fmt.Fprintf(w, "%s model fitted to %d samples from %s (%d Gauss-Newton steps):\n", fit.Model.Name, len(fit.Samples), strings.Join(files, ", "), fit.Iterations)
	// Columns as wide as the longest symbol, name and rate.
	symW, nameW, rateW := 6, 17, 13
	for _, e := range fit.Estimates {
		symW, nameW, rateW = max(symW, len(e.Symbol)), max(nameW, len(e.Name)), max(rateW, len(rateText(e)))
	}
	for _, st := range fit.Settings {
		nameW = max(nameW, len(st.Name))
	}
	for _, e := range fit.Estimates {
		value := units.FormatSeconds(e.Value)
		switch {
		case e.PerByte:
			value = fmt.Sprintf("%.4g ns/B", e.Value*1e9)
		case e.Factor:
			value = fmt.Sprintf("%.4g x", e.Value)
		}
		state := fmt.Sprintf("fitted; up to %.0f%% of a sample's time", 100*e.Share)
		if e.Held {
			state = "held: " + e.Why
		}
		fmt.Fprintf(w, "  %-*s = %-14s %-*s %-*s %s\n", symW, e.Symbol, value, nameW, e.Name, rateW, rateText(e), state)
	}
	for _, st := range fit.Settings {
		fmt.Fprintf(w, "  %-*s = %-14s %-*s %s\n", symW, "", st.Size(), nameW+1+rateW, st.Name, st.How())
	}
	for _, n := range fit.Notes {
		if !strings.Contains(n, ") is held at ") && !isSettingNote(fit, n) {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	s := fit.Summary()
	fmt.Fprintf(w, "residuals: %v\n", s)
	if len(s.Worst) > 0 {
		fmt.Fprintf(w, "worst points:\n")
		for _, r := range s.Worst {
			printResidual(w, r)
		}
	}
	if verbose {
		fmt.Fprintf(w, "every point (weight in the fit):\n")
		for i, r := range fit.Residuals() {
			printResidual(w, r)
			fmt.Fprintf(w, "      weight %.2f\n", fit.Weights[i])
		}
	}
}

// reportChoices prints the candidate models, best first, with their
// error on points they did not fit.
func reportChoices(w io.Writer, cs []calibrate.ModelChoice, folds int) {
	fmt.Fprintf(w, "models by their error on points they did not fit (%d-fold cross-validation), best first:\n", folds)
	for _, c := range cs {
		if c.Err != nil {
			fmt.Fprintf(w, "  %-20s %v\n", c.Model, strings.TrimPrefix(c.Err.Error(), "calibrate: "))
			continue
		}
		fmt.Fprintf(w, "  %-20s held out: median |predicted/measured - 1| = %.1f%% (mean %.1f%%); fitted on all: median %.1f%%\n",
			c.Model, 100*c.HeldOut, 100*c.HeldOutMean, 100*c.Fit.Summary().Median)
	}
}

// isSettingNote reports whether n is the note of a held setting, which
// the report shows beside the parameters.
func isSettingNote(fit *calibrate.Fit, n string) bool {
	for _, st := range fit.Settings {
		if strings.HasPrefix(n, st.Name+" is ") { // "is held at ..." or "is 64 KiB, recorded by ..."
			return true
		}
	}
	return false
}

func printResidual(w io.Writer, r calibrate.Residual) {
	fmt.Fprintf(w, "  %-40s %-28s predicted %9s  measured %9s  (%+.0f%%)\n", r.Sample.String(), r.Source,
		units.FormatSeconds(r.Predicted), units.FormatSeconds(r.Time), 100*(r.Ratio()-1))
}

// rateText is a PerByte estimate as a bandwidth.
func rateText(e calibrate.Estimate) string {
	switch {
	case !e.PerByte:
		return ""
	case e.Value <= 0:
		return "(inf)"
	case e.Value < 1e-9:
		return fmt.Sprintf("(%.4g GB/s)", 1e-9/e.Value)
	}
	return fmt.Sprintf("(%.4g MB/s)", 1e-6/e.Value)
}

// splitList splits a comma-separated list whose items may hold commas
// in parentheses ("ring,pipelined_ring(segment=1MiB,x=2)").
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i == len(s) || s[i] == ',' && depth == 0:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		case s[i] == '(':
			depth++
		case s[i] == ')':
			depth--
		}
	}
	return out
}

// keySets are --set flags: KEY=VALUE, a whole number or a string.
type keySets map[string]any

func (k keySets) String() string { return "" }

func (k keySets) Set(v string) error {
	key, value, ok := strings.Cut(v, "=")
	if !ok || key == "" || value == "" {
		return fmt.Errorf("%q: want KEY=VALUE (nics_per_node=8, nic_bandwidth=200Gbit/s)", v)
	}
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		k[key] = n
	} else {
		k[key] = value
	}
	return nil
}

// runMachine predicts the samples on a GPU machine, fits its figures
// unless noFit, reports, and writes the scenario.
func runMachine(m calibrate.Machine, samples []calibrate.Sample, files []string, noFit bool, hold []string, jobs int, verbose bool,
	out, name string, writeFailed int, prog *cli.Program, stdout, stderr io.Writer) int {
	opt := calibrate.PredictOptions{Jobs: jobs}
	ctx := context.Background()
	if noFit {
		pr, err := calibrate.PredictMachine(ctx, m, samples, opt)
		if err != nil {
			fmt.Fprintf(stderr, "%s calibrate: %v\n", prog.Name, strings.TrimPrefix(err.Error(), "calibrate: "))
			return cli.ExitUsage
		}
		t := make([]float64, len(pr))
		for i, p := range pr {
			t[i] = p.Time
		}
		fmt.Fprintf(stdout, "predicted on %s from its description alone: median |predicted/measured - 1|: %s\n", m, calibrate.Agree(samples, t))
		printPredictions(stdout, samples, pr, verbose)
		return cli.ExitOK
	}
	fit, err := calibrate.FitMachine(ctx, m, samples, calibrate.MachineFitOptions{PredictOptions: opt, Hold: hold})
	if err != nil {
		fmt.Fprintf(stderr, "%s calibrate: %v\n", prog.Name, strings.TrimPrefix(err.Error(), "calibrate: "))
		return cli.ExitUsage
	}
	fmt.Fprintf(stdout, "%s fitted to %d samples from %s (%d simulations of the samples):\n", m.Preset, len(fit.Samples), strings.Join(files, ", "), fit.Evaluations)
	for _, p := range fit.Params {
		if p.Held {
			fmt.Fprintf(stdout, "  %-17s %-14s held: %s\n", p.Key, p.Text(), p.Why)
		} else {
			fmt.Fprintf(stdout, "  %-17s %-14s (the machine's %s) %s\n", p.Key, p.Text(), calibrateFigure(p), p.Why)
		}
	}
	for _, n := range fit.Notes {
		fmt.Fprintf(stdout, "  note: %s\n", n)
	}
	fmt.Fprintf(stdout, "median |predicted/measured - 1|, the machine as given: %s\n", fit.BeforeFit)
	fmt.Fprintf(stdout, "median |predicted/measured - 1|, as fitted:         %s\n", fit.AfterFit)
	printPredictions(stdout, fit.Samples, fit.After, verbose)
	if out == "" {
		return cli.ExitOK
	}
	var b bytes.Buffer
	if err := fit.WriteScenario(&b, name); err != nil {
		fmt.Fprintf(stderr, "%s calibrate: %v\n", prog.Name, err)
		return writeFailed
	}
	if err := atomicfile.WriteFile(out, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "%s calibrate: %v\n", prog.Name, err)
		return writeFailed
	}
	fmt.Fprintf(stderr, "%s calibrate: wrote %s (nexar-sim run %s --out DIR; change its world to predict other node counts)\n", prog.Name, out, out)
	return cli.ExitOK
}

func calibrateFigure(p calibrate.MachineParam) string {
	q := p
	q.Value = p.Preset
	return q.Text()
}

// printPredictions prints each sample's measured and predicted time with
// -v.
func printPredictions(w io.Writer, samples []calibrate.Sample, pr []calibrate.Prediction, verbose bool) {
	if !verbose {
		return
	}
	fmt.Fprintf(w, "every point: measured and predicted time (us), what ran:\n")
	for i, s := range samples {
		how := ""
		if pr[i].Extrapolated {
			how = ", extrapolated"
		}
		fmt.Fprintf(w, "  %s: %.2f, %.2f (%+.1f%%) %s%s\n", s, s.Time*1e6, pr[i].Time*1e6, 100*(pr[i].Time/s.Time-1), pr[i].Ran, how)
	}
}
