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
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/live/step"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/verify"
	"github.com/nexar-go/nexar-go/workload"
)

// Defaults of nexar-live step: a step takes milliseconds to seconds,
// not the microseconds of a small collective.
const (
	defaultStepWarmup = 2
	defaultStepIters  = 5
)

// stepCmd measures a scenario's training steps on real ranks and
// compares them with the simulator's prediction.
func stepCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("step", flag.ContinueOnError)
	var m measureFlags
	m.registerNet(fs)
	fs.IntVar(&m.warmup, "warmup", defaultStepWarmup, "untimed steps per point before the timed ones")
	fs.IntVar(&m.iters, "iters", defaultStepIters, "timed steps per point (the row is their median)")
	np := fs.Int("np", 0, "number of ranks (the layouts of this world size are measured)")
	out := fs.String("out", "", "output directory")
	model := fs.String("model", "", "predict with this scenario's [network] (a calibrated one, as nexar-live calibrate --out writes) instead of SCENARIO's")
	oversubscribe := fs.Bool("oversubscribe", false, "run more ranks than the machine's cores and memory allow (mpirun's flag)")
	reuse := fs.Bool("reuse", false, "measure nothing: predict the rows of DIR/"+step.File+" of an earlier run again (with another --model)")
	pos, status, ok := cmdline.ParseCmd("step", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(pos) != 1:
		return cmdline.UsageError(stderr, "step", "want one scenario file with a [workload], got %d arguments", len(pos))
	case !flagGiven(fs, "np"):
		return cmdline.UsageError(stderr, "step", "missing --np N (the number of ranks)")
	case *np < 1:
		return cmdline.UsageError(stderr, "step", "--np %d: want at least 1 rank", *np)
	case *out == "":
		return cmdline.UsageError(stderr, "step", "missing --out DIR")
	case m.iters < 1:
		return cmdline.UsageError(stderr, "step", "--iters %d: want at least 1", m.iters)
	case m.warmup < 0:
		return cmdline.UsageError(stderr, "step", "--warmup %d: want 0 or more", m.warmup)
	}
	cfg, err := m.config()
	if err != nil {
		return cmdline.UsageError(stderr, "step", "%v", err)
	}
	if !*reuse {
		warning, err := guardRanks("step", *np, rankProcessBytes, thisMachine(), *oversubscribe)
		if err != nil {
			return cmdline.UsageError(stderr, "step", "%v", err)
		}
		if warning != "" {
			fmt.Fprintln(stderr, warning)
		}
	}
	s, err := scenario.Load(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	job, err := step.NewJob(s, *np, m.warmup, m.iters)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live step: %v\n", err)
		return exitUsage
	}
	network, modelName := &s.Network, fmt.Sprintf("%s's [network]", pos[0])
	if *model != "" {
		ms, err := scenario.Load(*model)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		network, modelName = &ms.Network, fmt.Sprintf("%s's [network] (%s)", *model, ms.Name)
	}
	if err := network.Check(*np); err != nil {
		return cmdline.UsageError(stderr, "step", "the model cannot predict %d ranks: %v", *np, err)
	}
	if len(job.Skipped) > 0 {
		fmt.Fprintf(stderr, "nexar-live step: measuring world size %d only; leaving out the layouts of %v ranks\n", *np, job.Skipped)
	}
	if err := os.MkdirAll(*out, 0o777); err != nil {
		return cmdline.UsageError(stderr, "step", "--out: %v", err)
	}
	if !*reuse {
		if status, ok := measureSteps(job, pos[0], *np, *out, m, cfg.Thresholds, stdout, stderr); !ok {
			return status
		}
	}
	path := filepath.Join(*out, step.File)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live step: %v\n", err)
		return exitRanks
	}
	rows, err := workload.ReadCSV(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live step: %s: %v\n", path, err)
		return exitRanks
	}
	if *reuse {
		for _, r := range rows {
			if r.World != *np || r.Network != s.Name {
				return cmdline.UsageError(stderr, "step", "--reuse: %s holds a row of %q on %d ranks, not of %s on %d", path, r.Network, r.World, pos[0], *np)
			}
		}
	}
	cs, err := verify.PredictSteps(s, network, rows)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live step: no prediction: %v\n", err)
		return exitRanks
	}
	var b bytes.Buffer
	err = verify.WriteStepCompareCSV(&b, cs)
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(*out, verify.CompareFile), b.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live step: %v\n", err)
		return exitRanks
	}
	if err := writeStepReport(*out, s); err != nil { // report.html (jsonout.go)
		fmt.Fprintf(stderr, "nexar-live step: %v\n", err)
		return exitRanks
	}
	printStepTable(stdout, s, modelName, cs)
	fmt.Fprintf(stderr, "nexar-live step: wrote %s\n", filepath.Join(*out, verify.CompareFile))
	return exitOK
}

