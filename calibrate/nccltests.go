package calibrate

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/device"
)

// nccl-tests starts its own lines with "#" but its rows. A log pasted
// where Markdown renders it (a GitHub comment outside a code block) loses
// them; such lines are read too where their words alone are nccl-tests'
// (a rank line naming its Group or Pid, a header with algbw and busbw).
var (
	ncclStart     = regexp.MustCompile(`^#?\s*Collective test starting:\s*(\S+?)(?:\s+\(algorithm (.+), (\d+) ranks\))?\s*$`)
	ncclConcluded = regexp.MustCompile(`^#?\s*Collective test concluded:`)
	ncclVersion   = regexp.MustCompile(`^(?:#\s*[a-z]*-?tests version\b|[a-z]+-tests version\s+v?\d|#?\s*[a-z]+-tests: Version\b)`)
	ncclThreads   = regexp.MustCompile(`^#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)`)
	ncclUsing     = regexp.MustCompile(`^(?:#\s*Using devices|Using devices\s*$)`)
	ncclRank      = regexp.MustCompile(`^(?:#\s*Rank\s+(\d+)\b|Rank\s+(\d+)\s+(?:Group|Pid)\b)`)
	ncclColumns   = regexp.MustCompile(`^(?:#\s*size\s+count\s+type\b|size\s+count\s+type\b.*\balgbw\b.*\bbusbw\b)`)
	ncclEnd       = regexp.MustCompile(`^(?:#\s*(?:Out of bounds values|Avg bus bandwidth)|(?:Out of bounds values|Avg bus bandwidth)\s*:)`)
	// ncclMarker is a line only nccl-tests' output has, for LogFormat.
	ncclMarker = regexp.MustCompile(`^(?:#\s*(?:nThread\s+\d|Collective test starting|[a-z]*-?tests version|size\s+count\s+type\b)|nThread\s+\d+\s+nGpus\s+\d|size\s+count\s+type\b.*\balgbw\b.*\bbusbw\b)`)
)

// ReadNCCLTests reads the output of nccl-tests (all_reduce_perf and its
// siblings, RCCL's port, forks that keep its layout) or nexar-live's own
// table: one sample per row, with the out-of-place time (the in-place
// one with opt.InPlace).
//
// A log is read as people keep it: each line may carry a launcher's
// prefix (Open MPI's --tag-output "[1,0]<stdout>:", Slurm's srun
// --label " 0: "), Markdown indentation or quote markers; library and
// launcher lines (NCCL INFO, warnings, shell prompts) may stand anywhere,
// within the table too; nccl-tests' "#"s may be gone (Markdown took
// them). A file may hold several runs, of one collective
// or several; each run is read on its own, from its own lines:
//
//   - its collective from "# Collective test starting: all_reduce_perf"
//     (nexar-live adds "(algorithm ring, 4 ranks)"), or where older
//     versions print no such line, from the binary a command line or a
//     launcher's message names before it, else opt.Collective, else the
//     file's name;
//   - its world size from the "#  Rank N ..." lines, as the highest rank
//     listed plus one: where the list is elided ("...", or cut short by
//     nccl-tests itself at 2 KB a process) it is rounded up to whole
//     processes of nThread x nGpus ranks; without rank lines, nThread x
//     nGpus x the processes the benchmark's launch started (mpirun -np,
//     srun -n or -N x --ntasks-per-node, SLURM_NTASKS, #SBATCH; a launch
//     of another program, "srun hostname", does not count), or one
//     process when there is no launcher; where the "# nThread" line is
//     missing, nThread and nGpus are the binary's own -t and -g;
//     opt.World overrides all;
//   - its columns from the header "#  size  count  type  redop  root
//     time  algbw  busbw  #wrong  time ...": the first time is the
//     out-of-place one, the second the in-place one; older layouts
//     without redop or root, with "error" for "#wrong", or with
//     per-iteration or timestamp columns are read by the same names.
//
// Sizes are in bytes, times in microseconds. Rows cut short (a file
// that ends mid-row), rows with a time of "N/A" and rows whose results
// were wrong are left out, and a note of the Log counts them; an "N/A"
// in the #wrong column (validation off) is not a problem. A row with a
// number where none can be is an error naming its line and column.
func ReadNCCLTests(file string, r io.Reader, opt LogOptions) (*Log, error) {
	p := &ncclReader{log: &Log{File: file, Format: FormatNCCLTests}, opt: opt}
	if err := scanLines(file, r, p.readLine); err != nil {
		return nil, err
	}
	if err := p.endRun(); err != nil {
		return nil, err
	}
	p.noteSkipped()
	if len(p.log.Runs) == 0 {
		return nil, &LogError{file, p.line, "no nccl-tests results: want a \"#  size  count  type ...\" header and rows of numbers under it"}
	}
	return p.log, nil
}

