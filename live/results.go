package live

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/sweep"
)

// Result is the measurement of one point on real ranks: a results.csv
// row as nexar-sim writes it, with the count of wrong elements.
//
// The Row's fields mean what they mean for a simulated point, with
// "repeat" read as "timed iteration": Time is the median over the timed
// iterations of the slowest rank's time in each, TimeMin and TimeMax the
// fastest and slowest such iteration, Spread half their difference,
// Repeats the number of timed iterations, and Messages the messages all
// ranks together sent to each other in one iteration.
type Result struct {
	sweep.Row
	// Wrong is the number of elements, summed over ranks, that differed
	// from the reference result, in each rank's worst iteration (warm-up
	// included); -1 when unknown (a file of nexar-sim's has no such
	// column).
	Wrong int64
	// Times are the timed iterations' times in seconds, each the slowest
	// rank's, in the order they ran (not written to results.csv).
	Times []float64
	// LateStarts counts the iterations, over all ranks, that a rank
	// started after the agreed instant (see RunRank; not written to
	// results.csv): their times include the delay.
	LateStarts int64
	// Device is where the ranks' buffers were: "" (or DeviceHost) for
	// host memory, DeviceCUDA for GPUs (a run with --device cuda, whose
	// results.csv has a device column; see DeviceHeader).
	Device string
	// Transport is the transport thresholds the ranks used (the
	// bulk_threshold and eager_threshold columns); nil when the file does
	// not say (nexar-sim's, or nexar-live's before it wrote them).
	Transport *Thresholds
}

// Thresholds are the sizes at which realnet changes how it sends a
// message, as a run's ranks used them (see realnet.Config) and as
// results.csv records them, in whole bytes.
type Thresholds = algos.Thresholds

// ThresholdColumns are the columns that record a run's Thresholds, last
// in results.csv (after device, when there is one).
var ThresholdColumns = []string{"bulk_threshold", "eager_threshold"}

// ThresholdsOf returns the thresholds ranks configured with cfg use:
// realnet's defaults where cfg leaves them zero, and never the bulk path
// (nor the eager one, which needs it) with cfg.NoBulk.
func ThresholdsOf(cfg realnet.Config) Thresholds { return cfg.Used() }

// thresholdRecord returns t as results.csv's columns.
func thresholdRecord(t Thresholds) []string {
	return []string{strconv.Itoa(t.Bulk), strconv.Itoa(t.Eager)}
}

// Header is the header of the results.csv nexar-live writes: nexar-sim's
// columns (sweep.Header), then wrong; a run's file then has the
// ThresholdColumns (see ResultsWriter.Transport).
var Header = append(slices.Clone(sweep.Header), "wrong")

// DeviceHeader is the header of the results.csv of a run on a device
// other than the host: Header, then device (then the ThresholdColumns).
var DeviceHeader = append(slices.Clone(Header), "device")

// TimeDecimals is how many decimals of a second results.csv gives
// times: nexar-live measures with a nanosecond clock (time.Duration), so
// digits beyond would be floating-point noise (nexar-sim's files, of a
// picosecond clock, have sweep.TimeDecimals).
const TimeDecimals = 9

// Record returns r as CSV fields in the order of Header, times with
// TimeDecimals decimals.
func (r Result) Record() []string {
	return append(r.Row.RecordDecimals(TimeDecimals), strconv.FormatInt(r.Wrong, 10))
}

// ResultsWriter writes results as CSV, the header first.
type ResultsWriter struct {
	w      *csv.Writer
	header bool
	// Device, if set to a device other than the host, adds the device
	// column (DeviceHeader) with that value in every row.
	Device string
	// Transport, if set, adds the ThresholdColumns with its values in
	// every row, after the device column.
	Transport *Thresholds
}

// withDevice reports whether the writer writes the device column.
func (c *ResultsWriter) withDevice() bool { return c.Device != "" && c.Device != DeviceHost }

// NewResultsWriter returns a writer of results to w.
func NewResultsWriter(w io.Writer) *ResultsWriter { return &ResultsWriter{w: csv.NewWriter(w)} }

// WriteHeader writes the header if it has not been written yet.
func (c *ResultsWriter) WriteHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	head := Header
	if c.withDevice() {
		head = DeviceHeader
	}
	if c.Transport != nil {
		head = append(slices.Clone(head), ThresholdColumns...)
	}
	return c.w.Write(head)
}

// Write writes r, after the header, and flushes it: a run that dies
// later keeps the rows already measured.
func (c *ResultsWriter) Write(r Result) error {
	if err := c.WriteHeader(); err != nil {
		return err
	}
	rec := r.Record()
	if c.withDevice() {
		rec = append(rec, c.Device)
	}
	if c.Transport != nil {
		rec = append(rec, thresholdRecord(*c.Transport)...)
	}
	if err := c.w.Write(rec); err != nil {
		return err
	}
	return c.Flush()
}

