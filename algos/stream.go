package algos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Streams are one rank's streams and events, the contract of CUDA's
// streams as numr's Communicator exposes it (StreamSyncOps) and PyTorch's
// DistributedDataParallel uses it: a rank has a compute stream and one or
// more communication streams; the work queued on one stream runs in the
// order it was queued, concurrently with the other streams' work; an
// Event recorded on a stream completes once the work queued on that
// stream before it has, and can be waited on by another stream (work
// queued on it afterwards waits for the event) or by the host (the
// program that queues the work); collectives of any Comm are launched on
// a stream without blocking the host. One program, written once against
// them, runs on every Link:
//
//   - on the simulator (a Delayer and a Spawner), each stream is a
//     process of the rank, and compute is timed work that holds only the
//     stream's process for its duration: the rank's other streams, its
//     reductions and its ports go on meanwhile, as a GPU's kernels run
//     beside NCCL's;
//   - on other links that can spawn (realnet), each stream is a
//     goroutine, and compute is done by the function given with
//     WithCompute (emulated compute: spin or sleep for the stated time,
//     or real work);
//   - on links that cannot spawn, every piece of work runs when it is
//     queued, on the caller's goroutine: the same results, nothing
//     overlaps. Package staging's Link, which runs the algorithms on GPU
//     buffers, is one: there the streams are not the CUDA driver's (its
//     collectives are posted by host code, message by message, which a
//     driver stream cannot queue), and compute is WithCompute's function
//     (a kernel the program launches and synchronizes).
//
// Ordering follows CUDA: WaitEvent waits for the event's most recent
// Record at the time WaitEvent is called (a later Record does not change
// what an earlier wait waits for), and waiting on an event that was
// never recorded waits for nothing. Record, WaitEvent and the work
// methods return at once; Synchronize blocks the host.
//
// Errors are sticky, as CUDA's are: once a piece of work on a stream
// fails, the later work of that stream is skipped, and the stream's
// Synchronize, and every wait for an event recorded on it after the
// failure, return the error (a *StreamError); a stream that waits on such
// an event fails in turn. The work before the failure is unaffected.
//
// A collective launched on a stream takes its Comm's sequence number when
// it is queued, not when it runs, so the host must queue the collectives
// of each Comm in the same order on every rank (as for Comm's own
// methods), whatever streams they run on.
//
// Streams, its Streams and Events are used by one goroutine, the rank's
// host program, like a Comm; the work runs on the streams' own processes.
type Streams struct {
	link    Link
	spawner Spawner // nil: work runs when queued
	signal  Signaler
	compute func(ctx context.Context, d time.Duration) error
	flops   float64
	obs     StreamObserver
	rank    int

	// mu guards the streams' queues, counters and waiters, which the
	// host and the streams' processes share.
	mu      sync.Mutex
	streams []*Stream
	// nextSignal numbers the self-messages that stand in for signals on
	// links that are no Signaler.
	nextSignal uint64
}

// StreamsOption configures Streams.
type StreamsOption func(*Streams)

// WithCompute makes compute work on links whose clock is not a model's
// (not a Delayer) run as f: f(ctx, d) performs d of emulated compute on
// the calling goroutine (spin or sleep for d, or do real work) and
// returns when it is done. On the simulator compute is the model's and f
// is not called. Without it, compute on such a link fails with
// ErrNoCompute.
func WithCompute(f func(ctx context.Context, d time.Duration) error) StreamsOption {
	return func(s *Streams) { s.compute = f }
}

// WithFLOPS sets the rate, in floating-point operations per second, at
// which ComputeFLOPs converts FLOPs to time, overriding the Machine's
// (MachineOf(link).FLOPS).
func WithFLOPS(rate float64) StreamsOption {
	return func(s *Streams) { s.flops = rate }
}

// WithStreamObserver makes the streams report each piece of work to o
// once it has finished (see StreamObserver).
func WithStreamObserver(o StreamObserver) StreamsOption {
	return func(s *Streams) { s.obs = o }
}

// ErrNoCompute is the error of compute work on a link whose clock is not
// a model's, on Streams made without WithCompute.
var ErrNoCompute = errors.New("algos: compute on a link that is not a model needs WithCompute")

// StreamCommID is the communicator id of the self-messages that wake a
// rank's stream processes on links that are no Signaler (see Signaler):
// Sub must not be given it.
const StreamCommID = MaxCommID

