package calibrate

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/device"
)

// FormatIMB is the output of the Intel MPI Benchmarks (IMB-MPI1).
const FormatIMB = "imb"

var (
	// imbTitle begins a benchmark's table: "# Benchmarking Allreduce",
	// "# Benchmarking Multi-Allreduce" (several groups at once).
	imbTitle = regexp.MustCompile(`^#\s*Benchmarking\s+(Multi-)?(\S+)`)
	// imbProcs is its processes: "# #processes = 16".
	imbProcs = regexp.MustCompile(`^#\s*#processes\s*=\s*(\d+)`)
	// imbReduceType is the header's type of the reductions ("#
	// MPI_Datatype for reductions    :   MPI_FLOAT"), imbType the others'.
	imbReduceType = regexp.MustCompile(`^#\s*MPI_Datatype for reductions\s*:\s*(\S+)`)
	imbType       = regexp.MustCompile(`^#\s*MPI_Datatype\s*:\s*(\S+)`)
	// imbMarker is a line only IMB's output has, for LogFormat.
	imbMarker = regexp.MustCompile(`^#\s*(?:Intel\(R\) MPI Benchmarks|Benchmarking\s+\S+\s*$|#processes\s*=)`)
	// imbRelease is the banner's release: "Intel(R) MPI Benchmarks
	// 2021.7, MPI-1 part".
	imbRelease = regexp.MustCompile(`Intel\(R\) MPI Benchmarks (\d{4})`)
)

// imbCollectives are IMB-MPI1's collectives as the catalogue names them,
// and whether IMB's #bytes is one rank's block (allgather, gather,
// scatter, and reduce_scatter's result since IMB 2019) or the block to
// each rank (alltoall), which are multiplied by the world size into
// nccl-tests' convention, the whole buffer.
var imbCollectives = map[string]struct {
	coll    string
	perRank bool
}{
	"allreduce": {"allreduce", false}, "reduce": {"reduce", false}, "reduce_scatter": {"reduce_scatter", true},
	"reduce_scatter_block": {"reduce_scatter", true}, "bcast": {"broadcast", false}, "barrier": {"barrier", false},
	"allgather": {"allgather", true}, "gather": {"gather", true}, "scatter": {"scatter", true}, "alltoall": {"alltoall", true},
}

// ReadIMB reads the output of the Intel MPI Benchmarks' IMB-MPI1: each
// "# Benchmarking NAME" table on "# #processes = N" ranks is a run
// (IMB runs each benchmark on 2, 4, ... processes up to the job's), read
// on its own. The collectives are collective samples, with the average
// time over the ranks (t_avg), as OSU's; PingPong is a PointToPoint
// latency sample (t, half a round trip). The element type is the
// header's "MPI_Datatype for reductions" (MPI_FLOAT by default) for the
// reductions, bytes for the others. IMB's #bytes is one rank's block for
// allgather, gather, scatter and reduce_scatter (the whole vector before
// IMB 2019) and the block to each rank for alltoall: they are multiplied
// by the world size, into nccl-tests' whole buffer. Sizes IMB did not
// time (time-out, out-of-mem) are left out with a note.
// The benchmarks nexar-go does not model (the vector collectives,
// PingPing, Sendrecv, Exchange, Uniband, Biband, several groups at once)
// are skipped, and a note names each. opt.World overrides the processes
// of every run.
func ReadIMB(file string, r io.Reader, opt LogOptions) (*Log, error) {
	p := &imbReader{log: &Log{File: file, Format: FormatIMB}, opt: opt, reduceType: "MPI_FLOAT", otherType: "MPI_BYTE"}
	if err := scanLines(file, r, p.readLine); err != nil {
		return nil, err
	}
	if err := p.endRun(); err != nil {
		return nil, err
	}
	if len(p.log.Runs) == 0 {
		return nil, &LogError{file, max(p.line, 1), "no IMB results: want a \"# Benchmarking Allreduce\" title, \"# #processes = N\" and a \"#bytes #repetitions t_min[usec] ...\" header with rows under it"}
	}
	return p.log, nil
}

type imbReader struct {
	log                   *Log
	opt                   LogOptions
	line                  int
	reduceType, otherType string
	release               int // the banner's year, 0 if none
	run                   *imbRun
}

type imbRun struct {
	line, world      int
	procsLine        int
	name, coll, skip string
	perRank          bool
	cols             []string
	rows             []osuRow
	cut, failed      []int
}

