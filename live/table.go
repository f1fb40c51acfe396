package live

import (
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
)

// ncclTypeNames are the names nccl-tests prints for element types; the
// types NCCL lacks keep nexar's names.
var ncclTypeNames = map[device.DType]string{
	device.F16: "half", device.BF16: "bfloat16", device.F32: "float", device.F64: "double",
	device.I8: "int8", device.U8: "uint8", device.I32: "int32", device.U32: "uint32",
	device.I64: "int64", device.U64: "uint64",
}

// NCCLTypeName is the name nccl-tests gives dt ("float" for f32).
func NCCLTypeName(dt device.DType) string {
	if n, ok := ncclTypeNames[dt]; ok {
		return n
	}
	return dt.String()
}

// Table prints results as nccl-tests does, so that they read like the GPU
// collective benchmarks people already know: one block per collective and
// algorithm, one line per size with size, count, type, redop, root, time
// (µs), algbw, busbw (GB/s) and #wrong, and a summary at the end. Its
// output is also what ParseNCCLTests reads.
type Table struct {
	// Timing, if set, is named in every block's header: nccl-tests'
	// readers take a loop's mean for granted, and the agreed start's
	// median is another figure.
	Timing Timing

	w        io.Writer
	cur      string
	wrong    int64
	busbw    float64
	lines    int
	preamble []string
}

// NewTable returns a table printing to w; preamble lines (without "# ")
// are printed first, as nccl-tests prints its settings.
func NewTable(w io.Writer, preamble ...string) *Table {
	return &Table{w: w, preamble: preamble}
}

// Add prints the line of one result, with a block header first when the
// collective or algorithm changes.
func (t *Table) Add(p sweep.Point, r Result) {
	if t.preamble != nil {
		for _, l := range t.preamble {
			fmt.Fprintf(t.w, "# %s\n", l)
		}
		t.preamble = nil
	}
	key := r.Collective + "\x00" + r.Algorithm + "\x00" + fmt.Sprint(r.World)
	if key != t.cur {
		t.cur = key
		fmt.Fprintf(t.w, "#\n# Collective test starting: %s (algorithm %s, %d ranks)\n", r.Collective, r.Algorithm, r.World)
		switch t.Timing {
		case TimingStart:
			fmt.Fprintf(t.w, "# timing: start (time = median over iterations of the slowest rank from an agreed start)\n")
		case TimingLoop:
			fmt.Fprintf(t.w, "# timing: loop (time = the slowest rank's mean over back-to-back iterations, as nccl-tests)\n")
		}
		fmt.Fprintf(t.w, "#\n# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong")
		fmt.Fprintf(t.w, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "")
	}
	redop := "none"
	if p.Collective.Reduces {
		redop = p.Op.String()
	}
	root := -1
	if p.Collective.Rooted {
		root = p.Root
	}
	// nccl-tests' widths and precisions: "%12li  %12li  %8s  %6s  %6i",
	// then "  %7s  %6.2f  %6.2f  %5g" for the time, bandwidths and errors.
	fmt.Fprintf(t.w, "%12d  %12d  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %5g\n",
		r.Bytes, used(p), NCCLTypeName(p.DType), redop, root, units.FormatNCCLMicros(r.Time), r.AlgBW, r.BusBW, float64(r.Wrong))
	t.wrong += max(r.Wrong, 0)
	t.busbw += r.BusBW
	t.lines++
}

// Close prints the summary: the wrong elements in total and the average
// bus bandwidth, as nccl-tests ends (C's %g: six significant digits).
func (t *Table) Close() {
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
func (t *Table) Wrong() int64 { return t.wrong }
