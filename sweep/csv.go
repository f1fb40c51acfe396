package sweep

import (
	"io"

	"github.com/nexar-go/nexar-go/results"
)

// ReadCSV reads the rows of a results.csv of nexar-sim's columns
// (results.SimColumns, found by name, an earlier version's names too) as
// results.Read reads them, with each row's params checked (ParseParams):
// the rows a run wrote, without their world changes (Row.Recovery and
// Row.Join, which the file does not hold). Its errors are
// *results.Error.
func ReadCSV(r io.Reader) ([]Row, error) {
	t, err := results.Read(r, results.SimColumns...)
	if err != nil {
		return nil, err
	}
	return Rows(t)
}

// Rows returns the rows of t as sweep's, each row's params checked
// (ParseParams).
func Rows(t *results.Table) ([]Row, error) {
	var rows []Row
	for i, r := range t.Rows {
		if _, err := ParseParams(r.Params); err != nil {
			return nil, t.Errorf(i, results.ColParams, "%v", err)
		}
		rows = append(rows, Row{Row: r})
	}
	return rows, nil
}