// Signaler is implemented by links whose processes can wake one another
// without a message: the simulator. Streams use it to block a stream's
// process, or the host, until work on another stream has finished; on
// links without it they use a message from the rank to itself (tagged
// with StreamCommID), which costs nothing in the simulator and little on
// real links.
type Signaler interface {
	// Signal returns a request of this link that completes, without
	// error, once fire is called. fire may be called from any process of
	// the rank, before or after the request is waited on; calling it again
	// does nothing. One process waits on the request.
	Signal() (req Request, fire func())
}

// NewStreams returns the streams of the rank that l belongs to: l is the
// rank's link (the world's, or a decorator over it).
func NewStreams(l Link, opts ...StreamsOption) *Streams {
	ss := &Streams{link: l, rank: l.Rank()}
	ss.spawner, _ = SpawnerOf(l)
	ss.signal, _ = signalerOf(l)
	for _, o := range opts {
		o(ss)
	}
	return ss
}

// Link returns the link the streams run on.
func (ss *Streams) Link() Link { return ss.link }

// NewStream returns a new stream, named name in reports ("compute",
// "dp", ...). Streams are created by the host program.
func (ss *Streams) NewStream(name string) *Stream {
	s := &Stream{ss: ss, name: name, failAt: -1}
	ss.mu.Lock()
	ss.streams = append(ss.streams, s)
	ss.mu.Unlock()
	return s
}

// Synchronize blocks until the work queued so far on every stream has
// finished, and returns the first error of a stream, in the order the
// streams were created.
func (ss *Streams) Synchronize(ctx context.Context) error {
	ss.mu.Lock()
	streams := append([]*Stream(nil), ss.streams...)
	ss.mu.Unlock()
	var first error
	for _, s := range streams {
		if err := s.Synchronize(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Stream is a queue of work on one rank that runs in the order it was
// queued (see Streams).
type Stream struct {
	ss   *Streams
	name string

	// Guarded by ss.mu.
	queue   []*streamItem // queued, not yet started
	head    int           // first item of queue still to run
	posted  int64         // items queued
	done    int64         // items finished (run, failed or skipped)
	running bool          // a process works through the queue
	failAt  int64         // index of the first item that failed, -1 if none
	failErr *StreamError
	waiters []streamWaiter
	last    ItemInfo // the last item queued
}

type streamWaiter struct {
	pos  int64
	fire func()
}

// ItemKind is what a piece of work on a stream is.
type ItemKind uint8

const (
	// KindCompute is timed compute (Compute, ComputeFLOPs).
	KindCompute ItemKind = iota
	// KindCollective is a collective of a Comm.
	KindCollective
	// KindSend and KindRecv are point-to-point messages of a Comm.
	KindSend
	KindRecv
	// KindWait is a wait for an event recorded on another stream.
	KindWait
	// KindOp is a function queued with Do.
	KindOp
)

var itemKindNames = [...]string{"compute", "collective", "send", "recv", "wait", "op"}

func (k ItemKind) String() string {
	if int(k) < len(itemKindNames) {
		return itemKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ItemInfo describes a piece of work queued on a stream.
type ItemInfo struct {
	// Stream is the name of the stream it was queued on.
	Stream string
	Kind   ItemKind
	// Label is the label it was queued with.
	Label string
	// Collective is the catalogue name of a KindCollective item ("" for
	// other kinds); Bytes its message size as nccl-tests counts it, or a
	// point-to-point message's length.
	Collective string
	Bytes      int
}

// StreamRecord is a piece of work that finished on a stream, as a
// StreamObserver is told of it.
type StreamRecord struct {
	// Rank is the rank of the streams.
	Rank int
	ItemInfo
	// Start and End are when the work began and ended on the link's clock
	// (Link.Now): for a KindWait, when the stream reached the wait and
	// when it went on.
	Start, End time.Duration
	// Waited is, for a KindWait, the last item queued before the event's
	// record on the stream it was recorded on: what was waited for. Its
	// Stream is "" if the event's stream had nothing queued before it.
	Waited ItemInfo
	// Err is the item's error; nil if it succeeded. Items skipped after a
	// failure are not reported.
	Err error
}

// StreamObserver is told of every piece of work that finished on a
// rank's streams (WithStreamObserver). On the simulator it is called from
// the simulation's single thread, in the order of simulated time; on
// real links from the streams' goroutines, concurrently, so it must be
// safe for concurrent use.
type StreamObserver interface {
	StreamItem(r StreamRecord)
}

// StreamError is the error of a stream whose work failed: Synchronize
// returns it, and so do waits for events recorded after the failure.
type StreamError struct {
	// Stream is the stream's name; Item the label of the work that failed
	// (or of the wait, if the stream failed because it waited for a
	// failed event).
	Stream, Item string
	Err          error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("stream %q: %s: %v", e.Stream, e.Item, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// streamItem is one piece of queued work.
type streamItem struct {
	info ItemInfo
	ctx  context.Context
	d    time.Duration // KindCompute: its duration, or
	fl   float64       // its FLOPs when d is 0
	run  func() error  // KindCollective, KindSend, KindRecv, KindOp
	ws   *Stream       // KindWait: the stream the event was recorded on
	wpos int64         // and the position it completes at
	wfor ItemInfo      // and what it follows
	comm *Comm         // a collective's Comm, whose deferred work runs first where the link cannot spawn
}

// Name is the stream's name.
func (s *Stream) Name() string { return s.name }

// Compute queues d of compute: on the simulator the stream's process is
// held for d of simulated time; elsewhere WithCompute's function runs.
// label names the work in reports ("fwd layer 3").
func (s *Stream) Compute(ctx context.Context, d time.Duration, label string) {
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindCompute, Label: label}, ctx: ctx, d: max(d, 0)})
}

// ComputeFLOPs queues flops floating-point operations of compute, which
// take flops / rate, rounded to the nanosecond, where the rate is
// WithFLOPS's or else the link's Machine's FLOPS (see Compute). The work
// fails if the rate is not known.
func (s *Stream) ComputeFLOPs(ctx context.Context, flops float64, label string) {
	if flops <= 0 || math.IsNaN(flops) {
		s.Compute(ctx, 0, label)
		return
	}
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindCompute, Label: label}, ctx: ctx, fl: flops})
}

// Collective queues collective (a catalogue name) over call on
// communicator c. It takes c's next sequence number and chooses its
// algorithm now (see Comm), and runs once the work queued before it on
// the stream has finished.
func (s *Stream) Collective(ctx context.Context, c *Comm, collective string, call Call, label string) {
	bytes, _, _ := messageSize(collective, c.Size(), call)
	op := c.prepare(collective, call)
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindCollective, Label: label, Collective: collective, Bytes: bytes},
		ctx: ctx, comm: c, run: func() error { return op(ctx) }})
}

