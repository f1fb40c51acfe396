package trace

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/nexar-go/nexar-go/sim"
)

// Format is a trace file's format.
type Format int

const (
	// Perfetto is Perfetto's own protobuf trace format (a Trace message
	// of TracePackets with track events): compact, and opened by
	// ui.perfetto.dev at hundreds of megabytes. Times are in whole
	// nanoseconds.
	Perfetto Format = iota
	// JSON is the Chrome trace event format, which chrome://tracing also
	// opens; about five times larger, and slow to open past a few
	// hundred megabytes. Times keep the simulator's picoseconds.
	JSON
)

// ParseFormat reads a format's name: "perfetto" or "json".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "perfetto":
		return Perfetto, nil
	case "json":
		return JSON, nil
	}
	return 0, fmt.Errorf("trace format %q: want perfetto or json", s)
}

func (f Format) String() string {
	if f == JSON {
		return "json"
	}
	return "perfetto"
}

// Ext is the file name extension of the format: ".pftrace" or ".json".
func (f Format) Ext() string {
	if f == JSON {
		return ".json"
	}
	return ".pftrace"
}

// Bytes per kept item in each format, as measured on ring and
// halving-doubling traces (slices with their names, arguments and
// arrows; lanes and tracks are a small share).
var itemBytes = [2]struct{ send, recv, span float64 }{
	Perfetto: {send: 86, recv: 50, span: 38},
	JSON:     {send: 330, recv: 210, span: 110},
}

// EstimateSize is about how many bytes a trace file of format f takes
// with sends and recvs message slices (on the sender's and on the
// receiver's tracks) and spans compute spans: what Recorder.Size says,
// and what a caller can compute before a run from estimated counts.
func EstimateSize(f Format, sends, recvs, spans int64) int64 {
	b := itemBytes[f]
	return int64(math.Ceil(b.send*float64(sends)+b.recv*float64(recvs)+b.span*float64(spans))) + 1024
}

// Write writes the trace of what r recorded in format f.
func (r *Recorder) Write(w io.Writer, f Format, meta Meta) error {
	if f == JSON {
		return r.WriteJSON(w, meta)
	}
	return r.WritePerfetto(w, meta)
}

// Field numbers of Perfetto's trace protos (protos/perfetto/trace in the
// Perfetto repository), the few this writer needs.
const (
	fTracePacket = 1 // Trace.packet

	fPacketTimestamp  = 8  // TracePacket.timestamp
	fPacketSequenceID = 10 // TracePacket.trusted_packet_sequence_id
	fPacketTrackEvent = 11 // TracePacket.track_event
	fPacketInterned   = 12 // TracePacket.interned_data
	fPacketSeqFlags   = 13 // TracePacket.sequence_flags
	fPacketTrackDesc  = 60 // TracePacket.track_descriptor

	seqIncrementalStateCleared = 1 // SequenceFlags
	seqNeedsIncrementalState   = 2

	fTrackUUID    = 1 // TrackDescriptor.uuid
	fTrackName    = 2 // TrackDescriptor.name
	fTrackProcess = 3 // TrackDescriptor.process
	fTrackParent  = 5 // TrackDescriptor.parent_uuid

	fProcessPid  = 1 // ProcessDescriptor.pid
	fProcessName = 6 // ProcessDescriptor.process_name

	fEventAnnotations = 4  // TrackEvent.debug_annotations
	fEventType        = 9  // TrackEvent.type
	fEventNameIID     = 10 // TrackEvent.name_iid
	fEventTrackUUID   = 11 // TrackEvent.track_uuid
	fEventName        = 23 // TrackEvent.name
	fEventFlowIDs     = 47 // TrackEvent.flow_ids (fixed64)
	fEventEndFlowIDs  = 48 // TrackEvent.terminating_flow_ids (fixed64)

	typeSliceBegin = 1
	typeSliceEnd   = 2
	typeInstant    = 3

	fAnnotationNameIID = 1  // DebugAnnotation.name_iid
	fAnnotationUint    = 3  // DebugAnnotation.uint_value
	fAnnotationInt     = 4  // DebugAnnotation.int_value
	fAnnotationString  = 6  // DebugAnnotation.string_value
	fAnnotationName    = 10 // DebugAnnotation.name

	fInternedEventNames      = 2 // InternedData.event_names
	fInternedAnnotationNames = 3 // InternedData.debug_annotation_names
	fInternedIID             = 1 // EventName.iid, DebugAnnotationName.iid
	fInternedName            = 2 // EventName.name, DebugAnnotationName.name
)

