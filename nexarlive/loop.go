package nexarlive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/verify"
)

// The files of nexar-live tune, in its --out directory (besides each
// world's run in pN/ and verify's in verify/).
const (
	tuneModelFile    = "model.toml"
	tuneCalibrate    = "calibrate.txt"
	tuneTuningFile   = "tuning.toml"
	tuneSummaryFile  = "tune.md"
	tuneCalibCompare = "compare-calibrated.csv"
)

const tuneHelp = `Usage: nexar-live tune --np N[,M...] SCENARIO.toml --out DIR [flags]
       nexar-live tune --np N[,M...] -b MIN -e MAX -f FACTOR --out DIR [flags]

The whole loop from measurement to a verified model, on this machine, in
one command. It runs, in order, what these commands do:

  1. measure    nexar-live run --np N ... --out DIR/pN, for each N:
                the table on stdout, DIR/pN/results.csv, and compare.csv,
                the scenario's own model against the measurements (the
                error "before")
  2. calibrate  nexar-live calibrate DIR/p*/results.csv --out DIR/model.toml
                --memory-bandwidth measure: the model of least error on
                points it did not fit, among those the samples determine
                (or --model's); its report in DIR/calibrate.txt, with a
                warning for any fitted value outside physical bounds
  3. simulate   the calibrated scenario's sweep on the simulator, and the
                tuning table derived from it, as nexar-sim run writes it:
                DIR/tuning.toml (which algorithm at which size), and each
                world's DIR/pN/compare-calibrated.csv (the error "after")
  4. verify     nexar-live verify DIR/tuning.toml --np N,M --scenario
                DIR/model.toml --out DIR/verify: measures the algorithms of
                every predicted crossover around it, and holds the measured
                crossover against the predicted one (DIR/verify/crossovers.csv)

and writes DIR/tune.md: what ran, the model chosen and why, its median
error before and after per world size, the warnings, and the crossovers
predicted against measured. Each step's files are those of its command,
so any step can be rerun alone with the command above.

Every flag of 'nexar-live run' is taken (nccl-tests' flags, --iters,
--warmup, --min-time, --bulk-threshold, --emulate, ...) and applies to
the measurements of steps 1 and 4. The command line is checked for every
world size before anything runs.

Flags of tune itself:
  --np N[,M...]        world sizes to measure (required): one run each
  --out DIR            output directory (required)
  --model M[,M...]     models calibrate chooses among (default: every model
                       the samples suit; see 'nexar-live help calibrate')
  --span K             octaves verify measures on each side of a predicted
                       crossover (default 2; verify's own default is 4)
  --no-verify          stop after step 3: no measurements around crossovers

Exit status: that of the first step that fails (2 bad input, 3 a rank
failed, 130 interrupted), else 0; tune.md is written when the loop ends,
whole or not, and says which steps ran.

Examples:
  nexar-live tune --np 2,4 -b 8 -e 16M -f 8 -n 10 -w 3 --out tune-out/
  nexar-live tune --np 4 live/examples/loopback-allreduce.toml --out tune-out/
  nexar-live tune --np 2 -b 1K -e 1M -f 4 --emulate latency=1ms,bandwidth=100MB/s --out emu/
`

// tuneLine is nexar-live tune's command line: its own flags, and those
// it hands to run.
type tuneLine struct {
	worlds   []int
	out      string
	model    string
	span     int
	noVerify bool
	// runArgs are the arguments of run without --np and --out; runs are
	// each world's, checked.
	runArgs []string
	runs    []*runLine
}

// tuneFlags are tune's own flags, and whether each takes a value.
var tuneFlags = map[string]bool{"np": true, "out": true, "model": true, "span": true, "no-verify": false}

// parseTune splits tune's flags from run's and checks run's command line
// for every world; ok false returns status.
func parseTune(args []string, stdout, stderr io.Writer) (t *tuneLine, status int, ok bool) {
	t = &tuneLine{span: 2}
	own := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprint(stdout, tuneHelp)
			return nil, exitOK, false
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, known := tuneFlags[name]
		if !strings.HasPrefix(a, "-") || !known {
			t.runArgs = append(t.runArgs, a)
			continue
		}
		if takes && !hasValue {
			if i+1 >= len(args) {
				return nil, cmdline.UsageError(stderr, "tune", "flag needs an argument: -%s", name), false
			}
			i++
			value = args[i]
		}
		own[name] = value
	}
	if status, ok := t.setOwn(own, stderr); !ok {
		return nil, status, false
	}
	for _, np := range t.worlds {
		l, status, ok := parseRun(t.runArgs1(np), stdout, stderr)
		if !ok {
			return nil, status, false
		}
		t.runs = append(t.runs, l)
	}
	if l := t.runs[0]; !l.fromFlags {
		if _, err := scenario.Load(l.file); err != nil {
			fmt.Fprintln(stderr, err)
			return nil, exitUsage, false
		}
	}
	return t, exitOK, true
}

