package nexarlive

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/verify"
)

// verification is what nexar-live verify does, as its command line says:
// the tuning table to verify, the world sizes to run it on, how to
// measure, and what predicts the points.
type verification struct {
	table  string // the tuning table's file
	tuning *algos.Tuning
	worlds []int
	topt   verify.TargetOptions
	dt     device.DType
	out    string
	reuse  bool // --reuse: read the results of an earlier run
	m      measureFlags
	opt    live.Options
	cfg    realnet.Config
	// emulate is the emulated network (nil: rank processes), network
	// the [network] table of the scenarios written, predictor the
	// scenario of --scenario (nil if not given).
	emulate   *live.Emulation
	network   string
	predictor *scenario.Scenario
	// compared are the points the model predicted, of every world, and
	// measured their results files: the hint to calibrate reads them.
	compared []verify.Comparison
	measured []string
}

func verifyCmd(args []string, stdout, stderr io.Writer) int {
	v, status, ok := parseVerify(args, stdout, stderr)
	if !ok {
		return status
	}
	ctx, stop := signalContext()
	defer stop()
	var checks []verify.Check
	for _, np := range v.worlds {
		cks, status := v.world(ctx, np, stdout, stderr)
		if status != exitOK {
			return status
		}
		checks = append(checks, cks...)
	}
	if len(checks) == 0 {
		fmt.Fprintf(stderr, "nexar-live verify: nothing to verify in %s for world sizes %v\n", v.table, v.worlds)
		return exitUsage
	}
	status = v.report(checks, stdout, stderr)
	model := "the emulated network"
	if v.predictor != nil {
		model = v.predictor.File
	}
	sum := verify.Summarize(v.compared)
	if hint := calibrateHint("verify", model, sum.Median, sum.N, v.measured, v.out); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	return status
}

// parseVerify reads verify's command line; ok false returns status.
func parseVerify(args []string, stdout, stderr io.Writer) (v *verification, status int, ok bool) {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	v = &verification{}
	v.m.register(fs)
	nps := fs.String("np", "", "world sizes to verify, comma-separated: one run of each")
	fs.StringVar(&v.out, "out", "", "output directory")
	emulate := fs.String("emulate", "", "run over an emulated network: latency=..,bandwidth=..")
	model := fs.String("scenario", "", "scenario whose [network] predicts the points (default: the emulated network, if any)")
	fs.IntVar(&v.topt.Span, "span", 4, "octaves measured on each side of a predicted crossover")
	fs.IntVar(&v.topt.Dense, "dense", 1, "octaves on each side measured densely")
	fs.IntVar(&v.topt.PerOctave, "per-octave", 4, "sizes per octave in the dense part")
	dtype := fs.String("dtype", "f32", "element type")
	oversubscribe := fs.Bool("oversubscribe", false, "run more ranks than the machine's cores and memory allow (mpirun's flag)")
	fs.BoolVar(&v.reuse, "reuse", false, "do not measure: read DIR/pN/results.csv of an earlier run (to predict with another --scenario)")
	pos, status, ok := cmdline.ParseCmd("verify", fs, args, stdout, stderr)
	if !ok {
		return nil, status, false
	}
	switch {
	case len(pos) != 1:
		return nil, cmdline.UsageError(stderr, "verify", "want one tuning table, got %d arguments", len(pos)), false
	case *nps == "":
		return nil, cmdline.UsageError(stderr, "verify", "missing --np N[,M...] (the world sizes to verify)"), false
	case v.out == "":
		return nil, cmdline.UsageError(stderr, "verify", "missing --out DIR"), false
	}
	v.table = pos[0]
	for _, f := range strings.Split(*nps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, cmdline.UsageError(stderr, "verify", "--np %q: want world sizes of 2 or more", *nps), false
		}
		v.worlds = append(v.worlds, n)
	}
	if !v.reuse {
		base := int64(rankProcessBytes)
		if *emulate != "" {
			base = emulatedRankBytes
		}
		warning, err := guardRanks("verify", slices.Max(v.worlds), base, thisMachine(), *oversubscribe)
		if err != nil {
			return nil, cmdline.UsageError(stderr, "verify", "%v", err), false
		}
		if warning != "" {
			fmt.Fprintln(stderr, warning)
		}
	}
	var err error
	if v.dt, err = device.ParseDType(*dtype); err != nil {
		return nil, cmdline.UsageError(stderr, "verify", "--dtype: %v", err), false
	}
	if status, ok := v.setUp(*emulate, *model, stderr); !ok {
		return nil, status, false
	}
	return v, exitOK, true
}

