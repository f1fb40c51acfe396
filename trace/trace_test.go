package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/trace"
)

// worked is the alpha-beta model of reference/cost-models.md's worked
// example.
var worked = sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}

func record(t *testing.T, p int, model sim.Model, body sim.Body) (*trace.Recorder, *sim.Result) {
	t.Helper()
	rec := trace.NewRecorder()
	res, err := sim.Run(sim.Config{World: p, Model: model, Observer: rec}, body)
	if err != nil {
		t.Fatal(err)
	}
	return rec, res
}

func ringAllreduce(n int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(n), device.F32, device.Sum)
	}
}

// TestRingAllreduceTrace checks that a trace of ring allreduce at p = 8 is
// valid JSON in the Chrome trace event format, with 2(p-1) send spans per
// rank (p-1 steps of reduce-scatter, p-1 of allgather), as many receive
// spans, a flow arrow per message and p-1 reductions per rank.
func TestRingAllreduceTrace(t *testing.T) {
	const p = 8
	rec, res := record(t, p, worked, ringAllreduce(8<<20))
	var buf bytes.Buffer
	if err := rec.WriteJSON(&buf, trace.Meta{Title: "allreduce/ring world=8 bytes=8388608", World: p, Args: [][2]string{{"model", "alpha-beta"}}}); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("not valid JSON:\n%s", buf.String())
	}
	// Decode generically, as a viewer would, not into our own types.
	var file struct {
		TraceEvents     []map[string]any  `json:"traceEvents"`
		DisplayTimeUnit string            `json:"displayTimeUnit"`
		OtherData       map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(buf.Bytes(), &file); err != nil {
		t.Fatal(err)
	}
	if file.DisplayTimeUnit != "ns" || file.OtherData["title"] != "allreduce/ring world=8 bytes=8388608" || file.OtherData["model"] != "alpha-beta" {
		t.Errorf("header: %q %v", file.DisplayTimeUnit, file.OtherData)
	}
	sends := map[int]int{}
	recvs := map[int]int{}
	reduces := map[int]int{}
	flows := map[float64]string{}
	procs := map[int]string{}
	type track struct{ pid, tid int }
	lastEnd := map[track]float64{}
	end := 0.0
	for i, e := range file.TraceEvents {
		ph, _ := e["ph"].(string)
		name, _ := e["name"].(string)
		pidF, ok1 := e["pid"].(float64)
		tidF, ok2 := e["tid"].(float64)
		if ph == "" || name == "" || !ok1 || !ok2 {
			t.Fatalf("event %d lacks ph, name, pid or tid: %v", i, e)
		}
		pid, tid := int(pidF), int(tidF)
		switch ph {
		case "M":
			if name == "process_name" {
				procs[pid] = e["args"].(map[string]any)["name"].(string)
			}
		case "X":
			ts, ok1 := e["ts"].(float64)
			dur, ok2 := e["dur"].(float64)
			if !ok1 || !ok2 || dur < 0 {
				t.Fatalf("span %d: ts %v dur %v", i, e["ts"], e["dur"])
			}
			// Spans of one track do not overlap; they come in time order.
			k := track{pid, tid}
			if ts < lastEnd[k]-1e-9 {
				t.Errorf("span %d on rank %d track %d starts at %g, before the previous ends (%g)", i, pid, tid, ts, lastEnd[k])
			}
			lastEnd[k] = ts + dur
			end = math.Max(end, ts+dur)
			switch e["cat"] {
			case "send":
				sends[pid]++
			case "recv":
				recvs[pid]++
			case "reduce":
				reduces[pid]++
			}
		case "s", "f":
			id := e["id"].(float64)
			if ph == "f" && e["bp"] != "e" {
				t.Errorf("flow end %v without bp = e", e)
			}
			flows[id] += ph
		default:
			t.Errorf("event %d of unexpected phase %q", i, ph)
		}
	}
	for r := range p {
		if sends[r] != 2*(p-1) || recvs[r] != 2*(p-1) || reduces[r] != p-1 {
			t.Errorf("rank %d: %d send, %d recv, %d reduce spans; want %d, %d, %d", r, sends[r], recvs[r], reduces[r], 2*(p-1), 2*(p-1), p-1)
		}
		if procs[r] != "rank "+string(rune('0'+r)) {
			t.Errorf("process %d is named %q", r, procs[r])
		}
	}
	if len(flows) != 2*p*(p-1) {
		t.Errorf("%d flows, want one per message (%d)", len(flows), 2*p*(p-1))
	}
	for id, f := range flows {
		if f != "sf" {
			t.Errorf("flow %g: events %q, want a start then a finish", id, f)
		}
	}
	// The last span ends when the run does (µs).
	if want := float64(res.End) / float64(sim.Microsecond); math.Abs(end-want) > 1e-6 {
		t.Errorf("trace ends at %g µs, the run at %g µs", end, want)
	}
	if rec.Messages() != 2*p*(p-1) {
		t.Errorf("Messages() = %d", rec.Messages())
	}
	// Deterministic: a second run gives the same bytes.
	rec2, _ := record(t, p, worked, ringAllreduce(8<<20))
	var buf2 bytes.Buffer
	rec2.WriteJSON(&buf2, trace.Meta{Title: "allreduce/ring world=8 bytes=8388608", World: p, Args: [][2]string{{"model", "alpha-beta"}}})
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Error("two traces of the same run differ")
	}
}

