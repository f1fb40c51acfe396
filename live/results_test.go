package live

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/results"
)

// writeResults writes rs as a run on device whose ranks used the
// thresholds t writes its results.csv.
func writeResults(t *testing.T, device string, tr *Thresholds, rs ...Result) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	w := newResultsWriter(&b, device, tr)
	for _, r := range rs {
		r.Device = device
		r.setTransport(tr)
		if err := w.Write(r.Row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return &b
}

func TestResultsRoundTrip(t *testing.T) {
	in := []Result{
		{Row: results.Row{Collective: "allreduce", Algorithm: "pipelined_ring(segment=2MiB)", World: 4, Bytes: 1 << 20, DType: "f32",
			Time: 1.5e-3, AlgBW: 0.699, BusBW: 1.048, Params: "segment=2097152", Op: "sum", Repeats: 20,
			TimeMin: 1.4e-3, TimeMax: 1.9e-3, Spread: 2.5e-4, Messages: 48, Wrong: 0}},
		{Row: results.Row{Collective: "broadcast", Algorithm: "binomial_tree", World: 3, Bytes: 8, DType: "u8",
			Time: 2e-5, Repeats: 1, TimeMin: 2e-5, TimeMax: 2e-5, Messages: 2, Wrong: 3}},
	}
	b := writeResults(t, "", nil, in...)
	if !strings.HasPrefix(b.String(), strings.Join(results.SimColumns, ",")+",wrong\n") {
		t.Errorf("header: %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
	// Times to the nanosecond of the clock that measured them.
	if row := strings.Split(b.String(), "\n")[1]; !strings.Contains(row, ",f32,0.001500000,") || !strings.Contains(row, ",0.001400000,0.001900000,0.000250000,") {
		t.Errorf("row %q: want times with 9 decimals", row)
	}
	out, err := ReadResults(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back\n%+v\nwant\n%+v", out, in)
	}
}

// TestReadSimResults: a nexar-sim results.csv reads too, with Wrong 0
// and no thresholds, under today's names and an earlier version's.
func TestReadSimResults(t *testing.T) {
	var b bytes.Buffer
	w := results.NewWriter(&b, results.SimColumns, results.SimDecimals)
	row := results.Row{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 8 << 20, DType: "f32", Time: 0.0015380064, Repeats: 1, Messages: 112}
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	old := strings.Replace(b.String(), "algbw_GB_per_s,busbw_GB_per_s", "algbw_gbps,busbw_gbps", 1)
	for _, in := range []string{b.String(), old} {
		rs, err := ReadResults(strings.NewReader(in))
		if err != nil || len(rs) != 1 || rs[0].Row != row || rs[0].Transport() != nil {
			t.Errorf("got %+v, %v", rs, err)
		}
	}
}

// TestResultsThresholds: the thresholds a run's ranks used are written
// after the other columns (the device's too) and read back by name, the
// bulk path's "never" as -1 and eager mode off as 0; files without the
// columns read with a nil Transport.
func TestResultsThresholds(t *testing.T) {
	row := results.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, DType: "f32",
		Time: 1e-4, Op: "sum", Repeats: 1, TimeMin: 1e-4, TimeMax: 1e-4, Messages: 4}
	for _, c := range []struct {
		name      string
		device    string
		transport *Thresholds
		head      string // the columns after nexar-sim's
		tail      string // a row's last fields
	}{
		{"default", "", &Thresholds{Bulk: 64 << 10}, "wrong,bulk_threshold,eager_threshold", ",0,65536,0"},
		{"never", "", &Thresholds{Bulk: -1}, "wrong,bulk_threshold,eager_threshold", ",0,-1,0"},
		{"eager on", "", &Thresholds{Bulk: 16 << 10, Eager: 64 << 10}, "wrong,bulk_threshold,eager_threshold", ",0,16384,65536"},
		{"on a device", DeviceCUDA, &Thresholds{Bulk: 1}, "wrong,device,bulk_threshold,eager_threshold", ",0,cuda,1,0"},
		{"not recorded", "", nil, "wrong", ",0"},
		{"not recorded, on a device", DeviceCUDA, nil, "wrong,device", ",0,cuda"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Result{Row: row}
			in.Device = c.device
			in.setTransport(c.transport)
			b := writeResults(t, c.device, c.transport, in)
			lines := strings.Split(b.String(), "\n")
			if want := strings.Join(results.SimColumns, ",") + "," + c.head; lines[0] != want {
				t.Errorf("header %q, want %q", lines[0], want)
			}
			if !strings.HasSuffix(lines[1], c.tail) {
				t.Errorf("row %q, want it to end in %q", lines[1], c.tail)
			}
			out, err := ReadResults(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 1 || !reflect.DeepEqual(out[0], in) || !reflect.DeepEqual(out[0].Transport(), c.transport) {
				t.Errorf("read back %+v, want %+v", out, in)
			}
		})
	}
}

// TestThresholdsOf: what a rank's realnet.Config makes it use.
func TestThresholdsOf(t *testing.T) {
	for _, c := range []struct {
		cfg  realnet.Config
		want Thresholds
	}{
		{realnet.Config{}, Thresholds{Bulk: algos.DefaultBulkThreshold}},
		{realnet.Config{Thresholds: Thresholds{Bulk: 64 << 10}}, Thresholds{Bulk: 64 << 10}},
		{realnet.Config{Thresholds: Thresholds{Bulk: -1}}, Thresholds{Bulk: -1}},
		{realnet.Config{Thresholds: Thresholds{Bulk: 1, Eager: 4096}}, Thresholds{Bulk: 1, Eager: 4096}},
		{realnet.Config{Thresholds: Thresholds{Bulk: 1, Eager: 4096}, NoBulk: true}, Thresholds{Bulk: -1}},
	} {
		if got := ThresholdsOf(c.cfg); got != c.want {
			t.Errorf("ThresholdsOf(bulk %d, eager %d, no bulk %v) = %+v, want %+v",
				c.cfg.Thresholds.Bulk, c.cfg.Thresholds.Eager, c.cfg.NoBulk, got, c.want)
		}
	}
}

// TestReadResultsErrors: ReadResults needs nexar-sim's columns and a
// device it knows; the rest is results.Read's (see its tests).
func TestReadResultsErrors(t *testing.T) {
	head := strings.Join(results.LiveColumns(true, false), ",") + "\n"
	for _, c := range []struct{ in, want string }{
		{"", "1: empty file"},
		{"collective,algorithm,world,bytes,time_s\n", `1: the header has no "dtype" column`},
		{head + "allreduce,ring,4\n", "2: 3 fields, the header has 17"},
		{head + "allreduce,ring,four,8,f32,1,1,1,,sum,1,1,1,0,2,0,cuda\n", `2: column "world": "four" is not a whole number`},
		{head + "allreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,tpu\n", `2: column "device": "tpu" is not a device (want host or cuda)`},
		{head + "allreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,\n", `2: column "device": "" is not a device`},
	} {
		_, err := ReadResults(strings.NewReader(c.in))
		var e *results.Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want a *results.Error %q...", c.in, err, c.want)
		}
	}
}

// FuzzReadResults: any input reads or fails with an error, never a
// panic, and what reads is a measurement whose thresholds are sizes.
func FuzzReadResults(f *testing.F) {
	head := strings.Join(results.LiveColumns(false, false), ",")
	f.Add([]byte(head + "\nallreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0\n"))
	f.Add([]byte(head + ",device,bulk_threshold,eager_threshold\nallreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,cuda,-1,4096\n"))
	f.Add([]byte(strings.Join(results.SimColumns, ",") + ",eager_threshold,bulk_threshold\nallreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,65536\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ReadResults(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rs {
			tr := r.Transport()
			if r.World < 1 || r.Bytes < 0 || r.Time < 0 || (tr != nil && (tr.Bulk < -1 || tr.Bulk == 0 || tr.Eager < 0)) {
				t.Fatalf("read %+v (thresholds %+v)", r, tr)
			}
		}
	})
}

