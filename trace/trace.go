package trace

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/nexar-go/nexar-go/sim"
)

// Recorder records the messages and spans of one run. It implements
// sim.Observer; like the engine that calls it, it is not safe for
// concurrent use.
type Recorder struct {
	started map[*sim.Message]sim.Time
	msgs    []message
	spans   []span
	end     sim.Time
}

var _ sim.Observer = (*Recorder)(nil)

type message struct {
	id             int64
	src, dst       int
	tag            uint64
	bytes          int
	posted         sim.Time
	start, deliver sim.Time
}

type span struct {
	rank       int
	kind       sim.SpanKind
	bytes      int
	start, end sim.Time
	seq        int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{started: map[*sim.Message]sim.Time{}} }

// MessageStarted implements sim.Observer.
func (r *Recorder) MessageStarted(m *sim.Message, at sim.Time) {
	if m.Src != m.Dst {
		r.started[m] = at
	}
}

// MessageDelivered implements sim.Observer.
func (r *Recorder) MessageDelivered(m *sim.Message, at sim.Time) {
	start, ok := r.started[m]
	if !ok {
		return
	}
	delete(r.started, m)
	r.msgs = append(r.msgs, message{id: m.ID, src: m.Src, dst: m.Dst, tag: uint64(m.Tag), bytes: m.Bytes, posted: m.Posted, start: start, deliver: at})
	r.end = max(r.end, at)
}

// Span implements sim.Observer.
func (r *Recorder) Span(rank int, kind sim.SpanKind, bytes int, start, end sim.Time) {
	r.spans = append(r.spans, span{rank: rank, kind: kind, bytes: bytes, start: start, end: end, seq: len(r.spans)})
	r.end = max(r.end, end)
}

// Messages is the number of messages recorded (delivered, between
// different ranks).
func (r *Recorder) Messages() int { return len(r.msgs) }

// Meta describes the run in the file's metadata.
type Meta struct {
	// Title names the run, as "allreduce/ring world=8 bytes=8388608".
	Title string
	// World is the number of ranks; ranks that recorded nothing still get
	// a track. 0 takes the highest rank seen.
	World int
	// Args are shown with the trace (model, seed...), in this order.
	Args [][2]string
}

