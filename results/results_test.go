package results_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
)

var simRows = []results.Row{
	{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 8 << 20, DType: "f32", Time: 1538.0064e-6, AlgBW: 5.454, BusBW: 9.5445,
		Op: "sum", Repeats: 1, TimeMin: 1538.0064e-6, TimeMax: 1538.0064e-6, Messages: 112},
	{Collective: "allreduce", Algorithm: "ring", World: 1, DType: "f32", Op: "sum", Repeats: 1},
	{Collective: "x,y", Algorithm: "a\"b(segment=2MiB)", World: 2, Bytes: 4, DType: "u8", Time: 1e-9, AlgBW: 1.0 / 3, BusBW: 2.0 / 3,
		Params: "segment=2097152", Repeats: 5, TimeMin: 0.5e-9, TimeMax: 2e-9, Spread: 0.75e-9, Messages: 3},
}

// write writes rows with the columns and decimals given.
func write(t *testing.T, cols []string, decimals int, rows ...results.Row) string {
	t.Helper()
	var b bytes.Buffer
	w := results.NewWriter(&b, cols, decimals)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSimFile: nexar-sim's results.csv, byte for byte, reads back to the
// rows written, under today's names and an earlier version's.
func TestSimFile(t *testing.T) {
	got := write(t, results.SimColumns, results.SimDecimals, simRows...)
	want := `collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s,params,op,repeats,time_min_s,time_max_s,spread_s,messages
allreduce,ring,8,8388608,f32,0.001538006400,5.454,9.5445,,sum,1,0.001538006400,0.001538006400,0.000000000000,112
allreduce,ring,1,0,f32,0.000000000000,0,0,,sum,1,0.000000000000,0.000000000000,0.000000000000,0
"x,y","a""b(segment=2MiB)",2,4,u8,0.000000001000,0.3333333333333333,0.6666666666666666,segment=2097152,,5,0.000000000500,0.000000002000,0.000000000750,3
`
	if got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	old := strings.Replace(got, "algbw_GB_per_s,busbw_GB_per_s", "algbw_gbps,busbw_gbps", 1)
	for _, in := range []string{got, old} {
		tab, err := results.Read(strings.NewReader(in), results.SimColumns...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tab.Rows, simRows) || !slices.Equal(tab.Columns, results.SimColumns) || !slices.Equal(tab.Lines, []int{2, 3, 4}) {
			t.Errorf("read back %+v", tab)
		}
		if tab.Has(results.ColWrong) || tab.Unknown() != nil {
			t.Errorf("columns %q", tab.Columns)
		}
	}
	if got := write(t, results.SimColumns, results.SimDecimals); got != strings.Join(results.SimColumns, ",")+"\n" {
		t.Errorf("no rows: %q", got)
	}
}

// TestLiveFile: nexar-live's results.csv, byte for byte: nexar-sim's
// columns with nanoseconds, then wrong, the device for a run on GPUs and
// the thresholds, which read back.
func TestLiveFile(t *testing.T) {
	row := results.Row{Collective: "allreduce", Algorithm: "pipelined_ring(segment=2MiB)", World: 4, Bytes: 1 << 20, DType: "f32",
		Time: 1.5e-3, AlgBW: 0.699, BusBW: 1.048, Params: "segment=2097152", Op: "sum", Repeats: 20,
		TimeMin: 1.4e-3, TimeMax: 1.9e-3, Spread: 2.5e-4, Messages: 48, Wrong: 3}
	const sim = "allreduce,pipelined_ring(segment=2MiB),4,1048576,f32,0.001500000,0.699,1.048,segment=2097152,sum,20,0.001400000,0.001900000,0.000250000,48"
	head := strings.Join(results.SimColumns, ",")
	gpu := row
	gpu.Device, gpu.BulkThreshold, gpu.EagerThreshold = "cuda", -1, 4096
	for _, c := range []struct {
		name               string
		device, thresholds bool
		row                results.Row
		want               string
	}{
		{"host, thresholds not recorded", false, false, row, head + ",wrong\n" + sim + ",3\n"},
		{"on GPUs, thresholds", true, true, gpu, head + ",wrong,device,bulk_threshold,eager_threshold\n" + sim + ",3,cuda,-1,4096\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := write(t, results.LiveColumns(c.device, c.thresholds), results.LiveDecimals, c.row)
			if got != c.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, c.want)
			}
			tab, err := results.Read(strings.NewReader(got), results.SimColumns...)
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.Rows) != 1 || tab.Rows[0] != c.row || tab.Rows[0].HasThresholds() != c.thresholds {
				t.Errorf("read back %+v, want %+v", tab.Rows, c.row)
			}
		})
	}
}

