package live

import (
	"io"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/results"
)

// Result is the measurement of one point on real ranks: its row of
// results.csv (results.Row, nexar-live's columns with nexar-sim's), and
// what the file does not hold.
//
// The Row's fields mean what they mean for a simulated point, with
// "repeat" read as "timed iteration": Time is the median over the timed
// iterations of the slowest rank's time in each, TimeMin and TimeMax the
// fastest and slowest such iteration, Spread half their difference,
// Repeats the number of timed iterations, and Messages the messages all
// ranks together sent to each other in one iteration. Wrong is the number
// of elements, summed over ranks, that differed from the reference result
// in each rank's worst iteration (0 in a file of nexar-sim's, which has no
// such column), Device where the ranks' buffers were ("" or DeviceHost:
// host memory; DeviceCUDA: GPUs, a run with --device cuda).
type Result struct {
	results.Row
	// Times are the timed iterations' times in seconds, each the slowest
	// rank's, in the order they ran (not written to results.csv).
	Times []float64
	// LateStarts counts the iterations, over all ranks, that a rank
	// started after the agreed instant (see RunRank; not written to
	// results.csv): their times include the delay.
	LateStarts int64
}

// Rows returns the results.csv rows of rs.
func Rows(rs []Result) []results.Row {
	out := make([]results.Row, len(rs))
	for i, r := range rs {
		out[i] = r.Row
	}
	return out
}

// Transport returns the transport thresholds the ranks used (the
// bulk_threshold and eager_threshold columns); nil when the row does not
// record them (a file of nexar-sim's, or of nexar-live's before it wrote
// them).
func (r Result) Transport() *Thresholds {
	if !r.HasThresholds() {
		return nil
	}
	return &Thresholds{Bulk: r.BulkThreshold, Eager: r.EagerThreshold}
}

// setTransport records t (nil: none) as the thresholds r's ranks used.
func (r *Result) setTransport(t *Thresholds) {
	r.BulkThreshold, r.EagerThreshold = 0, 0
	if t != nil {
		r.BulkThreshold, r.EagerThreshold = t.Bulk, t.Eager
	}
}

// Thresholds are the sizes at which realnet changes how it sends a
// message, as a run's ranks used them (see realnet.Config) and as
// results.csv records them, in whole bytes.
type Thresholds = algos.Thresholds

// ThresholdsOf returns the thresholds ranks configured with cfg use:
// realnet's defaults where cfg leaves them zero, and never the bulk path
// (nor the eager one, which needs it) with cfg.NoBulk.
func ThresholdsOf(cfg realnet.Config) Thresholds { return cfg.Used() }

// resultsColumns returns the columns of the results.csv of a run on
// device (DeviceHost if "") whose ranks used the thresholds t (nil: not
// recorded): results.LiveColumns, the device column for a device other
// than the host.
func resultsColumns(device string, t *Thresholds) []string {
	return results.LiveColumns(device != "" && device != DeviceHost, t != nil)
}

// newResultsWriter returns a writer of the results.csv of such a run to
// w, times to the nanosecond of the clock that measured them
// (results.LiveDecimals).
func newResultsWriter(w io.Writer, device string, t *Thresholds) *results.Writer {
	return results.NewWriter(w, resultsColumns(device, t), results.LiveDecimals)
}

// ReadResults reads a results.csv that nexar-live or nexar-sim wrote, or
// an earlier version of either (results.Read, nexar-sim's columns needed):
// the rows of nexar-sim's files have Wrong 0, no Device and no
// Transport; a device column must name one of Devices.
func ReadResults(r io.Reader) ([]Result, error) {
	t, err := results.Read(r, results.SimColumns...)
	if err != nil {
		return nil, err
	}
	return resultsOf(t)
}

// resultsOf returns the results of t's rows, checking their devices.
func resultsOf(t *results.Table) ([]Result, error) {
	var out []Result
	for i, row := range t.Rows {
		if t.Has(results.ColDevice) {
			if _, err := ParseDevice(row.Device); err != nil {
				return nil, t.Errorf(i, results.ColDevice, "%v", err)
			}
		}
		out = append(out, Result{Row: row})
	}
	return out, nil
}

// ReadResultsFile reads the results file at path; errors name the file.
func ReadResultsFile(path string) ([]Result, error) {
	t, err := results.ReadFile(path, results.SimColumns...)
	if err != nil {
		return nil, err
	}
	rs, err := resultsOf(t)
	if err != nil {
		return nil, results.WithFile(err, path)
	}
	return rs, nil
}

// ReadPartialResults reads the rows a run that did not finish left in
// its partial file (results.partial.csv): complete rows only
// (results.ReadPartial), for a run killed, or out of disk space, in the
// middle of a row leaves it cut.
func ReadPartialResults(r io.Reader) ([]Result, error) {
	t, err := results.ReadPartial(r, results.SimColumns...)
	if err != nil {
		return nil, err
	}
	return resultsOf(t)
}
