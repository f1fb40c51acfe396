package plots

import (
	"io"

	"github.com/nexar-go/nexar-go/results"
)

// ReadCSV reads the points of a results.csv of nexar-sim, nexar-live or
// any other writer as results.Read reads it: the columns found by name,
// results.KeyColumns required, dtype, busbw_GB_per_s and spread_s read
// when present (zero when absent or empty), the others ignored. A problem
// is a *results.Error naming the line and column. A file with a header
// and no records gives no points and no error.
func ReadCSV(r io.Reader) ([]Point, error) {
	t, err := results.Read(r)
	if err != nil {
		return nil, err
	}
	return pointsOf(t), nil
}

// ReadCSVFile reads the results.csv at path; errors name the file.
func ReadCSVFile(path string) ([]Point, error) {
	t, err := results.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return pointsOf(t), nil
}

// pointsOf returns the points of t's rows.
func pointsOf(t *results.Table) []Point {
	var points []Point
	for _, r := range t.Rows {
		points = append(points, Point{Collective: r.Collective, Algorithm: r.Algorithm, DType: r.DType, World: r.World,
			Bytes: int64(r.Bytes), Time: r.Time, BusBW: r.BusBW, Spread: r.Spread})
	}
	return points
}