// ncclReader is the state of ReadNCCLTests.
type ncclReader struct {
	log  *Log
	opt  LogOptions
	line int
	// pending are the hints seen since the last run began, pendingInfo
	// the NCCL lines.
	pending     hints
	pendingInfo infoScanner
	run         *ncclRun
	// cut, na and wrong count the rows left out, by line.
	cut, na, wrong []int
}

// ncclRun is a run being read.
type ncclRun struct {
	line int
	// benchmark is what the start line names; algorithm, world and params
	// are nexar-live's additions to it.
	benchmark, algorithm string
	world                int
	params               map[string]int
	hints                hints
	info                 infoScanner
	nThread, nGpus       int
	ranks                map[int]bool
	maxRank              int
	elided               bool
	// cols names the columns of the current table, headerLine is its
	// line, closed is set after its summary; rows are its rows.
	cols       []string
	headerLine int
	closed     bool
	rows       []ncclRow
	// inPlaceOnly is set by a banner over the header that names in-place
	// times alone (rccl-tests -O 0): its one time column is those.
	inPlaceOnly bool
}

// ncclRow is a row read, waiting for its run's collective and world.
type ncclRow struct {
	line int
	s    Sample
}

// hasContent reports whether the run has a table or rows, after which a
// new start line begins a new run.
func (r *ncclRun) hasContent() bool { return r.cols != nil || len(r.rows) > 0 }

// begin ends the current run if it has content, and returns the run the
// line at p.line belongs to.
func (p *ncclReader) begin(force bool) (*ncclRun, error) {
	if p.run != nil && (force || p.run.hasContent()) {
		if err := p.endRun(); err != nil {
			return nil, err
		}
	}
	if p.run == nil {
		p.run = &ncclRun{line: p.line, ranks: map[int]bool{}, maxRank: -1, hints: p.pending, info: p.pendingInfo}
		p.pending = p.pending.next()
		p.pendingInfo = infoScanner{}
	}
	return p.run, nil
}