// measureSteps runs job's points on np rank processes, whose transport
// uses the thresholds t; rank 0 writes the rows into out. It returns
// false, and the exit status, on failure.
func measureSteps(job *step.Job, file string, np int, out string, m measureFlags, t algos.Thresholds, stdout, stderr io.Writer) (int, bool) {
	fmt.Fprintf(stderr, "nexar-live step: %s (%s): %d point(s) on %d ranks, %d warm-up and %d timed steps each\n",
		file, job.Scenario.Workload.Model, len(job.Points), np, m.warmup, m.iters)
	wargs := append([]string{"step-worker", abs(file), "--out", abs(out),
		"--warmup", strconv.Itoa(m.warmup), "--iters", strconv.Itoa(m.iters)}, m.netArgs(t)...)
	l, err := launcher(np, wargs, m, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live step: %v\n", err)
		return exitRanks, false
	}
	ctx, stop := signalContext()
	defer stop()
	start := time.Now()
	if err := l.Run(ctx); err != nil {
		status := exitRanks
		if ctx.Err() != nil {
			err, status = fmt.Errorf("interrupted"), exitInterrupted
		}
		fmt.Fprintf(stderr, "nexar-live step: %v\n", err)
		partial := filepath.Join(out, step.PartialFile)
		if info, serr := os.Stat(partial); serr == nil && !info.ModTime().Before(start) {
			fmt.Fprintf(stderr, "nexar-live step: the points measured before are in %s\n", partial)
		}
		return status, false
	}
	fmt.Fprintf(stderr, "nexar-live step: measured in %.1fs; wrote %s and %s\n", time.Since(start).Seconds(),
		filepath.Join(out, step.File), filepath.Join(out, step.TimesFile))
	return exitOK, true
}

// printStepTable prints every point's predicted and measured step, and
// the median error.
func printStepTable(w io.Writer, s *scenario.Scenario, modelName string, cs []verify.StepComparison) {
	fmt.Fprintf(w, "# %s: %s, predicted by the simulator on %s\n", s.Name, s.Workload.Model, modelName)
	fmt.Fprintf(w, "# step = the slowest rank's, median over the timed steps; exposed = the compute stream's waits for communication, mean over the ranks\n")
	fmt.Fprintf(w, "%5s  %-14s %10s  %-22s %11s %11s %7s  %11s %11s\n", "point", "layout", "bucket", "algorithms",
		"predicted", "measured", "ratio", "exp. pred.", "exp. meas.")
	for _, c := range cs {
		m, p := c.Measured, c.Predicted
		algs := m.Algorithms
		if algs == "" {
			algs = "-"
		}
		fmt.Fprintf(w, "%5d  %-14s %10s  %-22s %11s %11s %7.3f  %11s %11s\n", m.Point, m.Layout, units.FormatBytes(float64(m.Bucket)), algs,
			units.FormatSeconds(p.Step), units.FormatSeconds(m.Step), c.Ratio(), units.FormatSeconds(p.Exposed), units.FormatSeconds(m.Exposed))
	}
	n, med, mean := verify.SummarizeSteps(cs)
	fmt.Fprintf(w, "%d points: median |predicted/measured - 1| = %.1f%%, mean %.1f%%\n", n, 100*med, 100*mean)
}

// stepWorkerCmd is one rank of nexar-live step (not for users).
func stepWorkerCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("step-worker", flag.ContinueOnError)
	var m measureFlags
	m.registerNet(fs)
	fs.IntVar(&m.warmup, "warmup", defaultStepWarmup, "untimed steps per point")
	fs.IntVar(&m.iters, "iters", defaultStepIters, "timed steps per point")
	out := fs.String("out", "", "output directory (rank 0 writes there)")
	pos, status, ok := cmdline.ParseCmd("step-worker", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) != 1 {
		return cmdline.UsageError(stderr, "step-worker", "want one scenario file, got %d arguments", len(pos))
	}
	cfg, err := m.config()
	if err != nil {
		return cmdline.UsageError(stderr, "step-worker", "%v", err)
	}
	var statusW io.Writer
	if f, err := launch.OpenStatusPipe(); err != nil {
		return cmdline.UsageError(stderr, "step-worker", "%v", err)
	} else if f != nil {
		defer f.Close()
		statusW = f
	}
	ctx, stop := signalContext()
	defer stop()
	_, err = step.Worker(ctx, step.WorkerConfig{Scenario: pos[0], Warmup: m.warmup, Iters: m.iters, Net: cfg,
		Dir: *out, Status: statusW, Progress: stdout, JoinTimeout: m.timeout})
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "nexar-live step-worker: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitRanks
}
