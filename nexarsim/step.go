package nexarsim

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/trace"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/workload"
)

// stepHelp is 'nexar-sim help step'.
const stepHelp = `Usage: nexar-sim step SCENARIO.toml... --out DIR [--jobs N] [--trace POINT]
                     [--trace-ranks R] [--trace-format F] [--no-plots] [--quiet]

Simulates the training step of each scenario's [workload] (package
workload): every rank's compute and communication on a compute stream and
a stream per kind of communication, collectives on their process groups
with their algorithms, on the scenario's network. Every combination of the
values the [workload] lists (layout, schedule, bucket, zero, each group's
algorithms) is a point. Several scenarios are several networks: each names
its rows by its name, which must differ.

Outputs in DIR (each written whole, or not at all):
  step.csv         one row per point, in the order of the scenarios and
                   their points:
                   network,point,layout,dp,tp,pp,ep,world,schedule,chunks,
                   micro_batches,zero,bucket_bytes,algorithms,step_s,
                   compute_s,utilisation,bubble_s,bubble_fraction,idle_s,
                   exposed_s,exposed_{tp,dp,pp,ep,dp_ep}_s,
                   busy_{tp,dp,pp,ep,dp_ep}_s,messages
                   step_s is the step's time (the slowest rank's end); the
                   others are means over the ranks: compute, utilisation
                   (compute / step), the pipeline bubble (the compute's
                   waits for pipeline receives, and a rank's wait for the
                   step's end when there are stages), idle (that wait
                   without stages), exposed communication (the compute
                   stream's waits for each group's streams; exposed_pp_s is
                   the bubble's waits) and each group's busy time
  exposed.csv      each point's exposed communication by group and
                   collective: network,point,group,collective,exposed_s,max_s
  best_bucket.csv  per network, layout, schedule, ZeRO stage and choice of
                   algorithms swept over two or more buckets: the bucket
                   that gave the shortest step (derive.BestBuckets)
  step_buckets_NETWORK.png/svg    step time and exposed communication
                   against the bucket, a panel per layout
  step_breakdown_NETWORK.png/svg  each layout's step at its best bucket:
                   compute, exposed TP, DP and other communication,
                   bubble, idle
  trace_step_NETWORK_pN.pftrace   with --trace: each kept rank's streams
                   as tracks (stream compute, stream tp, stream dp, ...),
                   its messages beside them; ranks.csv: each rank's account
                   of the traced points

Flags:
  --out DIR          output directory (required; created if missing)
  --jobs N           points run at once (default: the number of CPUs)
  --trace POINT      write the timeline of POINT: its index in its scenario
                     (from 0; the first scenario's), or NETWORK:INDEX; may be
                     given several times
  --trace-ranks R    ranks a trace keeps, such as 0-7,64 (default 0-15)
  --trace-format F   perfetto (default) or json
  --no-plots         write no figures
  --quiet, -q        no progress on stderr

The [workload] table (see 'nexar-sim list' for every key):

  [network]
  preset = "dgx-h100"             # its flops key: 989 TFLOP/s a GPU
  nodes = 8

  [workload]
  transformer = { layers = 40, hidden = 5140, heads = 40, seq = 2048, vocab = 50257 }
  layout = ["dp8-tp8-pp1", "dp4-tp8-pp2", "dp2-tp8-pp4"]
  global_batch = 64               # sequences a step, or micro_batches = N
  schedule = "1f1b"               # gpipe, 1f1b, interleaved (with chunks = 2)
  bucket = "1MiB..256MiB x4"      # DDP's bucket_cap, swept
  zero = 0                        # 1, 2: reduce-scatter; 3: FSDP (prefetch = 1)
  mfu = 0.5                       # share of the GPU's flops a step reaches
  # aicb = "workload.txt"         # or the layers of a SimAI AICB file
  [workload.algorithms]
  dp = ["nccl_ring_simple", "nccl_tree_simple"]
  tp = "nccl_ring_simple"

Examples:
  nexar-sim step scenarios/gpt3-13b.toml --out out/
  nexar-sim step ib.toml roce.toml --out out/ --trace ib:0 --trace-ranks 0-15
`