func (p *ncclReader) readLine(l string, n int) error {
	p.line = n
	if l == "" {
		return nil
	}
	switch {
	case ncclStart.MatchString(l):
		m := ncclStart.FindStringSubmatch(l)
		// A run begins here, unless the lines before it (version,
		// nThread) began it already.
		run, err := p.begin(p.run != nil && p.run.benchmark != "")
		if err != nil {
			return err
		}
		run.benchmark = path.Base(m[1])
		if m[2] != "" {
			run.algorithm = m[2]
			if run.params, err = variantParams(m[2]); err != nil {
				return &LogError{p.log.File, p.line, err.Error()}
			}
			run.world, _ = strconv.Atoi(m[3])
		}
		return nil
	case ncclConcluded.MatchString(l) || ncclEnd.MatchString(l):
		if p.run != nil {
			p.run.closed = true
		}
		return nil
	case ncclVersion.MatchString(l):
		// nccl-tests' "# nccl-tests version" begins a run; rccl-tests'
		// "rccl-tests: Version develop:..." comes after its nThread line,
		// in the run that line began.
		run, err := p.begin(strings.HasPrefix(l, "#"))
		if err == nil {
			run.info.scanTestsVersion(l)
		}
		return err
	case ncclThreads.MatchString(l):
		m := ncclThreads.FindStringSubmatch(l)
		run, err := p.begin(p.run != nil && p.run.nThread > 0)
		if err != nil {
			return err
		}
		run.nThread, _ = strconv.Atoi(m[1])
		run.nGpus, _ = strconv.Atoi(m[2])
		return nil
	case ncclUsing.MatchString(l):
		_, err := p.begin(false)
		return err
	case ncclRank.MatchString(l):
		m := ncclRank.FindStringSubmatch(l)
		run, err := p.begin(false)
		if err != nil {
			return err
		}
		rank := cmp.Or(m[1], m[2])
		n, err := strconv.Atoi(rank)
		if err != nil || n > 1<<20 {
			return &LogError{p.log.File, p.line, fmt.Sprintf("rank %q is not a rank number", rank)}
		}
		run.ranks[n] = true
		run.maxRank = max(run.maxRank, n)
		run.info.scanRank(l)
		if strings.HasSuffix(l, "...") {
			run.elided = true // nccl-tests cut this process's list short
		}
		return nil
	case ncclColumns.MatchString(l):
		run, err := p.begin(false)
		if err != nil {
			return err
		}
		if len(run.rows) > 0 {
			// A second table with no lines of its own before it: the
			// same benchmark on the same ranks.
			prev := *run
			if run, err = p.begin(true); err != nil {
				return err
			}
			run.benchmark, run.algorithm, run.world, run.params = prev.benchmark, prev.algorithm, prev.world, prev.params
			run.hints, run.nThread, run.nGpus, run.ranks, run.maxRank, run.elided = prev.hints, prev.nThread, prev.nGpus, prev.ranks, prev.maxRank, prev.elided
			run.inPlaceOnly = prev.inPlaceOnly
			p.log.note(p.line, "a second table with no header lines of its own: read as the run of line %d again", prev.line)
		}
		run.cols = strings.Fields(strings.TrimPrefix(l, "#"))
		run.headerLine, run.closed = p.line, false
		return nil
	}
	if strings.HasPrefix(l, "#") {
		if p.run != nil && p.run.cols == nil && isElision(l) {
			p.run.elided = true
		}
		if p.run != nil && p.run.cols == nil && strings.Contains(l, "in-place") && !strings.Contains(l, "out-of-place") {
			p.run.inPlaceOnly = true // rccl-tests -O 0: one group of columns, in-place
		}
		if batchDirective.MatchString(l) {
			return p.hint(l)
		}
		return nil
	}
	f := strings.Fields(l)
	if p.run == nil || p.run.cols == nil || !isCount(f[0]) || len(f) < 3 {
		if p.run != nil && p.run.cols == nil && isElision(l) {
			p.run.elided = true
			return nil
		}
		return p.hint(l)
	}
	if p.run.closed {
		return nil // rows after a summary: not this table's
	}
	return p.readRow(f)
}

// hint reads what a line that is not nccl-tests' says about the runs
// that follow (NCCL's lines about the run under way or the next one); a
// command line after a run's rows ends that run.
func (p *ncclReader) hint(l string) error {
	info := &p.pendingInfo
	if p.run != nil && !p.run.closed {
		info = &p.run.info
	}
	if info.scan(l, p.line) {
		return nil
	}
	command := isCommandLine(l) || batchDirective.MatchString(l)
	if command && p.run != nil && len(p.run.rows) > 0 {
		if err := p.endRun(); err != nil {
			return err
		}
	}
	target := &p.pending
	if !command && p.run != nil && !p.run.hasContent() {
		// A message naming the binary while the run starts up.
		target = &p.run.hints
	}
	target.scan(l, p.line)
	return nil
}

// isElision reports whether l stands for lines left out ("...", "#  ...",
// "(snip)").
func isElision(l string) bool {
	t := strings.TrimSpace(strings.TrimPrefix(l, "#"))
	return t == "..." || t == "…" || strings.HasPrefix(t, "...") && !strings.ContainsAny(t, "0123456789") || strings.EqualFold(t, "(snip)") || t == "[...]"
}

