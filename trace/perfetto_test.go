package trace_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/trace"
)

// field is one protobuf field as a decoder sees it.
type field struct {
	num  int
	wire int
	v    uint64 // varint and fixed64
	b    []byte // length-delimited
}

// fields decodes a protobuf message into its fields, failing t on
// malformed input.
func fields(t *testing.T, b []byte) []field {
	t.Helper()
	var out []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad key")
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				t.Fatalf("bad varint in field %d", f.num)
			}
			b = b[n:]
		case 1:
			f.v, b = binary.LittleEndian.Uint64(b), b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || int(l) > len(b)-n {
				t.Fatalf("bad length in field %d", f.num)
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			t.Fatalf("wire type %d in field %d", f.wire, f.num)
		}
		out = append(out, f)
	}
	return out
}

// decoded is what a Perfetto trace holds, as the viewer would read it.
type decoded struct {
	trackName   map[uint64]string // uuid -> name (lanes) or process name
	trackParent map[uint64]uint64
	slices      map[uint64][][2]uint64 // track -> [begin, end] in ns
	names       map[uint64]map[string]int
	flowsOut    map[uint64]int
	flowsIn     map[uint64]int
	runArgs     map[string]string
}

// decode reads a trace the way Perfetto's importer does, checking that
// every packet is on sequence 1, that timestamps never go back, that the
// slices of a track nest (never overlap), and that every interned name is
// defined before it is used.
func decode(t *testing.T, data []byte) *decoded {
	t.Helper()
	d := &decoded{trackName: map[uint64]string{}, trackParent: map[uint64]uint64{}, slices: map[uint64][][2]uint64{},
		names: map[uint64]map[string]int{}, flowsOut: map[uint64]int{}, flowsIn: map[uint64]int{}, runArgs: map[string]string{}}
	open := map[uint64]uint64{} // track -> begin of the open slice
	eventNames := map[uint64]string{}
	var last uint64
	for i, pf := range fields(t, data) {
		if pf.num != 1 || pf.wire != 2 {
			t.Fatalf("top-level field %d", pf.num)
		}
		var ts uint64
		var seq uint64
		var ev, desc []byte
		for _, f := range fields(t, pf.b) {
			switch f.num {
			case 8:
				ts = f.v
			case 10:
				seq = f.v
			case 11:
				ev = f.b
			case 60:
				desc = f.b
			case 12:
				for _, in := range fields(t, f.b) {
					var iid uint64
					var name string
					for _, x := range fields(t, in.b) {
						if x.num == 1 {
							iid = x.v
						} else if x.num == 2 {
							name = string(x.b)
						}
					}
					if in.num == 2 {
						eventNames[iid] = name
					}
				}
			}
		}
		if seq != 1 {
			t.Fatalf("packet %d on sequence %d", i, seq)
		}
		if desc != nil {
			var uuid uint64
			var name string
			for _, f := range fields(t, desc) {
				switch f.num {
				case 1:
					uuid = f.v
				case 2:
					name = string(f.b)
				case 5:
					d.trackParent[uuid] = f.v
				case 3:
					for _, x := range fields(t, f.b) {
						if x.num == 6 {
							name = string(x.b)
						}
					}
				}
			}
			d.trackName[uuid] = name
		}
		if ev == nil {
			continue
		}
		if ts < last {
			t.Fatalf("packet %d at %d ns, after one at %d", i, ts, last)
		}
		last = ts
		var typ, track, nameIID uint64
		var name string
		var flowOut, flowIn []uint64
		var args [][2]string
		for _, f := range fields(t, ev) {
			switch f.num {
			case 9:
				typ = f.v
			case 11:
				track = f.v
			case 10:
				nameIID = f.v
			case 23:
				name = string(f.b)
			case 47:
				flowOut = append(flowOut, f.v)
			case 48:
				flowIn = append(flowIn, f.v)
			case 4:
				var k, v string
				for _, x := range fields(t, f.b) {
					if x.num == 10 {
						k = string(x.b)
					} else if x.num == 6 {
						v = string(x.b)
					}
				}
				args = append(args, [2]string{k, v})
			}
		}
		if _, ok := d.trackName[track]; !ok {
			t.Fatalf("event on undescribed track %d", track)
		}
		switch typ {
		case 1:
			if nameIID != 0 {
				n, ok := eventNames[nameIID]
				if !ok {
					t.Fatalf("name %d used before it is interned", nameIID)
				}
				name = n
			}
			if _, busy := open[track]; busy {
				t.Fatalf("track %d (%s): a slice begins at %d before the last ended", track, d.trackName[track], ts)
			}
			open[track] = ts
			if d.names[track] == nil {
				d.names[track] = map[string]int{}
			}
			d.names[track][name]++
			for _, id := range flowOut {
				d.flowsOut[id]++
			}
			for _, id := range flowIn {
				d.flowsIn[id]++
			}
		case 2:
			b, ok := open[track]
			if !ok {
				t.Fatalf("track %d: an end with no slice open", track)
			}
			delete(open, track)
			d.slices[track] = append(d.slices[track], [2]uint64{b, ts})
		case 3:
			for _, kv := range args {
				d.runArgs[kv[0]] = kv[1]
			}
		default:
			t.Fatalf("event type %d", typ)
		}
	}
	if len(open) > 0 {
		t.Fatalf("%d slices never end", len(open))
	}
	return d
}