// stepCmd is 'nexar-sim step': it parses the flags, loads the scenarios
// and plans their points (checking every input before anything is
// simulated), simulates the points with Ctrl-C, and writes the outputs.
func stepCmd(args []string, stdout, stderr io.Writer) int {
	f, files, status, ok := parseStepFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	scens, ok := loadWorkloads(files, stderr)
	if !ok {
		return exitUsage
	}
	jobs, err := planSteps(scens)
	if err == nil {
		err = markTraced(jobs, scens, f.traces)
	}
	if err != nil {
		return cmdline.UsageError(stderr, "step", "%v", err)
	}
	if err := os.MkdirAll(f.out, 0o777); err != nil {
		return cmdline.UsageError(stderr, "step", "--out: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &stepRun{flags: f, stderr: stderr, scens: scens, jobs: jobs}
	for _, s := range scens {
		w := s.Workload
		r.logf("nexar-sim: %s (%s): %s on %s; %d point(s)%s", s.File, s.Name, w.Model, s.Network.Summary, len(w.Points), axesText(w))
	}
	r.simulate(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "nexar-sim step: interrupted; nothing written")
		return exitInterrupted
	}
	for _, j := range jobs {
		if j.err != nil {
			fmt.Fprintf(stderr, "nexar-sim step: %s point %d (%s): %v\n", j.s.Name, j.p.Index, pointText(j.s.Workload, j.p), j.err)
			return exitFailed
		}
	}
	if err := r.writeOutputs(); err != nil {
		fmt.Fprintf(stderr, "nexar-sim step: %v\n", err)
		return exitFailed
	}
	if err := writeStepReport(f.out, args, scens); err != nil { // report.html (jsonout.go)
		fmt.Fprintf(stderr, "nexar-sim step: %v\n", err)
		return exitFailed
	}
	r.logf("nexar-sim: wrote %d row(s) to %s", len(jobs), filepath.Join(f.out, "step.csv"))
	return exitOK
}

// stepFlags are the flags of step.
type stepFlags struct {
	out            string
	quiet, noPlots bool
	jobs           int
	traces         []string     // --trace, as often as given
	topt           traceOptions // --trace-ranks and --trace-format
}

// parseStepFlags parses step's command line and checks what it can
// without reading a file; files are the scenarios.
func parseStepFlags(args []string, stdout, stderr io.Writer) (f *stepFlags, files []string, status int, ok bool) {
	f = &stepFlags{}
	fs := flag.NewFlagSet("step", flag.ContinueOnError)
	fs.StringVar(&f.out, "out", "", "output directory")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "points run at once")
	fs.BoolVar(&f.noPlots, "no-plots", false, "write no figures")
	fs.Func("trace", "write a timeline of a point", func(s string) error { f.traces = append(f.traces, s); return nil })
	traceRanks := fs.String("trace-ranks", "0-15", "ranks a trace keeps")
	traceFormat := fs.String("trace-format", "perfetto", "perfetto or json")
	files, status, ok = cmdline.ParseCmd("step", fs, args, stdout, stderr)
	if !ok {
		return nil, nil, status, false
	}
	switch {
	case len(files) == 0:
		return nil, nil, cmdline.UsageError(stderr, "step", "no scenario file given"), false
	case f.out == "":
		return nil, nil, cmdline.UsageError(stderr, "step", "missing --out DIR"), false
	case f.jobs < 1:
		return nil, nil, cmdline.UsageError(stderr, "step", "--jobs %d: want at least 1", f.jobs), false
	}
	var err error
	if f.topt, err = parseTraceOptions(*traceRanks, "", *traceFormat, "none"); err != nil {
		return nil, nil, cmdline.UsageError(stderr, "step", "%v", err), false
	}
	return f, files, exitOK, true
}

