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

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("out", "", "output directory")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fs.BoolVar(quiet, "q", false, "no progress on stderr")
	jobs := fs.Int("jobs", runtime.NumCPU(), "points run at once")
	shardFlag := fs.String("shard", "", "run only part I/N of the points")
	resume := fs.Bool("resume", false, "continue an interrupted run")
	noPlots := fs.Bool("no-plots", false, "write no figures")
	var traces []string
	fs.Func("trace", "write a timeline of a point", func(s string) error { traces = append(traces, s); return nil })
	traceRanks := fs.String("trace-ranks", "", "ranks a trace keeps")
	traceWindow := fs.String("trace-window", "", "simulated time a trace keeps, FROM:TO")
	traceFormat := fs.String("trace-format", "perfetto", "perfetto or json")
	traceLimit := fs.String("trace-limit", "", "largest trace file")
	var links []string
	fs.Func("links", "write the per-link account of a point", func(s string) error { links = append(links, s); return nil })
	var nf ncclFlags
	nf.register(fs)
	pos, status, ok := cmdline.ParseCmd("run", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(pos) == 0 && !nf.given():
		return cmdline.UsageError(stderr, "run", "no scenario file given; or describe a sweep with nccl-tests' flags, such as -b 8 -e 128M -f 2 --world 8")
	case len(pos) == 1 && nf.given():
		return cmdline.UsageError(stderr, "run", "%s: a scenario file describes the sweep; leave out %s", pos[0], strings.Join(nf.list(), ", "))
	case len(pos) > 1:
		return cmdline.UsageError(stderr, "run", "want one scenario file, got %d arguments: %s", len(pos), strings.Join(pos, " "))
	case *out == "":
		return cmdline.UsageError(stderr, "run", "missing --out DIR")
	case *jobs < 1:
		return cmdline.UsageError(stderr, "run", "--jobs %d: want at least 1", *jobs)
	}
	sh, err := parseShard(*shardFlag)
	if err != nil {
		return cmdline.UsageError(stderr, "run", "%v", err)
	}
	if *shardFlag == "" {
		if sh, err = shardFromSlurm(os.Getenv); err != nil {
			return cmdline.UsageError(stderr, "run", "%v", err)
		}
	}
	var file string
	var s *scenario.Scenario
	var points []sweep.Point
	var fromFlags []byte // the scenario the flags describe, written to DIR
	if len(pos) == 1 {
		file = pos[0]
		if s, points, ok = load(file, stderr); !ok {
			return exitUsage
		}
		if len(s.Sweeps) == 0 && s.Workload != nil {
			return cmdline.UsageError(stderr, "run", "%s has a [workload] and no [[sweep]]: run its training step with nexar-sim step", file)
		}
	} else {
		file = filepath.Join(*out, flagsScenarioFile)
		if s, points, fromFlags, err = nf.scenario(file, stderr); err != nil {
			return cmdline.UsageError(stderr, "run", "%v", err)
		}
	}
	topt, err := parseTraceOptions(*traceRanks, *traceWindow, *traceFormat, *traceLimit)
	if err != nil {
		return cmdline.UsageError(stderr, "run", "%v", err)
	}
	var traced []sweep.Point
	var traceWarnings []string
	for _, spec := range traces {
		p, err := selectPoint("--trace", spec, points)
		if err != nil {
			return cmdline.UsageError(stderr, "run", "%v", err)
		}
		est, err := sweep.EstimatePoint(p)
		if err == nil {
			var w string
			if w, err = topt.check(spec, p, est); w != "" {
				traceWarnings = append(traceWarnings, w)
			}
		} else {
			traceWarnings = append(traceWarnings, fmt.Sprintf("the size of the trace of %v cannot be estimated: %v", p, err))
			err = nil
		}
		if err != nil {
			return cmdline.UsageError(stderr, "run", "%v", err)
		}
		traced = append(traced, p)
	}
	linked, err := selectLinks(links, points)
	if err != nil {
		return cmdline.UsageError(stderr, "run", "%v", err)
	}
	mine := sh.of(points)

	// Make sure the outputs can be written before simulating anything.
	o, err := newOutputs(*out)
	if err != nil {
		return cmdline.UsageError(stderr, "run", "--out: %v", err)
	}
	m := manifest{Scenario: s.Name, Description: s.Description, File: file, Hash: s.Hash, Network: s.Network.Model, NetworkSummary: s.Network.Summary,
		LinkBandwidth: s.Network.LinkBandwidth, Transport: s.Network.Transport, Shard: sh.i, Shards: sh.n, Points: len(points)}
	if cl, err := s.Network.NCCLCluster(); err == nil {
		m.NCCLCluster = &cl
	}
	ckPath := filepath.Join(*out, checkpointFile)
	header := fmt.Sprintf("%s hash=%s shard=%s", checkpointMagic, s.Hash, sh)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once

	prog := newProgress(stderr, *quiet, 0, len(mine))
	var rows []sweep.Row
	if *resume {
		if _, err := os.Stat(ckPath); errors.Is(err, os.ErrNotExist) {
			if err := notResumed(*out); err != nil {
				o.abort()
				return cmdline.UsageError(stderr, "run", "--resume: %v", err)
			}
		}
		rows, err = readCheckpoint(ckPath, header, mine)
		switch {
		case errors.Is(err, os.ErrNotExist):
			prog.line("nexar-sim: no checkpoint in %s; starting from the first point", *out)
		case err != nil:
			prog.line("nexar-sim: %v; starting from the first point", err)
		default:
			prog.line("nexar-sim: resuming after %d of %d points", len(rows), len(mine))
		}
	}
	interrupted := func(what string) int {
		prog.finish()
		o.abort()
		fmt.Fprintf(stderr, "nexar-sim run: interrupted %s; run again with --resume to continue\n", what)
		return exitInterrupted
	}
	// What the points will cost, before they run: for the progress bar,
	// and to warn of points that may not fit in memory or run for hours.
	done0 := len(rows)
	c, ok := estimateCtx(ctx, mine, *jobs)
	if !ok {
		return interrupted(fmt.Sprintf("while estimating the points, after %d of %d points", done0, len(mine)))
	}
	for _, w := range append(c.warnings(s, file, *jobs), traceWarnings...) {
		fmt.Fprintf(stderr, "nexar-sim: warning: %s\n", w)
	}
	prog.step(done0)
	prog.weigh(mine, c)

	ck, err := writeCheckpoint(ckPath, header, rows)
	if err != nil {
		prog.finish()
		o.abort()
		if len(rows) > 0 {
			err = fmt.Errorf("%v (the checkpoint of the %d rows computed before is left as it was)", err, len(rows))
		}
		return cmdline.UsageError(stderr, "run", "--out: %v", err)
	}
	// fail ends the run without its outputs; the checkpoint stays, with
	// every row computed, whatever went wrong.
	fail := func(status int, format string, args ...any) int {
		prog.finish()
		ck.Close()
		if ck.rows == 0 && status != exitInterrupted {
			os.Remove(ckPath) // nothing to keep: leave DIR as it was
		}
		o.abort()
		fmt.Fprintf(stderr, "nexar-sim run: "+format+"\n", args...)
		if status != exitInterrupted && ck.rows > 0 {
			fmt.Fprintf(stderr, "nexar-sim run: the %d rows computed are kept in %s: run again with --resume to continue\n", ck.rows, ckPath)
		}
		return status
	}
	start := time.Now()
	ranges := sweepRanges(mine)
	opt := sweep.Options{
		Jobs: *jobs,
		Sweep: func(i int, pts []sweep.Point) {
			cost := ""
			for _, r := range ranges {
				if mine[r[0]].Sweep == i {
					cost = ": " + c.sweepLine(r[0], r[1])
				}
			}
			prog.line("nexar-sim: sweep %d/%d (%s:%d): %s%s", i+1, len(s.Sweeps), file, s.Sweeps[i].Line, describe(s.Sweeps[i], len(pts)), cost)
		},
		Done:     func(done, _ int) { prog.step(done0 + done) },
		Progress: func(i int, pr sweep.PointProgress) { prog.point(done0+i, pr) },
	}
	if sh.n > 1 {
		prog.line("nexar-sim: shard %s: %d of the scenario's %d points", sh, len(mine), len(points))
	}
	err = sweep.Run(ctx, mine[done0:], opt, func(r sweep.Row) error {
		if r.Recovery != nil {
			prog.line("nexar-sim: %s/%s: %v; later points run on %d ranks", r.Collective, r.Algorithm, r.Recovery, r.Recovery.World-1)
		}
		if r.Join != nil {
			prog.line("nexar-sim: %s/%s: %v; later points run on up to %d ranks", r.Collective, r.Algorithm, r.Join, r.Join.World+r.Join.Joined)
		}
		rows = append(rows, r)
		return ck.add(r)
	})
	if err != nil {
		if ctx.Err() != nil {
			return fail(exitInterrupted, "interrupted after %d of %d points; run again with --resume to continue", len(rows), len(mine))
		}
		return fail(exitFailed, "%v", err)
	}
	// Interrupted after the points ran: the checkpoint has them all.
	afterPoints := func() bool { return ctx.Err() != nil }
	for _, p := range traced {
		if err := writeTrace(ctx, o, p, topt, prog); err != nil {
			if afterPoints() {
				return fail(exitInterrupted, "interrupted while writing traces, after all %d points; run again with --resume to finish", len(mine))
			}
			return fail(exitFailed, "trace of %v: %v", p, err)
		}
	}
	if len(linked) > 0 {
		if err := writeLinks(ctx, o, linked); err != nil {
			if afterPoints() {
				return fail(exitInterrupted, "interrupted while writing links.csv, after all %d points; run again with --resume to finish", len(mine))
			}
			return fail(exitFailed, "%v", err)
		}
	}
	m.Rows = len(rows)
	if m.Changes, err = changesOf(rows); err != nil {
		return fail(exitFailed, "%v", err)
	}
	if fromFlags != nil {
		if err := o.write(flagsScenarioFile, func(w io.Writer) error { _, err := w.Write(fromFlags); return err }); err != nil {
			return fail(exitFailed, "%v", err)
		}
	}
	if err := writeCSV(o, rows); err != nil {
		return fail(exitFailed, "%v", err)
	}
	var notes []string
	if sh.n == 1 {
		if notes, err = writeFull(o, m, rows, *noPlots); err != nil {
			return fail(exitFailed, "%v", err)
		}
	}
	if afterPoints() {
		return fail(exitInterrupted, "interrupted while writing the outputs, after all %d points; run again with --resume to finish", len(mine))
	}
	prog.finish()
	if err := o.commit(m); err != nil {
		ck.Close()
		fmt.Fprintf(stderr, "nexar-sim run: %v\n", err)
		fmt.Fprintf(stderr, "nexar-sim run: the %d rows computed are kept in %s: run again with --resume to continue\n", ck.rows, ckPath)
		return exitFailed
	}
	ck.Close()
	os.Remove(ckPath)
	if !*quiet {
		for _, n := range notes {
			fmt.Fprintf(stderr, "nexar-sim: note: %s\n", n)
		}
		if sh.n > 1 {
			fmt.Fprintf(stderr, "nexar-sim: shard %s done; join the shards with 'nexar-sim merge --out DIR SHARD_DIR...'\n", sh)
		}
		fmt.Fprintf(stderr, "nexar-sim: wrote %s: %s; %d row(s) in %.2fs\n", *out, strings.Join(o.files, ", "), len(rows), time.Since(start).Seconds())
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
func readCheckpoint(path, header string, points []sweep.Point) ([]sweep.Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	if first != header {
		return nil, fmt.Errorf("the checkpoint in %s is of another scenario or shard", filepath.Dir(path))
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
