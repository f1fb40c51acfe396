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
	// streams are the spans of named streams (StreamSpan), streamNames
	// the names in the order they came.
	streams     []streamSpan
	streamNames []string

	filter Filter
	// counts of what was kept, for the size of the file
	sends, recvs int64
	over         bool
}

var _ sim.Observer = (*Recorder)(nil)

// Filter says what of a run a Recorder keeps, so that the trace of a large
// run stays small enough to open.
type Filter struct {
	// Ranks, if not nil, says which ranks' tracks to keep: a message is
	// kept on its sender's track if the sender is kept, on its
	// receiver's if the receiver is (with the arrow between them if
	// both are), and a span if its rank is kept.
	Ranks func(rank int) bool
	// From and To are the window of simulated time kept: what overlaps
	// [From, To). To 0 is the end of the run.
	From, To sim.Time
	// MaxBytes, if positive, bounds the file: once what is kept would
	// make a file of Format larger than MaxBytes (EstimateSize), the
	// recorder keeps nothing more, and Over says so.
	MaxBytes int64
	Format   Format
}

type message struct {
	id                 int64
	src, dst           int
	tag                uint64
	bytes              int
	posted             sim.Time
	start, deliver     sim.Time
	showSend, showRecv bool
}

// streamSpan is a piece of work on a rank's named stream.
type streamSpan struct {
	rank, stream int
	name         string
	bytes        int
	start, end   sim.Time
}

// maxStreams is how many stream names a trace has tracks for; the
// further ones share the last's.
const maxStreams = 12

type span struct {
	rank       int
	kind       sim.SpanKind
	bytes      int
	start, end sim.Time
	seq        int
}

// NewRecorder returns an empty recorder that keeps everything.
func NewRecorder() *Recorder { return NewFilteredRecorder(Filter{}) }

// NewFilteredRecorder returns an empty recorder that keeps what f says.
func NewFilteredRecorder(f Filter) *Recorder {
	return &Recorder{started: map[*sim.Message]sim.Time{}, filter: f}
}

// keeps reports whether rank's tracks are kept.
func (r *Recorder) keeps(rank int) bool { return r.filter.Ranks == nil || r.filter.Ranks(rank) }

// inWindow reports whether [start, end] overlaps the window.
func (r *Recorder) inWindow(start, end sim.Time) bool {
	f := r.filter
	return end >= f.From && (f.To == 0 || start < f.To)
}

// full reports whether the file would pass the size limit, and records
// that it did.
func (r *Recorder) full() bool {
	if r.filter.MaxBytes > 0 && r.Size(r.filter.Format) > r.filter.MaxBytes {
		r.over = true
	}
	return r.over
}

