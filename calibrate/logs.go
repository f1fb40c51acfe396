package calibrate

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
)

// LogOptions fill in what a benchmark log does not say.
type LogOptions struct {
	// Collective, if set, overrides or supplies the collective ("allreduce").
	Collective string
	// Algorithm names the algorithm the benchmark ran, as the catalogue
	// names it (the library's choice is not in the log): the model
	// simulates that one. Default: "ring" where the collective has one,
	// else the catalogue's first algorithm of it.
	Algorithm string
	// World, if positive, overrides or supplies the number of ranks (an
	// OSU log does not print it).
	World int
	// DType, if set, supplies the element type where the log has none
	// (an OSU log of an old version); default f32.
	DType string
	// InPlace takes nccl-tests' in-place times instead of the
	// out-of-place ones.
	InPlace bool
}

// LogError is a line of a benchmark log that cannot be read.
type LogError struct {
	File string
	Line int
	Msg  string
}

func (e *LogError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ncclCollectives maps nccl-tests' and OSU's names of collectives to the
// catalogue's.
var ncclCollectives = map[string]string{
	"all_reduce": "allreduce", "allreduce": "allreduce",
	"all_gather": "allgather", "allgather": "allgather",
	"reduce_scatter": "reduce_scatter", "reduce-scatter": "reduce_scatter",
	"broadcast": "broadcast", "bcast": "broadcast",
	"reduce": "reduce", "alltoall": "alltoall", "all_to_all": "alltoall",
	"gather": "gather", "scatter": "scatter", "barrier": "barrier",
}

// ncclTypes maps nccl-tests' type names to dtypes.
var ncclTypes = map[string]device.DType{
	"half": device.F16, "float16": device.F16, "bfloat16": device.BF16, "float": device.F32, "float32": device.F32,
	"double": device.F64, "float64": device.F64, "int8": device.I8, "char": device.I8, "uint8": device.U8,
	"int32": device.I32, "int": device.I32, "uint32": device.U32, "int64": device.I64, "uint64": device.U64,
}

func logDType(name string) (device.DType, bool) {
	if dt, ok := ncclTypes[strings.ToLower(name)]; ok {
		return dt, true
	}
	dt, err := device.ParseDType(strings.ToLower(name))
	return dt, err == nil
}

// algorithm is the algorithm samples of collective are simulated with.
func (o LogOptions) algorithm(collective string) string {
	if o.Algorithm != "" {
		return o.Algorithm
	}
	return defaultAlgorithm(collective)
}

// defaultAlgorithm is what a benchmark of collective is taken to have run
// when nobody says: the ring where the collective has one (what NCCL
// and MPI libraries use for large messages), else the catalogue's first.
func defaultAlgorithm(collective string) string {
	c, err := algos.Lookup(collective)
	if err != nil || len(c.Algorithms) == 0 {
		return "ring"
	}
	if _, err := c.Algorithm("ring"); err == nil {
		return "ring"
	}
	return c.Algorithms[0].Name
}

// checkSample refuses samples the catalogue cannot simulate.
func checkSample(s *Sample) error {
	coll, err := algos.Lookup(s.Collective)
	if err != nil {
		return err
	}
	if _, err := coll.Algorithm(strings.SplitN(s.Algorithm, "(", 2)[0]); err != nil {
		return err
	}
	if s.World < 1 || s.World > 1<<20 {
		return fmt.Errorf("world size %d", s.World)
	}
	if s.Bytes < 0 || s.Bytes%s.DType.Size() != 0 {
		return fmt.Errorf("size %d bytes is not a whole number of %s elements", s.Bytes, s.DType)
	}
	if !(s.Time >= 0) || math.IsInf(s.Time, 0) {
		return fmt.Errorf("time %g", s.Time)
	}
	if coll.Rooted && (s.Root < 0 || s.Root >= s.World) {
		s.Root = 0
	}
	return nil
}

var (
	ncclStartRe = regexp.MustCompile(`^#\s*Collective test starting:\s*([A-Za-z_]+?)(?:_perf(?:_mpi)?)?\s*(?:\(algorithm ([A-Za-z0-9_()=;,.]+), (\d+) ranks\))?\s*$`)
	ncclRankRe  = regexp.MustCompile(`^#\s+Rank\s+(\d+)\s`)
	ncclNGPUsRe = regexp.MustCompile(`nThread\s+(\d+)\s+nGpus\s+(\d+)`)
)

// ParseNCCLTests reads the output of an nccl-tests benchmark
// (all_reduce_perf and its siblings), or the table of nexar-live itself,
// into samples: one per size, with the out-of-place time (the in-place
// one with opt.InPlace).
//
// It reads, from the layout nccl-tests prints:
//
//   - the collective, from "# Collective test starting: all_reduce_perf"
//     (nexar-live adds "(algorithm ring, 4 ranks)"), else opt.Collective;
//   - the world size, from the "#  Rank  N Group ..." lines (one per
//     rank), else from "nThread T nGpus G" (T x G, when one process
//     ran), else opt.World, which overrides all of them when set;
//   - the column header "#  size  count  type  redop  root  time  algbw
//     busbw  #wrong  time  algbw  busbw  #wrong", whose names place the
//     columns (older versions have no redop or root, or "error" for
//     "#wrong"), and the lines of numbers under it; sizes are in bytes,
//     times in microseconds. A time of "N/A" leaves the line out.
//
// Anything else (the summary, warnings, NCCL's INFO lines) is skipped.
func ParseNCCLTests(file string, r io.Reader, opt LogOptions) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []Sample
	coll, alg, world := "", "", 0
	var params map[string]int
	perProcess := 0
	ranks := map[int]bool{}
	var cols []string // names of the current table's columns
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		trim := strings.TrimSpace(text)
		if trim == "" {
			continue
		}
		if m := ncclStartRe.FindStringSubmatch(trim); m != nil {
			coll = ncclCollectives[strings.ToLower(m[1])]
			if coll == "" {
				coll = strings.ToLower(m[1])
			}
			alg, world = opt.Algorithm, 0
			params = nil
			if m[2] != "" && opt.Algorithm == "" {
				alg = m[2]
				var err error
				if params, err = variantParams(alg); err != nil {
					return nil, &LogError{file, line, err.Error()}
				}
			}
			if m[3] != "" {
				world, _ = strconv.Atoi(m[3])
			}
			cols = nil
			continue
		}
		if m := ncclRankRe.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			ranks[n] = true
			continue
		}
		if m := ncclNGPUsRe.FindStringSubmatch(text); m != nil {
			t, _ := strconv.Atoi(m[1])
			g, _ := strconv.Atoi(m[2])
			perProcess = t * g // one process's threads times its GPUs
		}
		if strings.HasPrefix(trim, "#") {
			f := strings.Fields(strings.TrimPrefix(trim, "#"))
			if len(f) >= 4 && f[0] == "size" && f[1] == "count" && f[2] == "type" {
				cols = f
			}
			continue
		}
		if cols == nil {
			continue // not in a table
		}
		f := strings.Fields(trim)
		if len(f) != len(cols) {
			if _, err := strconv.Atoi(f[0]); err == nil {
				return nil, &LogError{file, line, fmt.Sprintf("%d fields under a header of %d (%s)", len(f), len(cols), strings.Join(cols, " "))}
			}
			continue
		}
		s, skip, err := ncclSample(cols, f, opt)
		if err != nil {
			return nil, &LogError{file, line, err.Error()}
		}
		if skip {
			continue
		}
		s.Collective, s.Algorithm, s.World, s.Params = coll, alg, world, params
		if opt.Collective != "" {
			s.Collective = opt.Collective
		}
		if s.Algorithm == "" {
			s.Algorithm = opt.algorithm(s.Collective)
		}
		switch {
		case world > 0:
		case len(ranks) > 0:
			s.World = len(ranks)
		default:
			s.World = perProcess
		}
		if opt.World > 0 {
			s.World = opt.World
		}
		if s.Collective == "" {
			return nil, &LogError{file, line, "no collective: the log has no \"# Collective test starting\" line; name one"}
		}
		if s.World == 0 {
			return nil, &LogError{file, line, "no world size: the log has no \"# Rank\" lines; give it"}
		}
		s.Source = fmt.Sprintf("%s:%d", file, line)
		if err := checkSample(&s); err != nil {
			return nil, &LogError{file, line, err.Error()}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &LogError{file, line, "no nccl-tests results (a \"#  size  count  type ...\" header and lines of numbers under it)"}
	}
	return out, nil
}