// TestReadOthers: files of other shapes than the writers' read by name.
func TestReadOthers(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []results.Row
		unknown  []string
	}{
		{"plots' own: a few columns, another one", "collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s,seed\nallreduce,ring,8,1048576,f32,0.000345,3.04,5.32,1\n",
			[]results.Row{{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1 << 20, DType: "f32", Time: 0.000345, AlgBW: 3.04, BusBW: 5.32}}, []string{"seed"}},
		{"another order, spaces, case, BOM, CRLF", "\ufeff Time_S , bytes,world,algorithm,collective,spread_s\r\n1e-5, 64 ,2,tree,bcast,2e-6\r\n",
			[]results.Row{{Collective: "bcast", Algorithm: "tree", World: 2, Bytes: 64, Time: 1e-5, Spread: 2e-6}}, nil},
		{"empty fields read as zero", "collective,algorithm,world,bytes,time_s,busbw_GB_per_s,wrong,eager_threshold,bulk_threshold\nc,a,2,8,1e-6,,,,-1\n",
			[]results.Row{{Collective: "c", Algorithm: "a", World: 2, Bytes: 8, Time: 1e-6, BulkThreshold: -1}}, nil},
		{"header only", "collective,algorithm,world,bytes,time_s\n", nil, nil},
		{"an older nexar-live's unknown wrong", strings.Join(results.LiveColumns(false, false), ",") + "\nc,a,2,8,f32,1,1,1,,sum,1,1,1,0,2,-1\n",
			[]results.Row{{Collective: "c", Algorithm: "a", World: 2, Bytes: 8, DType: "f32", Time: 1, AlgBW: 1, BusBW: 1, Op: "sum", Repeats: 1, TimeMin: 1, TimeMax: 1, Messages: 2, Wrong: -1}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab, err := results.Read(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tab.Rows, c.want) || !slices.Equal(tab.Unknown(), c.unknown) {
				t.Errorf("got %+v, unknown %q\nwant %+v, %q", tab.Rows, tab.Unknown(), c.want, c.unknown)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	const key = "collective,algorithm,world,bytes,time_s"
	for _, c := range []struct {
		name, in string
		need     []string
		line     int
		col      string
		text     string // the whole error
	}{
		{"empty file", "", nil, 1, "", "1: empty file; want a header naming the columns (" + strings.Join(results.SimColumns, ",") + ")"},
		{"missing column", "collective,algorithm,world,time_s\n", nil, 1, "", `1: the header has no "bytes" column; want collective, algorithm, world, bytes, time_s`},
		{"a column needed", key + "\n", []string{"dtype"}, 1, "", `1: the header has no "dtype" column; want collective, algorithm, world, bytes, time_s, dtype`},
		{"both names of busbw", key + ",busbw_gbps,busbw_GB_per_s\n", nil, 1, "busbw_GB_per_s", `1: column "busbw_GB_per_s": appears twice in the header`},
		{"one threshold", key + ",bulk_threshold\n", nil, 1, "", "1: the header has one of the bulk_threshold and eager_threshold columns; want both or neither"},
		{"short record", key + "\nc,a,2,8,1\nc,a,2\n", nil, 3, "", "3: 3 fields, the header has 5"},
		{"bad quoting", key + "\nc,a,2,8,1\nc,\"a,2,8,1\n", nil, 3, "", `3: extraneous or missing " in quoted-field`},
		{"not a number", key + "\nc,a,two,8,1\n", nil, 2, "world", `2: column "world": "two" is not a whole number; want a number of ranks, 1 or more`},
		{"world 0", key + "\nc,a,0,8,1\n", nil, 2, "world", `2: column "world": 0 is out of range [1, 2147483647]; want a number of ranks, 1 or more`},
		{"negative bytes", key + "\nc,a,2,-8,1\n", nil, 2, "bytes", "out of range"},
		{"NaN time", key + "\nc,a,2,8,NaN\n", nil, 2, "time_s", `2: column "time_s": "NaN" is not a finite number of 0 or more; want a number of seconds`},
		{"infinite busbw", key + ",busbw_GB_per_s\nc,a,2,8,1,1e999\n", nil, 2, "busbw_GB_per_s", "finite"},
		{"empty key", key + "\nc,,2,8,1\n", nil, 2, "algorithm", `2: column "algorithm": empty; want an algorithm's name`},
		{"bulk threshold never spelt out", key + ",bulk_threshold,eager_threshold\nc,a,2,8,1,never,0\n", nil, 2, "bulk_threshold",
			`2: column "bulk_threshold": "never" is not a whole number; want a number of bytes from 1, or -1 (never)`},
		{"bulk threshold 0", key + ",bulk_threshold,eager_threshold\nc,a,2,8,1,0,0\n", nil, 2, "bulk_threshold", "0 is not a threshold a run used"},
		{"negative eager threshold", key + ",bulk_threshold,eager_threshold\nc,a,2,8,1,1,-1\n", nil, 2, "eager_threshold", "want a number of bytes (0: off)"},
		{"wrong below -1", key + ",wrong\nc,a,2,8,1,-2\n", nil, 2, "wrong", "out of range [-1,"},
		{"lines count a quoted multi-line field", key + "\n\"two\nlines\",a,2,8,1\nc,a,2,x,1\n", nil, 4, "bytes", `"x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := results.Read(strings.NewReader(c.in), c.need...)
			var e *results.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want a *results.Error", err, err)
			}
			if e.Line != c.line || e.Column != c.col || !strings.Contains(err.Error(), c.text) {
				t.Errorf("got %q (line %d, column %q), want line %d, column %q, with %q", err, e.Line, e.Column, c.line, c.col, c.text)
			}
		})
	}
}

// TestReadFile: errors name the file.
func TestReadFile(t *testing.T) {
	path := t.TempDir() + "/results.csv"
	if _, err := results.ReadFile(path); err == nil {
		t.Error("a missing file read")
	}
	if err := os.WriteFile(path, []byte("collective,algorithm,world,bytes,time_s\nc,a,two,8,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := results.ReadFile(path)
	if want := path + `:2: column "world": "two" is not a whole number; want a number of ranks, 1 or more`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestWriterColumns: a writer of a column Row does not have fails
// before writing anything.
func TestWriterColumns(t *testing.T) {
	var b bytes.Buffer
	w := results.NewWriter(&b, []string{"collective", "colour"}, 9)
	if err := w.Write(results.Row{}); err == nil || !strings.Contains(err.Error(), `"colour" is not a column`) {
		t.Errorf("got %v", err)
	}
	w.Flush()
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

// TestReadPartial: a file cut in the middle of a row reads as the rows
// before it.
func TestReadPartial(t *testing.T) {
	file := write(t, results.SimColumns, results.SimDecimals, simRows...)
	for cut := range len(file) + 1 {
		tab, err := results.ReadPartial(strings.NewReader(file[:cut]))
		complete := strings.Count(file[:cut], "\n") - 1
		if complete < 0 {
			if err == nil {
				t.Fatalf("cut at %d: no error", cut)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if !reflect.DeepEqual(tab.Rows, simRows[:complete]) && !(complete == 0 && tab.Rows == nil) {
			t.Fatalf("cut at %d: %+v", cut, tab.Rows)
		}
	}
}