// Flush writes buffered data and returns the first error of any write.
func (c *ResultsWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// ReadResults reads a results file that nexar-live or nexar-sim wrote:
// the header must start with sweep.Header (or an earlier version's names
// of its columns: sweep.CurrentColumns) and may add, found by name,
// wrong, device and the ThresholdColumns (both or neither). Rows of
// nexar-sim's files get Wrong = -1; rows without the ThresholdColumns a
// nil Transport.
func ReadResults(r io.Reader) ([]Result, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &sweep.CSVError{Line: 1, Msg: "empty file: want the header of a results file"}
	}
	if err != nil {
		return nil, err
	}
	head = sweep.CurrentColumns(head)
	col, err := extraColumns(head)
	if err != nil {
		return nil, &sweep.CSVError{Line: 1, Msg: err.Error()}
	}
	var out []Result
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, &sweep.CSVError{Line: line, Msg: fmt.Sprintf("%d fields, want %d", len(rec), len(head))}
		}
		res, err := parseResult(rec, col["wrong"])
		if err != nil {
			return nil, &sweep.CSVError{Line: line, Msg: err.Error()}
		}
		if i := col["device"]; i > 0 {
			if res.Device, err = ParseDevice(rec[i]); err != nil {
				return nil, &sweep.CSVError{Line: line, Msg: "device: " + err.Error()}
			}
		}
		if i, j := col[ThresholdColumns[0]], col[ThresholdColumns[1]]; i > 0 {
			if res.Transport, err = calibrate.ParseThresholds(rec[i], rec[j]); err != nil {
				return nil, &sweep.CSVError{Line: line, Msg: err.Error()}
			}
		}
		out = append(out, res)
	}
}

// extraColumns checks that head is sweep.Header followed by nexar-live's
// columns, each at most once, and returns where those are (absent: 0).
func extraColumns(head []string) (map[string]int, error) {
	if len(head) < len(sweep.Header) || !slices.Equal(head[:len(sweep.Header)], sweep.Header) {
		return nil, fmt.Errorf("header %q is neither nexar-live's (%q) nor nexar-sim's", head, Header)
	}
	known := append([]string{"wrong", "device"}, ThresholdColumns...)
	col := map[string]int{}
	for i := len(sweep.Header); i < len(head); i++ {
		name := head[i]
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("column %q: want only %s after nexar-sim's columns", name, strings.Join(known, ", "))
		}
		if col[name] > 0 {
			return nil, fmt.Errorf("column %q appears twice", name)
		}
		col[name] = i
	}
	if (col[ThresholdColumns[0]] > 0) != (col[ThresholdColumns[1]] > 0) {
		return nil, fmt.Errorf("want both %s columns or neither", strings.Join(ThresholdColumns, " and "))
	}
	return col, nil
}

// ReadResultsFile reads the results file at path; errors name the file.
func ReadResultsFile(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rs, err := ReadResults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}

// ReadPartialResults reads the rows a run that did not finish left in
// its partial file (results.partial.csv): complete rows only, for a run
// killed, or out of disk space, in the middle of a row leaves it cut,
// without the line break every complete row ends with.
func ReadPartialResults(r io.Reader) ([]Result, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil, &sweep.CSVError{Line: 1, Msg: "no complete line: want the header of a results file"}
	}
	return ReadResults(bytes.NewReader(b[:i+1]))
}

// parseResult reads a row's nexar-sim columns, and its wrong column at
// index wrong (none: 0).
func parseResult(rec []string, wrong int) (Result, error) {
	var firstErr error
	col := func(i int) string { return sweep.Header[i] }
	num := func(i int) int {
		n, err := strconv.Atoi(rec[i])
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %q is not a whole number", col(i), rec[i])
		}
		return n
	}
	flt := func(i int) float64 {
		f, err := strconv.ParseFloat(rec[i], 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %q is not a number", col(i), rec[i])
		}
		return f
	}
	r := Result{Row: sweep.Row{
		Collective: rec[0], Algorithm: rec[1], World: num(2), Bytes: num(3), DType: rec[4],
		Time: flt(5), AlgBW: flt(6), BusBW: flt(7), Params: rec[8], Op: rec[9], Repeats: num(10),
		TimeMin: flt(11), TimeMax: flt(12), Spread: flt(13),
	}, Wrong: -1}
	m, err := strconv.ParseInt(rec[14], 10, 64)
	if err != nil && firstErr == nil {
		firstErr = fmt.Errorf("messages: %q is not a whole number", rec[14])
	}
	r.Messages = m
	if wrong > 0 {
		w, err := strconv.ParseInt(rec[wrong], 10, 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("wrong: %q is not a whole number", rec[wrong])
		}
		r.Wrong = w
	}
	if firstErr == nil && (r.World < 1 || r.Bytes < 0 || r.Time < 0) {
		firstErr = fmt.Errorf("world %d, bytes %d, time %g: not a measurement", r.World, r.Bytes, r.Time)
	}
	return r, firstErr
}
