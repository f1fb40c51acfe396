package nexarsim

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/trace"
	"github.com/nexar-go/nexar-go/units"
)

// checkpointFile holds the rows of a run so far, for --resume. It is
// removed when the run has written its outputs, and kept whenever it did
// not (interrupted, or failed: a full disk, a point that failed), so that
// no computed row is lost.
const checkpointFile = ".nexar-sim-checkpoint.csv"

// checkpointMagic starts a checkpoint's first line.
const checkpointMagic = "# nexar-sim checkpoint v1"

// shard is a part of a sweep: points i-1, i-1+n, i-1+2n, ... (from 0).
type shard struct{ i, n int }

func (s shard) String() string { return fmt.Sprintf("%d/%d", s.i, s.n) }

// parseShard reads "i/n".
func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{1, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, such as 2/8", s)
	}
	return shard{i, n}, nil
}

// shardFromSlurm returns the shard of a task of a Slurm job array: task
// SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT, whatever the array's
// first index and step (--array=0-7, 1-8 or 0-14:2 give shards 1/8 to 8/8);
// 1/1 outside an array.
func shardFromSlurm(getenv func(string) string) (shard, error) {
	id, count := getenv("SLURM_ARRAY_TASK_ID"), getenv("SLURM_ARRAY_TASK_COUNT")
	if id == "" || count == "" {
		return shard{1, 1}, nil
	}
	num := func(name, def string) (int, error) {
		v := getenv(name)
		if v == "" {
			v = def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not a whole number (or give --shard I/N)", name, v)
		}
		return n, nil
	}
	i, err := num("SLURM_ARRAY_TASK_ID", "")
	if err != nil {
		return shard{}, err
	}
	n, err := num("SLURM_ARRAY_TASK_COUNT", "")
	if err != nil {
		return shard{}, err
	}
	lo, err := num("SLURM_ARRAY_TASK_MIN", "0")
	if err != nil {
		return shard{}, err
	}
	step, err := num("SLURM_ARRAY_TASK_STEP", "1")
	if err != nil {
		return shard{}, err
	}
	if step < 1 || (i-lo)%step != 0 || (i-lo)/step >= n || i < lo || n < 1 {
		return shard{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is not one of %d tasks from %d in steps of %d; give --shard I/N", i, n, lo, step)
	}
	return shard{(i-lo)/step + 1, n}, nil
}

// of returns the points of the shard, in order.
func (s shard) of(points []sweep.Point) []sweep.Point {
	var out []sweep.Point
	for k := s.i - 1; k < len(points); k += s.n {
		out = append(out, points[k])
	}
	return out
}

// selectPoint finds the point spec, the value of flag flagName (such
// as "--trace"), names: an index into the plan (the row of a whole run's
// results.csv, from 0) or
// COLLECTIVE:ALGORITHM:WORLD:BYTES[:DTYPE], where ALGORITHM is a variant
// name or, if it names one variant, an algorithm's, and BYTES a size
// ("8MiB") that is either asked or run. The first match in plan order wins.
func selectPoint(flagName, spec string, points []sweep.Point) (sweep.Point, error) {
	if i, err := strconv.Atoi(spec); err == nil {
		if i < 0 || i >= len(points) {
			return sweep.Point{}, fmt.Errorf("%s %s: the scenario has points 0 to %d", flagName, spec, len(points)-1)
		}
		return points[i], nil
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 4 && len(parts) != 5 {
		return sweep.Point{}, fmt.Errorf("%s %q: want an index or COLLECTIVE:ALGORITHM:WORLD:BYTES[:DTYPE], such as allreduce:ring:8:8MiB", flagName, spec)
	}
	world, err := strconv.Atoi(parts[2])
	if err != nil {
		return sweep.Point{}, fmt.Errorf("%s %q: world %q is not a whole number", flagName, spec, parts[2])
	}
	size, err := units.ParseBytes(parts[3])
	if err != nil {
		return sweep.Point{}, fmt.Errorf("%s %q: %v", flagName, spec, err)
	}
	match := func(p sweep.Point, byBase bool) bool {
		name := p.VariantName()
		if byBase {
			name = p.Algorithm.Name
		}
		return p.Collective.Name == parts[0] && name == parts[1] && p.World == world &&
			(p.Bytes == int(size) || p.UsedBytes() == int(size)) && (len(parts) == 4 || p.DType.String() == parts[4])
	}
	for _, p := range points {
		if match(p, false) {
			return p, nil
		}
	}
	var found []sweep.Point
	variants := map[string]bool{}
	for _, p := range points {
		if match(p, true) {
			found = append(found, p)
			variants[p.VariantName()] = true
		}
	}
	switch {
	case len(variants) == 1:
		return found[0], nil
	case len(variants) > 1:
		var names []string
		for _, p := range found {
			if variants[p.VariantName()] {
				names = append(names, p.VariantName())
				delete(variants, p.VariantName())
			}
		}
		return sweep.Point{}, fmt.Errorf("%s %q: %s has several variants in the scenario; name one: %s", flagName, spec, parts[1], strings.Join(names, ", "))
	}
	return sweep.Point{}, fmt.Errorf("%s %q: no point of the scenario matches", flagName, spec)
}

// runCmd is 'nexar-sim run': it parses the flags, plans the points
// (checking every input before anything is simulated), runs them with a
// checkpoint that --resume continues from, and writes the outputs.
func runCmd(args []string, stdout, stderr io.Writer) int {
	f, pos, status, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return status
	}
	p, status, ok := planRun(f, pos, stderr)
	if !ok {
		return status
	}
	// Make sure the outputs can be written before simulating anything.
	o, err := newOutputs(f.out)
	if err != nil {
		return cmdline.UsageError(stderr, "run", "--out: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once

	r := newRunner(ctx, f, p, o, stderr)
	if status, ok := r.prepare(); !ok {
		return status
	}
	if err := r.runPoints(); err != nil {
		return r.fail(err)
	}
	if err := r.stageTraces(); err != nil {
		return r.fail(err)
	}
	if err := r.stageLinks(); err != nil {
		return r.fail(err)
	}
	if err := r.stageResults(); err != nil {
		return r.fail(err)
	}
	status = r.commit()
	if status == exitOK && !f.quiet {
		writeTable(stdout, r.m, r.mine, r.rows) // the table nccl-tests prints (table.go)
	}
	return status
}

// runFlags are the flags of run.
type runFlags struct {
	out                                              string
	quiet, resume, noPlots                           bool
	jobs                                             int
	shard                                            string
	traces, links                                    []string // --trace and --links, each as often as given
	traceRanks, traceWindow, traceFormat, traceLimit string
	nccl                                             ncclFlags // a sweep described by nccl-tests' flags
	args                                             []string  // the command line, for report.html
}

// parseRunFlags parses run's command line and checks what it can without
// reading a file; pos is the scenario file, if one is given.
func parseRunFlags(args []string, stdout, stderr io.Writer) (f *runFlags, pos []string, status int, ok bool) {
	f = &runFlags{args: args}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.out, "out", "", "output directory")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "points run at once")
	fs.StringVar(&f.shard, "shard", "", "run only part I/N of the points")
	fs.BoolVar(&f.resume, "resume", false, "continue an interrupted run")
	fs.BoolVar(&f.noPlots, "no-plots", false, "write no figures")
	fs.Func("trace", "write a timeline of a point", func(s string) error { f.traces = append(f.traces, s); return nil })
	fs.StringVar(&f.traceRanks, "trace-ranks", "", "ranks a trace keeps")
	fs.StringVar(&f.traceWindow, "trace-window", "", "simulated time a trace keeps, FROM:TO")
	fs.StringVar(&f.traceFormat, "trace-format", "perfetto", "perfetto or json")
	fs.StringVar(&f.traceLimit, "trace-limit", "", "largest trace file")
	fs.Func("links", "write the per-link account of a point", func(s string) error { f.links = append(f.links, s); return nil })
	f.nccl.register(fs)
	pos, status, ok = cmdline.ParseCmd("run", fs, args, stdout, stderr)
	if !ok {
		return nil, nil, status, false
	}
	switch {
	case len(pos) == 0 && !f.nccl.given():
		return nil, nil, cmdline.UsageError(stderr, "run", "no scenario file given; or describe a sweep with nccl-tests' flags, such as -b 8 -e 128M -f 2 --world 8"), false
	case len(pos) == 1 && f.nccl.given():
		return nil, nil, cmdline.UsageError(stderr, "run", "%s: a scenario file describes the sweep; leave out %s", pos[0], strings.Join(f.nccl.list(), ", ")), false
	case len(pos) > 1:
		return nil, nil, cmdline.UsageError(stderr, "run", "want one scenario file, got %d arguments: %s", len(pos), strings.Join(pos, " ")), false
	case f.out == "":
		return nil, nil, cmdline.UsageError(stderr, "run", "missing --out DIR"), false
	case f.jobs < 1:
		return nil, nil, cmdline.UsageError(stderr, "run", "--jobs %d: want at least 1", f.jobs), false
	}
	return f, pos, exitOK, true
}

// runPlan is what a run will do: its scenario, points and extra outputs,
// every one checked before anything is simulated.
type runPlan struct {
	sh            shard
	file          string // the scenario's file; for a sweep from flags, the one written to DIR
	s             *scenario.Scenario
	points        []sweep.Point // the scenario's
	mine          []sweep.Point // the shard's
	fromFlags     []byte        // the scenario the flags describe, written to DIR
	topt          traceOptions
	traced        []sweep.Point // the points --trace names
	traceWarnings []string
	linked        []sweep.Point // the points --links names
}

// planRun reads the shard, the scenario (a file, or nccl-tests' flags),
// and the points --trace and --links name. On bad input it reports it and
// returns ok false.
func planRun(f *runFlags, pos []string, stderr io.Writer) (p *runPlan, status int, ok bool) {
	p = &runPlan{}
	var err error
	if p.sh, err = runShard(f.shard); err != nil {
		return nil, cmdline.UsageError(stderr, "run", "%v", err), false
	}
	if len(pos) == 1 {
		p.file = pos[0]
		if p.s, p.points, ok = load(p.file, stderr); !ok {
			return nil, exitUsage, false
		}
		if len(p.s.Sweeps) == 0 && p.s.Workload != nil {
			return nil, cmdline.UsageError(stderr, "run", "%s has a [workload] and no [[sweep]]: run its training step with nexar-sim step", p.file), false
		}
	} else {
		p.file = filepath.Join(f.out, flagsScenarioFile)
		if p.s, p.points, p.fromFlags, err = f.nccl.scenario(p.file, stderr); err != nil {
			return nil, cmdline.UsageError(stderr, "run", "%v", err), false
		}
	}
	if p.topt, err = parseTraceOptions(f.traceRanks, f.traceWindow, f.traceFormat, f.traceLimit); err != nil {
		return nil, cmdline.UsageError(stderr, "run", "%v", err), false
	}
	if p.traced, p.traceWarnings, err = selectTraces(f.traces, p.points, p.topt); err != nil {
		return nil, cmdline.UsageError(stderr, "run", "%v", err), false
	}
	if p.linked, err = selectLinks(f.links, p.points); err != nil {
		return nil, cmdline.UsageError(stderr, "run", "%v", err), false
	}
	p.mine = p.sh.of(p.points)
	return p, exitOK, true
}

// runShard is the shard --shard names or, without it, the shard of a task
// of a Slurm job array.
func runShard(spec string) (shard, error) {
	sh, err := parseShard(spec)
	if err != nil || spec != "" {
		return sh, err
	}
	return shardFromSlurm(os.Getenv)
}

// selectTraces finds the points the --trace specs name, in the order
// given, and checks that each trace fits topt's limit; a point whose trace
// cannot be sized is traced all the same, with a warning.
func selectTraces(specs []string, points []sweep.Point, topt traceOptions) (traced []sweep.Point, warnings []string, err error) {
	for _, spec := range specs {
		p, err := selectPoint("--trace", spec, points)
		if err != nil {
			return nil, nil, err
		}
		est, err := sweep.EstimatePoint(p)
		if err == nil {
			var w string
			if w, err = topt.check(spec, p, est); w != "" {
				warnings = append(warnings, w)
			}
		} else {
			warnings = append(warnings, fmt.Sprintf("the size of the trace of %v cannot be estimated: %v", p, err))
			err = nil
		}
		if err != nil {
			return nil, nil, err
		}
		traced = append(traced, p)
	}
	return traced, warnings, nil
}

// runner is a run under way: its plan, its outputs staged, its progress,
// and the rows computed so far with the checkpoint that keeps them.
type runner struct {
	*runPlan
	flags  *runFlags
	ctx    context.Context // done on the first Ctrl-C or SIGTERM
	stderr io.Writer
	o      *outputs
	m      manifest
	ckPath string
	header ckHeader // the checkpoint's first line: its scenario and shard
	prog   *progress
	rows   []sweep.Row
	done0  int // the rows read from the checkpoint
	costs  *costs
	ck     *checkpoint
	start  time.Time // when the points started running
	notes  []string  // said once the outputs are written
}

// newRunner starts a run of plan p into o, with its manifest, before any
// point has run.
func newRunner(ctx context.Context, f *runFlags, p *runPlan, o *outputs, stderr io.Writer) *runner {
	s := p.s
	m := manifest{Scenario: s.Name, Description: s.Description, File: p.file, Hash: s.Hash, Network: s.Network.Model, NetworkSummary: s.Network.Summary,
		LinkBandwidth: finiteBandwidth(s.Network.LinkBandwidth), Transport: s.Network.Transport, Shard: p.sh.i, Shards: p.sh.n, Points: len(p.points)}
	if cl, err := s.Network.NCCLCluster(); err == nil {
		m.NCCLCluster = &cl
	}
	return &runner{runPlan: p, flags: f, ctx: ctx, stderr: stderr, o: o, m: m,
		ckPath: filepath.Join(f.out, checkpointFile),
		header: ckHeader{hash: s.Hash, shard: p.sh.String(), name: s.Name},
		prog:   newProgress(stderr, f.quiet, 0, len(p.mine))}
}

// prepare readies the points to run: it reads the rows --resume continues
// from, weighs the points, and starts the checkpoint. On failure DIR is
// left as it was, and ok is false.
func (r *runner) prepare() (status int, ok bool) {
	if r.flags.resume {
		if err := r.resumeRows(); err != nil {
			r.o.abort()
			return cmdline.UsageError(r.stderr, "run", "--resume: %v", err), false
		}
	}
	r.done0 = len(r.rows)
	if !r.weigh() {
		r.prog.finish()
		r.o.abort()
		fmt.Fprintf(r.stderr, "nexar-sim run: interrupted while estimating the points, after %d of %d points; run again with --resume to continue\n", r.done0, len(r.mine))
		return exitInterrupted, false
	}
	var err error
	if r.ck, err = writeCheckpoint(r.ckPath, r.header.String(), r.rows); err != nil {
		r.prog.finish()
		r.o.abort()
		if len(r.rows) > 0 {
			err = fmt.Errorf("%v (the checkpoint of the %d rows computed before is left as it was)", err, len(r.rows))
		}
		return cmdline.UsageError(r.stderr, "run", "--out: %v", err), false
	}
	return exitOK, true
}

// resumeRows reads the rows of the checkpoint in DIR. Without one the run
// starts from the first point and says so; the error is for a checkpoint
// that is not of this run (another scenario or shard, rows of other
// points), which the run would replace, and for a DIR that holds
// nexar-live's results.
func (r *runner) resumeRows() error {
	if _, err := os.Stat(r.ckPath); errors.Is(err, os.ErrNotExist) {
		if err := notResumed(r.flags.out); err != nil {
			return err
		}
	}
	var err error
	r.rows, err = readCheckpoint(r.ckPath, r.header, r.mine)
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.prog.line("nexar-sim: no checkpoint in %s; starting from the first point", r.flags.out)
	case err != nil:
		return fmt.Errorf("%v; run without --resume to start over (the checkpoint is then replaced), or give another --out", err)
	default:
		r.prog.line("nexar-sim: resuming after %d of %d points", len(r.rows), len(r.mine))
	}
	return nil
}