// pb appends protobuf fields.
type pb []byte

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) uint(field int, v uint64) pb { return binary.AppendUvarint(b.tag(field, 0), v) }

func (b pb) int(field int, v int64) pb { return b.uint(field, uint64(v)) }

func (b pb) fixed64(field int, v uint64) pb {
	return binary.LittleEndian.AppendUint64(b.tag(field, 1), v)
}

func (b pb) bytes(field int, v []byte) pb {
	b = binary.AppendUvarint(b.tag(field, 2), uint64(len(v)))
	return append(b, v...)
}

func (b pb) str(field int, s string) pb {
	b = binary.AppendUvarint(b.tag(field, 2), uint64(len(s)))
	return append(b, s...)
}

// Annotation names, interned in the first packet.
const (
	annBytes = iota + 1
	annTag
	annMessage
	annPostedNs
)

var annotationNames = []string{annBytes: "bytes", annTag: "tag", annMessage: "message", annPostedNs: "posted_ns"}

// Track ids: the run's own track, then per rank its process track and a
// track per lane of each kind.
const runTrack = 1

func processTrack(rank int) uint64 { return uint64(rank+1) << 24 }

func laneTrack(rank int, k trackKind, lane int) uint64 {
	return processTrack(rank) | uint64(k+1)<<20 | uint64(lane+1)
}

// streamTrack is the track of stream k of rank (StreamSpan): kinds 4 to
// 15 of the lanes' field.
func streamTrack(rank, k int) uint64 {
	return processTrack(rank) | uint64(4+k)<<20 | 1
}

// sliceEvent is the beginning or the end of a slice on a track.
type sliceEvent struct {
	ts    int64 // ns
	item  int32 // index into msgs (send, recv) or spans (compute)
	kind  trackKind
	begin bool
	// late orders events of one time: the ends of slices that began
	// earlier go first (0), then beginnings and the ends of slices of no
	// duration (1), in the order they were added.
	late uint8
}

// slice returns the events of a slice from start to end.
func slice(start, end sim.Time, item int, kind trackKind) (sliceEvent, sliceEvent) {
	b, e := sliceEvent{ns(start), int32(item), kind, true, 1}, sliceEvent{ns(end), int32(item), kind, false, 0}
	if e.ts == b.ts {
		e.late = 1
	}
	return b, e
}

// ns converts simulated time to the format's nanoseconds, rounding down:
// slices that do not overlap in picoseconds do not overlap in nanoseconds.
func ns(t sim.Time) int64 { return int64(t / sim.Nanosecond) }

// WritePerfetto writes the trace of what r recorded to w in Perfetto's
// protobuf format: a track per rank ("rank 3", its pid rank+1), with the
// rank's send, recv and compute lanes as child tracks, slices named as in
// the JSON form ("send → 5", "recv ← 2", "wait", "reduce", "overhead")
// with the message's bytes, tag, id and posting time as arguments, and a
// flow arrow from each send slice to its receive slice. The run's title
// and Args are on a track of its own, as arguments of an instant at 0.
func (r *Recorder) WritePerfetto(w io.Writer, meta Meta) error {
	world := r.world(meta)
	lay := r.layout(world)
	streamsOf := r.streamTracks(world)
	pw := &perfettoWriter{r: r, lay: lay, bw: bufio.NewWriterSize(w, 1<<20), first: true, names: map[string]uint64{}}
	pw.writeRunTrack(meta)
	pw.writeRankTracks(world, streamsOf)
	for _, e := range r.sliceEvents() {
		pw.writeSliceEvent(e)
	}
	return pw.bw.Flush()
}

// perfettoWriter writes the packets of one Perfetto trace of r, laid out
// on tracks by lay, to bw, as one sequence whose first packet clears the
// incremental state. pkt, ev and sub are buffers reused from packet to
// packet; names are the event names interned so far, with their iids.
type perfettoWriter struct {
	r            *Recorder
	lay          *trackLayout
	bw           *bufio.Writer
	first        bool
	pkt, ev, sub pb
	names        map[string]uint64
}

// emit writes packet p, framed as a Trace.packet field.
func (pw *perfettoWriter) emit(p pb) {
	p = p.uint(fPacketSequenceID, 1)
	if pw.first {
		p = p.uint(fPacketSeqFlags, seqIncrementalStateCleared)
		pw.first = false
	}
	var head [binary.MaxVarintLen64 + 1]byte
	h := pb(head[:0]).tag(fTracePacket, 2)
	h = binary.AppendUvarint(h, uint64(len(p)))
	pw.bw.Write(h)
	pw.bw.Write(p)
}

