package plots

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Columns of results.csv that ReadCSV uses. The first five are required;
// the rest are optional and read as zero when absent or empty. Any other
// column (algbw_GB_per_s, parameters, seeds) is ignored, so the sweep may
// add columns freely.
const (
	ColCollective = "collective"
	ColAlgorithm  = "algorithm"
	ColWorld      = "world"
	ColBytes      = "bytes"
	ColTime       = "time_s"
	ColDType      = "dtype"
	ColBusBW      = "busbw_GB_per_s" // GB/s, 10^9 bytes per second
	ColSpread     = "spread_s"       // half-width of the time's spread, seconds
)

// oldColumns maps the names earlier versions of results.csv gave columns
// to today's (lower-cased, as ReadCSV matches them): busbw_gbps held
// GB/s, not Gbit/s.
var oldColumns = map[string]string{"busbw_gbps": strings.ToLower(ColBusBW)}

var requiredColumns = []string{ColCollective, ColAlgorithm, ColWorld, ColBytes, ColTime}

// ParseError reports a results.csv line ReadCSV cannot use.
type ParseError struct {
	File   string // set by ReadCSVFile
	Line   int    // 1-based line of the record (of its first field)
	Column string // column name, "" for errors of the whole record
	Err    error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	fmt.Fprintf(&b, "%d: ", e.Line)
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q: ", e.Column)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// ReadCSV reads the points of a results.csv: a header naming the columns
// (in any order, matched by name, case and surrounding spaces ignored), then
// one point per record. A missing required column, a duplicate column, a
// record with the wrong number of fields, or a field that is not a valid
// number is a *ParseError naming the line and column. A file with a header
// and no records gives no points and no error.
func ReadCSV(r io.Reader) ([]Point, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a clearer message
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &ParseError{Line: 1, Err: errors.New("empty file: want a header line")}
	}
	if err != nil {
		return nil, csvError(err)
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))
		if name == "" {
			continue
		}
		if now, ok := oldColumns[name]; ok {
			name = now
		}
		if _, dup := col[name]; dup {
			return nil, &ParseError{Line: 1, Column: name, Err: errors.New("column appears twice in the header")}
		}
		col[name] = i
	}
	for _, name := range requiredColumns {
		if _, ok := col[name]; !ok {
			return nil, &ParseError{Line: 1, Err: fmt.Errorf("header has no %q column (need %s)", name, strings.Join(requiredColumns, ", "))}
		}
	}
	width := len(header)

	var points []Point
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return points, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return nil, &ParseError{Line: line, Err: fmt.Errorf("record has %d fields, header has %d", len(rec), width)}
		}
		f := fieldReader{rec: rec, col: col, line: line, cr: cr}
		p := Point{
			Collective: f.text(ColCollective, true),
			Algorithm:  f.text(ColAlgorithm, true),
			DType:      f.text(ColDType, false),
			World:      int(f.integer(ColWorld, 1, math.MaxInt32)),
			Bytes:      f.integer(ColBytes, 0, math.MaxInt64),
			Time:       f.float(ColTime, true),
			BusBW:      f.float(ColBusBW, false),
			Spread:     f.float(ColSpread, false),
		}
		if f.err != nil {
			return nil, f.err
		}
		points = append(points, p)
	}
}

// ReadCSVFile reads the results.csv at path; errors name the file.
func ReadCSVFile(path string) ([]Point, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	defer fh.Close()
	pts, err := ReadCSV(fh)
	var pe *ParseError
	if errors.As(err, &pe) {
		pe.File = path
	}
	return pts, err
}

func csvError(err error) error {
	var ce *csv.ParseError
	if errors.As(err, &ce) {
		return &ParseError{Line: ce.Line, Err: ce.Err}
	}
	return fmt.Errorf("plots: reading CSV: %w", err)
}

// fieldReader parses the fields of one record, keeping the first error.
type fieldReader struct {
	rec  []string
	col  map[string]int
	line int
	cr   *csv.Reader
	err  error
}

// get returns the trimmed field of column name and whether it is present
// and non-empty; a required field that is not is an error.
func (f *fieldReader) get(name string, required bool) (string, bool) {
	if f.err != nil {
		return "", false
	}
	i, ok := f.col[strings.ToLower(name)]
	if !ok {
		return "", false
	}
	v := strings.TrimSpace(f.rec[i])
	if v == "" {
		if required {
			f.fail(name, errors.New("empty"))
		}
		return "", false
	}
	return v, true
}

func (f *fieldReader) fail(name string, err error) {
	line := f.line
	if l, _ := f.cr.FieldPos(f.col[strings.ToLower(name)]); l > 0 {
		line = l
	}
	f.err = &ParseError{Line: line, Column: name, Err: err}
}

func (f *fieldReader) text(name string, required bool) string {
	v, _ := f.get(name, required)
	return v
}

func (f *fieldReader) integer(name string, lo, hi int64) int64 {
	v, ok := f.get(name, true)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f.fail(name, fmt.Errorf("%q is not an integer", v))
		return 0
	}
	if n < lo || n > hi {
		f.fail(name, fmt.Errorf("%d is out of range [%d, %d]", n, lo, hi))
		return 0
	}
	return n
}

// float parses a finite, non-negative number.
func (f *fieldReader) float(name string, required bool) float64 {
	v, ok := f.get(name, required)
	if !ok {
		return 0
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		f.fail(name, fmt.Errorf("%q is not a number", v))
		return 0
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		f.fail(name, fmt.Errorf("%q is not a finite non-negative number", v))
		return 0
	}
	return x
}