// weigh estimates what the points will cost, before they run: for the
// progress bar, and to warn of points that may not fit in memory or run
// for hours. It returns false if interrupted.
func (r *runner) weigh() bool {
	c, ok := estimateCtx(r.ctx, r.mine, r.flags.jobs)
	if !ok {
		return false
	}
	r.costs = c
	r.prog.step(r.done0)
	r.prog.weigh(r.mine, c, r.flags.jobs)
	r.announce()
	for _, w := range append(c.warnings(r.s, r.file, r.flags.jobs), r.traceWarnings...) {
		fmt.Fprintf(r.stderr, "nexar-sim: warning: %s\n", w)
	}
	return true
}

// announce says, before any point runs, what each sweep and the whole
// run will cost by the estimates.
func (r *runner) announce() {
	for _, rg := range sweepRanges(r.mine) {
		sw := r.s.Sweeps[r.mine[rg[0]].Sweep]
		r.prog.line("nexar-sim: sweep %d/%d (%s:%d): %s: %s", sw.Index+1, len(r.s.Sweeps), r.file, sw.Line, describe(sw, rg[1]-rg[0]), r.costs.sweepLine(rg[0], rg[1]))
	}
	left := r.mine[r.done0:]
	if len(left) == 0 {
		return
	}
	secs := r.costs.seconds()[r.done0:]
	var sum, longest float64
	for _, s := range secs {
		sum += s
		longest = max(longest, s)
	}
	wall := max(sum/float64(min(r.flags.jobs, len(left))), longest)
	r.prog.line("nexar-sim: %d point(s) to run, %d at a time: roughly %s on this machine by the estimates", len(left), min(r.flags.jobs, len(left)), seconds(wall))
}

