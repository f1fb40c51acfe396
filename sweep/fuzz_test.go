package sweep_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"", "segment=2097152", "a=1;b=2", "a=1;a=2", "=1", "a=", "a=x", "a=-3;b=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := sweep.ParseParams(s)
		if err != nil {
			return
		}
		// What parses formats back to something that parses to the same.
		q, err := sweep.ParseParams(sweep.FormatParams(p))
		if err != nil || len(q) != len(p) {
			t.Fatalf("%q: %v round-trips to %v, %v", s, p, q, err)
		}
		for k, v := range p {
			if q[k] != v {
				t.Fatalf("%q: %s=%d came back as %d", s, k, v, q[k])
			}
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	head := strings.Join(results.SimColumns, ",") + "\n"
	f.Add(head)
	f.Add(head + "allreduce,ring,8,8388608,f32,0.0015380064,5.454,9.5445,,sum,1,0.0015380064,0.0015380064,0,112\n")
	f.Add(head + "allreduce,\"a,b\",8,1,f32,1e-9,1,1,x=1;y=2,,2,0,0,0,0\n")
	f.Add("collective,world\nallreduce,x\n")
	f.Add(head + "allreduce,ring,8\n")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := sweep.ReadCSV(strings.NewReader(s))
		if err != nil {
			return
		}
		// What reads writes back and reads again to the same rows.
		var b bytes.Buffer
		w := results.NewWriter(&b, results.SimColumns, results.SimDecimals)
		w.WriteHeader()
		for _, r := range rows {
			w.Write(r.Row)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		again, err := sweep.ReadCSV(&b)
		if err != nil {
			t.Fatalf("rows %+v written back do not read: %v", rows, err)
		}
		if !slices.EqualFunc(rows, again, func(a, b sweep.Row) bool { return a.Key() == b.Key() && a.Params == b.Params && a.Repeats == b.Repeats }) {
			t.Fatalf("rows changed in a round trip: %+v, %+v", rows, again)
		}
	})
}