// loadWorkloads loads the scenarios, each with a [workload] and a name of
// its own (the rows of a network are named by it). It reports every
// problem of every file, and returns ok false if there was one.
func loadWorkloads(files []string, stderr io.Writer) (scens []*scenario.Scenario, ok bool) {
	ok = true
	for _, f := range files {
		s, err := scenario.Load(f)
		if err != nil {
			fmt.Fprintln(stderr, err)
			ok = false
			continue
		}
		if s.Workload == nil {
			fmt.Fprintf(stderr, "%s: no [workload] table: nexar-sim step runs training steps (nexar-sim run runs sweeps)\n", f)
			ok = false
			continue
		}
		for _, o := range scens {
			if o.Name == s.Name {
				fmt.Fprintf(stderr, "%s: name %q is also %s's: the rows of two networks need two names\n", f, s.Name, o.File)
				ok = false
			}
		}
		scens = append(scens, s)
	}
	return scens, ok
}

// planSteps plans every point of every scenario's workload, in order.
func planSteps(scens []*scenario.Scenario) ([]*stepJob, error) {
	var jobs []*stepJob
	for _, s := range scens {
		for _, p := range s.Workload.Points {
			plan, err := workload.NewPlan(p.Spec)
			if err != nil {
				return nil, fmt.Errorf("%s: point %d: %v", s.File, p.Index, err)
			}
			jobs = append(jobs, &stepJob{s: s, p: p, plan: plan})
		}
	}
	return jobs, nil
}

// markTraced marks the points the --trace specs name: NETWORK:INDEX, or
// INDEX in the first scenario.
func markTraced(jobs []*stepJob, scens []*scenario.Scenario, specs []string) error {
	for _, spec := range specs {
		net, idx, found := strings.Cut(spec, ":")
		if !found {
			net, idx = scens[0].Name, spec
		}
		i, err := strconv.Atoi(idx)
		hit := false
		for _, j := range jobs {
			if err == nil && j.s.Name == net && j.p.Index == i {
				j.tr, hit = true, true
			}
		}
		if !hit {
			return fmt.Errorf("--trace %s: no point %s of network %q", spec, idx, net)
		}
	}
	return nil
}

// stepRun is a run of step: its flags, its scenarios and their points.
type stepRun struct {
	flags  *stepFlags
	stderr io.Writer
	scens  []*scenario.Scenario
	jobs   []*stepJob
}

// logf writes a line of progress, unless --quiet.
func (r *stepRun) logf(format string, args ...any) {
	if !r.flags.quiet {
		fmt.Fprintf(r.stderr, format+"\n", args...)
	}
}