// readRow reads a row of numbers under the current header.
func (p *ncclReader) readRow(f []string) error {
	run := p.run
	cols := run.cols
	if len(f) < len(cols) {
		p.cut = append(p.cut, p.line)
		return nil
	}
	if len(f) == len(cols)+1 && cols[len(cols)-1] == "timestamp" {
		f = f[:len(cols)] // "2025-01-31 12:00:00" is two fields
	}
	if len(f) > len(cols) {
		return &LogError{p.log.File, p.line, fmt.Sprintf("%d fields under the header of line %d, which names %d (%s)",
			len(f), run.headerLine, len(cols), strings.Join(cols, " "))}
	}
	s := Sample{Op: device.Sum}
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || size > 1<<50 {
		return &LogError{p.log.File, p.line, fmt.Sprintf("size %q: want a number of bytes", f[0])}
	}
	s.Bytes = int(size)
	timeCol, inPlaceCol, count, wrongCol := -1, -1, int64(-1), -1
	for i, c := range cols {
		switch c {
		case "count":
			if n, err := strconv.ParseInt(f[i], 10, 64); err == nil {
				count = n
			}
		case "type":
			if s.DType, err = resultDType(f[i], size, count); err != nil {
				return &LogError{p.log.File, p.line, err.Error()}
			}
		case "redop":
			if s.Op, err = resultOp(f[i]); err != nil {
				return &LogError{p.log.File, p.line, err.Error()}
			}
		case "root":
			n, err := strconv.Atoi(f[i])
			if err != nil {
				return &LogError{p.log.File, p.line, fmt.Sprintf("root %q: want a rank or -1", f[i])}
			}
			s.Root = max(n, 0)
		case "time", "cputime":
			if timeCol < 0 {
				timeCol = i
			} else if inPlaceCol < 0 {
				inPlaceCol = i
			}
		case "#wrong", "error", "wrong":
			if wrongCol < 0 {
				wrongCol = i
			}
		}
	}
	if run.inPlaceOnly && inPlaceCol < 0 {
		inPlaceCol = timeCol // the one time column is in-place
	}
	col, which := timeCol, "out-of-place time"
	if p.opt.InPlace {
		col, which = inPlaceCol, "in-place time"
	}
	if col < 0 {
		if p.opt.InPlace && timeCol >= 0 {
			return &LogError{p.log.File, p.line, fmt.Sprintf("the table of line %d has no in-place times (one time column)", run.headerLine)}
		}
		return &LogError{p.log.File, p.line, fmt.Sprintf("the header of line %d names no time column", run.headerLine)}
	}
	if f[col] == "N/A" {
		p.na = append(p.na, p.line)
		return nil
	}
	us, ok := parseNumber(f[col])
	if !ok {
		return &LogError{p.log.File, p.line, fmt.Sprintf("%s %q: want a number of microseconds", which, f[col])}
	}
	if wrongCol >= 0 {
		// The #wrong after the chosen time is its validation.
		w := wrongCol
		for i := col + 1; i < len(cols); i++ {
			if cols[i] == cols[wrongCol] {
				w = i
				break
			}
		}
		if n, ok := parseNumber(f[w]); ok && n > wrongAbove(cols[w], s.DType) {
			p.wrong = append(p.wrong, p.line)
			return nil
		}
	}
	s.Time = us * 1e-6
	run.rows = append(run.rows, ncclRow{line: p.line, s: s})
	return nil
}

// wrongAbove is the least value of a row's validation column that makes
// it wrong: above 0 for "#wrong", a count of wrong elements; for the
// older layouts' "error", the largest relative error of the result, above
// the tolerance nccl-tests held it to (DeltaMaxValue: 5e-2 for 16-bit
// floats, 1e-5 for float, 1e-12 for double, exact for integers), so that
// a sum's rounding (1e-07 in a float allreduce) is no error.
func wrongAbove(col string, dt device.DType) float64 {
	if col != "error" {
		return 0
	}
	switch dt {
	case device.F16, device.BF16:
		return 5e-2
	case device.F32:
		return 1e-5
	case device.F64:
		return 1e-12
	}
	return 0
}