// FuzzReadPartialResults: a results file cut anywhere (a run killed, or
// out of disk space, in the middle of a row) reads as the rows written
// before the cut, never more, never a row changed; and any input reads as
// the rows of its complete lines, or an error.
func FuzzReadPartialResults(f *testing.F) {
	tr := &Thresholds{Bulk: 65536}
	written := []Result{
		{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 1020, DType: "f32", Time: 1e-4, Op: "sum", Repeats: 2, TimeMin: 1e-4, TimeMax: 2e-4, Spread: 5e-5, Messages: 4}},
		{Row: results.Row{Collective: "allreduce", Algorithm: "rs_ag", World: 2, Bytes: 4096, DType: "f32", Time: 2e-4, Op: "sum", Repeats: 2, TimeMin: 2e-4, TimeMax: 3e-4, Spread: 5e-5, Messages: 4, Wrong: 1}},
	}
	for i := range written {
		written[i].setTransport(tr)
	}
	var b bytes.Buffer
	w := newResultsWriter(&b, "", tr)
	for _, r := range written {
		if err := w.Write(r.Row); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Fatal(err)
	}
	file := b.Bytes()
	f.Add(file, len(file))
	f.Add(file, len(file)-3)
	f.Add([]byte("collective,algorithm\nx"), 30)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if cut >= 0 && cut <= len(file) {
			rs, err := ReadPartialResults(bytes.NewReader(file[:cut]))
			if err == nil {
				if len(rs) > len(written) || len(rs) > 0 && !reflect.DeepEqual(rs, written[:len(rs)]) {
					t.Fatalf("the file cut at %d reads as %+v", cut, rs)
				}
				if complete := bytes.Count(file[:cut], []byte("\n")) - 1; len(rs) != complete {
					t.Fatalf("the file cut at %d, %d complete rows, reads as %d", cut, complete, len(rs))
				}
			} else if bytes.Contains(file[:cut], []byte("\n")) {
				t.Fatalf("the file cut at %d, after its header: %v", cut, err)
			}
		}
		rs, err := ReadPartialResults(bytes.NewReader(data))
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			whole, err := ReadResults(bytes.NewReader(data[:i+1]))
			if err != nil || !reflect.DeepEqual(rs, whole) {
				t.Fatalf("%q reads as %+v, its complete lines as %+v (%v)", data, rs, whole, err)
			}
		}
	})
}

// TestResultsDeviceColumn: a run on GPUs writes a device column, which
// reads back; a bad device is an error naming the line.
func TestResultsDeviceColumn(t *testing.T) {
	in := Result{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, DType: "f32",
		Time: 1e-4, Op: "sum", Repeats: 1, TimeMin: 1e-4, TimeMax: 1e-4, Messages: 4, Device: DeviceCUDA}}
	b := writeResults(t, DeviceCUDA, nil, in)
	if !strings.HasPrefix(b.String(), strings.Join(results.LiveColumns(true, false), ",")+"\n") || !strings.HasSuffix(b.String(), ",cuda\n") {
		t.Fatalf("file:\n%s", b.String())
	}
	bad := strings.Replace(b.String(), ",cuda\n", ",tpu\n", 1)
	out, err := ReadResults(b)
	if err != nil || len(out) != 1 || out[0].Device != DeviceCUDA {
		t.Fatalf("read back %+v, %v", out, err)
	}
	if _, err := ReadResults(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), `2: column "device": "tpu" is not a device`) {
		t.Errorf("bad device: %v", err)
	}
}
