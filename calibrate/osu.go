package calibrate

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

var (
	// osuTitle is the first line of every OSU benchmark's output: "# OSU
	// MPI Allreduce Latency Test v7.3", "# OSU MPI Latency Test
	// (Version 2.0)".
	osuTitle    = regexp.MustCompile(`^#\s*OSU\s+(.+?)\s+Test\b`)
	osuDatatype = regexp.MustCompile(`(?i)^#\s*Datatype:\s*(MPI_\w+)`)
	osuWindow   = regexp.MustCompile(`(?i)window size\s*:?\s*(\d+)`)
	osuHeader   = regexp.MustCompile(`(?i)^#\s*(Size\b|Avg Latency|Latency)`)
	osuSize     = regexp.MustCompile(`(?i)^#\s*Size\b`)
	// osuFamilies are the first words of the titles of OSU's MPI and
	// GPU-library benchmarks; OpenSHMEM's, UPC's and the one-sided ones
	// have others.
	osuFamilies = map[string]bool{"mpi": true, "mpi-cuda": true, "mpi-rocm": true, "mpi-openacc": true, "mpi-hip": true, "nccl": true, "rccl": true, "ucc": true}
)

// ReadOSU reads the output of the OSU micro-benchmarks: the collectives
// (osu_allreduce, osu_bcast, ... with or without -f, whose average
// latency is taken) as collective samples, osu_latency, osu_bw and
// osu_bibw as PointToPoint samples, one per size.
//
// A file may be a suite (several benchmarks one after the other, as the
// suite's scripts and Spack's tests print them): each title ("# OSU MPI
// Allreduce Latency Test v7.3") begins a run, read on its own; the
// benchmarks nexar-go does not model (one-sided, message rate,
// non-blocking, vector variants, start-up) are skipped, and a note names
// each and says why. Lines are cleaned as ReadNCCLTests cleans them.
//
// OSU does not print the number of ranks: it comes from opt.World, else
// from the launcher's command line before the run (mpirun -np 4, srun -n
// 4 or -N 2 --ntasks-per-node=2), and is 2 for the point-to-point
// benchmarks. The element type comes from the "# Datatype: MPI_FLOAT."
// line (version 7 on), else from a -T flag on the command line, else
// opt.DType, else what version 5 and before used: MPI_FLOAT for
// allreduce, reduce and reduce_scatter, bytes (MPI_CHAR) for the others.
// OSU's sizes are converted to nccl-tests' convention, the whole buffer:
// for allgather, gather and scatter OSU's size is one rank's block, and
// for alltoall the block sent to each rank, so they are multiplied by the
// world size. Bandwidths (MB/s, 10^6 bytes) become times per message:
// size / bandwidth for osu_bw, 2 size / bandwidth for osu_bibw.
//
// A log whose "#" lines were lost (rows of numbers only) is read when
// the benchmark is known from a command line before the rows, from
// opt.Collective ("allreduce", "osu_latency") or from the file's name.
func ReadOSU(file string, r io.Reader, opt LogOptions) (*Log, error) {
	p := &osuReader{log: &Log{File: file, Format: FormatOSU}, opt: opt}
	if err := scanLines(file, r, p.readLine); err != nil {
		return nil, err
	}
	if err := p.endRun(); err != nil {
		return nil, err
	}
	if len(p.log.Runs) == 0 {
		if p.unsupported != nil {
			return nil, p.unsupported
		}
		return nil, &LogError{file, p.line, "no OSU results: want an \"# OSU ... Test\" title, a \"# Size  Avg Latency(us)\" header and rows of numbers under it"}
	}
	return p.log, nil
}

// osuReader is the state of ReadOSU.
type osuReader struct {
	log     *Log
	opt     LogOptions
	line    int
	pending hints
	run     *osuRun
	// unsupported is the error of the first benchmark skipped, returned
	// if nothing else could be read.
	unsupported error
}