// interruption is an error that ends a run on a signal: the text says
// how far it went.
type interruption string

func (i interruption) Error() string { return string(i) }

// runPoints runs the points not yet done, adding each row to the
// checkpoint as it comes.
func (r *runner) runPoints() error {
	r.start = time.Now()
	// The sweeps and their costs were announced before any point ran.
	opt := sweep.Options{
		Jobs:     r.flags.jobs,
		Done:     func(done, _ int) { r.prog.step(r.done0 + done) },
		Progress: func(i int, pr sweep.PointProgress) { r.prog.point(r.done0+i, pr) },
	}
	if r.sh.n > 1 {
		r.prog.line("nexar-sim: shard %s: %d of the scenario's %d points", r.sh, len(r.mine), len(r.points))
	}
	err := sweep.Run(r.ctx, r.mine[r.done0:], opt, func(row sweep.Row) error {
		if row.Recovery != nil {
			r.prog.line("nexar-sim: %s/%s: %v; later points run on %d ranks", row.Collective, row.Algorithm, row.Recovery, row.Recovery.World-1)
		}
		if row.Join != nil {
			r.prog.line("nexar-sim: %s/%s: %v; later points run on up to %d ranks", row.Collective, row.Algorithm, row.Join, row.Join.World+row.Join.Joined)
		}
		r.rows = append(r.rows, row)
		return r.ck.add(row)
	})
	if err != nil && r.ctx.Err() != nil {
		return interruption(fmt.Sprintf("interrupted after %d of %d points; run again with --resume to continue", len(r.rows), len(r.mine)))
	}
	if line := symmetryLine(r.rows[r.done0:]); err == nil && line != "" {
		r.prog.line("%s", line)
	}
	return err
}