// ncclSample reads one line of numbers under header cols.
func ncclSample(cols, f []string, opt LogOptions) (Sample, bool, error) {
	var s Sample
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || size < 0 || size > 1<<50 {
		return s, false, fmt.Errorf("size %q is not a number of bytes", f[0])
	}
	s.Bytes = int(size)
	dt, ok := logDType(f[2])
	if !ok {
		return s, false, fmt.Errorf("unknown type %q", f[2])
	}
	s.DType = dt
	timeCol, second := -1, false
	for i, c := range cols {
		switch c {
		case "redop":
			op := strings.ToLower(f[i])
			switch op {
			case "none", "avg":
				op = "sum" // the time of an average is a sum's
			}
			if s.Op, err = device.ParseOp(op); err != nil {
				return s, false, fmt.Errorf("redop %q", f[i])
			}
		case "root":
			n, err := strconv.Atoi(f[i])
			if err != nil {
				return s, false, fmt.Errorf("root %q", f[i])
			}
			s.Root = max(n, 0)
		case "time":
			// The first time is out-of-place, the second in-place.
			if timeCol < 0 || opt.InPlace && !second {
				second = timeCol >= 0
				timeCol = i
			}
		}
	}
	if timeCol < 0 {
		return s, false, fmt.Errorf("no time column")
	}
	if f[timeCol] == "N/A" {
		return s, true, nil
	}
	us, err := strconv.ParseFloat(f[timeCol], 64)
	if err != nil || !(us >= 0) || math.IsInf(us, 0) {
		return s, false, fmt.Errorf("time %q is not a number of microseconds", f[timeCol])
	}
	s.Time = us * 1e-6
	return s, false, nil
}