// count sums, over the lanes of rank's tracks named base ("send",
// "send 2"...), the slices whose name starts with prefix.
func (d *decoded) count(rank int, base, prefix string) int {
	n := 0
	for uuid, name := range d.trackName {
		if d.trackName[d.trackParent[uuid]] != fmt.Sprintf("rank %d", rank) || (name != base && !bytes.HasPrefix([]byte(name), []byte(base+" "))) {
			continue
		}
		for nm, k := range d.names[uuid] {
			if bytes.HasPrefix([]byte(nm), []byte(prefix)) {
				n += k
			}
		}
	}
	return n
}

// TestPerfettoRingAllreduce decodes the Perfetto trace of a ring
// allreduce at p = 8: every rank's 2(p-1) sends and receives and p-1
// reductions on their tracks, an arrow per message, the run's metadata.
func TestPerfettoRingAllreduce(t *testing.T) {
	const p = 8
	rec, res := record(t, p, worked, ringAllreduce(8<<20))
	var buf bytes.Buffer
	if err := rec.WritePerfetto(&buf, trace.Meta{Title: "allreduce/ring world=8", World: p, Args: [][2]string{{"model", "alpha-beta"}}}); err != nil {
		t.Fatal(err)
	}
	d := decode(t, buf.Bytes())
	for r := range p {
		if s, rv, red := d.count(r, "send", "send → "), d.count(r, "recv", "recv ← "), d.count(r, "compute", "reduce"); s != 2*(p-1) || rv != 2*(p-1) || red != p-1 {
			t.Errorf("rank %d: %d sends, %d receives, %d reductions", r, s, rv, red)
		}
	}
	if len(d.flowsOut) != 2*p*(p-1) {
		t.Errorf("%d arrows, want %d", len(d.flowsOut), 2*p*(p-1))
	}
	for id, n := range d.flowsOut {
		if n != 1 || d.flowsIn[id] != 1 {
			t.Errorf("arrow %d leaves %d and arrives %d times", id, n, d.flowsIn[id])
		}
	}
	if d.runArgs["model"] != "alpha-beta" || d.runArgs["end"] != res.End.String() {
		t.Errorf("run arguments %v", d.runArgs)
	}
	var end uint64
	for _, ss := range d.slices {
		for _, s := range ss {
			end = max(end, s[1])
		}
	}
	if end != uint64(res.End/sim.Nanosecond) {
		t.Errorf("last slice ends at %d ns, the run at %v", end, res.End)
	}
	// The size estimate is within 30% of the file, in both formats.
	var js bytes.Buffer
	rec.WriteJSON(&js, trace.Meta{World: p})
	for _, f := range []struct {
		format trace.Format
		size   int
	}{{trace.Perfetto, buf.Len()}, {trace.JSON, js.Len()}} {
		if e := float64(rec.Size(f.format)) / float64(f.size); math.Abs(e-1) > 0.3 {
			t.Errorf("%v: estimated %d bytes, wrote %d", f.format, rec.Size(f.format), f.size)
		}
	}
	// Deterministic.
	rec2, _ := record(t, p, worked, ringAllreduce(8<<20))
	var buf2 bytes.Buffer
	rec2.WritePerfetto(&buf2, trace.Meta{Title: "allreduce/ring world=8", World: p, Args: [][2]string{{"model", "alpha-beta"}}})
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Error("two traces of the same run differ")
	}
}