// symmetryLine says how many of rows were simulated as one rank for all
// (sweep.Row.Symmetry), by group; "" if none.
func symmetryLine(rows []sweep.Row) string {
	var cyclic, xor int
	for _, row := range rows {
		switch row.Symmetry {
		case "cyclic":
			cyclic++
		case "xor":
			xor++
		}
	}
	if cyclic+xor == 0 {
		return ""
	}
	return fmt.Sprintf("nexar-sim: %d of %d point(s) simulated one rank for all, which the simulator proved exact (groups: cyclic %d, xor %d); symmetry = \"off\" in a sweep runs every rank",
		cyclic+xor, len(rows), cyclic, xor)
}

// interruptedWriting is the end of a run that a signal came to after its
// points ran, while writing what: the checkpoint has them all.
func (r *runner) interruptedWriting(what string) error {
	return interruption(fmt.Sprintf("interrupted while writing %s, after all %d points; run again with --resume to finish", what, len(r.mine)))
}

// stageTraces simulates each point --trace names once more and stages
// its trace.
func (r *runner) stageTraces() error {
	for _, p := range r.traced {
		if err := writeTrace(r.ctx, r.o, p, r.topt, r.prog); err != nil {
			if r.ctx.Err() != nil {
				return r.interruptedWriting("traces")
			}
			return fmt.Errorf("trace of %v: %v", p, err)
		}
	}
	return nil
}

