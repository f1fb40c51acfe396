package live

import (
	"io"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// NCCLTypeName is the name nccl-tests gives dt ("float" for f32).
func NCCLTypeName(dt device.DType) string { return results.NCCLTypeName(dt.String()) }

// Table prints results as nccl-tests does (results.NCCLTable, which
// nexar-sim prints too), so that they read like the GPU collective
// benchmarks people already know: one block per collective, algorithm
// and world, one line per size with size, count, type, redop, root, time
// (µs), algbw, busbw (GB/s) and #wrong, and a summary at the end. Its
// output is also what ParseNCCLTests reads.
type Table struct {
	// Timing, if set, is named in every block's header: nccl-tests'
	// readers take a loop's mean for granted, and the agreed start's
	// median is another figure.
	Timing Timing
	// MinMax adds the fastest, mean and slowest timed iteration of each
	// point (nexar-live run --minmax, OSU's -f).
	MinMax bool

	t *results.NCCLTable
}

// NewTable returns a table printing to w; preamble lines (without "# ")
// are printed first, as nccl-tests prints its settings.
func NewTable(w io.Writer, preamble ...string) *Table {
	return &Table{t: results.NewNCCLTable(w, preamble...)}
}

// Add prints the line of one result, with a block header first when the
// collective, algorithm or world changes.
func (t *Table) Add(p sweep.Point, r Result) {
	switch t.Timing {
	case TimingStart:
		t.t.Header = "timing: start (time = median over iterations of the slowest rank from an agreed start)"
	case TimingLoop:
		t.t.Header = "timing: loop (time = the slowest rank's mean over back-to-back iterations, as nccl-tests)"
	}
	t.t.MinMax = t.MinMax
	t.t.Add(sweep.TableLine(p, r.Row, r.Times))
}

// Close prints the summary: the wrong elements in total and the average
// bus bandwidth, as nccl-tests ends (C's %g: six significant digits).
func (t *Table) Close() { t.t.Close() }

// Wrong is the total of wrong elements printed so far.
func (t *Table) Wrong() int64 { return t.t.Wrong() }
