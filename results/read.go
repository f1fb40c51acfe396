package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Error is a problem with a results.csv: where it is (file, line,
// column), what is wrong and what was expected there.
type Error struct {
	// File is the file's name, "" when the reader was given none (see
	// WithFile).
	File string
	// Line is the line, from 1 (the header's); that of the field for a
	// field, of the record's first field for a record.
	Line int
	// Column is the column's name; "" for the header or a record as a
	// whole.
	Column string
	// Err is what is wrong.
	Err error
	// Want is what was expected, "" where Err says it.
	Want string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	fmt.Fprintf(&b, "%d: ", e.Line)
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q: ", e.Column)
	}
	b.WriteString(e.Err.Error())
	if e.Want != "" {
		b.WriteString("; want ")
		b.WriteString(e.Want)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// WithFile returns err naming file: an *Error with its File set, any
// other error prefixed with the name.
func WithFile(err error, file string) error {
	var e *Error
	if errors.As(err, &e) {
		named := *e
		named.File = file
		return &named
	}
	return fmt.Errorf("%s: %w", file, err)
}

// Table is a results.csv as Read reads it.
type Table struct {
	// Columns are the header's columns in its order, today's names for
	// Row's (an earlier version's names mapped), the others as they are
	// named.
	Columns []string
	// Rows are the records, in order; Lines[i] is the line Rows[i]
	// starts on.
	Rows  []Row
	Lines []int
}

// Has reports whether the file has the column named.
func (t *Table) Has(name string) bool { return slices.Contains(t.Columns, name) }

// Unknown returns the columns of the file that are none of Row's, which
// Read ignores.
func (t *Table) Unknown() []string {
	var out []string
	for _, name := range t.Columns {
		if _, ok := columns[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// Errorf returns an *Error in column name ("" for the row as a whole) of
// row i, which the caller found wrong.
func (t *Table) Errorf(i int, name, format string, args ...any) *Error {
	return &Error{Line: t.Lines[i], Column: name, Err: fmt.Errorf(format, args...)}
}

// Read reads a results.csv of nexar-sim or nexar-live, or of an earlier
// version of either: a header naming the columns, then a record per row.
// Columns are found by name, in any order, case and surrounding spaces
// ignored, and earlier versions' names (algbw_gbps, busbw_gbps) mapped to
// today's. The KeyColumns and the columns need names are required; the
// others read as zero where the file does not have them, and columns
// that are none of Row's are ignored (Table.Unknown lists them). Each
// field is trimmed of spaces and must hold what its column holds (a whole
// number of ranks, a time in seconds that is finite and not negative...);
// an empty field reads as zero, but in the KeyColumns and bulk_threshold.
// The bulk_threshold and eager_threshold columns go together. Any problem
// is an *Error naming its line and column.
func Read(r io.Reader, need ...string) (*Table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a clearer message
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Line: 1, Err: errors.New("empty file"), Want: "a header naming the columns (" + strings.Join(SimColumns, ",") + ")"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	t := &Table{}
	fields, err := t.header(head, need)
	if err != nil {
		return nil, err
	}
	width := len(head)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return nil, &Error{Line: line, Err: fmt.Errorf("%d fields, the header has %d", len(rec), width)}
		}
		var row Row
		for _, f := range fields {
			if err := parseField(&row, f.name, strings.TrimSpace(rec[f.i])); err != nil {
				err.Line, _ = cr.FieldPos(f.i)
				return nil, err
			}
		}
		t.Rows = append(t.Rows, row)
		t.Lines = append(t.Lines, line)
	}
}

// field is a column of Row's in a file: its name and index.
type field struct {
	name string
	i    int
}

// header reads the header into t.Columns and returns Row's columns in it,
// in its order, checking that it names each column once and has those
// needed.
func (t *Table) header(head, need []string) ([]field, error) {
	var fields []field
	seen := map[string]bool{}
	for i, name := range head {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if name == "" {
			continue
		}
		name, ok := known(name)
		if seen[strings.ToLower(name)] {
			return nil, &Error{Line: 1, Column: name, Err: errors.New("appears twice in the header")}
		}
		seen[strings.ToLower(name)] = true
		t.Columns = append(t.Columns, name)
		if ok {
			fields = append(fields, field{name, i})
		}
	}
	required := append(slices.Clone(KeyColumns), need...)
	for _, name := range required {
		if !t.Has(name) {
			return nil, &Error{Line: 1, Err: fmt.Errorf("the header has no %q column", name), Want: strings.Join(required, ", ")}
		}
	}
	if t.Has(ColBulkThreshold) != t.Has(ColEagerThreshold) {
		return nil, &Error{Line: 1, Err: fmt.Errorf("the header has one of the %s columns", strings.Join(ThresholdColumns, " and ")), Want: "both or neither"}
	}
	return fields, nil
}

// parseField reads the trimmed field v of the column name into r.
func parseField(r *Row, name, v string) *Error {
	c := columns[name]
	if v == "" {
		if c.given {
			return &Error{Column: name, Err: errors.New("empty"), Want: c.want}
		}
		return nil
	}
	if err := c.parse(r, v); err != nil {
		return &Error{Column: name, Err: err, Want: c.want}
	}
	return nil
}

// csvError turns an error of the CSV reader into an *Error.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("results: reading CSV: %w", err)
}

// ReadFile reads the results.csv at path (see Read); its errors name the
// file.
func ReadFile(path string, need ...string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f, need...)
	if err != nil {
		return nil, WithFile(err, path)
	}
	return t, nil
}

// ReadPartial reads the rows of a results.csv that a run which did not
// finish left (see Read): complete rows only, for a run killed, or out of
// disk space, in the middle of a row leaves it cut, without the line
// break every complete row ends with.
func ReadPartial(r io.Reader, need ...string) (*Table, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil, &Error{Line: 1, Err: errors.New("no complete line"), Want: "the header of a results.csv"}
	}
	return Read(bytes.NewReader(b[:i+1]), need...)
}