// writeRunTrack writes the run's track, whose packet interns the
// annotation names, and an instant at 0 on it with the run's arguments
// (meta.Args and the end of the run).
func (pw *perfettoWriter) writeRunTrack(meta Meta) {
	var interned pb
	for iid, name := range annotationNames {
		if iid > 0 {
			pw.sub = pb(pw.sub[:0]).uint(fInternedIID, uint64(iid)).str(fInternedName, name)
			interned = interned.bytes(fInternedAnnotationNames, pw.sub)
		}
	}
	title := meta.Title
	if title == "" {
		title = "run"
	}
	pw.sub = pb(pw.sub[:0]).uint(fTrackUUID, runTrack).str(fTrackName, title)
	pw.emit(pb(pw.pkt[:0]).bytes(fPacketTrackDesc, pw.sub).bytes(fPacketInterned, interned))
	pw.ev = pb(pw.ev[:0]).uint(fEventType, typeInstant).uint(fEventTrackUUID, runTrack).str(fEventName, "run")
	args := append(slices.Clone(meta.Args), [2]string{"end", pw.r.end.String()})
	for _, kv := range args {
		pw.sub = pb(pw.sub[:0]).str(fAnnotationName, kv[0]).str(fAnnotationString, kv[1])
		pw.ev = pw.ev.bytes(fEventAnnotations, pw.sub)
	}
	pw.emit(pb(pw.pkt[:0]).uint(fPacketTimestamp, 0).bytes(fPacketTrackEvent, pw.ev).uint(fPacketSeqFlags, seqNeedsIncrementalState))
}

// writeRankTracks writes the tracks of the world's kept ranks: a process
// per rank, its lanes and its streams (streamsOf[rank]) as children.
func (pw *perfettoWriter) writeRankTracks(world int, streamsOf [][]int) {
	var proc pb
	for rank := range world {
		if !pw.r.keeps(rank) {
			continue
		}
		proc = pb(proc[:0]).int(fProcessPid, int64(rank+1)).str(fProcessName, "rank "+strconv.Itoa(rank))
		pw.sub = pb(pw.sub[:0]).uint(fTrackUUID, processTrack(rank)).bytes(fTrackProcess, proc)
		pw.emit(pb(pw.pkt[:0]).bytes(fPacketTrackDesc, pw.sub))
		for _, k := range trackKinds {
			for l := range pw.lay.lanes[k][rank] {
				pw.sub = pb(pw.sub[:0]).uint(fTrackUUID, laneTrack(rank, k, l)).uint(fTrackParent, processTrack(rank)).str(fTrackName, k.laneName(l))
				pw.emit(pb(pw.pkt[:0]).bytes(fPacketTrackDesc, pw.sub))
			}
		}
		for _, k := range streamsOf[rank] {
			pw.sub = pb(pw.sub[:0]).uint(fTrackUUID, streamTrack(rank, k)).uint(fTrackParent, processTrack(rank)).str(fTrackName, "stream "+pw.r.streamNames[k])
			pw.emit(pb(pw.pkt[:0]).bytes(fPacketTrackDesc, pw.sub))
		}
	}
}

// sliceEvents returns the beginnings and ends of every slice r kept, in
// time order; on one track they come begin, end, begin, end..., since a
// lane's slices do not overlap.
func (r *Recorder) sliceEvents() []sliceEvent {
	events := make([]sliceEvent, 0, 2*(int(r.sends+r.recvs)+len(r.spans)+len(r.streams)))
	add := func(b, e sliceEvent) { events = append(events, b, e) }
	for i, m := range r.msgs {
		if m.showSend {
			add(slice(m.start, m.deliver, i, sendTrack))
		}
		if m.showRecv {
			add(slice(m.start, m.deliver, i, recvTrack))
		}
	}
	for i, s := range r.spans {
		add(slice(s.start, s.end, i, computeTrack))
	}
	for i, s := range r.streams {
		add(slice(s.start, s.end, i, streamKind))
	}
	// By time; at one time, ends before beginnings (a lane's next slice
	// may begin where its last ends), except for slices of no duration,
	// whose end follows their beginning; then in the order above, which
	// is deterministic.
	slices.SortStableFunc(events, func(a, b sliceEvent) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.late, b.late))
	})
	return events
}

