package results

import (
	"fmt"
	"io"
	"math"

	"github.com/nexar-go/nexar-go/units"
)

// ncclTypeNames are the names nccl-tests prints for element types, by the
// dtype column's names; the types NCCL lacks keep nexar's names.
var ncclTypeNames = map[string]string{
	"f16": "half", "bf16": "bfloat16", "f32": "float", "f64": "double",
	"i8": "int8", "u8": "uint8", "i32": "int32", "u32": "uint32",
	"i64": "int64", "u64": "uint64",
}

// NCCLTypeName is the name nccl-tests gives the element type named dtype
// (the dtype column's "f32" is nccl-tests' "float"); a type NCCL lacks
// keeps its name.
func NCCLTypeName(dtype string) string {
	if n, ok := ncclTypeNames[dtype]; ok {
		return n
	}
	return dtype
}

// TableLine is one line of an NCCLTable: a row and what nccl-tests prints of
// its point besides.
type TableLine struct {
	Row
	// Count is the number of elements the collective moves (nccl-tests'
	// count column).
	Count int
	// Redop is the reduction operator, "none" for a collective that does
	// not reduce ("" prints as "none").
	Redop string
	// Root is the root rank of a rooted collective, -1 for the others.
	Root int
	// Times are the point's timed iterations in seconds, for a table's
	// MinMax columns; none gives the row's TimeMin, TimeAvg (or Time) and
	// TimeMax.
	Times []float64
}

// NCCLTable prints rows as nccl-tests does, so that they read like the GPU
// collective benchmarks people already know: one block per collective,
// algorithm and world size, one line per size with size, count, type,
// redop, root, time (µs), algbw, busbw (GB/s) and #wrong, and a summary
// at the end. nexar-live prints it as points finish, nexar-sim once a run
// is done; calibrate.ReadNCCLTests reads it back.
type NCCLTable struct {
	// Header, if set, is printed under each block's first line, as a
	// comment: how the time column was measured.
	Header string
	// MinMax adds three columns at the end of every line, as OSU's
	// benchmarks print them with -f: the fastest, mean and slowest timed
	// iteration of the point, in µs.
	MinMax bool

	w        io.Writer
	cur      string
	wrong    int64
	busbw    float64
	lines    int
	preamble []string
}

// NewNCCLTable returns a table printing to w; preamble lines (without "# ")
// are printed first, as nccl-tests prints its settings.
func NewNCCLTable(w io.Writer, preamble ...string) *NCCLTable {
	return &NCCLTable{w: w, preamble: preamble}
}

// Add prints the line of l, with a block header first when the
// collective, algorithm or world size changes.
func (t *NCCLTable) Add(l TableLine) {
	if t.preamble != nil {
		for _, p := range t.preamble {
			fmt.Fprintf(t.w, "# %s\n", p)
		}
		t.preamble = nil
	}
	key := l.Collective + "\x00" + l.Algorithm + "\x00" + fmt.Sprint(l.World)
	if key != t.cur {
		t.cur = key
		t.header(l)
	}
	redop := l.Redop
	if redop == "" {
		redop = "none"
	}
	// nccl-tests' widths and precisions: "%12li  %12li  %8s  %6s  %6i",
	// then "  %7s  %6.2f  %6.2f  %5g" for the time, bandwidths and errors.
	fmt.Fprintf(t.w, "%12d  %12d  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %5g",
		l.Bytes, l.Count, NCCLTypeName(l.DType), redop, l.Root, units.FormatNCCLMicros(l.Time), l.AlgBW, l.BusBW, float64(l.Wrong))
	if t.MinMax {
		lo, avg, hi := l.minAvgMax()
		fmt.Fprintf(t.w, "  %7s  %7s  %7s", units.FormatNCCLMicros(lo), units.FormatNCCLMicros(avg), units.FormatNCCLMicros(hi))
	}
	fmt.Fprintln(t.w)
	t.wrong += max(l.Wrong, 0)
	t.busbw += l.BusBW
	t.lines++
}

// header prints the header of l's block.
func (t *NCCLTable) header(l TableLine) {
	fmt.Fprintf(t.w, "#\n# Collective test starting: %s (algorithm %s, %d ranks)\n", l.Collective, l.Algorithm, l.World)
	if t.Header != "" {
		fmt.Fprintf(t.w, "# %s\n", t.Header)
	}
	names := fmt.Sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong")
	units := fmt.Sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "")
	if t.MinMax {
		// The lines print #wrong in the 5 characters of "%5g", the header
		// in 6: one space less keeps the columns under their names.
		names += fmt.Sprintf(" %7s  %7s  %7s", "min", "avg", "max")
		units += fmt.Sprintf(" %7s  %7s  %7s", "(us)", "(us)", "(us)")
	}
	fmt.Fprintf(t.w, "#\n%s\n%s\n", names, units)
}

// minAvgMax are the fastest, mean and slowest of l's timed iterations.
func (l TableLine) minAvgMax() (lo, avg, hi float64) {
	if len(l.Times) == 0 {
		avg = l.TimeAvg
		if avg == 0 {
			avg = l.Time
		}
		return l.TimeMin, avg, l.TimeMax
	}
	return MinAvgMax(l.Times)
}

// MinAvgMax returns the smallest, the mean and the largest of times; all 0
// for none.
func MinAvgMax(times []float64) (lo, avg, hi float64) {
	if len(times) == 0 {
		return 0, 0, 0
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	sum := 0.0
	for _, x := range times {
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	return lo, sum / float64(len(times)), hi
}

// Close prints the summary: the wrong elements in total and the average
// bus bandwidth, as nccl-tests ends (C's %g: six significant digits).
func (t *NCCLTable) Close() {
	status := "OK"
	if t.wrong > 0 {
		status = "FAILED"
	}
	avg := 0.0
	if t.lines > 0 {
		avg = t.busbw / float64(t.lines)
	}
	fmt.Fprintf(t.w, "#\n# Out of bounds values : %d %s\n# Avg bus bandwidth    : %.6g\n#\n", t.wrong, status, avg)
}

// Wrong is the total of wrong elements printed so far.
func (t *NCCLTable) Wrong() int64 { return t.wrong }