// endRun resolves the current run's collective and world size and adds
// its samples to the log.
func (p *ncclReader) endRun() error {
	run := p.run
	p.run = nil
	if run == nil {
		return nil
	}
	if len(run.rows) == 0 {
		if run.cols != nil {
			p.log.note(run.headerLine, "a table with no results under it (the benchmark failed, or the log ends)")
		}
		return nil
	}
	at := run.rows[0].line
	coll, bench, benchmark, err := p.collective(run, at)
	if err != nil {
		return err
	}
	world, from, err := p.world(run, at)
	if err != nil {
		return err
	}
	out := Run{Line: run.line, Benchmark: benchmark, Collective: coll, World: world, WorldFrom: from, NCCL: run.info.result(world)}
	out.NCCL = p.withEnv(out.NCCL, run.hints.batch.env.over(run.hints.env), at)
	if i := out.NCCL; i != nil && i.RCCL {
		p.log.note(at, "%s: the nccl policy models NCCL's choice, not RCCL's own tuning", strings.TrimSpace("RCCL "+i.Version))
	}
	if i := out.NCCL; i != nil && i.TunerPlugin != "" {
		p.log.note(at, "NCCL chose with the tuner plugin %s: the nccl policy models NCCL's own cost model, not the plugin's choices (the choices the log prints are kept)", i.TunerPlugin)
	}
	if out.NCCL != nil && (run.elided || len(run.ranks) < world) && world > run.nThread*run.nGpus {
		// The ranks not listed may be on other hosts (unless one
		// process holds them all).
		out.NCCL.HostsAtLeast = true
	}
	nodes := out.NCCL.NodesOf(world)
	if n := run.hints.nodeCount(); nodes == 0 && n > 0 && n <= world/max(run.nThread*run.nGpus, 1) {
		nodes = n // srun --nodes, #SBATCH --nodes: no more than its processes
	}
	if run.inPlaceOnly && !p.opt.InPlace {
		p.log.note(at, "the table holds in-place times only (rccl-tests -O 0): read as the run's times")
	}
	if n := p.opt.Nodes; n > 0 {
		if n > world {
			return &LogError{p.log.File, at, fmt.Sprintf("%d nodes given for a run of %d ranks", n, world)}
		}
		if nodes > 0 && nodes != n {
			p.log.note(at, "the log gives %d node(s); the nodes given, %d, are taken instead", nodes, n)
		}
		nodes = n
	}
	for _, row := range run.rows {
		s := row.s
		s.Collective, s.World, s.Params, s.Nodes, s.NCCL = coll, world, run.params, nodes, out.NCCL
		s.Source = fmt.Sprintf("%s:%d", p.log.File, row.line)
		switch {
		case coll == PointToPoint:
			s.Algorithm = bench
		case run.algorithm != "" && p.opt.Algorithm == "":
			s.Algorithm = run.algorithm
		default:
			s.Algorithm, s.Assumed = p.opt.assumedAlgorithm(coll), true
		}
		if err := checkSample(&s); err != nil {
			return &LogError{p.log.File, row.line, err.Error()}
		}
		out.Samples = append(out.Samples, s)
	}
	p.log.Runs = append(p.log.Runs, out)
	return nil
}

// collective is the run's collective (and point-to-point benchmark), and
// the name of its benchmark, from the most direct source there is.
func (p *ncclReader) collective(run *ncclRun, at int) (coll, bench, benchmark string, err error) {
	type source struct{ name, from string }
	var found source
	for _, c := range []source{
		{run.benchmark, "its start line"},
		{run.hints.benchmark, fmt.Sprintf("line %d", run.hints.benchmarkLine)},
	} {
		if c.name != "" {
			found = c
			break
		}
	}
	if p.opt.Collective != "" {
		c, b, ok := benchmarkName(p.opt.Collective)
		if !ok {
			return "", "", "", fmt.Errorf("collective %q: not a collective or benchmark nexar-go models", p.opt.Collective)
		}
		if found.name != "" {
			if fc, fb, _ := benchmarkName(found.name); fc != c || fb != b {
				p.log.note(at, "the log names %s (%s); the collective given, %s, is taken instead", found.name, found.from, p.opt.Collective)
			}
		}
		return c, b, cmp.Or(found.name, p.opt.Collective), nil
	}
	if found.name == "" {
		if n := fromFileName(p.log.File); n != "" {
			found = source{n, "the file's name"}
			p.log.note(at, "no line names the benchmark: %s taken from the file's name", n)
		}
	}
	if found.name == "" {
		return "", "", "", &LogError{p.log.File, at, "no collective: no \"# Collective test starting\" line or command line names the benchmark of this table; name it (all_reduce_perf, allreduce, ...)"}
	}
	c, b, ok := benchmarkName(found.name)
	if !ok {
		return "", "", "", &LogError{p.log.File, at, fmt.Sprintf("benchmark %s (%s) is not one nexar-go models", found.name, found.from)}
	}
	return c, b, found.name, nil
}

