package plots

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
)

const goodCSV = `collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s,seed
allreduce,ring,8,1048576,f32,0.000345,3.04,5.32,1
allreduce,auto,8,1048576,f32,3.5e-4,3,5.2,1
`

func TestReadCSV(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    []Point
		errLine int    // 0: no error
		errCol  string // column named in the error
		errText string // substring of the error
	}{
		{
			name: "results.csv with extra columns",
			in:   goodCSV,
			want: []Point{
				{Collective: "allreduce", Algorithm: "ring", DType: "f32", World: 8, Bytes: 1 << 20, Time: 0.000345, BusBW: 5.32},
				{Collective: "allreduce", Algorithm: "auto", DType: "f32", World: 8, Bytes: 1 << 20, Time: 3.5e-4, BusBW: 5.2},
			},
		},
		{
			name: "columns in another order, spaces, BOM, CRLF, spread, no busbw",
			in:   "\ufeff Time_S , bytes,world,algorithm,collective,spread_s\r\n1e-5, 64 ,2,tree,bcast,2e-6\r\n",
			want: []Point{{Collective: "bcast", Algorithm: "tree", World: 2, Bytes: 64, Time: 1e-5, Spread: 2e-6}},
		},
		{
			name: "results.csv of an earlier version: busbw_gbps",
			in:   strings.Replace(goodCSV, "algbw_GB_per_s,busbw_GB_per_s", "algbw_gbps,busbw_gbps", 1),
			want: []Point{
				{Collective: "allreduce", Algorithm: "ring", DType: "f32", World: 8, Bytes: 1 << 20, Time: 0.000345, BusBW: 5.32},
				{Collective: "allreduce", Algorithm: "auto", DType: "f32", World: 8, Bytes: 1 << 20, Time: 3.5e-4, BusBW: 5.2},
			},
		},
		{name: "both names of busbw", in: "collective,algorithm,world,bytes,time_s,busbw_gbps,busbw_GB_per_s\n", errLine: 1, errCol: "busbw_GB_per_s", errText: "twice"},
		{name: "header only", in: "collective,algorithm,world,bytes,time_s\n"},
		{name: "empty optional field", in: "collective,algorithm,world,bytes,time_s,busbw_GB_per_s\nc,a,2,8,1e-6,\n",
			want: []Point{{Collective: "c", Algorithm: "a", World: 2, Bytes: 8, Time: 1e-6}}},
		{name: "empty file", in: "", errLine: 1, errText: "empty file"},
		{name: "missing column", in: "collective,algorithm,world,time_s\n", errLine: 1, errText: `no "bytes" column`},
		{name: "duplicate column", in: "collective,algorithm,world,bytes,time_s,world\n", errLine: 1, errCol: "world", errText: "twice"},
		{name: "bad integer", in: "collective,algorithm,world,bytes,time_s\nc,a,2,8,1e-6\nc,a,2,8KiB,1e-6\n",
			errLine: 3, errCol: "bytes", errText: `"8KiB" is not a whole number`},
		{name: "world 0", in: "collective,algorithm,world,bytes,time_s\nc,a,0,8,1e-6\n", errLine: 2, errCol: "world", errText: "out of range"},
		{name: "negative bytes", in: "collective,algorithm,world,bytes,time_s\nc,a,2,-8,1e-6\n", errLine: 2, errCol: "bytes"},
		{name: "NaN time", in: "collective,algorithm,world,bytes,time_s\nc,a,2,8,NaN\n", errLine: 2, errCol: "time_s", errText: "finite"},
		{name: "infinite busbw", in: "collective,algorithm,world,bytes,time_s,busbw_GB_per_s\nc,a,2,8,1,1e999\n", errLine: 2, errCol: "busbw_GB_per_s"},
		{name: "time not a number", in: "collective,algorithm,world,bytes,time_s\nc,a,2,8,fast\n", errLine: 2, errCol: "time_s", errText: "not a number"},
		{name: "empty required", in: "collective,algorithm,world,bytes,time_s\nc,,2,8,1\n", errLine: 2, errCol: "algorithm", errText: "empty"},
		{name: "short record", in: "collective,algorithm,world,bytes,time_s\nc,a,2,8,1\nc,a,2\n", errLine: 3, errText: "3 fields, the header has 5"},
		{name: "bad quoting", in: "collective,algorithm,world,bytes,time_s\nc,a,2,8,1\nc,\"a,2,8,1\n", errLine: 3},
		{
			name:    "line numbers count a quoted multi-line field",
			in:      "collective,algorithm,world,bytes,time_s\n\"two\nlines\",a,2,8,1\nc,a,2,x,1\n",
			errLine: 4, errCol: "bytes",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(c.in))
			if c.errLine == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("got %+v\nwant %+v", got, c.want)
				}
				return
			}
			var pe *results.Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v (%T), want a *results.Error", err, err)
			}
			if pe.Line != c.errLine || pe.Column != c.errCol || !strings.Contains(err.Error(), c.errText) {
				t.Errorf("got %q (line %d, column %q), want line %d, column %q, containing %q",
					err, pe.Line, pe.Column, c.errLine, c.errCol, c.errText)
			}
		})
	}
}

func TestReadCSVFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	if err := os.WriteFile(path, []byte("collective,algorithm,world,bytes,time_s\nc,a,two,8,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadCSVFile(path)
	want := path + `:2: column "world": "two" is not a whole number; want a number of ranks, 1 or more`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := ReadCSVFile(filepath.Join(t.TempDir(), "missing.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// writeCSV is the inverse of ReadCSV for the columns it reads; the fuzz
// target uses it to check that what ReadCSV accepts survives a round trip.
func writeCSV(pts []Point) string {
	var b strings.Builder
	b.WriteString("collective,algorithm,dtype,world,bytes,time_s,busbw_GB_per_s,spread_s\n")
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, p := range pts {
		fmt.Fprintf(&b, "%s,%s,%s,%d,%d,%s,%s,%s\n", q(p.Collective), q(p.Algorithm), q(p.DType),
			p.World, p.Bytes, f(p.Time), f(p.BusBW), f(p.Spread))
	}
	return b.String()
}

func FuzzReadCSV(f *testing.F) {
	f.Add(goodCSV)
	f.Add("collective,algorithm,world,bytes,time_s\nc,a,2,8,1\n")
	f.Add("time_s,bytes,world,algorithm,collective,spread_s\r\n1e-5,64,2,tree,bcast,2e-6\r\n")
	f.Add("collective,algorithm,world,bytes,time_s\n\"a\nb\",\"x\"\"y\",2,8,1\n")
	f.Add("collective,algorithm,world,bytes,time_s\nc,a,2,8,NaN\n")
	f.Add("collective,algorithm,world,bytes,time_s\n c , a ,2,8,0x1p-3\n")
	f.Fuzz(func(t *testing.T, in string) {
		pts, err := ReadCSV(strings.NewReader(in))
		if err != nil {
			var pe *results.Error
			if errors.As(err, &pe) && pe.Line < 1 {
				t.Fatalf("error with line %d: %v", pe.Line, err)
			}
			return
		}
		for _, p := range pts {
			if err := validate(p); err != nil {
				t.Fatalf("ReadCSV accepted an invalid point: %v", err)
			}
			if p.Collective == "" || p.Algorithm == "" {
				t.Fatalf("ReadCSV accepted an empty name: %+v", p)
			}
			if math.IsNaN(p.Time) {
				t.Fatalf("NaN time: %+v", p)
			}
		}
		again, err := ReadCSV(strings.NewReader(writeCSV(pts)))
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, writeCSV(pts))
		}
		if !slices.Equal(pts, again) {
			t.Fatalf("round trip changed the points:\n%+v\n%+v", pts, again)
		}
	})
}
