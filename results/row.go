package results

import "slices"

// Row is one row of a results.csv: one point (a collective, an algorithm
// variant, a world size, a message size and an element type) and the time
// it took, simulated by nexar-sim or measured by nexar-live. Each field is
// a column, named in its comment; nexar-live's columns are zero in a file
// that does not have them.
type Row struct {
	// Collective (collective) is the collective's catalogue name:
	// "allreduce".
	Collective string
	// Algorithm (algorithm) is the variant's name, the catalogue's
	// algorithm with the parameters the sweep set: "ring",
	// "pipelined_ring(segment=2MiB)".
	Algorithm string
	// World (world) is the number of ranks.
	World int
	// Bytes (bytes) is the message size run, after the collective's
	// rounding.
	Bytes int
	// DType (dtype) is the element type: "f32".
	DType string
	// Time (time_s) is the collective's time in seconds, from the start
	// to when the last rank finished: the median over the repeats when the
	// point ran several times (for nexar-live, over the timed iterations,
	// each the slowest rank's).
	Time float64
	// AlgBW (algbw_GB_per_s) is Bytes/Time in GB/s (10^9 bytes per
	// second), and BusBW (busbw_GB_per_s) is AlgBW times the collective's
	// bus factor, as nccl-tests reports them; both are 0 when Bytes or
	// Time is.
	AlgBW, BusBW float64
	// Params (params) are the parameters the sweep set, as "name=value"
	// pairs in bytes or plain numbers, sorted by name and joined by ";":
	// the machine-readable form of the parentheses of Algorithm. Empty if
	// none.
	Params string
	// Op (op) is the reduction operator of reducing collectives, else
	// empty.
	Op string
	// Repeats (repeats) is the number of runs the point took (for
	// nexar-live, of timed iterations).
	Repeats int
	// TimeMin (time_min_s) and TimeMax (time_max_s) are the fastest and
	// slowest of the repeats, and Spread (spread_s) is half their
	// difference: the half-width of the error bar plots draw. With one
	// run, TimeMin = TimeMax = Time and Spread = 0.
	TimeMin, TimeMax, Spread float64
	// TimeAvg (time_avg_s, optional: nexar-live writes it with --minmax)
	// is the mean of the repeats; 0 in a file without the column.
	TimeAvg float64
	// Messages (messages) is the number of messages all ranks together
	// sent in the (first) run.
	Messages int64

	// Wrong (wrong, nexar-live's) is the number of elements, summed over
	// ranks, that differed from the reference result, in each rank's worst
	// iteration (warm-up included); -1 means unknown. A file without the
	// column (nexar-sim's) reads as 0.
	Wrong int64
	// Device (device, nexar-live's, written only for a run on a device
	// other than the host) is where the ranks' buffers were: "cuda" for
	// GPUs; "" or "host" for host memory.
	Device string
	// BulkThreshold (bulk_threshold) and EagerThreshold
	// (eager_threshold), nexar-live's, are the transport thresholds the
	// ranks used, in bytes (see realnet.Config): messages of BulkThreshold
	// bytes or more took the bulk path (-1: never), and from
	// EagerThreshold bytes it sent them eagerly (0: off). Both are 0 where
	// the row does not record them (nexar-sim's files, nexar-live's before
	// it wrote them): a run's bulk threshold is never 0 (HasThresholds).
	BulkThreshold, EagerThreshold int
}

// DeviceCUDA is the device column's value for a run whose buffers were
// on GPUs (nexar-live run --device cuda).
const DeviceCUDA = "cuda"

// HasThresholds reports whether r records the transport thresholds its
// ranks used (BulkThreshold and EagerThreshold).
func (r Row) HasThresholds() bool { return r.BulkThreshold != 0 }

// The columns of a results.csv, by name. A column's name ends in its
// unit: _s for seconds, _GB_per_s for GB/s (10^9 bytes per second,
// nccl-tests' algbw and busbw), none for counts and bytes.
const (
	ColCollective     = "collective"
	ColAlgorithm      = "algorithm"
	ColWorld          = "world"
	ColBytes          = "bytes"
	ColDType          = "dtype"
	ColTime           = "time_s"
	ColAlgBW          = "algbw_GB_per_s"
	ColBusBW          = "busbw_GB_per_s"
	ColParams         = "params"
	ColOp             = "op"
	ColRepeats        = "repeats"
	ColTimeMin        = "time_min_s"
	ColTimeMax        = "time_max_s"
	ColSpread         = "spread_s"
	ColTimeAvg        = "time_avg_s"
	ColMessages       = "messages"
	ColWrong          = "wrong"
	ColDevice         = "device"
	ColBulkThreshold  = "bulk_threshold"
	ColEagerThreshold = "eager_threshold"
)

// SimColumns are the columns nexar-sim writes, in its order: those
// nccl-tests users expect, then the extras. nexar-live writes them first
// too.
var SimColumns = []string{
	ColCollective, ColAlgorithm, ColWorld, ColBytes, ColDType, ColTime, ColAlgBW, ColBusBW,
	ColParams, ColOp, ColRepeats, ColTimeMin, ColTimeMax, ColSpread, ColMessages,
}

// MinMaxColumns are the optional columns of nexar-live's --minmax (OSU's
// -f): the mean of the timed iterations, beside their fastest and
// slowest (time_min_s and time_max_s, which every file has). WithMinMax
// adds them.
var MinMaxColumns = []string{ColTimeAvg}

// WithMinMax returns cols with the MinMaxColumns after time_max_s (at the
// end if cols lacks it), unless cols has them already.
func WithMinMax(cols []string) []string {
	if slices.Contains(cols, ColTimeAvg) {
		return cols
	}
	i := slices.Index(cols, ColTimeMax)
	if i < 0 {
		return append(slices.Clone(cols), MinMaxColumns...)
	}
	return slices.Insert(slices.Clone(cols), i+1, MinMaxColumns...)
}

// ThresholdColumns are the columns that record the transport thresholds
// a nexar-live run's ranks used, last in its results.csv.
var ThresholdColumns = []string{ColBulkThreshold, ColEagerThreshold}

// LiveColumns returns the columns nexar-live writes: SimColumns, then
// wrong, then device for a run on a device other than the host (device),
// then the ThresholdColumns when it records them (thresholds).
func LiveColumns(device, thresholds bool) []string {
	cols := append(slices.Clone(SimColumns), ColWrong)
	if device {
		cols = append(cols, ColDevice)
	}
	if thresholds {
		cols = append(cols, ThresholdColumns...)
	}
	return cols
}

// KeyColumns are the columns every results.csv has, which Read requires:
// the point (but its dtype, which plots do without) and its time.
var KeyColumns = []string{ColCollective, ColAlgorithm, ColWorld, ColBytes, ColTime}

// Decimals of a second the writers give times: as many as the clock that
// made them resolves, so that fewer would lose ticks and more would only
// print floating-point noise.
const (
	// SimDecimals: the simulator's clock counts whole picoseconds
	// (sim.Time).
	SimDecimals = 12
	// LiveDecimals: nexar-live measures with a nanosecond clock
	// (time.Duration).
	LiveDecimals = 9
)

// oldNames maps the names earlier versions gave columns to today's:
// algbw_gbps and busbw_gbps held GB/s, not the Gbit/s their names
// suggested.
var oldNames = map[string]string{
	"algbw_gbps": ColAlgBW,
	"busbw_gbps": ColBusBW,
}