// stageLinks stages links.csv, the per-link accounts of the points
// --links names.
func (r *runner) stageLinks() error {
	if len(r.linked) == 0 {
		return nil
	}
	if err := writeLinks(r.ctx, r.o, r.linked); err != nil {
		if r.ctx.Err() != nil {
			return r.interruptedWriting("links.csv")
		}
		return err
	}
	return nil
}

// stageResults stages results.csv, the scenario a sweep from flags was
// described by, and, for a whole run (not a shard), the report and the
// figures.
func (r *runner) stageResults() error {
	var err error
	r.m.Rows = len(r.rows)
	if r.m.Changes, err = changesOf(r.rows); err != nil {
		return err
	}
	if r.fromFlags != nil {
		if err := r.o.write(flagsScenarioFile, func(w io.Writer) error { _, err := w.Write(r.fromFlags); return err }); err != nil {
			return err
		}
	}
	if err := writeCSV(r.o, r.rows); err != nil {
		return err
	}
	if r.sh.n == 1 {
		if r.notes, err = writeFull(r.o, r.m, r.rows, r.flags.noPlots); err != nil {
			return err
		}
		if err := stageReport(r.o, r.m, "run", r.flags.args, r.notes); err != nil { // report.html (jsonout.go)
			return err
		}
	}
	if r.ctx.Err() != nil {
		return r.interruptedWriting("the outputs")
	}
	return nil
}

