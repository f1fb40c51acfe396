package calibrate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/units"
)

// The formats of measurement files Read reads.
const (
	FormatResults   = "results"    // a results.csv of nexar-live or nexar-sim
	FormatNCCLTests = "nccl-tests" // the output of nccl-tests (all_reduce_perf, ...) and its forks
	FormatOSU       = "osu"        // the output of the OSU micro-benchmarks
	// FormatNCCLTestsJSON (nccltestsjson.go) is nccl-tests' -J report,
	// FormatIMB (imb.go) the Intel MPI Benchmarks' output.
)

// LogOptions fill in what a measurement file does not say. Where the
// file says otherwise they win, and a note of the Log says so.
type LogOptions struct {
	// Collective is the benchmark of runs that do not name theirs: a
	// catalogue collective ("allreduce") or a benchmark's name for it
	// ("all_reduce_perf", "osu_allreduce"), or a point-to-point
	// benchmark ("osu_latency", "osu_bw", "osu_bibw").
	Collective string
	// Algorithm names the algorithm the benchmark ran, as the catalogue
	// names it (a log does not say what its library chose): the model
	// simulates that one. Default: "ring" where the collective has one,
	// else the catalogue's first algorithm of it.
	Algorithm string
	// World is the number of ranks of every run.
	World int
	// Nodes is the number of nodes (NVLink domains) every run of an
	// nccl-tests log spans, over what its lines say (NCCL's comm line,
	// the hosts of a full rank list): for logs that name none, launched
	// from a hostfile. 0 takes the log's, else none (a GPU machine then
	// fills its nodes in order).
	Nodes int
	// DType is the element type of runs whose log does not say (OSU's
	// before version 7): nccl-tests' name ("float") or nexar-go's
	// ("f32").
	DType string
	// InPlace takes nccl-tests' in-place times instead of the
	// out-of-place ones.
	InPlace bool
}

// LogError is a line of a measurement file that cannot be read: it says
// which, and what was expected there.
type LogError struct {
	File string
	Line int
	Msg  string
}