var (
	osuTitleRe = regexp.MustCompile(`(?i)^#\s*OSU\s+(?:MPI|NCCL|RCCL|MPI-CUDA|MPI-ROCM|UCC|OpenSHMEM|UPC)?[-\w]*\s*(Non-blocking\s+)?([A-Za-z_-]+)\s+Latency\s+Test`)
	osuTypeRe  = regexp.MustCompile(`(?i)^#\s*Datatype:\s*MPI_([A-Z0-9_]+)`)
	osuColSep  = regexp.MustCompile(`\s{2,}`)
)

var mpiTypes = map[string]device.DType{
	"CHAR": device.I8, "SIGNED_CHAR": device.I8, "UNSIGNED_CHAR": device.U8, "BYTE": device.U8,
	"SHORT": device.I16, "INT": device.I32, "UNSIGNED": device.U32, "LONG": device.I64, "LONG_LONG": device.I64,
	"FLOAT": device.F32, "DOUBLE": device.F64, "INT8_T": device.I8, "INT16_T": device.I16, "INT32_T": device.I32,
	"INT64_T": device.I64, "UINT8_T": device.U8, "UINT16_T": device.U16, "UINT32_T": device.U32, "UINT64_T": device.U64,
}

// ParseOSU reads the output of an OSU micro-benchmark of a collective
// (osu_allreduce, osu_bcast, ...) into samples: one per size, with the
// average latency.
//
// It reads the title ("# OSU MPI Allreduce Latency Test v7.3"), which
// names the collective, the datatype line ("# Datatype: MPI_FLOAT.") if
// there is one, the column header ("# Size       Avg Latency(us)", with
// more columns under -f), and the lines of numbers under it. OSU does
// not print the number of ranks: opt.World must give it. OSU's sizes are
// converted to nccl-tests' convention, the whole buffer: for allgather,
// gather and scatter OSU's size is one rank's block, and for alltoall the
// block sent to each rank, so they are multiplied by the world size.
func ParseOSU(file string, r io.Reader, opt LogOptions) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	coll := opt.Collective
	dt := device.F32
	if opt.DType != "" {
		var ok bool
		if dt, ok = logDType(opt.DType); !ok {
			return nil, fmt.Errorf("%s: unknown dtype %q", file, opt.DType)
		}
	}
	sizeCol, timeCol := -1, -1
	var out []Sample
	line := 0
	for sc.Scan() {
		line++
		trim := strings.TrimSpace(strings.TrimRight(sc.Text(), "\r"))
		if trim == "" {
			continue
		}
		if m := osuTitleRe.FindStringSubmatch(trim); m != nil {
			if opt.Collective == "" {
				name := strings.ToLower(m[2])
				if coll = ncclCollectives[name]; coll == "" {
					return nil, &LogError{file, line, fmt.Sprintf("OSU benchmark %q is not a collective nexar-go has", m[2])}
				}
			}
			sizeCol, timeCol = -1, -1
			continue
		}
		if m := osuTypeRe.FindStringSubmatch(trim); m != nil && opt.DType == "" {
			t, ok := mpiTypes[strings.ToUpper(strings.TrimSuffix(m[1], "."))]
			if !ok {
				return nil, &LogError{file, line, fmt.Sprintf("datatype MPI_%s has no nexar-go dtype", m[1])}
			}
			dt = t
			continue
		}
		if strings.HasPrefix(trim, "#") {
			// Columns are separated by two spaces or more: names have one.
			cols := osuColSep.Split(strings.TrimSpace(strings.TrimPrefix(trim, "#")), -1)
			s, t := -1, -1
			for i, c := range cols {
				switch {
				case strings.EqualFold(c, "Size"):
					s = i
				case strings.HasPrefix(strings.ToLower(c), "avg latency"):
					t = i
				}
			}
			if t >= 0 {
				sizeCol, timeCol = s, t
				if s < 0 {
					// The barrier: a latency and no size; the
					// numbers line has only the columns named.
					sizeCol = -2
				}
			}
			continue
		}
		if timeCol < 0 {
			continue
		}
		f := strings.Fields(trim)
		ti := timeCol
		var size int64
		if sizeCol >= 0 {
			if len(f) <= max(sizeCol, timeCol) {
				return nil, &LogError{file, line, fmt.Sprintf("%d fields, want at least %d", len(f), max(sizeCol, timeCol)+1)}
			}
			var err error
			if size, err = strconv.ParseInt(f[sizeCol], 10, 64); err != nil || size < 0 || size > 1<<40 {
				continue // not a line of numbers
			}
		} else if len(f) <= ti {
			return nil, &LogError{file, line, fmt.Sprintf("%d fields, want at least %d", len(f), ti+1)}
		}
		us, err := strconv.ParseFloat(f[ti], 64)
		if err != nil {
			continue
		}
		if coll == "" {
			return nil, &LogError{file, line, "no collective: the log has no \"# OSU ... Latency Test\" title; name one"}
		}
		if opt.World < 1 {
			return nil, &LogError{file, line, "OSU logs do not say how many ranks ran: give the world size"}
		}
		s := Sample{Collective: coll, Algorithm: opt.algorithm(coll), World: opt.World, DType: dt, Op: device.Sum,
			Time: us * 1e-6, Source: fmt.Sprintf("%s:%d", file, line)}
		switch coll {
		case "allgather", "gather", "scatter", "alltoall":
			size *= int64(opt.World)
		}
		if size > 1<<50 {
			return nil, &LogError{file, line, "size too large"}
		}
		s.Bytes = int(size)
		if coll == "barrier" {
			s.Bytes = 0
		}
		if err := checkSample(&s); err != nil {
			return nil, &LogError{file, line, err.Error()}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &LogError{file, line, "no OSU results (a \"# Size  Avg Latency(us)\" header and lines of numbers under it)"}
	}
	return out, nil
}

// LogFormat guesses the format of a measurement file from its first
// bytes: "results" (a results.csv), "nccl-tests", "osu", or "".
func LogFormat(head []byte) string {
	s := string(head)
	switch {
	case strings.HasPrefix(s, "collective,algorithm,world,bytes"):
		return "results"
	case regexp.MustCompile(`(?m)^#\s*OSU\s`).MatchString(s):
		return "osu"
	case regexp.MustCompile(`(?m)^#\s*(nThread|Collective test starting|\s*size\s+count\s+type|nexar-live:|Using devices|nccl-tests)`).MatchString(s):
		return "nccl-tests"
	}
	return ""
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
		n, err := scenario.ParseBytes(v)
		if err != nil {
			return nil, fmt.Errorf("algorithm %q: %v", name, err)
		}
		out[k] = int(n)
	}
	return out, nil
}