// setUp reads what parseVerify's flags name: how to measure, the tuning
// table, the emulated network and the predicting scenario.
func (v *verification) setUp(emulate, model string, stderr io.Writer) (int, bool) {
	var err error
	if v.opt, err = v.m.options(); err != nil {
		return cmdline.UsageError(stderr, "verify", "%v", err), false
	}
	if err := v.m.checkEmulate(emulate); err != nil {
		return cmdline.UsageError(stderr, "verify", "%v", err), false
	}
	if v.m.tuning == "" {
		v.m.tuning = v.table // its runs use the table's own [transport]
	}
	if v.cfg, err = v.m.config(); err != nil {
		return cmdline.UsageError(stderr, "verify", "%v", err), false
	}
	if v.tuning, err = algos.LoadTuning(v.table); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return exitUsage, false
	}
	// The network of the generated scenario: the emulated one's
	// alpha-beta model (what a table derived for it assumed), else a
	// placeholder the run does not use.
	v.network = "model = \"alpha-beta\"\nlatency = \"0\"\nbandwidth = \"inf\" # a placeholder: runs measure, they do not use the model"
	if emulate != "" {
		e, err := live.ParseEmulation(emulate)
		if err != nil {
			return cmdline.UsageError(stderr, "verify", "--emulate: %v", err), false
		}
		v.emulate = &e
		v.network = fmt.Sprintf("model = \"alpha-beta\" # the emulated network (%v)\nlatency = %q\nbandwidth = %q",
			e, fmt.Sprintf("%dns", e.Latency.Nanoseconds()), units.FormatBandwidth(e.Bandwidth))
	}
	if model != "" {
		if v.predictor, err = scenario.Load(model); err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage, false
		}
	}
	return exitOK, true
}

// world verifies the table's crossovers on np ranks: it writes the
// scenario that measures them into DIR/pN, runs it (unless --reuse), and
// reads the crossovers from the results, with the model's predictions
// where a model predicts them.
func (v *verification) world(ctx context.Context, np int, stdout, stderr io.Writer) ([]verify.Check, int) {
	targets, notes := verify.Targets(v.tuning, np, v.topt)
	for _, n := range notes {
		fmt.Fprintf(stderr, "nexar-live verify: %s\n", n)
	}
	if len(targets) == 0 {
		fmt.Fprintf(stderr, "nexar-live verify: %s has no crossover for %d ranks\n", v.table, np)
		return nil, exitOK
	}
	dir := filepath.Join(v.out, fmt.Sprintf("p%d", np))
	s, status := v.writeScenario(dir, np, targets, stderr)
	if status != exitOK {
		return nil, status
	}
	job, err := live.NewJob(s, np, v.opt)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return nil, exitUsage
	}
	if !v.reuse {
		fmt.Fprintf(stderr, "nexar-live verify: %d ranks: %d crossover(s), %d points (%s)\n", np, len(targets), len(job.Points), s.File)
		start := time.Now()
		model := v.predictor
		if model == nil && v.emulate != nil {
			model = s // the emulated network's nominal model
		}
		err = measure(ctx, measurement{np: np, file: s.File, s: s, job: job, out: dir, m: v.m, cfg: v.cfg, emulate: v.emulate, noCompare: true,
			progress: newProgress(stderr, "verify", model, job, 0)}, stdout, stderr)
		if code := finish(ctx, stderr, "verify", dir, start, err); code != exitOK {
			return nil, code
		}
	}
	rs, err := live.ReadResultsFile(filepath.Join(dir, live.ResultsFile))
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return nil, exitRanks
	}
	pred := v.predictor
	if pred == nil && v.emulate != nil {
		pred = s // the emulated network's nominal model
	}
	var cs []verify.Comparison
	if pred != nil {
		if cs, err = verify.Predict(pred, live.Rows(rs)); err != nil {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return nil, exitUsage
		}
		v.compared = append(v.compared, cs...)
		v.measured = append(v.measured, filepath.Join(dir, live.ResultsFile))
	} else {
		for _, r := range rs {
			cs = append(cs, verify.Comparison{Row: r.Row})
		}
	}
	checks, err := verify.Crossovers(targets, cs, pred != nil)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return nil, exitRanks
	}
	return checks, exitOK
}

// writeScenario writes the scenario that measures targets on np ranks
// into dir, as verify-scenario.toml, and loads it back.
func (v *verification) writeScenario(dir string, np int, targets []verify.Target, stderr io.Writer) (*scenario.Scenario, int) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, cmdline.UsageError(stderr, "verify", "--out: %v", err)
	}
	var b bytes.Buffer
	if err := verify.WriteScenario(&b, fmt.Sprintf("verify-p%d", np), v.network, targets, v.dt); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return nil, exitUsage
	}
	file := filepath.Join(dir, "verify-scenario.toml")
	if err := atomicfile.WriteFile(file, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return nil, exitRanks
	}
	s, err := scenario.Load(file)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, exitUsage
	}
	return s, exitOK
}

// report prints the checks and writes verify.csv and verify.png.
func (v *verification) report(checks []verify.Check, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "\nCrossovers of %s, predicted against measured:\n", v.table)
	verify.WriteCrossoverTable(stdout, checks)
	var b bytes.Buffer
	if err := verify.WriteCrossoverCSV(&b, checks); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return exitRanks
	}
	csvFile, plotFile := filepath.Join(v.out, verify.CrossoverFile), filepath.Join(v.out, verify.CrossoverPlotFile)
	if err := atomicfile.WriteFile(csvFile, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return exitRanks
	}
	if err := verify.CrossoverPlot(plotFile, checks); err != nil {
		if verify.WriteFailed(err) {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return exitRanks
		}
		fmt.Fprintf(stderr, "nexar-live verify: no plot: %v\n", err)
	}
	fmt.Fprintf(stderr, "nexar-live verify: wrote %s and %s\n", csvFile, plotFile)
	return exitOK
}