// fail ends the run without its outputs; the checkpoint stays, with
// every row computed, whatever went wrong.
func (r *runner) fail(err error) int {
	status := exitFailed
	var i interruption
	if errors.As(err, &i) {
		status = exitInterrupted
	}
	r.prog.finish()
	r.ck.Close()
	if r.ck.rows == 0 && status != exitInterrupted {
		os.Remove(r.ckPath) // nothing to keep: leave DIR as it was
	}
	r.o.abort()
	fmt.Fprintf(r.stderr, "nexar-sim run: %v\n", err)
	if status != exitInterrupted && r.ck.rows > 0 {
		fmt.Fprintf(r.stderr, "nexar-sim run: the %d rows computed are kept in %s: run again with --resume to continue\n", r.ck.rows, r.ckPath)
	}
	return status
}

// commit puts the staged outputs and the manifest in place, removes the
// checkpoint, and says what was written.
func (r *runner) commit() int {
	r.prog.finish()
	if err := r.o.commit(r.m); err != nil {
		r.ck.Close()
		fmt.Fprintf(r.stderr, "nexar-sim run: %v\n", err)
		fmt.Fprintf(r.stderr, "nexar-sim run: the %d rows computed are kept in %s: run again with --resume to continue\n", r.ck.rows, r.ckPath)
		return exitFailed
	}
	r.ck.Close()
	os.Remove(r.ckPath)
	if !r.flags.quiet {
		for _, n := range r.notes {
			fmt.Fprintf(r.stderr, "nexar-sim: note: %s\n", n)
		}
		if r.sh.n > 1 {
			fmt.Fprintf(r.stderr, "nexar-sim: shard %s done; join the shards with 'nexar-sim merge --out DIR SHARD_DIR...'\n", r.sh)
		}
		fmt.Fprintf(r.stderr, "nexar-sim: wrote %s: %s; %d row(s) in %.2fs\n", r.flags.out, strings.Join(r.o.files, ", "), len(r.rows), time.Since(r.start).Seconds())
	}
	return exitOK
}