// writeSliceEvent writes e: the end of a slice, or its beginning with
// its name and arguments.
func (pw *perfettoWriter) writeSliceEvent(e sliceEvent) {
	track := pw.track(e)
	pw.pkt = pb(pw.pkt[:0]).uint(fPacketTimestamp, uint64(e.ts))
	if !e.begin {
		pw.ev = pb(pw.ev[:0]).uint(fEventType, typeSliceEnd).uint(fEventTrackUUID, track)
		pw.emit(pw.pkt.bytes(fPacketTrackEvent, pw.ev))
		return
	}
	iid := pw.internName(pw.r.sliceName(e))
	pw.ev = pb(pw.ev[:0]).uint(fEventType, typeSliceBegin).uint(fEventTrackUUID, track).uint(fEventNameIID, iid)
	pw.annotate(e)
	pw.emit(pw.pkt.bytes(fPacketTrackEvent, pw.ev).uint(fPacketSeqFlags, seqNeedsIncrementalState))
}

// track is the track of e's slice: its stream's, or the lane of its
// rank that the layout gave it.
func (pw *perfettoWriter) track(e sliceEvent) uint64 {
	switch e.kind {
	case streamKind:
		ss := &pw.r.streams[e.item]
		return streamTrack(ss.rank, ss.stream)
	case computeTrack:
		return laneTrack(pw.r.spans[e.item].rank, e.kind, pw.lay.lane[e.kind][e.item])
	}
	m := &pw.r.msgs[e.item]
	rank := m.src
	if e.kind == recvTrack {
		rank = m.dst
	}
	return laneTrack(rank, e.kind, pw.lay.lane[e.kind][e.item])
}

// sliceName names e's slice as the JSON form does: "send → 5",
// "recv ← 2", the stream span's name, or the compute span's kind.
func (r *Recorder) sliceName(e sliceEvent) string {
	switch e.kind {
	case sendTrack:
		return "send → " + strconv.Itoa(r.msgs[e.item].dst)
	case recvTrack:
		return "recv ← " + strconv.Itoa(r.msgs[e.item].src)
	case streamKind:
		return r.streams[e.item].name
	}
	return r.spans[e.item].kind.String()
}

// internName returns the iid of an event name, interning it in the
// packet being built the first time it comes.
func (pw *perfettoWriter) internName(name string) uint64 {
	iid, ok := pw.names[name]
	if !ok {
		iid = uint64(len(pw.names) + 1)
		pw.names[name] = iid
		pw.sub = pb(pw.sub[:0]).uint(fInternedIID, iid).str(fInternedName, name)
		pw.pkt = pw.pkt.bytes(fPacketInterned, pb(nil).bytes(fInternedEventNames, pw.sub))
	}
	return iid
}

// annotate adds to the event being built the arguments of e's slice: a
// send's bytes, tag, message id and posting time, with a flow to its
// receive if kept; a receive's bytes, ending the flow from its send if
// kept; the bytes a stream span or a compute span moved (wait and delay
// move none).
func (pw *perfettoWriter) annotate(e sliceEvent) {
	r, sub := pw.r, pw.sub
	switch e.kind {
	case sendTrack:
		m := &r.msgs[e.item]
		pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annBytes).uint(fAnnotationUint, uint64(m.bytes)))
		pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annTag).uint(fAnnotationUint, m.tag))
		pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annMessage).uint(fAnnotationUint, uint64(m.id)))
		pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annPostedNs).int(fAnnotationInt, ns(m.posted)))
		if m.showRecv {
			pw.ev = pw.ev.fixed64(fEventFlowIDs, uint64(m.id)+1)
		}
	case recvTrack:
		m := &r.msgs[e.item]
		pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annBytes).uint(fAnnotationUint, uint64(m.bytes)))
		if m.showSend {
			pw.ev = pw.ev.fixed64(fEventEndFlowIDs, uint64(m.id)+1)
		}
	case streamKind:
		if ss := &r.streams[e.item]; ss.bytes > 0 {
			pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annBytes).uint(fAnnotationUint, uint64(ss.bytes)))
		}
	default:
		if s := &r.spans[e.item]; s.kind != sim.SpanWait && s.kind != sim.SpanDelay {
			pw.ev = pw.ev.bytes(fEventAnnotations, pb(sub[:0]).uint(fAnnotationNameIID, annBytes).uint(fAnnotationUint, uint64(s.bytes)))
		}
	}
}