func (e *LogError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Log is what a reader found in one measurement file.
type Log struct {
	File   string
	Format string
	// Runs are the benchmark runs of the file in its order; each has its
	// own collective, world size and samples.
	Runs []Run
	// Notes say what was read differently from how it stands, or not at
	// all, and why: rows cut short, benchmarks nexar-go does not model,
	// flags that overrode the log. Each names its line.
	Notes []string
}

// Run is one run of a benchmark in a log: a table of times of one
// collective (or point-to-point benchmark) on one set of ranks.
type Run struct {
	// Line is where the run begins.
	Line int
	// Benchmark names it as the log does: "all_reduce_perf", "OSU MPI
	// Allreduce Latency Test v7.3".
	Benchmark string
	// Collective is the catalogue's collective, or PointToPoint.
	Collective string
	World      int
	// WorldFrom says where World comes from: "ranks 0-15 listed",
	// "--world", "line 3: mpirun -np 16 ...".
	WorldFrom string
	// NCCL is what the run's lines say of NCCL and the machine (its
	// release, nodes, channels, choices); nil if nothing.
	NCCL    *NCCLInfo
	Samples []Sample
}

// Samples returns the samples of every run, in order.
func (l *Log) Samples() []Sample {
	var out []Sample
	for _, r := range l.Runs {
		out = append(out, r.Samples...)
	}
	return out
}

// note adds a note about line n.
func (l *Log) note(n int, format string, args ...any) {
	l.Notes = append(l.Notes, fmt.Sprintf("%s:%d: %s", l.File, n, fmt.Sprintf(format, args...)))
}

// Read reads a measurement file of the given format ("" guesses it with
// LogFormat); file names it in errors and in the samples' Source.
func Read(file string, data []byte, format string, opt LogOptions) (*Log, error) {
	if format == "" {
		if format = LogFormat(data); format == "" {
			return nil, fmt.Errorf("%s: neither a results.csv, an nccl-tests log or JSON report, an OSU log nor an IMB log (give the format)", file)
		}
	}
	switch format {
	case FormatResults:
		return ReadResults(file, bytes.NewReader(data), opt)
	case FormatNCCLTests:
		return ReadNCCLTests(file, bytes.NewReader(data), opt)
	case FormatOSU:
		return ReadOSU(file, bytes.NewReader(data), opt)
	case FormatNCCLTestsJSON:
		return ReadNCCLTestsJSON(file, data, opt)
	case FormatIMB:
		return ReadIMB(file, bytes.NewReader(data), opt)
	}
	return nil, fmt.Errorf("format %q: want %s, %s, %s, %s or %s", format, FormatResults, FormatNCCLTests, FormatNCCLTestsJSON, FormatOSU, FormatIMB)
}

// ReadFile reads the measurement file at path (see Read).
func ReadFile(path, format string, opt LogOptions) (*Log, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Read(path, data, format, opt)
}

// scanLines calls read with each line of r, cleaned (cleanLine), and its
// number from 1.
func scanLines(file string, r io.Reader, read func(line string, n int) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := read(cleanLine(sc.Text()), n); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// LogFormat guesses the format of a measurement file from its lines:
// FormatResults, FormatNCCLTests, FormatNCCLTestsJSON (an object with
// nccl-tests' report's version, config and results), FormatOSU,
// FormatIMB, or "" when it is none of them. A results.csv is known by its header, which names the columns
// results.Read needs, in any order; in a log, launchers' prefixes,
// indentation and quote markers are looked through, and a file of bare
// rows of numbers (an OSU log whose "#" lines were lost) is taken for
// OSU's.
func LogFormat(data []byte) string {
	if isNCCLReport(data) {
		return FormatNCCLTestsJSON
	}
	if head, _, _ := bytes.Cut(data, []byte("\n")); bytes.Contains(head, []byte(",")) {
		if _, err := results.Read(bytes.NewReader(head), results.ColDType); err == nil {
			return FormatResults
		}
	}
	numeric := 0
	for i, line := range strings.Split(string(data), "\n") {
		if i > 20000 {
			break
		}
		l := cleanLine(line)
		switch {
		case osuTitle.MatchString(l):
			return FormatOSU
		case ncclMarker.MatchString(l):
			return FormatNCCLTests
		case imbMarker.MatchString(l):
			return FormatIMB
		}
		if m := binaryName.FindStringSubmatch(l); m != nil {
			if strings.HasPrefix(m[1], "osu_") {
				return FormatOSU
			}
			return FormatNCCLTests
		}
		if isNumberRow(strings.Fields(l)) {
			numeric++
		}
	}
	if numeric > 0 {
		return FormatOSU
	}
	return ""
}

// isNumberRow reports whether fields are a size and one to four numbers
// after it: a row of an OSU table.
func isNumberRow(f []string) bool {
	if len(f) < 2 || len(f) > 5 || !isCount(f[0]) {
		return false
	}
	for _, x := range f[1:] {
		if _, ok := parseNumber(x); !ok && x != "Pass" && x != "Fail" {
			return false
		}
	}
	return true
}

// isCount reports whether s is a whole number of bytes.
func isCount(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseNumber reads a finite, non-negative number.
func parseNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// fromFileName reads a benchmark's name in a file's name
// ("all_reduce_perf.log", "osu_bw-2nodes.txt"), for runs nothing else
// names.
func fromFileName(file string) string {
	if m := binaryName.FindStringSubmatch(" " + strings.ReplaceAll(filepath.Base(file), "-", " ")); m != nil {
		return m[1]
	}
	return ""
}

// assumedAlgorithm is what a benchmark of collective is taken to have
// run where its log does not say: the one given, else defaultAlgorithm.
func (o LogOptions) assumedAlgorithm(collective string) string {
	if o.Algorithm != "" {
		return o.Algorithm
	}
	return defaultAlgorithm(collective)
}

// defaultAlgorithm is what a benchmark of collective is taken to have
// run when nobody says: the ring where the collective has one (what NCCL
// and MPI libraries use for large messages), else the catalogue's first.
func defaultAlgorithm(collective string) string {
	c, err := algos.Lookup(collective)
	if err != nil || len(c.Algorithms) == 0 {
		return "ring"
	}
	if a, err := c.Algorithm("ring"); err == nil {
		return a.Name // "ring" may be another algorithm's SMPI name
	}
	return c.Algorithms[0].Name
}

// checkSample refuses samples the model cannot simulate.
func checkSample(s *Sample) error {
	if s.World < 1 || s.World > 1<<20 {
		return fmt.Errorf("world size %d", s.World)
	}
	if s.Bytes < 0 || s.Bytes%s.DType.Size() != 0 {
		return fmt.Errorf("size %d bytes is not a whole number of %s elements", s.Bytes, s.DType)
	}
	if !(s.Time >= 0) || math.IsInf(s.Time, 0) {
		return fmt.Errorf("time %g", s.Time)
	}
	if s.Collective == PointToPoint {
		return checkPointToPoint(s)
	}
	coll, err := algos.Lookup(s.Collective)
	if err != nil {
		return err
	}
	if _, err := coll.Algorithm(strings.SplitN(s.Algorithm, "(", 2)[0]); err != nil {
		return err
	}
	if coll.Rooted && (s.Root < 0 || s.Root >= s.World) {
		s.Root = 0
	}
	return nil
}

// variantParams reads the parameters of a variant name as results write
// it, "pipelined_ring(segment=2MiB)": sizes or whole numbers.
func variantParams(name string) (map[string]int, error) {
	i := strings.IndexByte(name, '(')
	if i < 0 {
		return nil, nil
	}
	if !strings.HasSuffix(name, ")") {
		return nil, fmt.Errorf("algorithm %q: unbalanced parentheses", name)
	}
	out := map[string]int{}
	for _, part := range strings.Split(name[i+1:len(name)-1], ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("algorithm %q: %q is not name=value", name, part)
		}
		n, err := units.ParseBytes(v)
		if err != nil {
			return nil, fmt.Errorf("algorithm %q: %v", name, err)
		}
		out[k] = int(n)
	}
	return out, nil
}