func (p *imbReader) readLine(l string, n int) error {
	p.line = n
	switch {
	case l == "":
		return nil
	case imbTitle.MatchString(l):
		if err := p.endRun(); err != nil {
			return err
		}
		m := imbTitle.FindStringSubmatch(l)
		run := &imbRun{line: n, name: m[2]}
		run.coll, run.perRank, run.skip = imbBenchmark(m[2])
		if m[1] != "" {
			run.skip = "several groups of processes at once (-multi)"
		}
		p.run = run
		return nil
	case imbRelease.MatchString(l):
		p.release, _ = strconv.Atoi(imbRelease.FindStringSubmatch(l)[1])
		return nil
	case imbReduceType.MatchString(l):
		p.reduceType = imbReduceType.FindStringSubmatch(l)[1]
		return nil
	case imbType.MatchString(l):
		p.otherType = imbType.FindStringSubmatch(l)[1]
		return nil
	}
	run := p.run
	if run == nil {
		return nil
	}
	if m := imbProcs.FindStringSubmatch(l); m != nil {
		run.world, run.procsLine = positive(m[1]), n
		return nil
	}
	f := strings.Fields(l)
	if f[0] == "#bytes" || f[0] == "#repetitions" {
		run.cols = f
		return nil
	}
	if strings.HasPrefix(l, "#") || run.cols == nil {
		return nil
	}
	if !isCount(f[0]) {
		run.cols = nil // not a row: the table is over (a command, a launcher's message)
		return nil
	}
	if len(f) > 1 && (strings.HasPrefix(f[1], "time-out") || strings.HasPrefix(f[1], "out-of-mem") || strings.HasPrefix(f[1], "int-overflow")) {
		run.failed = append(run.failed, n) // IMB gave up on this size
		return nil
	}
	if len(f) < len(run.cols) {
		run.cut = append(run.cut, n)
		return nil
	}
	row := osuRow{line: n}
	for i, c := range run.cols {
		switch c {
		case "#bytes":
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil || v < 0 || v > 1<<50 {
				return &LogError{p.log.File, n, fmt.Sprintf("#bytes %q: want a number of bytes", f[i])}
			}
			row.size = v
		case "t_avg[usec]", "t[usec]":
			v, ok := parseNumber(f[i])
			if !ok {
				return &LogError{p.log.File, n, fmt.Sprintf("%s %q: want a number of microseconds", c, f[i])}
			}
			row.value = v
		}
	}
	run.rows = append(run.rows, row)
	return nil
}

// imbBenchmark is a benchmark's collective (or PointToPoint), whether its
// #bytes is a rank's block, or why it is skipped.
func imbBenchmark(name string) (coll string, perRank bool, skip string) {
	n := strings.ToLower(name)
	if c, ok := imbCollectives[n]; ok {
		return c.coll, c.perRank, ""
	}
	switch {
	case n == "pingpong":
		return PointToPoint, false, ""
	case strings.HasSuffix(n, "v") && imbCollectives[strings.TrimSuffix(n, "v")].coll != "":
		return "", false, "a vector collective (counts per rank): nexar-go has none"
	case strings.HasPrefix(n, "i") && imbCollectives[strings.TrimSuffix(strings.TrimPrefix(n, "i"), "_pure")].coll != "":
		return "", false, "a non-blocking collective (IMB-NBC): its times include the overlap with computation"
	}
	return "", false, "not a benchmark nexar-go models (PingPing, Sendrecv, Exchange, Uniband and Biband run several pairs or both ways at once)"
}

// endRun adds the current run's samples to the log.
func (p *imbReader) endRun() error {
	run := p.run
	p.run = nil
	if run == nil {
		return nil
	}
	if run.skip != "" {
		p.log.note(run.line, "%s skipped: %s", run.name, run.skip)
		return nil
	}
	world, from := run.world, fmt.Sprintf("line %d: #processes = %d", run.procsLine, run.world)
	if p.opt.World > 0 {
		world, from = p.opt.World, "given"
	}
	if run.coll == PointToPoint {
		world, from = 2, "a point-to-point benchmark"
	}
	if world < 1 {
		return &LogError{p.log.File, run.line, fmt.Sprintf("%s: no \"# #processes = N\" line under the title: give the world size", run.name)}
	}
	if len(run.rows) == 0 {
		p.log.note(run.line, "%s: no results under it", run.name)
		return nil
	}
	typ := p.otherType
	if run.coll == "allreduce" || run.coll == "reduce" || run.coll == "reduce_scatter" {
		typ = p.reduceType
	}
	dt, ok := mpiDType(typ)
	if !ok {
		return &LogError{p.log.File, run.line, fmt.Sprintf("datatype %s has no nexar-go dtype", typ)}
	}
	out := Run{Line: run.line, Benchmark: "IMB " + run.name, Collective: run.coll, World: world, WorldFrom: from}
	for _, row := range run.rows {
		s := Sample{Collective: run.coll, World: world, DType: dt, Op: device.Sum, Bytes: int(row.size), Time: row.value * 1e-6,
			Source: fmt.Sprintf("%s:%d", p.log.File, row.line)}
		switch {
		case run.coll == PointToPoint:
			s.Algorithm = PingPong
		default:
			s.Algorithm, s.Assumed = p.opt.assumedAlgorithm(run.coll), true
		}
		// Reduce_scatter's #bytes was the whole vector until IMB 2018.
		if run.perRank && !(run.name == "Reduce_scatter" && p.release > 0 && p.release < 2019) {
			s.Bytes *= world
		}
		if run.coll == "barrier" {
			s.Bytes = 0
		}
		if err := checkSample(&s); err != nil {
			return &LogError{p.log.File, row.line, err.Error()}
		}
		out.Samples = append(out.Samples, s)
	}
	if len(run.cut) > 0 {
		p.log.note(run.cut[0], "%d row(s) cut short left out (lines %s)", len(run.cut), lineList(run.cut))
	}
	if len(run.failed) > 0 {
		p.log.note(run.failed[0], "%d size(s) IMB did not time (time-out, out-of-mem, int-overflow) left out (lines %s)", len(run.failed), lineList(run.failed))
	}
	p.log.Runs = append(p.log.Runs, out)
	return nil
}