// describe summarizes a sweep for a progress line.
func describe(sw *scenario.Sweep, points int) string {
	names := make([]string, len(sw.Variants))
	for i, v := range sw.Variants {
		names[i] = v.Name
	}
	types := make([]string, len(sw.DTypes))
	for i, dt := range sw.DTypes {
		types[i] = dt.String()
	}
	t := strings.Join(types, ",")
	if sw.Collective.Reduces {
		t += " " + sw.Op.String()
	}
	rep := ""
	if sw.Repeat > 1 {
		rep = fmt.Sprintf(", %d repeats", sw.Repeat)
	}
	return fmt.Sprintf("%s %s, %d world size(s) x %d message size(s), %s %s%s: %d point(s)",
		sw.Collective.Name, strings.Join(names, ","), len(sw.World), len(sw.Bytes), t, sw.Data, rep, points)
}

// writeTrace simulates p once more, recording what topt keeps of it, and
// stages its trace; a trace that passes --trace-limit is not written, and
// prog says so.
func writeTrace(ctx context.Context, o *outputs, p sweep.Point, topt traceOptions, prog *progress) error {
	rec := trace.NewFilteredRecorder(topt.filter())
	res, err := sweep.RunOnceWith(p, p.Seed, sweep.RunOptions{Context: ctx, Observer: rec})
	if err != nil {
		return err
	}
	if rec.Over() {
		prog.line("nexar-sim: warning: the trace of %v is not written: it passed --trace-limit %s with %d messages kept; keep fewer ranks (--trace-ranks), a shorter window (--trace-window), or raise the limit",
			p, bytesOf(topt.limit), rec.Messages())
		return nil
	}
	args := [][2]string{
		{"network", fmt.Sprintf("%+v", p.Model(p.Seed))},
		{"seed", strconv.FormatUint(p.Seed, 10)},
		{"time", res.End.String()},
	}
	if topt.ranks != nil {
		args = append(args, [2]string{"ranks", topt.rankSpec})
	}
	if topt.window {
		args = append(args, [2]string{"window", fmt.Sprintf("%v:%v", topt.from, topt.to)})
	}
	meta := trace.Meta{Title: p.String(), World: p.World, Args: args}
	return o.write(traceName(p, topt.format), func(w io.Writer) error { return rec.Write(w, topt.format, meta) })
}

// linksFile names the per-link account that --links writes.
const linksFile = "links.csv"

// selectLinks finds the points the --links specs name, in plan order and
// each once, whatever order the flags come in, so that links.csv depends
// only on which points were asked. It checks that each point's network
// keeps a per-link account, building the network but simulating nothing,
// so that a point without links is refused before the sweep runs.
func selectLinks(specs []string, points []sweep.Point) ([]sweep.Point, error) {
	var out []sweep.Point
	for _, spec := range specs {
		p, err := selectPoint("--links", spec, points)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(q sweep.Point) bool { return q.Index == p.Index }) {
			continue
		}
		if err := p.CheckLinks(); err != nil {
			return nil, fmt.Errorf("--links %s: %v: %v", spec, p, err)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b sweep.Point) int { return a.Index - b.Index })
	return out, nil
}

// writeLinks simulates each point once more and stages links.csv, their
// per-link accounts.
func writeLinks(ctx context.Context, o *outputs, points []sweep.Point) error {
	accounts := make([]*sweep.Links, 0, len(points))
	for _, p := range points {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := sweep.RunLinks(p)
		if err != nil {
			return fmt.Errorf("links of %w", err)
		}
		accounts = append(accounts, a)
	}
	return o.write(linksFile, func(w io.Writer) error { return sweep.WriteLinksCSV(w, accounts) })
}

// checkpoint appends rows to the checkpoint file as they come.
type checkpoint struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	cw   *results.Writer
	rows int // rows written out whole
}

