package sweep

import (
	"encoding/csv"
	"io"
	"strconv"
)

// Header is the header of a results CSV file.
var Header = []string{"collective", "algorithm", "world", "bytes", "dtype", "time_s", "algbw_gbps", "busbw_gbps"}

// Record returns r as CSV fields in the order of Header. Floats are
// formatted with the fewest digits that read back exactly, so the output
// is deterministic.
func (r Row) Record() []string {
	return []string{
		r.Collective,
		r.Algorithm,
		strconv.Itoa(r.World),
		strconv.Itoa(r.Bytes),
		r.DType,
		formatFloat(r.Time),
		formatFloat(r.AlgBW),
		formatFloat(r.BusBW),
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