// setOwn reads tune's own flags.
func (t *tuneLine) setOwn(own map[string]string, stderr io.Writer) (int, bool) {
	if own["np"] == "" {
		return cmdline.UsageError(stderr, "tune", "missing --np N[,M...] (the world sizes to measure)"), false
	}
	if own["out"] == "" {
		return cmdline.UsageError(stderr, "tune", "missing --out DIR"), false
	}
	t.out, t.model = own["out"], own["model"]
	_, t.noVerify = own["no-verify"]
	for _, f := range strings.Split(own["np"], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return cmdline.UsageError(stderr, "tune", "--np %q: want world sizes of 2 or more, comma-separated", own["np"]), false
		}
		t.worlds = append(t.worlds, n)
	}
	if s, ok := own["span"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return cmdline.UsageError(stderr, "tune", "--span %q: want a whole number of octaves, 1 or more", s), false
		}
		t.span = n
	}
	return exitOK, true
}

// runArgs1 is run's command line for np ranks.
func (t *tuneLine) runArgs1(np int) []string {
	return append(append([]string{}, t.runArgs...), "--np", strconv.Itoa(np), "--out", t.worldDir(np))
}

// worldDir is where np ranks' run writes.
func (t *tuneLine) worldDir(np int) string { return filepath.Join(t.out, fmt.Sprintf("p%d", np)) }

// tuneReport is what tune.md says, filled in as the steps run.
type tuneReport struct {
	started  time.Time
	steps    []string // the steps that ran, with their commands
	choice   []string // calibrate's lines on the models and the fit
	warnings []string
	errors   []worldError
	cross    []derive.Crossover
	tuning   string // tuning.toml's text
	checks   []verify.Check
	stopped  string // why the loop stopped early
}

// worldError is one world's median error before and after.
type worldError struct {
	world         int
	n             int
	before, after float64
	beforeModel   string
}

func tuneCmd(args []string, stdout, stderr io.Writer) int {
	t, status, ok := parseTune(args, stdout, stderr)
	if !ok {
		return status
	}
	rep := &tuneReport{started: time.Now()}
	status = t.loop(rep, stdout, stderr)
	if err := t.writeSummary(rep); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		if status == exitOK {
			status = exitRanks
		}
	} else {
		fmt.Fprintf(stderr, "nexar-live tune: wrote %s\n", filepath.Join(t.out, tuneSummaryFile))
	}
	return status
}

// loop runs the four steps in turn, stopping at the first that fails.
func (t *tuneLine) loop(rep *tuneReport, stdout, stderr io.Writer) int {
	for _, np := range t.worlds {
		fmt.Fprintf(stderr, "nexar-live tune: 1. measure, %d ranks\n", np)
		rep.steps = append(rep.steps, "nexar-live run "+strings.Join(t.runArgs1(np), " "))
		if status := runCmd(t.runArgs1(np), stdout, stderr); status != exitOK {
			rep.stopped = fmt.Sprintf("the run of %d ranks ended with exit status %d", np, status)
			return status
		}
	}
	fmt.Fprintf(stderr, "nexar-live tune: 2. calibrate\n")
	if status := t.calibrate(rep, stdout, stderr); status != exitOK {
		rep.stopped = fmt.Sprintf("calibrate ended with exit status %d (see %s)", status, tuneCalibrate)
		return status
	}
	fmt.Fprintf(stderr, "nexar-live tune: 3. simulate\n")
	ctx, stop := signalContext()
	defer stop()
	if status := t.simulate(ctx, rep, stderr); status != exitOK {
		return status
	}
	if t.noVerify {
		return exitOK
	}
	fmt.Fprintf(stderr, "nexar-live tune: 4. verify\n")
	return t.verify(ctx, rep, stdout, stderr)
}