// osuRun is a run being read.
type osuRun struct {
	line int
	// title is the benchmark's title ("" for a log without one);
	// collective and bench what it is (bench for point-to-point ones);
	// skip, if set, says why it is not read.
	title, collective, bench, skip string
	hints                          hints
	dtype                          string
	dtypeLine                      int
	// header is set once the column header is read: noSize for the
	// barrier's (a latency and no size).
	header, noSize bool
	window         int
	rows           []osuRow
	cut, bad       []int
}

type osuRow struct {
	line  int
	size  int64
	value float64
}

func (p *osuReader) readLine(l string, n int) error {
	p.line = n
	if l == "" {
		return nil
	}
	if m := osuTitle.FindStringSubmatch(l); m != nil {
		if err := p.endRun(); err != nil {
			return err
		}
		p.run = &osuRun{line: p.line, title: strings.TrimSpace(strings.TrimPrefix(l, "#")), hints: p.pending}
		p.pending = p.pending.next()
		p.run.collective, p.run.bench, p.run.skip = osuBenchmark(m[1])
		return nil
	}
	run := p.run
	if strings.HasPrefix(l, "#") {
		if run == nil {
			p.hint(l)
			return nil
		}
		if batchDirective.MatchString(l) {
			p.hint(l)
			return nil
		}
		switch {
		case osuDatatype.MatchString(l):
			run.dtype, run.dtypeLine = osuDatatype.FindStringSubmatch(l)[1], p.line
		case osuHeader.MatchString(l):
			run.header = true
			run.noSize = !osuSize.MatchString(l)
		case osuWindow.MatchString(l):
			run.window, _ = strconv.Atoi(osuWindow.FindStringSubmatch(l)[1])
		}
		return nil
	}
	f := strings.Fields(l)
	if run != nil && run.header && run.noSize {
		if v, ok := parseNumber(f[0]); ok && len(f) <= 4 {
			run.rows = append(run.rows, osuRow{line: p.line, value: v})
			run.header = false // one row: the barrier's latency
			return nil
		}
	}
	if !isCount(f[0]) || len(f) > 6 {
		if p.hint(l) && run != nil && len(run.rows) > 0 {
			// A command line after a run's rows: what follows is
			// another run (with its title, or rows of its own).
			return p.endRun()
		}
		return nil
	}
	if run == nil || (!run.header && run.title != "" && len(run.rows) == 0) {
		if run != nil && run.title != "" {
			// Numbers under a title but no header: the header line
			// was lost; the layout is OSU's all the same.
			run.header = true
		} else {
			// Rows with no title before them: a log whose "#" lines
			// were lost.
			if err := p.endRun(); err != nil {
				return err
			}
			p.run = &osuRun{line: p.line, hints: p.pending, header: true}
			p.pending = p.pending.next()
			run = p.run
			if err := p.untitled(run); err != nil {
				return err
			}
		}
	}
	if len(f) < 2 {
		run.cut = append(run.cut, p.line)
		return nil
	}
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || size > 1<<50 {
		return &LogError{p.log.File, p.line, fmt.Sprintf("size %q: want a number of bytes", f[0])}
	}
	v, ok := parseNumber(f[1])
	if !ok {
		run.bad = append(run.bad, p.line)
		return nil
	}
	run.rows = append(run.rows, osuRow{line: p.line, size: size, value: v})
	return nil
}

// hint reads what a line that is not OSU's says about the runs that
// follow, and reports whether it starts one: a command line, or a line
// naming a benchmark's binary.
func (p *osuReader) hint(l string) bool {
	p.pending.scan(l, p.line)
	return isCommandLine(l) || p.pending.benchmarkLine == p.line
}