// withEnv returns info with the NCCL_ALGO and NCCL_PROTO that command
// lines or exports before the run set (env), where NCCL's own lines do
// not say them (info nil: no NCCL lines), and notes each.
func (p *ncclReader) withEnv(info *NCCLInfo, env ncclEnv, at int) *NCCLInfo {
	for _, v := range []struct {
		name, value string
		line        int
	}{{"NCCL_ALGO", env.algo, env.algoLine}, {"NCCL_PROTO", env.proto, env.protoLine}} {
		if v.line == 0 {
			continue
		}
		if info == nil {
			info = &NCCLInfo{}
		}
		if _, said := info.Env[v.name]; said {
			continue // NCCL's "set by environment" line
		}
		if info.Env == nil {
			info.Env = map[string]string{}
		}
		info.Env[v.name] = v.value
		p.log.note(at, "%s=%s, set at line %d, holds for this run: NCCL chooses only what it allows", v.name, v.value, v.line)
	}
	return info
}

// world is the run's world size and where it comes from.
func (p *ncclReader) world(run *ncclRun, at int) (int, string, error) {
	if h := run.hints; run.nThread == 0 && run.nGpus == 0 && (h.threads > 0 || h.gpus > 0) {
		run.nThread, run.nGpus = max(h.threads, 1), max(h.gpus, 1)
		p.log.note(at, "no \"# nThread\" line: nThread %d x nGpus %d a process, from the benchmark's command line (line %d)", run.nThread, run.nGpus, h.gpusLine)
	}
	perProcess := run.nThread * run.nGpus
	procs, procsFrom := run.hints.processes()
	var world int
	var from string
	switch {
	case run.world > 0:
		world, from = run.world, "its start line"
	case len(run.ranks) > 0:
		world = run.maxRank + 1
		from = fmt.Sprintf("ranks 0-%d listed", run.maxRank)
		if len(run.ranks) < world || run.elided {
			from = fmt.Sprintf("highest rank listed, %d (the list is elided)", run.maxRank)
			if perProcess > 0 && world%perProcess != 0 {
				// nccl-tests cut a process's list: round up to whole
				// processes of nThread x nGpus ranks.
				world = (world/perProcess + 1) * perProcess
				from = fmt.Sprintf("highest rank listed, %d, rounded up to whole processes of %d ranks (the list is elided)", run.maxRank, perProcess)
			}
		}
		if procs > 0 && perProcess > 0 && procs*perProcess > world {
			world = procs * perProcess
			from = fmt.Sprintf("%d processes (%s) x nThread %d x nGpus %d; the rank list is shorter", procs, procsFrom, run.nThread, run.nGpus)
		}
	case perProcess > 0 && procs > 0:
		world = procs * perProcess
		from = fmt.Sprintf("%d processes (%s) x nThread %d x nGpus %d", procs, procsFrom, run.nThread, run.nGpus)
	case run.info.info.Ranks > 0:
		world = run.info.info.Ranks
		from = fmt.Sprintf("NCCL's communicator of %d ranks (its \"comm ... nranks\" line)", world)
	case perProcess == 0 && procs > 0:
		world = procs
		from = fmt.Sprintf("%d processes (%s), one GPU each (no \"# nThread\" line: nccl-tests' default)", procs, procsFrom)
	case perProcess > 1:
		world = perProcess
		from = fmt.Sprintf("nThread %d x nGpus %d in one process (no rank lines and no launcher's command line)", run.nThread, run.nGpus)
		p.log.note(at, "no \"#  Rank\" lines and no launcher's command line: taken as one process of nThread x nGpus = %d ranks", world)
	}
	if p.opt.World > 0 {
		if world > 0 && world != p.opt.World {
			p.log.note(at, "the log gives %d ranks (%s); the world size given, %d, is taken instead", world, from, p.opt.World)
		}
		return p.opt.World, "given", nil
	}
	if world == 0 {
		return 0, "", &LogError{p.log.File, at, "no world size: the log has no \"#  Rank\" lines and no launcher's command line (mpirun -np, srun -n) before the run; give it"}
	}
	return world, from, nil
}

// noteSkipped notes the rows left out.
func (p *ncclReader) noteSkipped() {
	for _, c := range []struct {
		lines []int
		why   string
	}{
		{p.cut, "cut short (fewer fields than the header names)"},
		{p.na, "with a time of N/A"},
		{p.wrong, "whose results were wrong (#wrong above 0)"},
	} {
		if len(c.lines) > 0 {
			p.log.note(c.lines[0], "%d row(s) %s left out (lines %s)", len(c.lines), c.why, lineList(c.lines))
		}
	}
}

// lineList writes line numbers, at most a few.
func lineList(ls []int) string {
	parts := make([]string, 0, 6)
	for i, l := range ls {
		if i == 5 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ", ")
}