// simulate simulates the points, --jobs at once, handing them out in
// order until ctx is done; each line of progress counts the points done.
func (r *stepRun) simulate(ctx context.Context) {
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(r.flags.jobs, len(r.jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := r.jobs[i]
				start := time.Now()
				err := r.simulateStep(ctx, j)
				mu.Lock()
				j.err = err
				done++
				if err == nil {
					r.logf("nexar-sim: [%d/%d] %s point %d %s: step %s, exposed %s, bubble %s (%.1fs)", done, len(r.jobs), j.s.Name, j.p.Index,
						pointText(j.s.Workload, j.p), units.FormatSeconds(j.res.Step), units.FormatSeconds(j.res.ExposedTotal), units.FormatSeconds(j.res.Bubble),
						time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for i := range r.jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
}

// simulateStep simulates the training step of point j and keeps its row,
// its result and, if it is traced, its trace: the messages and the
// streams' spans.
func (r *stepRun) simulateStep(ctx context.Context, j *stepJob) error {
	cfg := workload.SimConfig{Model: j.s.Network.Seeded(j.s.Seed), Machine: j.s.Network.MachineFor(j.plan.World()),
		FLOPS: j.s.Workload.FLOPS, Tuning: j.s.Workload.Tuning, Context: ctx}
	var rec *trace.Recorder
	if j.tr {
		rec = trace.NewFilteredRecorder(r.flags.topt.filter())
		cfg.Observer = messagesOnly{rec}
		cfg.Keep = r.flags.topt.keeps
	}
	res, recs, err := workload.Simulate(j.plan, cfg)
	if err != nil {
		return err
	}
	j.row = workload.NewRow(j.s.Name, j.p.Index, j.p.Spec, res)
	j.res = res
	if rec != nil {
		for _, sr := range recs {
			rec.StreamSpan(sr.Rank, sr.Stream, sr.Label, sr.Bytes, sim.Time(sr.Start)*sim.Nanosecond, sim.Time(sr.End)*sim.Nanosecond)
		}
		j.rec = rec
	}
	return nil
}

// firstError keeps the first error of steps that all run, so that one
// file that cannot be written does not keep the others from being written.
type firstError struct{ err error }

func (f *firstError) keep(err error) {
	if f.err == nil {
		f.err = err
	}
}

// write writes the file name in DIR whole, or not at all.
func (r *stepRun) write(name string, fn func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := fn(&buf); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return atomicfile.WriteFile(filepath.Join(r.flags.out, name), buf.Bytes())
}

// writeOutputs writes every output: the tables, the traces and the
// figures, and returns the first error.
func (r *stepRun) writeOutputs() error {
	rows := make([]workload.Row, len(r.jobs))
	results := make([]*workload.Result, len(r.jobs))
	for i, j := range r.jobs {
		rows[i], results[i] = j.row, j.res
	}
	var errs firstError
	errs.keep(r.write("step.csv", func(w io.Writer) error { return workload.WriteCSV(w, rows) }))
	errs.keep(r.write("exposed.csv", func(w io.Writer) error { return workload.WriteExposedCSV(w, rows, results) }))
	errs.keep(r.write("best_bucket.csv", func(w io.Writer) error { return derive.WriteBestBuckets(w, derive.BestBuckets(rows)) }))
	errs.keep(r.writeTraces())
	if !r.flags.noPlots {
		errs.keep(r.writeFigures(rows))
	}
	return errs.err
}

// writeTraces writes the trace of each point traced and, if there is one,
// ranks.csv: each traced rank's account.
func (r *stepRun) writeTraces() error {
	var errs firstError
	var traced bool
	for _, j := range r.jobs {
		if j.rec == nil {
			continue
		}
		traced = true
		name := fmt.Sprintf("trace_step_%s_p%d%s", fileName(j.s.Name), j.p.Index, r.flags.topt.format.Ext())
		meta := trace.Meta{Title: fmt.Sprintf("%s point %d: %s", j.s.Name, j.p.Index, pointText(j.s.Workload, j.p)), World: j.plan.World(),
			Args: [][2]string{{"network", j.s.Network.Summary}, {"model", j.s.Workload.Model}, {"seed", strconv.FormatUint(j.s.Seed, 10)}}}
		errs.keep(r.write(name, func(w io.Writer) error { return j.rec.Write(w, r.flags.topt.format, meta) }))
		r.logf("nexar-sim: wrote %s", filepath.Join(r.flags.out, name))
	}
	if traced {
		errs.keep(r.write("ranks.csv", func(w io.Writer) error {
			if _, err := io.WriteString(w, strings.Join(workload.RanksColumns, ",")+"\n"); err != nil {
				return err
			}
			for _, j := range r.jobs {
				if j.rec != nil {
					if err := workload.WriteRanksCSV(w, j.row.Network, j.row.Point, j.res); err != nil {
						return err
					}
				}
			}
			return nil
		}))
	}
	return errs.err
}

// writeFigures draws each network's step against the bucket, and each
// layout's step at its best bucket, as PNG and SVG; a figure without data
// (no bucket swept) is left out.
func (r *stepRun) writeFigures(rows []workload.Row) error {
	var errs firstError
	pts := stepPoints(r.jobs, rows)
	for _, s := range r.scens {
		for _, fig := range []struct {
			name string
			make func([]plots.StepPoint, string) (*plots.Figure, error)
		}{{"step_buckets", plots.StepBucketPanels}, {"step_breakdown", plots.StepBreakdown}} {
			f, err := fig.make(pts, s.Name)
			if errors.Is(err, plots.ErrNoData) {
				continue
			}
			if err != nil {
				errs.keep(err)
				continue
			}
			f.SetSubtitle(fmt.Sprintf("%s: %s on %s", s.Name, s.Workload.Model, s.Network.Summary))
			for _, ext := range []string{"png", "svg"} {
				name := fmt.Sprintf("%s_%s.%s", fig.name, fileName(s.Name), ext)
				errs.keep(r.write(name, func(w io.Writer) error { return f.Encode(w, ext) }))
			}
		}
	}
	return errs.err
}

// messagesOnly passes a run's messages to a trace recorder, not the
// spans of its processes' waits (the streams' records say what each
// stream waited for).
type messagesOnly struct{ r *trace.Recorder }

func (m messagesOnly) MessageStarted(msg *sim.Message, at sim.Time)    { m.r.MessageStarted(msg, at) }
func (m messagesOnly) MessageDelivered(msg *sim.Message, at sim.Time)  { m.r.MessageDelivered(msg, at) }
func (m messagesOnly) Span(int, sim.SpanKind, int, sim.Time, sim.Time) {}

// axesText says what a workload sweeps.
func axesText(w *scenario.Workload) string {
	if len(w.Axes) == 0 {
		return ""
	}
	return ", sweeping " + strings.Join(w.Axes, ", ")
}

// pointText names a point by its layout and swept values.
func pointText(w *scenario.Workload, p scenario.WorkloadPoint) string {
	parts := []string{p.Spec.Layout.String()}
	for i, a := range w.Axes {
		if a != "layout" {
			parts = append(parts, a+"="+p.Values[i])
		}
	}
	return strings.Join(parts, " ")
}

// stepJob is one point of a scenario's workload, its plan, whether it is
// traced, and, once simulated, what came of it.
type stepJob struct {
	s    *scenario.Scenario
	p    scenario.WorkloadPoint
	plan *workload.Plan
	tr   bool
	row  workload.Row
	res  *workload.Result
	rec  *trace.Recorder // its trace, if traced
	err  error
}

// stepPoints makes the figures' points: a panel per layout and the
// swept values other than the bucket and the algorithms, a series per
// choice of algorithms.
func stepPoints(jobs []*stepJob, rows []workload.Row) []plots.StepPoint {
	out := make([]plots.StepPoint, len(rows))
	for i, r := range rows {
		w, p := jobs[i].s.Workload, jobs[i].p
		panel := []string{r.Layout}
		var series []string
		for k, a := range w.Axes {
			switch {
			case a == "layout", a == "bucket":
			case strings.HasPrefix(a, "algorithms."):
				series = append(series, strings.TrimPrefix(a, "algorithms.")+"="+p.Values[k])
			default:
				panel = append(panel, a+"="+p.Values[k])
			}
		}
		other := r.ExposedBy[workload.EP] + r.ExposedBy[workload.DPEP]
		out[i] = plots.StepPoint{Network: r.Network, Panel: strings.Join(panel, " "), Series: strings.Join(series, " "), Bucket: float64(r.Bucket),
			Step: r.Step, Exposed: r.Exposed, Compute: r.Compute, ExposedTP: r.ExposedBy[workload.TP], ExposedDP: r.ExposedBy[workload.DP],
			ExposedOther: other, Bubble: r.Bubble, Idle: r.Idle}
	}
	return out
}

// fileName makes s safe in a file name.
func fileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}
