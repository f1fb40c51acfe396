package results

import (
	"encoding/csv"
	"fmt"
	"io"
)

// Writer writes rows as a results.csv of the columns it was made with,
// the header first: nexar-sim's file with SimColumns and SimDecimals,
// nexar-live's with LiveColumns and LiveDecimals. Times get the decimals
// given, bandwidths the fewest digits that read back exactly, so that the
// output is deterministic.
type Writer struct {
	w        *csv.Writer
	columns  []string
	decimals int
	header   bool
}

// NewWriter returns a writer to w of the columns given (names of Row's
// columns, ColCollective...) with times to decimals decimals of a second.
func NewWriter(w io.Writer, columns []string, decimals int) *Writer {
	return &Writer{w: csv.NewWriter(w), columns: columns, decimals: decimals}
}

// WriteHeader writes the header if it has not been written yet, so that
// a file of no rows is still a results.csv. A name that is not one of
// Row's columns is an error.
func (w *Writer) WriteHeader() error {
	if w.header {
		return nil
	}
	for _, name := range w.columns {
		if _, ok := columns[name]; !ok {
			return fmt.Errorf("results: %q is not a column of results.csv", name)
		}
	}
	w.header = true
	return w.w.Write(w.columns)
}

// Write writes r, after the header.
func (w *Writer) Write(r Row) error {
	if err := w.WriteHeader(); err != nil {
		return err
	}
	rec := make([]string, len(w.columns))
	for i, name := range w.columns {
		rec[i] = columns[name].format(&r, w.decimals)
	}
	return w.w.Write(rec)
}

// Flush writes any buffered data to the underlying writer and returns
// the first error of any write.
func (w *Writer) Flush() error {
	w.w.Flush()
	return w.w.Error()
}