// untitled names the benchmark of rows with no title: from a command
// line before them, opt.Collective or the file's name.
func (p *osuReader) untitled(run *osuRun) error {
	name, from := run.hints.benchmark, fmt.Sprintf("line %d", run.hints.benchmarkLine)
	if p.opt.Collective != "" {
		name, from = p.opt.Collective, "given"
	}
	if name == "" {
		if name = fromFileName(p.log.File); name != "" {
			from = "the file's name"
		}
	}
	if name == "" {
		return &LogError{p.log.File, p.line, "rows of numbers with no OSU title before them (a log whose \"#\" lines were lost): name the benchmark (allreduce, osu_latency, osu_bw, ...)"}
	}
	c, b, ok := benchmarkName(name)
	if !ok && from == "given" {
		return &LogError{p.log.File, p.line, fmt.Sprintf("benchmark %q (%s) is not one nexar-go models", name, from)}
	}
	if !ok {
		// A benchmark of a suite that nexar-go does not model (a
		// message rate, a non-blocking or one-sided test): skipped, as
		// under its title, and the others read.
		run.title, run.skip = name, fmt.Sprintf("named by %s, it is not a benchmark nexar-go models", from)
		return nil
	}
	run.title, run.collective, run.bench = name, c, b
	p.log.note(p.line, "rows with no OSU title before them: read as %s (%s)", name, from)
	return nil
}

// osuBenchmark reads a title's name ("MPI Allreduce Latency"): the
// collective, or PointToPoint and the benchmark, or why it is skipped.
func osuBenchmark(name string) (collective, bench, skip string) {
	words := strings.Fields(name)
	if len(words) == 0 || !osuFamilies[strings.ToLower(words[0])] {
		return "", "", "not a benchmark of MPI or of a GPU collective library (one-sided, OpenSHMEM, UPC)"
	}
	rest := strings.ToLower(strings.Join(words[1:], " "))
	switch {
	case rest == "latency":
		return PointToPoint, PingPong, ""
	case rest == "bandwidth":
		return PointToPoint, Stream, ""
	case rest == "bi-directional bandwidth":
		return PointToPoint, BiStream, ""
	case strings.HasPrefix(rest, "non-blocking"):
		return "", "", "a non-blocking collective: its times include the overlap with computation"
	case rest == "init" || rest == "hello world":
		return "", "", "a start-up test: it times no communication"
	case strings.Contains(rest, "message rate"):
		return "", "", "a message-rate test of several pairs at once"
	case !strings.HasSuffix(rest, " latency"):
		return "", "", "not a latency or bandwidth benchmark nexar-go models"
	case strings.HasPrefix(rest, "multi"):
		return "", "", "the latency of several pairs at once"
	}
	rest = strings.TrimSuffix(rest, " latency")
	if c, ok := collectiveNames[rest]; ok {
		return c, "", ""
	}
	if strings.HasSuffix(rest, "v") {
		return "", "", "a vector collective (counts per rank): nexar-go has none"
	}
	return "", "", "not a collective nexar-go has"
}

// endRun adds the current run's samples to the log.
func (p *osuReader) endRun() error {
	run := p.run
	p.run = nil
	if run == nil {
		return nil
	}
	if run.skip != "" {
		p.log.note(run.line, "%s skipped: %s", run.title, run.skip)
		if p.unsupported == nil {
			p.unsupported = &LogError{p.log.File, run.line, fmt.Sprintf("%s is not a benchmark nexar-go models: %s", run.title, run.skip)}
		}
		return nil
	}
	if len(run.rows) == 0 {
		p.noteLeftOut(run)
		p.log.note(run.line, "%s: no results under it", run.title)
		return nil
	}
	at := run.rows[0].line
	coll, bench := run.collective, run.bench
	if p.opt.Collective != "" && run.title != p.opt.Collective {
		c, b, ok := benchmarkName(p.opt.Collective)
		if !ok {
			return fmt.Errorf("collective %q: not a collective or benchmark nexar-go models", p.opt.Collective)
		}
		if c != coll || b != bench {
			p.log.note(at, "the log's benchmark is %s; the collective given, %s, is taken instead", run.title, p.opt.Collective)
			coll, bench = c, b
		}
	}
	world, from, err := p.world(run, coll, at)
	if err != nil {
		return err
	}
	dt, err := p.dtype(run, coll, at)
	if err != nil {
		return err
	}
	out := Run{Line: run.line, Benchmark: run.title, Collective: coll, World: world, WorldFrom: from}
	window := max(run.window, run.hints.window)
	for _, row := range run.rows {
		s := Sample{Collective: coll, World: world, DType: dt, Op: device.Sum, Bytes: int(row.size), Time: row.value * 1e-6,
			Source: fmt.Sprintf("%s:%d", p.log.File, row.line)}
		switch {
		case coll == PointToPoint:
			s.Algorithm = bench
			if window > 0 && (bench == Stream || bench == BiStream) {
				s.Params = map[string]int{"window": window}
			}
			switch bench {
			case Stream, BiStream:
				// MB/s (10^6 bytes) to seconds per message (pair).
				if !(row.value > 0) {
					run.bad = append(run.bad, row.line)
					continue
				}
				per := float64(row.size)
				if bench == BiStream {
					per *= 2
				}
				s.Time = per / (row.value * 1e6)
			}
		default:
			s.Algorithm, s.Assumed = p.opt.assumedAlgorithm(coll), true
		}
		switch coll {
		case "allgather", "gather", "scatter", "alltoall":
			s.Bytes *= world
		case "barrier":
			s.Bytes = 0
		}
		if s.Bytes > 1<<50 || s.Bytes < 0 {
			return &LogError{p.log.File, row.line, "size too large"}
		}
		if err := checkSample(&s); err != nil {
			return &LogError{p.log.File, row.line, err.Error()}
		}
		out.Samples = append(out.Samples, s)
	}
	p.noteLeftOut(run)
	if len(out.Samples) == 0 {
		p.log.note(run.line, "%s: no results under it", run.title)
		return nil
	}
	p.log.Runs = append(p.log.Runs, out)
	return nil
}

