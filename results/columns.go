package results

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// column is how one column of results.csv is written and read: the field
// of Row it holds, and what its fields may be.
type column struct {
	// format writes r's field; decimals is for times.
	format func(r *Row, decimals int) string
	// parse reads the trimmed, non-empty field v into r; its error says
	// what is wrong with v, and want what the column holds.
	parse func(r *Row, v string) error
	want  string
	// given: an empty field is an error; otherwise it reads as the
	// field's zero value.
	given bool
}

// columns are every column Row has, by name.
var columns = map[string]column{
	ColCollective:     text(func(r *Row) *string { return &r.Collective }, true, "a collective's name"),
	ColAlgorithm:      text(func(r *Row) *string { return &r.Algorithm }, true, "an algorithm's name"),
	ColWorld:          integer(func(r *Row) *int { return &r.World }, 1, math.MaxInt32, true, "a number of ranks, 1 or more"),
	ColBytes:          integer(func(r *Row) *int { return &r.Bytes }, 0, math.MaxInt, true, "a number of bytes"),
	ColDType:          text(func(r *Row) *string { return &r.DType }, false, ""),
	ColTime:           seconds(func(r *Row) *float64 { return &r.Time }, true),
	ColAlgBW:          rate(func(r *Row) *float64 { return &r.AlgBW }),
	ColBusBW:          rate(func(r *Row) *float64 { return &r.BusBW }),
	ColParams:         text(func(r *Row) *string { return &r.Params }, false, ""),
	ColOp:             text(func(r *Row) *string { return &r.Op }, false, ""),
	ColRepeats:        integer(func(r *Row) *int { return &r.Repeats }, 0, math.MaxInt, false, "a number of runs"),
	ColTimeMin:        seconds(func(r *Row) *float64 { return &r.TimeMin }, false),
	ColTimeMax:        seconds(func(r *Row) *float64 { return &r.TimeMax }, false),
	ColSpread:         seconds(func(r *Row) *float64 { return &r.Spread }, false),
	ColTimeAvg:        seconds(func(r *Row) *float64 { return &r.TimeAvg }, false),
	ColMessages:       integer(func(r *Row) *int64 { return &r.Messages }, 0, math.MaxInt64, false, "a number of messages"),
	ColWrong:          integer(func(r *Row) *int64 { return &r.Wrong }, -1, math.MaxInt64, false, "a number of elements, or -1 (unknown)"),
	ColDevice:         text(func(r *Row) *string { return &r.Device }, false, ""),
	ColBulkThreshold:  bulkThreshold(),
	ColEagerThreshold: integer(func(r *Row) *int { return &r.EagerThreshold }, 0, math.MaxInt, false, "a number of bytes (0: off)"),
}

// text is a column of strings; a given one may not be empty.
func text(field func(*Row) *string, given bool, want string) column {
	return column{
		format: func(r *Row, _ int) string { return *field(r) },
		parse:  func(r *Row, v string) error { *field(r) = v; return nil },
		want:   want,
		given:  given,
	}
}

// integer is a column of whole numbers from lo to hi.
func integer[T int | int64](field func(*Row) *T, lo, hi int64, given bool, want string) column {
	return column{
		format: func(r *Row, _ int) string { return strconv.FormatInt(int64(*field(r)), 10) },
		parse: func(r *Row, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return fmt.Errorf("%q is not a whole number", v)
			}
			if err != nil || n < lo || n > hi {
				return fmt.Errorf("%s is out of range [%d, %d]", v, lo, hi)
			}
			*field(r) = T(n)
			return nil
		},
		want:  want,
		given: given,
	}
}

// bulkThreshold is the bulk_threshold column: a number of bytes from 1,
// or -1 (never); 0 would be the default of realnet.Config, which a run
// records resolved, and is what a row without thresholds holds.
func bulkThreshold() column {
	c := integer(func(r *Row) *int { return &r.BulkThreshold }, -1, math.MaxInt, true, "a number of bytes from 1, or -1 (never)")
	parse := c.parse
	c.parse = func(r *Row, v string) error {
		if err := parse(r, v); err != nil {
			return err
		}
		if r.BulkThreshold == 0 {
			return errors.New("0 is not a threshold a run used")
		}
		return nil
	}
	return c
}

// seconds is a column of times: finite and not negative, written with
// the writer's decimals.
func seconds(field func(*Row) *float64, given bool) column {
	c := number(field, given, "a number of seconds")
	c.format = func(r *Row, decimals int) string { return strconv.FormatFloat(*field(r), 'f', decimals, 64) }
	return c
}

// rate is a column of bandwidths in GB/s, written with the fewest digits
// that read back exactly.
func rate(field func(*Row) *float64) column {
	return number(field, false, "a bandwidth in GB/s")
}

// number is a column of finite numbers that are not negative.
func number(field func(*Row) *float64, given bool, want string) column {
	return column{
		format: func(r *Row, _ int) string { return strconv.FormatFloat(*field(r), 'g', -1, 64) },
		parse: func(r *Row, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return fmt.Errorf("%q is not a number", v)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return fmt.Errorf("%q is not a finite number of 0 or more", v)
			}
			*field(r) = x
			return nil
		},
		want:  want,
		given: given,
	}
}

// known returns today's name of a header's column name (case and
// surrounding spaces ignored, earlier versions' names mapped) and
// whether it is one of Row's.
func known(name string) (string, bool) {
	low := strings.ToLower(name)
	if now, ok := oldNames[low]; ok {
		return now, true
	}
	for c := range columns {
		if strings.ToLower(c) == low {
			return c, true
		}
	}
	return name, false
}