// AllReduce queues Comm.AllReduce on the stream (see Collective).
func (s *Stream) AllReduce(ctx context.Context, c *Comm, buf device.Buffer, dt device.DType, op device.Op, label string) {
	s.Collective(ctx, c, "allreduce", Call{Buf: buf, DType: dt, Op: op}, label)
}

// ReduceScatter queues Comm.ReduceScatter on the stream.
func (s *Stream) ReduceScatter(ctx context.Context, c *Comm, send, recv device.Buffer, dt device.DType, op device.Op, label string) {
	s.Collective(ctx, c, "reduce_scatter", Call{Send: send, Buf: recv, DType: dt, Op: op}, label)
}

// AllGather queues Comm.AllGather on the stream.
func (s *Stream) AllGather(ctx context.Context, c *Comm, send, recv device.Buffer, dt device.DType, label string) {
	s.Collective(ctx, c, "allgather", Call{Send: send, Buf: recv, DType: dt}, label)
}

// AllToAll queues Comm.AllToAll on the stream.
func (s *Stream) AllToAll(ctx context.Context, c *Comm, send, recv device.Buffer, dt device.DType, label string) {
	s.Collective(ctx, c, "alltoall", Call{Send: send, Buf: recv, DType: dt}, label)
}

// Send queues Comm.Send of buf to rank dst of c with tag: the stream
// goes on once the send has completed.
func (s *Stream) Send(ctx context.Context, c *Comm, dst int, tag uint64, buf device.Buffer, label string) {
	t, err := c.userTag(tag)
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindSend, Label: label, Bytes: buf.Len()}, ctx: ctx, run: func() error {
		if err != nil {
			return err
		}
		return c.link.Wait(ctx, c.link.Isend(dst, t, buf))
	}})
}

// Recv queues Comm.Recv into buf from rank src of c with tag: the
// receive is posted when the stream reaches it, and the stream goes on
// once the message is in buf.
func (s *Stream) Recv(ctx context.Context, c *Comm, src int, tag uint64, buf device.Buffer, label string) {
	t, err := c.userTag(tag)
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindRecv, Label: label, Bytes: buf.Len()}, ctx: ctx, run: func() error {
		if err != nil {
			return err
		}
		return c.link.Wait(ctx, c.link.Irecv(src, t, buf))
	}})
}