// TestFilter keeps two ranks of sixteen and a window of time, then a
// size limit.
func TestFilter(t *testing.T) {
	const p = 16
	body := ringAllreduce(1 << 20)
	all, res := record(t, p, worked, body)
	mid := res.End / 2
	keep := func(r int) bool { return r == 3 || r == 4 }
	rec := trace.NewFilteredRecorder(trace.Filter{Ranks: keep, From: mid, To: mid + res.End/10})
	if _, err := sim.Run(sim.Config{World: p, Model: worked, Observer: rec}, body); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rec.WritePerfetto(&buf, trace.Meta{World: p}); err != nil {
		t.Fatal(err)
	}
	d := decode(t, buf.Bytes())
	processes := 0
	for uuid, name := range d.trackName {
		if d.trackParent[uuid] == 0 && name != "run" {
			processes++
			if name != "rank 3" && name != "rank 4" {
				t.Errorf("track of %s kept", name)
			}
		}
	}
	if processes != 2 {
		t.Errorf("%d ranks' tracks, want 2", processes)
	}
	// Rank 3 sends to 4: those messages have both ends and an arrow;
	// 2 -> 3 and 4 -> 5 only one end each.
	if d.count(3, "send", "send → 4") == 0 || d.count(4, "recv", "recv ← 3") == 0 || len(d.flowsOut) == 0 ||
		d.count(3, "recv", "recv ← 2") == 0 || d.count(4, "send", "send → 5") == 0 {
		t.Error("messages of the kept ranks are missing")
	}
	for _, ss := range d.slices {
		for _, s := range ss {
			if s[1] < uint64(mid/sim.Nanosecond) || s[0] >= uint64((mid+res.End/10)/sim.Nanosecond) {
				t.Errorf("slice %v outside the window", s)
			}
		}
	}
	if rec.Messages() >= all.Messages()/8 {
		t.Errorf("kept %d of %d messages", rec.Messages(), all.Messages())
	}
	// A limit stops the recording.
	small := trace.NewFilteredRecorder(trace.Filter{MaxBytes: 20000})
	if _, err := sim.Run(sim.Config{World: p, Model: worked, Observer: small}, body); err != nil {
		t.Fatal(err)
	}
	if !small.Over() || small.Size(trace.Perfetto) > 20000+200 {
		t.Errorf("over %v, size %d", small.Over(), small.Size(trace.Perfetto))
	}
}

// Stream spans (algos' streams, as package workload records them) go on a
// track per stream under their rank, in both formats.
func TestStreamSpans(t *testing.T) {
	r := trace.NewRecorder()
	r.StreamSpan(0, "compute", "fwd block 0", 0, 0, 10*sim.Microsecond)
	r.StreamSpan(0, "compute", "wait tp", 0, 10*sim.Microsecond, 12*sim.Microsecond)
	r.StreamSpan(0, "tp", "tp allreduce", 4096, 10*sim.Microsecond, 12*sim.Microsecond)
	r.StreamSpan(1, "dp", "dp allreduce bucket 0", 1<<20, 5*sim.Microsecond, 30*sim.Microsecond)
	var buf bytes.Buffer
	if err := r.WritePerfetto(&buf, trace.Meta{Title: "step", World: 2}); err != nil {
		t.Fatal(err)
	}
	d := decode(t, buf.Bytes())
	if n := d.count(0, "stream compute", "fwd"); n != 1 {
		t.Errorf("rank 0's compute stream has %d forward slices, want 1", n)
	}
	if n := d.count(0, "stream tp", "tp allreduce"); n != 1 {
		t.Errorf("rank 0's tp stream has %d allreduces, want 1", n)
	}
	if n := d.count(1, "stream dp", "dp allreduce"); n != 1 {
		t.Errorf("rank 1's dp stream has %d allreduces, want 1", n)
	}
	f := r.Build(trace.Meta{World: 2})
	names := map[string]bool{}
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			names[fmt.Sprint(e.Pid, " ", e.Args["name"])] = true
		}
	}
	for _, want := range []string{"0 stream compute", "0 stream tp", "1 stream dp"} {
		if !names[want] {
			t.Errorf("JSON trace lacks track %q (has %v)", want, names)
		}
	}
}
