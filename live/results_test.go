package live

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/realnet"
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

// TestResultsThresholds: the thresholds a run's ranks used are written
// after the other columns (the device's too) and read back by name, the
// bulk path's "never" as -1 and eager mode off as 0; files without the
// columns read with a nil Transport.
func TestResultsThresholds(t *testing.T) {
	row := sweep.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 8, DType: "f32",
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
			var b bytes.Buffer
			w := NewResultsWriter(&b)
			w.Device, w.Transport = c.device, c.transport
			in := Result{Row: row, Device: c.device, Transport: c.transport}
			if err := w.Write(in); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			if want := strings.Join(sweep.Header, ",") + "," + c.head; lines[0] != want {
				t.Errorf("header %q, want %q", lines[0], want)
			}
			if !strings.HasSuffix(lines[1], c.tail) {
				t.Errorf("row %q, want it to end in %q", lines[1], c.tail)
			}
			out, err := ReadResults(&b)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 1 || !reflect.DeepEqual(out[0], in) {
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
		{realnet.Config{}, Thresholds{Bulk: algos.RealnetBulkThreshold}},
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

func TestReadResultsErrors(t *testing.T) {
	head := strings.Join(Header, ",") + "\n"
	withThresholds := strings.Join(append(slices.Clone(Header), ThresholdColumns...), ",") + "\n"
	for _, c := range []struct{ in, want string }{
		{"", "empty file"},
		{"a,b\n", "neither nexar-live's"},
		{head + "allreduce,ring,4\n", "line 2: 3 fields"},
		{head + "allreduce,ring,four,8,f32,1,1,1,,sum,1,1,1,0,2,0\n", `world: "four"`},
		{head + "allreduce,ring,0,8,f32,1,1,1,,sum,1,1,1,0,2,0\n", "not a measurement"},
		{strings.TrimSuffix(head, "\n") + ",colour\n", `column "colour": want only wrong, device, bulk_threshold, eager_threshold`},
		{strings.TrimSuffix(head, "\n") + ",wrong\n", `column "wrong" appears twice`},
		{strings.TrimSuffix(head, "\n") + ",bulk_threshold\n", "want both bulk_threshold and eager_threshold columns or neither"},
		{withThresholds + "allreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,never,0\n", `line 2: bulk_threshold "never": want a number of bytes, or -1 (never)`},
		{withThresholds + "allreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,-2,0\n", `line 2: bulk_threshold "-2": want a number of bytes, or -1 (never)`},
		{withThresholds + "allreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,1,-1\n", `line 2: eager_threshold "-1": want a number of bytes (0: off)`},
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

// FuzzReadResults: any input reads or fails with an error, never a
// panic, and what reads is a measurement whose thresholds are sizes.
func FuzzReadResults(f *testing.F) {
	head := strings.Join(Header, ",")
	f.Add([]byte(head + "\nallreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0\n"))
	f.Add([]byte(head + ",device,bulk_threshold,eager_threshold\nallreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,cuda,-1,4096\n"))
	f.Add([]byte(strings.Join(sweep.Header, ",") + ",eager_threshold,bulk_threshold\nallreduce,ring,2,8,f32,1,1,1,,sum,1,1,1,0,2,0,65536\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ReadResults(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.World < 1 || r.Bytes < 0 || r.Time < 0 || (r.Transport != nil && (r.Transport.Bulk < -1 || r.Transport.Eager < 0)) {
				t.Fatalf("read %+v (thresholds %+v)", r, r.Transport)
			}
		}
	})
}

// FuzzReadPartialResults: a results file cut anywhere (a run killed, or
// out of disk space, in the middle of a row) reads as the rows written
// before the cut, never more, never a row changed; and any input reads as
// the rows of its complete lines, or an error.
func FuzzReadPartialResults(f *testing.F) {
	var b bytes.Buffer
	w := NewResultsWriter(&b)
	w.Transport = &Thresholds{Bulk: 65536}
	written := []Result{
		{Row: sweep.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 1020, DType: "f32", Time: 1e-4, Op: "sum", Repeats: 2, TimeMin: 1e-4, TimeMax: 2e-4, Spread: 5e-5, Messages: 4}},
		{Row: sweep.Row{Collective: "allreduce", Algorithm: "rs_ag", World: 2, Bytes: 4096, DType: "f32", Time: 2e-4, Op: "sum", Repeats: 2, TimeMin: 2e-4, TimeMax: 3e-4, Spread: 5e-5, Messages: 4}, Wrong: 1},
	}
	for _, r := range written {
		if err := w.Write(r); err != nil {
			f.Fatal(err)
		}
	}
	for i := range written {
		written[i].Transport = w.Transport
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
