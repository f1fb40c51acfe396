package results_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
)

// FuzzRead: any input reads or fails with an *Error of a line from 1,
// never a panic; what reads holds only what its columns may (the key
// columns given, sizes and times not negative), and written back with
// its columns (Row's among them) reads again to a file the writer writes
// byte for byte the same: the writer writes what the reader reads.
func FuzzRead(f *testing.F) {
	sim := strings.Join(results.SimColumns, ",") + "\n"
	live := strings.Join(results.LiveColumns(true, true), ",") + "\n"
	f.Add(sim, uint8(12))
	f.Add(sim+"allreduce,ring,8,8388608,f32,0.0015380064,5.454,9.5445,,sum,1,0.0015380064,0.0015380064,0,112\n", uint8(12))
	f.Add(sim+"allreduce,\"a,b\",8,1,f32,1e-9,1,1,x=1;y=2,,2,0,0,0,0\n", uint8(9))
	f.Add(live+"allreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,cuda,-1,4096\n", uint8(9))
	minmax := strings.Join(results.WithMinMax(results.LiveColumns(false, true)), ",") + "\n"
	f.Add(minmax+"allreduce,ring,2,8,f32,2e-6,1,1,,sum,3,1e-6,4e-6,2.5e-6,1.5e-6,2,0,65536,0\n", uint8(9))
	f.Add("\ufeff Time_S , bytes,world,algorithm,collective,busbw_gbps\r\n1e-5, 64 ,2,tree,bcast,\r\n", uint8(3))
	f.Add("collective,algorithm,world,bytes,time_s\n\"a\nb\",\"x\"\"y\",2,8,1\n", uint8(0))
	f.Add("collective,algorithm,world,bytes,time_s,colour\nc,a,2,8,0x1p-3,red\n", uint8(12))
	f.Fuzz(func(t *testing.T, in string, decimals uint8) {
		tab, err := results.Read(strings.NewReader(in))
		if err != nil {
			var e *results.Error
			if errors.As(err, &e) && e.Line < 1 {
				t.Fatalf("error at line %d: %v", e.Line, err)
			}
			return
		}
		if len(tab.Lines) != len(tab.Rows) {
			t.Fatalf("%d lines for %d rows", len(tab.Lines), len(tab.Rows))
		}
		for _, r := range tab.Rows {
			if r.Collective == "" || r.Algorithm == "" || r.World < 1 || r.Bytes < 0 || !(r.Time >= 0) || r.Wrong < -1 || r.EagerThreshold < 0 ||
				r.BulkThreshold < -1 || tab.Has(results.ColBulkThreshold) != r.HasThresholds() {
				t.Fatalf("read %+v", r)
			}
		}
		var cols []string
		for _, c := range tab.Columns {
			if !slices.Contains(tab.Unknown(), c) {
				cols = append(cols, c)
			}
		}
		d := int(decimals % 20)
		once := writeAll(t, cols, d, tab.Rows)
		again, err := results.Read(strings.NewReader(once))
		if err != nil {
			t.Fatalf("rows %+v written back do not read: %v\n%s", tab.Rows, err, once)
		}
		if twice := writeAll(t, cols, d, again.Rows); twice != once {
			t.Fatalf("written, read and written again:\n%s\nthen\n%s", once, twice)
		}
	})
}

func writeAll(t *testing.T, cols []string, decimals int, rows []results.Row) string {
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