// Event is one entry of a Chrome trace file's traceEvents, as WriteJSON
// writes it (the format's fields: name, cat, ph, pid, tid, ts, dur, id, bp,
// args).
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   *float64       `json:"ts,omitempty"`
	Dur  *float64       `json:"dur,omitempty"`
	ID   *int64         `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// File is a Chrome trace file in its JSON object form.
type File struct {
	TraceEvents     []Event           `json:"traceEvents"`
	DisplayTimeUnit string            `json:"displayTimeUnit"`
	OtherData       map[string]string `json:"otherData,omitempty"`
}

// Track ids within a rank's process: compute lanes from 1, send lanes from
// sendTid, receive lanes from recvTid.
const (
	computeTid = 1
	sendTid    = 1001
	recvTid    = 2001
)

// us converts simulated time to the format's microseconds.
func us(t sim.Time) *float64 {
	v := float64(t) / float64(sim.Microsecond)
	return &v
}

// lanes assigns each interval a lane such that intervals of one lane do
// not overlap, and returns the lanes and how many there are.
func lanes(n int, interval func(i int) (start, end sim.Time)) ([]int, int) {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, ea := interval(a)
		sb, eb := interval(b)
		return cmp.Or(cmp.Compare(sa, sb), cmp.Compare(eb, ea))
	})
	lane := make([]int, n)
	var ends []sim.Time
	for _, i := range order {
		s, e := interval(i)
		l := slices.IndexFunc(ends, func(end sim.Time) bool { return end <= s })
		if l < 0 {
			l = len(ends)
			ends = append(ends, e)
		} else {
			ends[l] = e
		}
		lane[i] = l
	}
	return lane, len(ends)
}

// Build returns the trace of what r recorded.
func (r *Recorder) Build(meta Meta) *File {
	world := meta.World
	for _, m := range r.msgs {
		world = max(world, m.src+1, m.dst+1)
	}
	for _, s := range r.spans {
		world = max(world, s.rank+1)
	}
	f := &File{DisplayTimeUnit: "ns", OtherData: map[string]string{}}
	if meta.Title != "" {
		f.OtherData["title"] = meta.Title
	}
	for _, kv := range meta.Args {
		f.OtherData[kv[0]] = kv[1]
	}
	f.OtherData["end"] = r.end.String()

	// Per rank: the sends, receives and spans, and their lanes.
	sends := make([][]int, world)
	recvs := make([][]int, world)
	comps := make([][]int, world)
	for i, m := range r.msgs {
		sends[m.src] = append(sends[m.src], i)
		recvs[m.dst] = append(recvs[m.dst], i)
	}
	for i, s := range r.spans {
		comps[s.rank] = append(comps[s.rank], i)
	}
	sendLane := make([]int, len(r.msgs))
	recvLane := make([]int, len(r.msgs))
	compLane := make([]int, len(r.spans))
	meta2 := func(name string, pid, tid int, args map[string]any) {
		f.TraceEvents = append(f.TraceEvents, Event{Name: name, Ph: "M", Pid: pid, Tid: tid, Args: args})
	}
	var body []Event
	for rank := range world {
		meta2("process_name", rank, 0, map[string]any{"name": "rank " + strconv.Itoa(rank)})
		meta2("process_sort_index", rank, 0, map[string]any{"sort_index": rank})
		name := func(base string, tid, lane int) {
			n := base
			if lane > 0 {
				n += " " + strconv.Itoa(lane+1)
			}
			meta2("thread_name", rank, tid+lane, map[string]any{"name": n})
			meta2("thread_sort_index", rank, tid+lane, map[string]any{"sort_index": tid + lane})
		}
		// place lays the events idx (indexes into r.msgs or r.spans) out in
		// lanes, records each one's lane in laneOf, and names the lanes.
		place := func(idx, laneOf []int, base string, tid int, interval func(i int) (sim.Time, sim.Time)) {
			ls, n := lanes(len(idx), func(i int) (sim.Time, sim.Time) { return interval(idx[i]) })
			for i, l := range ls {
				laneOf[idx[i]] = l
			}
			for l := range max(n, 1) {
				name(base, tid, l)
			}
		}
		msg := func(i int) (sim.Time, sim.Time) { return r.msgs[i].start, r.msgs[i].deliver }
		place(sends[rank], sendLane, "send", sendTid, msg)
		place(recvs[rank], recvLane, "recv", recvTid, msg)
		place(comps[rank], compLane, "compute", computeTid, func(i int) (sim.Time, sim.Time) {
			return r.spans[i].start, r.spans[i].end
		})
	}
	for i, m := range r.msgs {
		dur := us(m.deliver - m.start)
		args := map[string]any{"bytes": m.bytes, "tag": m.tag, "message": m.id, "posted_us": *us(m.posted)}
		id := m.id
		body = append(body,
			Event{Name: fmt.Sprintf("send → %d", m.dst), Cat: "send", Ph: "X", Pid: m.src, Tid: sendTid + sendLane[i],
				Ts: us(m.start), Dur: dur, Args: withPeer(args, "to", m.dst)},
			Event{Name: fmt.Sprintf("recv ← %d", m.src), Cat: "recv", Ph: "X", Pid: m.dst, Tid: recvTid + recvLane[i],
				Ts: us(m.start), Dur: dur, Args: withPeer(args, "from", m.src)},
			Event{Name: "message", Cat: "message", Ph: "s", Pid: m.src, Tid: sendTid + sendLane[i], Ts: us(m.start), ID: &id},
			Event{Name: "message", Cat: "message", Ph: "f", BP: "e", Pid: m.dst, Tid: recvTid + recvLane[i], Ts: us(m.start), ID: &id},
		)
	}
	for i, s := range r.spans {
		var args map[string]any
		if s.kind != sim.SpanWait {
			args = map[string]any{"bytes": s.bytes}
		}
		body = append(body, Event{Name: s.kind.String(), Cat: s.kind.String(), Ph: "X", Pid: s.rank, Tid: computeTid + compLane[i],
			Ts: us(s.start), Dur: us(s.end - s.start), Args: args})
	}
	// In time order (stable: ties keep the order above), which viewers
	// and readers of the raw file both like.
	slices.SortStableFunc(body, func(a, b Event) int { return cmp.Compare(*a.Ts, *b.Ts) })
	f.TraceEvents = append(f.TraceEvents, body...)
	return f
}

func withPeer(args map[string]any, key string, peer int) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	out[key] = peer
	return out
}

// WriteJSON writes the trace of what r recorded to w, one event per line.
func (r *Recorder) WriteJSON(w io.Writer, meta Meta) error {
	f := r.Build(meta)
	bw := bufio.NewWriter(w)
	head, err := json.Marshal(struct {
		DisplayTimeUnit string            `json:"displayTimeUnit"`
		OtherData       map[string]string `json:"otherData,omitempty"`
	}{f.DisplayTimeUnit, f.OtherData})
	if err != nil {
		return err
	}
	// {"displayTimeUnit":...,"otherData":{...},"traceEvents":[
	bw.Write(head[:len(head)-1])
	bw.WriteString(",\"traceEvents\":[\n")
	for i, e := range f.TraceEvents {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		bw.Write(b)
		if i < len(f.TraceEvents)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}