// writeCheckpoint starts a checkpoint at path with rows already done: a
// new file beside it, renamed into place once it holds them all, so that
// a checkpoint that was there (the one --resume read them from) stays
// whole if they cannot be written.
func writeCheckpoint(path, header string, rows []sweep.Row) (c *checkpoint, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	c = &checkpoint{path: path, f: f, bw: bufio.NewWriter(f)}
	c.cw = newResultsWriter(c.bw)
	fmt.Fprintln(c.bw, header)
	if err := c.cw.WriteHeader(); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := c.write(r); err != nil {
			return nil, err
		}
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	c.rows = len(rows)
	if err := f.Chmod(0o644); err != nil { // CreateTemp's is private; os.Create's was not
		return nil, err
	}
	// The rows appended from now on go to the file renamed.
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *checkpoint) flush() error {
	err := c.cw.Flush()
	if err == nil {
		err = c.bw.Flush()
	}
	// Name the checkpoint, not the file it was written as first.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = c.path
	}
	return err
}

// add appends r, and writes it out, so that an interrupted run keeps it.
func (c *checkpoint) add(r sweep.Row) error {
	if err := c.write(r); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	c.rows++
	return nil
}

// changePrefix starts a checkpoint line that holds the world change
// (sweep.Row.EncodeChange) of the row on the next line: written before
// the row, so that a line cut short by an interruption loses both.
const changePrefix = "#change "

// write writes r, after its world change if it has one.
func (c *checkpoint) write(r sweep.Row) error {
	ch, err := r.EncodeChange()
	if err != nil || ch == nil {
		if err == nil {
			err = c.cw.Write(r.Row)
		}
		return err
	}
	if err := c.cw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.bw, "%s%s\n", changePrefix, ch)
	return c.cw.Write(r.Row)
}

func (c *checkpoint) Close() error { return c.f.Close() }

// readCheckpoint reads the rows of an interrupted run of the same
// scenario and shard, checking that they are those of the first points.
func readCheckpoint(path string, header ckHeader, points []sweep.Point) ([]sweep.Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	if h, ok := parseCkHeader(first); !ok || h.hash != header.hash || h.shard != header.shard {
		return nil, foreignCheckpoint(filepath.Dir(path), first, header)
	}
	// Set the world changes apart: each belongs to the row after it.
	var table strings.Builder
	changes := map[int]string{}
	n := 0
	for _, line := range strings.SplitAfter(rest, "\n") {
		if ch, ok := strings.CutPrefix(line, changePrefix); ok {
			changes[n-1] = ch
			continue
		}
		table.WriteString(line)
		n++
	}
	rest = table.String()
	rows, err := sweep.ReadCSV(strings.NewReader(rest))
	if err != nil {
		// The last line may be cut short by the interruption: keep the
		// rows before it.
		rows, err = readLeadingRows(rest)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %v", path, err)
		}
	}
	for i := range rows {
		if ch, ok := changes[i]; ok {
			if err := rows[i].DecodeChange([]byte(ch)); err != nil {
				return nil, fmt.Errorf("checkpoint %s: %v", path, err)
			}
		}
	}
	if len(rows) > len(points) {
		return nil, fmt.Errorf("the checkpoint in %s has more rows than points", filepath.Dir(path))
	}
	for i, r := range rows {
		p := points[i]
		// The row of a shrinking failure's point reports the survivors'
		// run, on one rank fewer when it cost the work; it and a join's
		// row need their world change (a checkpoint without is older).
		world := r.World == p.World || p.Shrink != nil && r.World == p.World-1
		changed := (p.Shrink != nil) == (r.Recovery != nil) && (p.Join != nil) == (r.Join != nil)
		if r.Collective != p.Collective.Name || r.Algorithm != p.VariantName() || !world || !changed || r.Bytes != p.UsedBytes() || r.DType != p.DType.String() {
			return nil, fmt.Errorf("row %d of the checkpoint in %s is not of point %v", i+1, filepath.Dir(path), p)
		}
	}
	return rows, nil
}

// readLeadingRows reads the complete lines of a results file.
func readLeadingRows(text string) ([]sweep.Row, error) {
	lines := strings.SplitAfter(text, "\n")
	for n := len(lines) - 1; n >= 1; n-- {
		rows, err := sweep.ReadCSV(strings.NewReader(strings.Join(lines[:n], "")))
		if err == nil {
			return rows, nil
		}
	}
	return nil, errors.New("no complete rows")
}