// noteLeftOut notes the rows of run left out.
func (p *osuReader) noteLeftOut(run *osuRun) {
	if len(run.cut) > 0 {
		p.log.note(run.cut[0], "%d row(s) cut short left out (lines %s)", len(run.cut), lineList(run.cut))
	}
	if len(run.bad) > 0 {
		p.log.note(run.bad[0], "%d row(s) with no time or bandwidth after the size left out (lines %s)", len(run.bad), lineList(run.bad))
	}
}

// world is the run's world size and where it comes from.
func (p *osuReader) world(run *osuRun, coll string, at int) (int, string, error) {
	switch {
	case coll == PointToPoint && run.bench != Shift:
		return 2, "a point-to-point benchmark", nil // whatever the world given
	case p.opt.World > 0:
		return p.opt.World, "given", nil
	}
	if n, from := run.hints.processes(); n > 0 {
		return n, from, nil
	}
	return 0, "", &LogError{p.log.File, at, fmt.Sprintf("OSU logs do not say how many ranks ran, and no launcher's command line before the run of line %d does: give the world size", run.line)}
}

// dtype is the run's element type.
func (p *osuReader) dtype(run *osuRun, coll string, at int) (device.DType, error) {
	var logType device.DType
	logSays := ""
	switch {
	case run.dtype != "":
		dt, ok := mpiDType(run.dtype)
		if !ok {
			return 0, &LogError{p.log.File, run.dtypeLine, fmt.Sprintf("datatype %s has no nexar-go dtype", run.dtype)}
		}
		logType, logSays = dt, run.dtype
	case run.hints.dtype != "":
		dt, ok := mpiDType(run.hints.dtype)
		if !ok {
			return 0, &LogError{p.log.File, at, fmt.Sprintf("datatype %s (-T on the command line) has no nexar-go dtype", run.hints.dtype)}
		}
		logType, logSays = dt, run.hints.dtype
	}
	if p.opt.DType != "" {
		dt, ok := logDType(p.opt.DType)
		if !ok {
			if dt, ok = mpiDType(p.opt.DType); !ok {
				return 0, fmt.Errorf("dtype %q: want a nexar-go, nccl-tests or MPI type name (f32, float, MPI_FLOAT)", p.opt.DType)
			}
		}
		if logSays != "" && dt != logType {
			p.log.note(at, "the log's datatype is %s; the dtype given, %s, is taken instead", logSays, p.opt.DType)
		}
		return dt, nil
	}
	if logSays != "" {
		return logType, nil
	}
	// Version 5 and before: floats for the reductions, bytes otherwise.
	if c, err := algos.Lookup(coll); err == nil && c.Reduces {
		return device.F32, nil
	}
	if coll == PointToPoint {
		return device.U8, nil
	}
	return device.I8, nil
}