// calibrate runs calibrate on every world's results, its report to
// stdout and DIR/calibrate.txt, and keeps its choice and warnings.
func (t *tuneLine) calibrate(rep *tuneReport, stdout, stderr io.Writer) int {
	args := []string{"--out", filepath.Join(t.out, tuneModelFile), "--name", "tuned", "--memory-bandwidth", "measure"}
	if t.model != "" {
		args = append(args, "--model", t.model)
	}
	for _, np := range t.worlds {
		args = append(args, filepath.Join(t.worldDir(np), live.ResultsFile))
	}
	rep.steps = append(rep.steps, "nexar-live calibrate "+strings.Join(args, " "))
	var b bytes.Buffer
	status := calibrateCmd(args, io.MultiWriter(stdout, &b), stderr)
	if err := atomicfile.WriteFile(filepath.Join(t.out, tuneCalibrate), b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return exitRanks
	}
	for _, line := range strings.Split(b.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "warning: "):
			rep.warnings = append(rep.warnings, strings.TrimPrefix(line, "warning: "))
		case strings.HasPrefix(line, "chose "), strings.Contains(line, " model fitted to "), strings.HasPrefix(line, "residuals: "),
			strings.HasPrefix(line, "  ") && strings.Contains(line, " = ") && !strings.Contains(line, "predicted"):
			rep.choice = append(rep.choice, line)
		}
	}
	return status
}

// simulate predicts every measured point on the calibrated model (the
// error after, beside the scenario's own model's before), then runs the
// calibrated scenario's sweep and derives its tuning table.
func (t *tuneLine) simulate(ctx context.Context, rep *tuneReport, stderr io.Writer) int {
	model, err := scenario.Load(filepath.Join(t.out, tuneModelFile))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	for i, np := range t.worlds {
		we, status := t.errorsOf(model, t.runs[i], np, stderr)
		if status != exitOK {
			return status
		}
		rep.errors = append(rep.errors, we)
	}
	points, err := sweep.Plan(model)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return exitUsage
	}
	var rows []sweep.Row
	if err := sweep.Run(ctx, points, sweep.Options{}, func(r sweep.Row) error { rows = append(rows, r); return nil }); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: simulating %s: %v\n", model.File, err)
		return exitRanks
	}
	res, err := derive.Derive(rows, derive.Options{
		Description: fmt.Sprintf("derived by nexar-live tune from the model calibrated on this machine's runs of %v ranks", t.worlds),
		Source:      "nexar-live tune " + filepath.Base(t.out),
	})
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return exitRanks
	}
	rep.cross = res.Crossovers
	rep.steps = append(rep.steps, fmt.Sprintf("simulate %s (%d points) and derive %s", filepath.Join(t.out, tuneModelFile), len(points), tuneTuningFile))
	if res.Tuning == nil {
		rep.stopped = "no collective had two algorithms to choose between: no tuning table, nothing to verify"
		t.noVerify = true
		return exitOK
	}
	var b bytes.Buffer
	if _, err := res.Tuning.WriteTo(&b); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return exitRanks
	}
	if err := atomicfile.WriteFile(filepath.Join(t.out, tuneTuningFile), b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return exitRanks
	}
	rep.tuning = b.String()
	return exitOK
}

// errorsOf holds np ranks' measurements against the scenario the run
// measured (before) and the calibrated model (after), and writes the
// latter's DIR/pN/compare-calibrated.csv.
func (t *tuneLine) errorsOf(model *scenario.Scenario, l *runLine, np int, stderr io.Writer) (worldError, int) {
	dir := t.worldDir(np)
	rs, err := live.ReadResultsFile(filepath.Join(dir, live.ResultsFile))
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return worldError{}, exitRanks
	}
	we := worldError{world: np, n: len(rs)}
	measured := filepath.Join(dir, "scenario.toml") // what a run from flags wrote
	if !l.fromFlags {
		measured = l.file
	}
	if s, err := scenario.Load(measured); err == nil {
		if cs, err := verify.Predict(s, live.Rows(rs)); err == nil {
			we.before, we.beforeModel = verify.Summarize(cs).Median, fmt.Sprintf("%s (%s)", measured, s.Network.Model)
		}
	}
	cs, err := verify.Predict(model, live.Rows(rs))
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return worldError{}, exitUsage
	}
	we.after = verify.Summarize(cs).Median
	var b bytes.Buffer
	if err := verify.WriteCompareCSV(&b, cs); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return worldError{}, exitRanks
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, tuneCalibCompare), b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return worldError{}, exitRanks
	}
	return we, exitOK
}