// Do queues fn, which runs on the stream's process (a host callback in
// CUDA's terms); it may use the link, and fails the stream if it returns
// an error.
func (s *Stream) Do(ctx context.Context, label string, fn func(ctx context.Context) error) {
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindOp, Label: label}, ctx: ctx, run: func() error { return fn(ctx) }})
}

// Record records ev on the stream: ev completes once the work queued on
// the stream so far has finished. It replaces ev's earlier record for
// later waits; waits already queued keep waiting for the earlier one.
func (s *Stream) Record(ev *Event) {
	s.ss.mu.Lock()
	ev.s, ev.pos, ev.after = s, s.posted, s.last
	s.ss.mu.Unlock()
}

// WaitEvent makes the work queued on the stream from now on wait until
// ev, as last recorded, has completed. An event never recorded is waited
// for at once. If ev's stream failed before the record, this stream
// fails too.
func (s *Stream) WaitEvent(ev *Event) {
	if ev.s == nil {
		return
	}
	s.enqueue(&streamItem{info: ItemInfo{Kind: KindWait, Label: "wait " + ev.s.name}, ctx: context.Background(), ws: ev.s, wpos: ev.pos, wfor: ev.after})
}

// Synchronize blocks the host until the work queued on the stream so far
// has finished, and returns the stream's error if it failed.
func (s *Stream) Synchronize(ctx context.Context) error {
	s.ss.mu.Lock()
	pos := s.posted
	s.ss.mu.Unlock()
	return s.ss.waitPos(ctx, s, pos)
}

// Event marks a point in a stream's work (see Streams). The zero Event
// is ready to use and has never been recorded.
type Event struct {
	s     *Stream
	pos   int64
	after ItemInfo
}

// Synchronize blocks the host until ev, as last recorded, has completed,
// and returns the error of its stream if the stream failed before it.
// An event never recorded completes at once.
func (ev *Event) Synchronize(ctx context.Context) error {
	if ev.s == nil {
		return nil
	}
	return ev.s.ss.waitPos(ctx, ev.s, ev.pos)
}

// Query reports whether ev has completed, without waiting, and the
// error of its stream if it failed before it.
func (ev *Event) Query() (bool, error) {
	if ev.s == nil {
		return true, nil
	}
	ss := ev.s.ss
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ev.s.done < ev.pos {
		return false, nil
	}
	return true, ev.s.errAt(ev.pos)
}

// enqueue queues it on s and makes sure a process works through the
// queue; on a link that cannot spawn it runs it at once.
func (s *Stream) enqueue(it *streamItem) {
	ss := s.ss
	it.info.Stream = s.name
	if ss.spawner == nil {
		if it.comm != nil {
			if err := it.comm.flush(it.ctx); err != nil {
				it.run = func() error { return err }
			}
		}
		ss.mu.Lock()
		idx := s.posted
		s.posted++
		s.last = it.info
		failed := s.failErr != nil
		ss.mu.Unlock()
		s.finish(idx, it, failed)
		return
	}
	ss.mu.Lock()
	s.queue = append(s.queue, it)
	s.posted++
	s.last = it.info
	start := !s.running
	s.running = true
	ss.mu.Unlock()
	if start {
		ss.spawner.Spawn(s.work)
	}
}

// work is the stream's process: it runs the queued items in order and
// returns once the queue is empty (the next enqueue starts another).
func (s *Stream) work(context.Context) error {
	ss := s.ss
	for {
		ss.mu.Lock()
		if s.head == len(s.queue) {
			s.queue, s.head = s.queue[:0], 0
			s.running = false
			ss.mu.Unlock()
			return nil
		}
		it := s.queue[s.head]
		s.queue[s.head] = nil
		s.head++
		idx := s.done
		failed := s.failErr != nil
		ss.mu.Unlock()
		s.finish(idx, it, failed)
	}
}

