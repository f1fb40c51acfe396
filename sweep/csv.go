package sweep

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Header is the header of a results CSV file: the columns nccl-tests
// users expect, in this order, then the extras. A column's name ends in
// its unit: _s for seconds, _GB_per_s for GB/s (10^9 bytes per second,
// nccl-tests' algbw and busbw), none for counts.
var Header = []string{
	"collective", "algorithm", "world", "bytes", "dtype", "time_s", "algbw_GB_per_s", "busbw_GB_per_s",
	"params", "op", "repeats", "time_min_s", "time_max_s", "spread_s", "messages",
}

// renamedColumns maps the names earlier versions gave columns of Header
// to today's: algbw_gbps and busbw_gbps held GB/s, not the Gbit/s their
// names suggested.
var renamedColumns = map[string]string{
	"algbw_gbps": "algbw_GB_per_s",
	"busbw_gbps": "busbw_GB_per_s",
}

// CurrentColumns returns a copy of head with the names earlier versions
// gave its columns replaced by today's, so that readers of results files
// accept the files of those versions too.
func CurrentColumns(head []string) []string {
	out := slices.Clone(head)
	for i, name := range out {
		if now, ok := renamedColumns[name]; ok {
			out[i] = now
		}
	}
	return out
}

// TimeDecimals is how many decimals of a second Record gives times: the
// simulator's clock counts whole picoseconds (sim.Time), so fewer digits
// would lose ticks and more would only print floating-point noise.
const TimeDecimals = 12

// RequiredColumns is how many columns of Header every results file has
// first, in that order.
const RequiredColumns = 8

// Record returns r as CSV fields in the order of Header: times with
// TimeDecimals decimals (NewRow rounds them to that resolution, so ReadCSV
// gives back the same Row), other floats with the fewest digits that read
// back exactly, so the output is deterministic.
func (r Row) Record() []string { return r.RecordDecimals(TimeDecimals) }

// RecordDecimals is Record with times given to decimals decimals of a
// second: the resolution of the clock that measured them (9 for a
// nanosecond clock).
func (r Row) RecordDecimals(decimals int) []string {
	sec := func(t float64) string { return strconv.FormatFloat(t, 'f', decimals, 64) }
	return []string{
		r.Collective,
		r.Algorithm,
		strconv.Itoa(r.World),
		strconv.Itoa(r.Bytes),
		r.DType,
		sec(r.Time),
		formatFloat(r.AlgBW),
		formatFloat(r.BusBW),
		r.Params,
		r.Op,
		strconv.Itoa(r.Repeats),
		sec(r.TimeMin),
		sec(r.TimeMax),
		sec(r.Spread),
		strconv.FormatInt(r.Messages, 10),
	}
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// CSVWriter writes rows as CSV, the header first.
type CSVWriter struct {
	w      *csv.Writer
	header bool
}

// NewCSVWriter returns a writer of rows to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// WriteHeader writes the header if it has not been written yet, so that
// a run of no points still makes a valid file.
func (c *CSVWriter) WriteHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	return c.w.Write(Header)
}

// Write writes r, after the header.
func (c *CSVWriter) Write(r Row) error {
	if err := c.WriteHeader(); err != nil {
		return err
	}
	return c.w.Write(r.Record())
}

// Flush writes any buffered data and returns the first error of any
// write.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// CSVError is a problem with a results file ReadCSV reads.
type CSVError struct {
	// Line is the line of the problem, from 1.
	Line int
	Msg  string
}

func (e *CSVError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ReadCSV reads a results file that CSVWriter wrote (the header must be
// Header, exactly, or the header of an earlier version: see
// CurrentColumns), giving back the rows it wrote.
func ReadCSV(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &CSVError{Line: 1, Msg: "empty file: want the header of a results file"}
	}
	if err != nil {
		return nil, csvErr(err)
	}
	if !slices.Equal(CurrentColumns(head), Header) {
		return nil, &CSVError{Line: 1, Msg: fmt.Sprintf("header %q is not the one nexar-sim writes (%q)", head, Header)}
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, csvErr(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(Header) {
			return nil, &CSVError{Line: line, Msg: fmt.Sprintf("%d fields, want %d", len(rec), len(Header))}
		}
		row, err := parseRecord(rec)
		if err != nil {
			return nil, &CSVError{Line: line, Msg: err.Error()}
		}
		rows = append(rows, row)
	}
}

func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &CSVError{Line: pe.Line, Msg: pe.Err.Error()}
	}
	return err
}

func parseRecord(rec []string) (Row, error) {
	var err error
	num := func(col int) int {
		n, e := strconv.Atoi(rec[col])
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %q is not a whole number", Header[col], rec[col])
		}
		return n
	}
	flt := func(col int) float64 {
		f, e := strconv.ParseFloat(rec[col], 64)
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %q is not a number", Header[col], rec[col])
		}
		return f
	}
	r := Row{
		Collective: rec[0], Algorithm: rec[1], World: num(2), Bytes: num(3), DType: rec[4],
		Time: flt(5), AlgBW: flt(6), BusBW: flt(7),
		Params: rec[8], Op: rec[9], Repeats: num(10),
		TimeMin: flt(11), TimeMax: flt(12), Spread: flt(13), Messages: int64(num(14)),
	}
	if err == nil {
		if _, e := ParseParams(r.Params); e != nil {
			err = e
		}
	}
	return r, err
}