// MessageStarted implements sim.Observer.
func (r *Recorder) MessageStarted(m *sim.Message, at sim.Time) {
	if m.Src != m.Dst && (r.keeps(m.Src) || r.keeps(m.Dst)) {
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
	if !r.inWindow(start, at) || r.full() {
		return
	}
	x := message{id: m.ID, src: m.Src, dst: m.Dst, tag: uint64(m.Tag), bytes: m.Bytes, posted: m.Posted, start: start, deliver: at,
		showSend: r.keeps(m.Src), showRecv: r.keeps(m.Dst)}
	if x.showSend {
		r.sends++
	}
	if x.showRecv {
		r.recvs++
	}
	r.msgs = append(r.msgs, x)
	r.end = max(r.end, at)
}

// Span implements sim.Observer.
func (r *Recorder) Span(rank int, kind sim.SpanKind, bytes int, start, end sim.Time) {
	if !r.keeps(rank) || !r.inWindow(start, end) || r.full() {
		return
	}
	r.spans = append(r.spans, span{rank: rank, kind: kind, bytes: bytes, start: start, end: end, seq: len(r.spans)})
	r.end = max(r.end, end)
}

// StreamSpan records a piece of work of rank's stream named stream
// (algos' streams: "compute", "dp", ...) from start to end, named name,
// with the bytes it moved (0 for none). Each stream is a track of its own
// under the rank's ("stream compute"); a stream's work never overlaps.
func (r *Recorder) StreamSpan(rank int, stream, name string, bytes int, start, end sim.Time) {
	if !r.keeps(rank) || !r.inWindow(start, end) || r.full() {
		return
	}
	k := slices.Index(r.streamNames, stream)
	if k < 0 {
		k = len(r.streamNames)
		if k >= maxStreams {
			k = maxStreams - 1
		} else {
			r.streamNames = append(r.streamNames, stream)
		}
	}
	r.streams = append(r.streams, streamSpan{rank: rank, stream: k, name: name, bytes: bytes, start: start, end: end})
	r.end = max(r.end, end)
}

// streamTracks returns, per rank, the streams it has spans on, in the
// order of their names' arrival.
func (r *Recorder) streamTracks(world int) [][]int {
	out := make([][]int, world)
	for _, s := range r.streams {
		if !slices.Contains(out[s.rank], s.stream) {
			out[s.rank] = append(out[s.rank], s.stream)
		}
	}
	for _, ks := range out {
		slices.Sort(ks)
	}
	return out
}

// Over reports whether the recorder stopped keeping what it was told of
// because the file would have passed Filter.MaxBytes.
func (r *Recorder) Over() bool { return r.over }

// Size is about how many bytes the file of what r kept takes in format
// f (see EstimateSize).
func (r *Recorder) Size(f Format) int64 {
	return EstimateSize(f, r.sends, r.recvs, int64(len(r.spans)+len(r.streams)))
}

// Messages is the number of messages recorded (delivered, between
// different ranks, kept by the filter).
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
	streamTid  = 3001
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

// trackKind is one of a rank's kinds of track.
type trackKind uint8

const (
	computeTrack trackKind = iota
	sendTrack
	recvTrack
	// streamKind marks a stream's span among the Perfetto writer's
	// slices; streams have tracks of their own, not lanes.
	streamKind
)

var trackKinds = []trackKind{sendTrack, recvTrack, computeTrack}

// tid is the first track id of the kind within a rank's process.
func (k trackKind) tid() int { return [...]int{computeTid, sendTid, recvTid}[k] }

// laneName names lane l of the kind: "send", "send 2", ...
func (k trackKind) laneName(l int) string {
	n := [...]string{"compute", "send", "recv"}[k]
	if l > 0 {
		n += " " + strconv.Itoa(l+1)
	}
	return n
}

// trackLayout places what was kept on lanes: lane[kind][i] is the lane of
// message i (send, recv) or span i (compute) on its rank's tracks of that
// kind, and lanes[kind][rank] how many lanes the rank has (at least one
// for a kept rank).
type trackLayout struct {
	lane  [3][]int
	lanes [3][]int
}

// layout lays out what r kept on the tracks of world ranks.
func (r *Recorder) layout(world int) *trackLayout {
	lay := &trackLayout{}
	byRank := [3][][]int{make([][]int, world), make([][]int, world), make([][]int, world)}
	for i, m := range r.msgs {
		if m.showSend {
			byRank[sendTrack][m.src] = append(byRank[sendTrack][m.src], i)
		}
		if m.showRecv {
			byRank[recvTrack][m.dst] = append(byRank[recvTrack][m.dst], i)
		}
	}
	for i, s := range r.spans {
		byRank[computeTrack][s.rank] = append(byRank[computeTrack][s.rank], i)
	}
	msg := func(i int) (sim.Time, sim.Time) { return r.msgs[i].start, r.msgs[i].deliver }
	span := func(i int) (sim.Time, sim.Time) { return r.spans[i].start, r.spans[i].end }
	for _, k := range trackKinds {
		interval, n := msg, len(r.msgs)
		if k == computeTrack {
			interval, n = span, len(r.spans)
		}
		lay.lane[k] = make([]int, n)
		lay.lanes[k] = make([]int, world)
		for rank, idx := range byRank[k] {
			if !r.keeps(rank) {
				continue
			}
			ls, nl := lanes(len(idx), func(i int) (sim.Time, sim.Time) { return interval(idx[i]) })
			for i, l := range ls {
				lay.lane[k][idx[i]] = l
			}
			lay.lanes[k][rank] = max(nl, 1)
		}
	}
	return lay
}

// world is the number of ranks the trace has tracks for: meta.World, or
// more if ranks beyond it recorded something.
func (r *Recorder) world(meta Meta) int {
	world := meta.World
	for _, m := range r.msgs {
		if m.showSend {
			world = max(world, m.src+1)
		}
		if m.showRecv {
			world = max(world, m.dst+1)
		}
	}
	for _, s := range r.spans {
		world = max(world, s.rank+1)
	}
	for _, s := range r.streams {
		world = max(world, s.rank+1)
	}
	return world
}

// Build returns the trace of what r recorded.
func (r *Recorder) Build(meta Meta) *File {
	world := r.world(meta)
	f := &File{DisplayTimeUnit: "ns", OtherData: map[string]string{}}
	if meta.Title != "" {
		f.OtherData["title"] = meta.Title
	}
	for _, kv := range meta.Args {
		f.OtherData[kv[0]] = kv[1]
	}
	f.OtherData["end"] = r.end.String()

	lay := r.layout(world)
	streamsOf := r.streamTracks(world)
	meta2 := func(name string, pid, tid int, args map[string]any) {
		f.TraceEvents = append(f.TraceEvents, Event{Name: name, Ph: "M", Pid: pid, Tid: tid, Args: args})
	}
	var body []Event
	for rank := range world {
		if !r.keeps(rank) {
			continue
		}
		meta2("process_name", rank, 0, map[string]any{"name": "rank " + strconv.Itoa(rank)})
		meta2("process_sort_index", rank, 0, map[string]any{"sort_index": rank})
		for _, k := range trackKinds {
			for l := range lay.lanes[k][rank] {
				tid := k.tid() + l
				meta2("thread_name", rank, tid, map[string]any{"name": k.laneName(l)})
				meta2("thread_sort_index", rank, tid, map[string]any{"sort_index": tid})
			}
		}
		for _, k := range streamsOf[rank] {
			tid := streamTid + k
			meta2("thread_name", rank, tid, map[string]any{"name": "stream " + r.streamNames[k]})
			meta2("thread_sort_index", rank, tid, map[string]any{"sort_index": tid})
		}
	}
	sendLane, recvLane, compLane := lay.lane[sendTrack], lay.lane[recvTrack], lay.lane[computeTrack]
	for i, m := range r.msgs {
		dur := us(m.deliver - m.start)
		args := map[string]any{"bytes": m.bytes, "tag": m.tag, "message": m.id, "posted_us": *us(m.posted)}
		id := m.id
		if m.showSend {
			body = append(body, Event{Name: fmt.Sprintf("send → %d", m.dst), Cat: "send", Ph: "X", Pid: m.src, Tid: sendTid + sendLane[i],
				Ts: us(m.start), Dur: dur, Args: withPeer(args, "to", m.dst)})
		}
		if m.showRecv {
			body = append(body, Event{Name: fmt.Sprintf("recv ← %d", m.src), Cat: "recv", Ph: "X", Pid: m.dst, Tid: recvTid + recvLane[i],
				Ts: us(m.start), Dur: dur, Args: withPeer(args, "from", m.src)})
		}
		if m.showSend && m.showRecv {
			body = append(body,
				Event{Name: "message", Cat: "message", Ph: "s", Pid: m.src, Tid: sendTid + sendLane[i], Ts: us(m.start), ID: &id},
				Event{Name: "message", Cat: "message", Ph: "f", BP: "e", Pid: m.dst, Tid: recvTid + recvLane[i], Ts: us(m.start), ID: &id},
			)
		}
	}
	for i, s := range r.spans {
		var args map[string]any
		if s.kind != sim.SpanWait && s.kind != sim.SpanDelay {
			args = map[string]any{"bytes": s.bytes}
		}
		body = append(body, Event{Name: s.kind.String(), Cat: s.kind.String(), Ph: "X", Pid: s.rank, Tid: computeTid + compLane[i],
			Ts: us(s.start), Dur: us(s.end - s.start), Args: args})
	}
	for _, s := range r.streams {
		var args map[string]any
		if s.bytes > 0 {
			args = map[string]any{"bytes": s.bytes}
		}
		body = append(body, Event{Name: s.name, Cat: r.streamNames[s.stream], Ph: "X", Pid: s.rank, Tid: streamTid + s.stream,
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
