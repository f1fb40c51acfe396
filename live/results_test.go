package live

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sweep"
)

func TestResultsRoundTrip(t *testing.T) {
	in := []Result{
		{Row: sweep.Row{Collective: "allreduce", Algorithm: "pipelined_ring(segment=2MiB)", World: 4, Bytes: 1 << 20, DType: "f32",
			Time: 1.5e-3, AlgBW: 0.699, BusBW: 1.048, Params: "segment=2097152", Op: "sum", Repeats: 20,
			TimeMin: 1.4e-3, TimeMax: 1.9e-3, Spread: 2.5e-4, Messages: 48}, Wrong: 0},
		{Row: sweep.Row{Collective: "broadcast", Algorithm: "binomial_tree", World: 3, Bytes: 8, DType: "u8",
			Time: 2e-5, Repeats: 1, TimeMin: 2e-5, TimeMax: 2e-5, Messages: 2}, Wrong: 3},
	}
	var b bytes.Buffer
	w := NewResultsWriter(&b)
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(b.String(), strings.Join(sweep.Header, ",")+",wrong\n") {
		t.Errorf("header: %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
	// Times to the nanosecond of the clock that measured them.
	if row := strings.Split(b.String(), "\n")[1]; !strings.Contains(row, ",f32,0.001500000,") || !strings.Contains(row, ",0.001400000,0.001900000,0.000250000,") {
		t.Errorf("row %q: want times with 9 decimals", row)
	}
	out, err := ReadResults(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back\n%+v\nwant\n%+v", out, in)
	}
}

// TestReadSimResults: a nexar-sim results.csv reads too, with Wrong -1.
func TestReadSimResults(t *testing.T) {
	var b bytes.Buffer
	w := sweep.NewCSVWriter(&b)
	row := sweep.Row{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 8 << 20, DType: "f32", Time: 0.0015380064, Repeats: 1, Messages: 112}
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	rs, err := ReadResults(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Row != row || rs[0].Wrong != -1 {
		t.Errorf("got %+v", rs)
	}
	// And one of an earlier nexar-sim, whose bandwidths were named
	// algbw_gbps and busbw_gbps.
	b.Reset()
	w = sweep.NewCSVWriter(&b)
	w.Write(row)
	w.Flush()
	old := strings.Replace(b.String(), "algbw_GB_per_s,busbw_GB_per_s", "algbw_gbps,busbw_gbps", 1)
	if rs, err := ReadResults(strings.NewReader(old)); err != nil || len(rs) != 1 || rs[0].Row != row {
		t.Errorf("old header: %+v, %v", rs, err)
	}
}

func TestReadResultsErrors(t *testing.T) {
	head := strings.Join(Header, ",") + "\n"
	for _, c := range []struct{ in, want string }{
		{"", "empty file"},
		{"a,b\n", "neither nexar-live's"},
		{head + "allreduce,ring,4\n", "line 2: 3 fields"},
		{head + "allreduce,ring,four,8,f32,1,1,1,,sum,1,1,1,0,2,0\n", `world: "four"`},
		{head + "allreduce,ring,0,8,f32,1,1,1,,sum,1,1,1,0,2,0\n", "not a measurement"},
	} {
		_, err := ReadResults(strings.NewReader(c.in))
		var ce *sweep.CSVError
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a CSVError with %q", c.in, err, c.want)
		}
	}
}

func TestWorkerEnv(t *testing.T) {
	base := []string{"PATH=/bin", "RANK=3", "WORLD_SIZE=8", "NEXAR_SEED=elsewhere:1", "NEXAR_LIVE_TEST=kept", "SLURM_PROCID=2", "HOME=/root"}
	got := workerEnv(base, map[string]string{"NEXAR_WORLD": "2", "NEXAR_RANK": "1"})
	want := []string{"PATH=/bin", "NEXAR_LIVE_TEST=kept", "HOME=/root", "NEXAR_RANK=1", "NEXAR_WORLD=2"}
	if !slices.Equal(got, want) {
		t.Errorf("workerEnv = %q, want %q", got, want)
	}
}