// finish runs item idx of s unless the stream has failed, records its
// outcome and wakes whoever waits for it.
func (s *Stream) finish(idx int64, it *streamItem, failed bool) {
	ss := s.ss
	var err error
	if !failed {
		err = ss.runItem(s, it)
	}
	ss.mu.Lock()
	if err != nil && s.failErr == nil {
		s.failAt = idx
		var se *StreamError
		if it.info.Kind == KindWait && errors.As(err, &se) {
			err = se.Err
		}
		s.failErr = &StreamError{Stream: s.name, Item: it.info.Label, Err: err}
	}
	s.done++
	var fire []func()
	keep := s.waiters[:0]
	for _, w := range s.waiters {
		if w.pos <= s.done {
			fire = append(fire, w.fire)
		} else {
			keep = append(keep, w)
		}
	}
	clear(s.waiters[len(keep):])
	s.waiters = keep
	ss.mu.Unlock()
	for _, f := range fire {
		f()
	}
}

// runItem runs one item and tells the observer.
func (ss *Streams) runItem(s *Stream, it *streamItem) error {
	var start time.Duration
	if ss.obs != nil {
		start = ss.link.Now()
	}
	var err error
	switch it.info.Kind {
	case KindCompute:
		err = ss.computeFor(it)
	case KindWait:
		err = ss.waitPos(it.ctx, it.ws, it.wpos)
	default:
		err = it.run()
	}
	if ss.obs != nil {
		r := StreamRecord{Rank: ss.rank, ItemInfo: it.info, Start: start, End: ss.link.Now(), Err: err}
		if it.info.Kind == KindWait {
			r.Waited = it.wfor
		}
		ss.obs.StreamItem(r)
	}
	return err
}

// computeFor performs a compute item.
func (ss *Streams) computeFor(it *streamItem) error {
	d := it.d
	if it.fl > 0 {
		rate := ss.flops
		if rate == 0 {
			if m := MachineOf(ss.link); m != nil {
				rate = m.FLOPS
			}
		}
		if !(rate > 0) || math.IsInf(rate, 0) {
			return fmt.Errorf("algos: %g FLOPs of compute, but the rank's FLOP rate is not known (Machine.FLOPS, WithFLOPS)", it.fl)
		}
		secs := it.fl / rate
		if secs > float64(math.MaxInt64)/1e9 {
			return fmt.Errorf("algos: %g FLOPs at %g FLOP/s is beyond a time.Duration", it.fl, rate)
		}
		d = time.Duration(math.Round(secs * 1e9))
	}
	if d <= 0 {
		return it.ctx.Err()
	}
	if IsModel(ss.link) {
		return Delay(it.ctx, ss.link, d)
	}
	if ss.compute == nil {
		return ErrNoCompute
	}
	return ss.compute(it.ctx, d)
}

// errAt returns s's error if it failed before position pos; ss.mu held.
func (s *Stream) errAt(pos int64) error {
	if s.failErr != nil && s.failAt < pos {
		return s.failErr
	}
	return nil
}

// waitPos blocks the calling process until ws has finished its first pos
// items, and returns ws's error if one of them failed.
func (ss *Streams) waitPos(ctx context.Context, ws *Stream, pos int64) error {
	wss := ws.ss
	wss.mu.Lock()
	if ws.done >= pos {
		err := ws.errAt(pos)
		wss.mu.Unlock()
		return err
	}
	req, fire := wss.newSignal()
	ws.waiters = append(ws.waiters, streamWaiter{pos: pos, fire: fire})
	wss.mu.Unlock()
	if err := wss.link.Wait(ctx, req); err != nil {
		return err
	}
	wss.mu.Lock()
	defer wss.mu.Unlock()
	return ws.errAt(pos)
}

// newSignal returns a request that completes once fire is called: the
// link's own (Signaler), or else a message from the rank to itself.
// ss.mu is held.
func (ss *Streams) newSignal() (Request, func()) {
	if ss.signal != nil {
		return ss.signal.Signal()
	}
	n := ss.nextSignal
	ss.nextSignal++
	tag := Tag(StreamCommID)<<commShift | Tag(n)&(1<<commShift-1)
	buf := ss.link.Alloc(0)
	req := ss.link.Irecv(ss.rank, tag, buf)
	var once sync.Once
	return req, func() { once.Do(func() { ss.link.Isend(ss.rank, tag, buf) }) }
}

// prepare takes the next sequence number of c and chooses the algorithm
// of collective over call now, for a stream to run later: what Start
// does, less the running.
func (c *Comm) prepare(collective string, call Call) func(ctx context.Context) error {
	l := Scoped(c.link, c.id, c.nextSeq())
	a, params, err := c.choose(collective, call)
	if err == nil {
		call.Params, err = mergeParams(a, params, call.Params)
	}
	if err != nil {
		return func(context.Context) error { return err }
	}
	return func(ctx context.Context) error { return a.Run(ctx, l, call) }
}