// TestOverlappingMessages checks that messages in flight at once from one
// rank go on separate tracks, so that no track's spans overlap.
func TestOverlappingMessages(t *testing.T) {
	// A flow model with unlimited send and receive slots: rank 0 sends to
	// everyone at once.
	model := sim.Flow{Topology: sim.Crossbar{Bandwidth: 1e9, Latency: sim.Microsecond}, SendSlots: -1, RecvSlots: -1}
	rec, _ := record(t, 4, model, func(ctx context.Context, l algos.Link) error {
		buf := l.Alloc(1 << 20)
		if l.Rank() == 0 {
			var reqs []algos.Request
			for d := 1; d < l.Size(); d++ {
				reqs = append(reqs, l.Isend(d, 1, buf))
			}
			return l.Wait(ctx, reqs...)
		}
		return algos.Recv(ctx, l, 0, 1, buf)
	})
	f := rec.Build(trace.Meta{World: 4})
	tids := map[int]bool{}
	threads := map[int]string{}
	for _, e := range f.TraceEvents {
		if e.Pid == 0 && e.Cat == "send" {
			tids[e.Tid] = true
		}
		if e.Pid == 0 && e.Name == "thread_name" {
			threads[e.Tid] = e.Args["name"].(string)
		}
	}
	if len(tids) != 3 {
		t.Errorf("rank 0's three concurrent sends are on %d tracks, want 3", len(tids))
	}
	for tid := range tids {
		if threads[tid] == "" {
			t.Errorf("track %d has no name", tid)
		}
	}
	if threads[1002] != "send 2" || threads[1003] != "send 3" {
		t.Errorf("thread names %v", threads)
	}
}

// TestDelaySpans checks that a delay (algos.Delayer) shows as a "delay"
// slice of its own, without bytes, on a lane beside the reduction that
// runs meanwhile on another process of the rank.
func TestDelaySpans(t *testing.T) {
	rec, _ := record(t, 1, worked, func(ctx context.Context, l algos.Link) error {
		red := l.(algos.Spawner).Spawn(func(ctx context.Context) error {
			return l.Reduce(l.Alloc(1000), l.Alloc(1000), device.F32, device.Sum)
		})
		if err := algos.Delay(ctx, l, 2*time.Microsecond); err != nil {
			return err
		}
		return l.Wait(ctx, red)
	})
	f := rec.Build(trace.Meta{World: 1})
	lanes := map[string]int{}
	for _, e := range f.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		lanes[e.Name] = e.Tid
		if e.Name == "delay" && (e.Args != nil || *e.Dur != 2) {
			t.Errorf("delay slice %+v, want 2 us without args", e)
		}
	}
	if _, ok := lanes["delay"]; !ok || lanes["delay"] == lanes["reduce"] {
		t.Errorf("slices on lanes %v, want a delay beside the reduce", lanes)
	}
}
