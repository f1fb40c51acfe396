package nexarlive

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/verify"
)

func verifyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	var m measureFlags
	m.register(fs)
	nps := fs.String("np", "", "world sizes to verify, comma-separated: one run of each")
	out := fs.String("out", "", "output directory")
	emulate := fs.String("emulate", "", "run over an emulated network: latency=..,bandwidth=..")
	model := fs.String("scenario", "", "scenario whose [network] predicts the points (default: the emulated network, if any)")
	var topt verify.TargetOptions
	fs.IntVar(&topt.Span, "span", 4, "octaves measured on each side of a predicted crossover")
	fs.IntVar(&topt.Dense, "dense", 1, "octaves on each side measured densely")
	fs.IntVar(&topt.PerOctave, "per-octave", 4, "sizes per octave in the dense part")
	dtype := fs.String("dtype", "f32", "element type")
	reuse := fs.Bool("reuse", false, "do not measure: read DIR/pN/results.csv of an earlier run (to predict with another --scenario)")
	pos, status, ok := cmdline.ParseCmd("verify", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(pos) != 1:
		return cmdline.UsageError(stderr, "verify", "want one tuning table, got %d arguments", len(pos))
	case *nps == "":
		return cmdline.UsageError(stderr, "verify", "missing --np N[,M...] (the world sizes to verify)")
	case *out == "":
		return cmdline.UsageError(stderr, "verify", "missing --out DIR")
	}
	var worlds []int
	for _, f := range strings.Split(*nps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return cmdline.UsageError(stderr, "verify", "--np %q: want world sizes of 2 or more", *nps)
		}
		worlds = append(worlds, n)
	}
	dt, err := device.ParseDType(*dtype)
	if err != nil {
		return cmdline.UsageError(stderr, "verify", "--dtype: %v", err)
	}
	opt, err := m.options()
	if err != nil {
		return cmdline.UsageError(stderr, "verify", "%v", err)
	}
	if err := m.checkEmulate(*emulate); err != nil {
		return cmdline.UsageError(stderr, "verify", "%v", err)
	}
	if m.tuning == "" {
		m.tuning = pos[0] // its runs use the table's own [transport]
	}
	cfg, err := m.config()
	if err != nil {
		return cmdline.UsageError(stderr, "verify", "%v", err)
	}
	tuning, err := algos.LoadTuning(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return exitUsage
	}
	var em *live.Emulation
	// The network of the generated scenario: the emulated one's
	// alpha-beta model (what a table derived for it assumed), else a
	// placeholder the run does not use.
	network := "model = \"alpha-beta\"\nlatency = \"0\"\nbandwidth = \"inf\" # a placeholder: runs measure, they do not use the model"
	if *emulate != "" {
		e, err := live.ParseEmulation(*emulate)
		if err != nil {
			return cmdline.UsageError(stderr, "verify", "--emulate: %v", err)
		}
		em = &e
		network = fmt.Sprintf("model = \"alpha-beta\" # the emulated network (%v)\nlatency = %q\nbandwidth = %q",
			e, fmt.Sprintf("%dns", e.Latency.Nanoseconds()), units.FormatBandwidth(e.Bandwidth))
	}
	var predictor *scenario.Scenario
	if *model != "" {
		if predictor, err = scenario.Load(*model); err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
	}

	ctx, stop := signalContext()
	defer stop()
	var checks []verify.Check
	for _, np := range worlds {
		targets, notes := verify.Targets(tuning, np, topt)
		for _, n := range notes {
			fmt.Fprintf(stderr, "nexar-live verify: %s\n", n)
		}
		if len(targets) == 0 {
			fmt.Fprintf(stderr, "nexar-live verify: %s has no crossover for %d ranks\n", pos[0], np)
			continue
		}
		dir := filepath.Join(*out, fmt.Sprintf("p%d", np))
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return cmdline.UsageError(stderr, "verify", "--out: %v", err)
		}
		var b bytes.Buffer
		if err := verify.WriteScenario(&b, fmt.Sprintf("verify-p%d", np), network, targets, dt); err != nil {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return exitUsage
		}
		file := filepath.Join(dir, "verify-scenario.toml")
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return exitRanks
		}
		s, err := scenario.Load(file)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		job, err := live.NewJob(s, np, opt)
		if err != nil {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return exitUsage
		}
		if !*reuse {
			fmt.Fprintf(stderr, "nexar-live verify: %d ranks: %d crossover(s), %d points (%s)\n", np, len(targets), len(job.Points), file)
			start := time.Now()
			err = measure(ctx, measurement{np: np, file: file, s: s, job: job, out: dir, m: m, cfg: cfg, emulate: em, noCompare: true}, stdout, stderr)
			if code := finish(ctx, stderr, "verify", dir, start, err); code != exitOK {
				return code
			}
		}
		rs, err := live.ReadResultsFile(filepath.Join(dir, live.ResultsFile))
		if err != nil {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return exitRanks
		}
		pred := predictor
		if pred == nil && em != nil {
			pred = s // the emulated network's nominal model
		}
		var cs []verify.Comparison
		if pred != nil {
			if cs, err = verify.Predict(pred, live.Rows(rs)); err != nil {
				fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
				return exitUsage
			}
		} else {
			for _, r := range rs {
				cs = append(cs, verify.Comparison{Row: r.Row})
			}
		}
		cks, err := verify.Crossovers(targets, cs, pred != nil)
		if err != nil {
			fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
			return exitRanks
		}
		checks = append(checks, cks...)
	}
	if len(checks) == 0 {
		fmt.Fprintf(stderr, "nexar-live verify: nothing to verify in %s for world sizes %v\n", pos[0], worlds)
		return exitUsage
	}
	fmt.Fprintf(stdout, "\nCrossovers of %s, predicted against measured:\n", pos[0])
	verify.WriteCrossoverTable(stdout, checks)
	var b bytes.Buffer
	if err := verify.WriteCrossoverCSV(&b, checks); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return exitRanks
	}
	if err := os.WriteFile(filepath.Join(*out, verify.CrossoverFile), b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: %v\n", err)
		return exitRanks
	}
	if err := verify.CrossoverPlot(filepath.Join(*out, verify.CrossoverPlotFile), checks); err != nil {
		fmt.Fprintf(stderr, "nexar-live verify: no plot: %v\n", err)
	}
	fmt.Fprintf(stderr, "nexar-live verify: wrote %s and %s\n", filepath.Join(*out, verify.CrossoverFile), filepath.Join(*out, verify.CrossoverPlotFile))
	return exitOK
}