// verify measures around the tuning table's crossovers, as nexar-live
// verify does, with the runs' measurement flags.
func (t *tuneLine) verify(ctx context.Context, rep *tuneReport, stdout, stderr io.Writer) int {
	l := t.runs[0]
	v := &verification{table: filepath.Join(t.out, tuneTuningFile), worlds: t.worlds, out: filepath.Join(t.out, "verify"), m: l.m, dt: device.F32,
		topt: verify.TargetOptions{Span: t.span, Dense: 1, PerOctave: 4}}
	if s, err := scenario.Load(l.file); err == nil && len(s.Sweeps) > 0 && len(s.Sweeps[0].DTypes) > 0 {
		v.dt = s.Sweeps[0].DTypes[0]
	}
	rep.steps = append(rep.steps, fmt.Sprintf("nexar-live verify %s --np %s --span %d --scenario %s --out %s", v.table, joinInts(t.worlds), t.span,
		filepath.Join(t.out, tuneModelFile), v.out))
	if status, ok := v.setUp(l.emulate, filepath.Join(t.out, tuneModelFile), stderr); !ok {
		return status
	}
	for _, np := range v.worlds {
		cks, status := v.world(ctx, np, stdout, stderr)
		if status != exitOK {
			rep.stopped = fmt.Sprintf("verify's runs of %d ranks ended with exit status %d", np, status)
			return status
		}
		rep.checks = append(rep.checks, cks...)
	}
	if len(rep.checks) == 0 {
		rep.stopped = "the tuning table has no crossover at these world sizes: nothing to verify"
		return exitOK
	}
	if err := os.MkdirAll(v.out, 0o777); err != nil {
		fmt.Fprintf(stderr, "nexar-live tune: %v\n", err)
		return exitRanks
	}
	return v.report(rep.checks, stdout, stderr)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// writeSummary writes DIR/tune.md.
func (t *tuneLine) writeSummary(rep *tuneReport) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# nexar-live tune: %s\n\n", filepath.Base(t.out))
	fmt.Fprintf(&b, "World sizes %s, %s in all.\n\n## Steps\n\n", joinInts(t.worlds), units.FormatSecondsRough(time.Since(rep.started).Seconds()))
	for i, s := range rep.steps {
		fmt.Fprintf(&b, "%d. `%s`\n", i+1, s)
	}
	if rep.stopped != "" {
		fmt.Fprintf(&b, "\nStopped: %s.\n", rep.stopped)
	}
	if len(rep.choice) > 0 {
		fmt.Fprintf(&b, "\n## The model (%s, %s)\n\n```\n%s\n```\n", tuneModelFile, tuneCalibrate, strings.Join(rep.choice, "\n"))
	}
	for _, w := range rep.warnings {
		fmt.Fprintf(&b, "\n**Warning:** %s\n", w)
	}
	if len(rep.errors) > 0 {
		fmt.Fprintf(&b, "\n## Median |predicted/measured - 1|\n\n| ranks | points | before (the run's scenario) | after (%s) |\n|---|---|---|---|\n", tuneModelFile)
		for _, e := range rep.errors {
			before := "-"
			if e.beforeModel != "" {
				before = fmt.Sprintf("%.1f%% (%s)", 100*e.before, e.beforeModel)
			}
			fmt.Fprintf(&b, "| %d | %d | %s | %.1f%% |\n", e.world, e.n, before, 100*e.after)
		}
	}
	if rep.tuning != "" {
		fmt.Fprintf(&b, "\n## The tuning table (%s)\n\nDerived from the calibrated model's simulation; %d crossovers between pairs of algorithms in all.\n\n```toml\n%s```\n",
			tuneTuningFile, len(rep.cross), rep.tuning)
	}
	if len(rep.checks) > 0 {
		fmt.Fprintf(&b, "\n## Predicted against measured (verify/%s)\n\n```\n", verify.CrossoverFile)
		verify.WriteCrossoverTable(&b, rep.checks)
		fmt.Fprintf(&b, "```\n")
	}
	if err := os.MkdirAll(t.out, 0o777); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(t.out, tuneSummaryFile), b.Bytes())
}
