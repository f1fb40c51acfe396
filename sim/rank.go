package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"slices"
	"unsafe"

	"github.com/nexar-go/nexar-go/algos"
)

// rank is one simulated rank: its message matching state and the processes
// that run on it: the body, and whatever the body spawned.
type rank struct {
	e *Engine
	// computeFree is when the rank's compute finishes what it was given.
	computeFree Time
	// (A rank's number is where it sits in the engine's table: see id.)

	// inflight counts the messages the rank posted that were neither
	// delivered nor dropped yet.
	inflight int32
	// exited is set once every process of the rank has returned; its
	// outcome's error is then fault.exitErr.
	exited bool
	// crashed is set when a fault made the rank fail (Engine.FailRank).
	crashed bool

	// match pairs messages to this rank with its receives, by source
	// and tag (see matchQueue).
	match matches
	// rare is what few ranks have: what went wrong with the rank, the
	// processes it spawned; nil while neither: a run of millions of
	// ranks keeps no error fields per rank.
	rare *rankRare
}

// id is the rank's number: its place in the engine's table, which holds
// it (rankTable), so that a rank keeps no field for it (a replayed rank,
// its process, two request slots and its alpha-beta ports are 232
// bytes).
func (r *rank) id() int {
	t := &r.e.ranks
	if t.pairs != nil {
		return int((uintptr(unsafe.Pointer(r)) - uintptr(unsafe.Pointer(&t.pairs[0].r))) / unsafe.Sizeof(rankProc{}))
	}
	return int((uintptr(unsafe.Pointer(r)) - uintptr(unsafe.Pointer(&t.solo[0]))) / unsafe.Sizeof(rank{}))
}

// rankSpawns are the processes of a rank that spawned some.
type rankSpawns struct {
	// procs are the rank's processes, the body's first.
	procs []*proc
	// doneFinish is the latest finish of the spawned processes that
	// returned without error and were forgotten (see forgetProc).
	doneFinish Time
}

// processes yields the rank's processes, the body's first.
func (r *rank) processes() iter.Seq2[int, *proc] {
	return func(yield func(int, *proc) bool) {
		if r.rare != nil && r.rare.spawned != nil {
			for i, p := range r.rare.spawned.procs {
				if !yield(i, p) {
					return
				}
			}
			return
		}
		if p := r.body(); p != nil {
			yield(0, p)
		}
	}
}

// body is the rank's first process, which runs the body, nil before it
// starts: beside the rank in a replay (rankProc), and otherwise in the
// engine's rank table. The processes it spawned are in rare (see
// processes).
func (r *rank) body() *proc {
	t := &r.e.ranks
	if t.pairs != nil {
		return &t.pairs[r.id()].p
	}
	if cp := t.bodies[r.id()]; cp != nil {
		return &cp.proc
	}
	return nil
}

// rankRare is what few ranks have: how a rank failed or returned with an
// error, and the processes it spawned.
type rankRare struct {
	// spawned holds the rank's processes once the body spawned one.
	spawned *rankSpawns
	// exitErr is the error the rank's processes returned with.
	exitErr  error
	crashAt  Time
	crashErr *RankFailedError
	// deadErr, once set, is what receives from this rank fail with when
	// nothing delivered matches them: it failed, or returned with an error
	// and has nothing left in flight.
	deadErr error
	// matches are the rank's match queues beside its own, by key, once
	// it has had more than matchListMax of them at once (see matches).
	matches map[matchKey]*matchQueue
}

// faults returns r's rare record, making it.
func (r *rank) faults() *rankRare {
	if r.rare == nil {
		r.rare = &rankRare{}
	}
	return r.rare
}

// exitErr is the error the rank returned with, nil if none (yet).
func (r *rank) exitErr() error {
	if r.rare == nil {
		return nil
	}
	return r.rare.exitErr
}

// spawn starts fn as a new process of the rank at the current time. If done
// is not nil it completes, with fn's error, when fn returns.
func (r *rank) spawn(fn func(ctx context.Context) error, done *coRequest) *proc {
	cp := &coProc{proc: proc{isCo: true}, r: r, co: coroutine{done: done}}
	p := &cp.proc
	seq := func(yield func(struct{}) bool) {
		cp.co.yield = yield
		var err error
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			}
			p.returned(err)
		}()
		err = fn(context.Background())
	}
	cp.co.next, cp.co.cancel = iter.Pull(seq)
	switch body := r.body(); {
	case body == nil:
		r.e.ranks.bodies[r.id()] = cp
	case r.rare == nil || r.rare.spawned == nil:
		r.faults().spawned = &rankSpawns{procs: []*proc{body, p}}
	default:
		r.rare.spawned.procs = append(r.rare.spawned.procs, p)
	}
	p.scheduleResume()
	return p
}

// returned records that the process returned err, now.
func (p *proc) returned(err error) {
	r := p.rank()
	if err != nil {
		p.coro().err = err // (a replayed process returns no error)
	}
	p.finished = true
	p.setFinish(r.e.now)
	if co := p.coro(); co != nil && co.done != nil {
		co.done.complete(err)
		if err == nil && !p.aborted {
			// (A process stopped as the run is torn down returns while
			// the rank's processes are being walked: it stays.)
			r.forgetProc(p)
		}
	}
	r.procReturned()
}

// forgetProc drops spawned process p, which returned without error, from the
// rank's processes: the rank's outcome needs only its finish time, and a
// program that spawns a process per operation (streams, NCCL's channels)
// would otherwise keep every process it ever ran and look at each of them
// whenever one returns.
func (r *rank) forgetProc(p *proc) {
	s := r.rare.spawned
	s.doneFinish = max(s.doneFinish, p.finishTime())
	for i := len(s.procs) - 1; i >= 1; i-- {
		if s.procs[i] == p {
			copy(s.procs[i:], s.procs[i+1:])
			s.procs[len(s.procs)-1] = nil
			s.procs = s.procs[:len(s.procs)-1]
			return
		}
	}
}

// procReturned notes that one of the rank's processes returned; once all
// have, the rank has exited, and if with an error, receives from it may
// have to fail.
func (r *rank) procReturned() {
	if r.crashed || r.exited {
		return
	}
	for _, p := range r.processes() {
		if !p.finished {
			return
		}
	}
	r.exited = true
	if _, _, err := r.outcome(); err != nil {
		r.faults().exitErr = err
		r.e.checkDead(r)
		r.e.failSwitchMember(r.id(), r.e.gone(r.id()), false)
	}
	if h, ok := r.e.net.(Holder); ok {
		for _, m := range h.HeldFor(r.id()) {
			r.e.Unreceivable(m)
		}
	}
}

// outcome is when the rank finished (its last process returned), whether
// all its processes did, and the body's error, or else the first error of a
// spawned process that nobody waited for. A crashed rank finished when it
// failed, with its *RankFailedError.
func (r *rank) outcome() (finish Time, finished bool, err error) {
	if r.crashed {
		return r.rare.crashAt, true, r.rare.crashErr
	}
	finished = true
	if r.rare != nil && r.rare.spawned != nil {
		finish = r.rare.spawned.doneFinish
	}
	for i, p := range r.processes() {
		finish = max(finish, p.finishTime())
		finished = finished && p.finished
		if perr := p.error(); err == nil && perr != nil && (i == 0 || !p.coro().done.waitedFor) {
			err = perr
		}
	}
	return finish, finished, err
}

// announce records m, just sent to this rank, in its match queue, and
// marks it matched if its receive is already posted.
func (r *rank) announce(m *Message) {
	if r.queue(matchKey{src: m.Src, tag: m.Tag}).announce(m) != nil {
		m.setMatched()
	}
}

// arrive completes the receive m matches with m, now that it is delivered,
// or keeps it until that receive is posted.
func (r *rank) arrive(m *Message) {
	q := r.lookup(matchKey{src: m.Src, tag: m.Tag})
	if q == nil || m.seq() < q.base {
		return // its receive failed already (its sender is gone)
	}
	s := q.slot(m.seq())
	m.setArrived()
	if s.req == nil {
		return
	}
	r.fill(s.req, m)
	r.finish(q, s)
}

// receive posts req for the next message from src with tag: it completes
// at once if that message arrived, fails if the sender is gone and can
// send nothing more, and otherwise waits; if its message is on its way
// but held for its receive (a rendezvous), the network is told.
func (r *rank) receive(req *request, src int, tag algos.Tag) {
	q := r.queue(matchKey{src: src, tag: tag})
	s, m := q.post(req)
	switch {
	case m != nil && m.isArrived():
		r.fill(req, m)
		r.finish(q, s)
	case src != r.id() && r.e.ranks.at(src).rare != nil && r.e.ranks.at(src).rare.deadErr != nil:
		// A message on its way from a rank that failed is lost.
		req.complete(r.e.ranks.at(src).rare.deadErr)
		r.finish(q, s)
	case m != nil:
		m.setMatched()
		if mt, ok := r.e.net.(Matcher); ok {
			mt.Matched(m)
		}
	}
}

// failReceivesFrom fails every receive posted from src that no delivered
// message completes, in tag order.
func (r *rank) failReceivesFrom(src int, err error) {
	keys := r.keys(src)
	slices.SortFunc(keys, func(a, b matchKey) int { return cmp.Compare(a.tag, b.tag) })
	for _, k := range keys {
		q := r.lookup(k)
		for i := range q.live() {
			if s := q.slotAt(i); s.req != nil && !s.done() {
				s.req.complete(err)
				s.req = &slotDone
			}
		}
		if q.trim() {
			r.forget(q)
		}
	}
}

// fill completes receive req with message m: at once, or once the rank's
// compute has spent the network's receive overhead on it. m is then done
// with, and the engine reuses it.
func (r *rank) fill(req *request, m *Message) {
	e := r.e
	defer e.freeMessage(m)
	if m.extra != nil && m.extra.err != nil {
		req.complete(m.extra.err)
		return
	}
	if m.Bytes > req.bytes {
		req.complete(fmt.Errorf("sim: rank %d: message of %d bytes from rank %d (tag %d) is longer than its receive buffer of %d bytes",
			r.id(), m.Bytes, m.Src, m.Tag, req.bytes))
		return
	}
	if h, ok := e.takeHost(req); ok && m.extra != nil && m.extra.payload != nil {
		copy(h, m.extra.payload)
	}
	if e.ovh != nil && m.Src != r.id() {
		if o := e.ovh.RecvOverhead(r.id(), m.Bytes); o > 0 {
			start := max(e.now, r.computeFree)
			r.computeFree = start + o
			e.At(r.computeFree, &recvOverhead{r: r, req: req, start: start, bytes: m.Bytes})
			return
		}
	}
	req.complete(nil)
}

// recvOverhead completes a receive once its overhead is spent.
type recvOverhead struct {
	r     *rank
	req   *request
	start Time
	bytes int
}

func (o *recvOverhead) Fire() {
	r := o.r
	if r.crashed {
		return
	}
	if e := r.e; e.obs != nil {
		e.obs.Span(r.id(), SpanOverhead, o.bytes, o.start, e.now)
	}
	o.req.complete(nil)
}

func (r *rank) blockedReport() BlockedRank {
	b := BlockedRank{Rank: r.id()}
	for _, p := range r.processes() {
		if p.coro() == nil {
			continue // a replay reports no deadlock: coroutines do
		}
		for _, q := range p.coro().waiting {
			if !q.done() {
				b.Waits = append(b.Waits, q.wait())
			}
		}
	}
	return b
}

// proc is one process on a rank: a coroutine that the engine resumes when
// what it waits for has happened, so exactly one process runs at a time in
// the whole world and the run is deterministic.
//
// A process that replays a recorded program sits beside its rank
// (rankProc) and has no coroutine: its program is its rank's in the
// engine's programs (see program), and the rest is its place in it. One
// that runs the body as a coroutine is the proc of a coProc, beside its
// rank's pointer and its coroutine. So a replayed process holds no
// pointer, and is found from its rank (rank.body) and its rank from it
// (proc.rank) by where it sits.
type proc struct {
	tag algos.Tag // the tag the next operation's is written relative to
	// slot0 is where the process's request slots past its first start in
	// the engine's (Engine.slots; see request): a run of millions of
	// ranks keeps no slice per rank.
	slot0 int32
	ci    int32 // the chunk being run, an index into prog.chunks
	off   int32 // where the next operation starts in that chunk

	// pending counts the requests of the Wait this process is blocked in
	// that are not done.
	pending  int32
	finished bool
	aborted  bool
	// resumeScheduled is true while a resume event for this process is queued.
	resumeScheduled bool
	failed          bool
	stage           uint8 // 1 once the replayed operation at off has blocked
	// isCo marks the proc of a coProc.
	isCo bool
}

// coProc is a process that runs the body, or what it spawned, as a
// coroutine.
type coProc struct {
	proc // first: a *proc of a coProc is a *coProc
	r    *rank
	co   coroutine
	// finish is when the process returned.
	finish Time
}

// finishTime is when the process returned: a replayed process's is in
// the engine's finishes, which become the result's Finish.
func (p *proc) finishTime() Time {
	if p.isCo {
		return (*coProc)(unsafe.Pointer(p)).finish
	}
	r := p.rank()
	return r.e.finishes[r.id()]
}

// setFinish notes that the process returned at t.
func (p *proc) setFinish(t Time) {
	if p.isCo {
		(*coProc)(unsafe.Pointer(p)).finish = t
		return
	}
	r := p.rank()
	r.e.finishes[r.id()] = t
}

// rank is the process's rank.
func (p *proc) rank() *rank {
	if p.isCo {
		return (*coProc)(unsafe.Pointer(p)).r
	}
	// A replayed process is the first field of its rankProc.
	return &(*rankProc)(unsafe.Pointer(p)).r
}

// coro is the process's coroutine, nil for one that replays a recorded
// program.
func (p *proc) coro() *coroutine {
	if !p.isCo {
		return nil
	}
	return &(*coProc)(unsafe.Pointer(p)).co
}

// coroutine is what a process that runs the body as a coroutine has
// beside a replayed one.
type coroutine struct {
	done   *coRequest // completes when the process returns; nil for the body
	next   func() (struct{}, bool)
	cancel func()
	yield  func(struct{}) bool
	// waiting holds the requests of the Wait this process is blocked in.
	waiting []*coRequest
	// err is what the process returned.
	err error
}

// error is what the process returned, nil if it did not return an error
// (yet).
func (p *proc) error() error {
	if p.coro() == nil {
		return nil
	}
	return p.coro().err
}

// stop ends the coroutine of a process that never finished (after a deadlock).
func (p *proc) stop() {
	p.aborted = true
	if p.coro() != nil && p.coro().cancel != nil {
		p.coro().cancel()
	}
}

// Fire resumes the process until it blocks again or returns.
func (p *proc) Fire() {
	p.resumeScheduled = false
	if p.rank().crashed {
		return // a failed rank's processes never run again
	}
	if p.coro() == nil {
		p.replay()
		return
	}
	e := p.rank().e
	prev := e.current
	e.current = p
	p.coro().next()
	e.current = prev
}

func (p *proc) scheduleResume() {
	if !p.resumeScheduled {
		p.resumeScheduled = true
		p.rank().e.At(p.rank().e.now, p)
	}
}

// block suspends the process until the engine resumes it. It returns false
// if the run is being torn down and the process must return.
func (p *proc) block() bool {
	if p.aborted || !p.coro().yield(struct{}{}) {
		p.aborted = true
		return false
	}
	return true
}

// requestDone is called when a request this process waits on completes.
func (p *proc) requestDone(q *request) {
	p.pending--
	if q.failure() != nil {
		p.failed = true
	}
	if p.pending == 0 || p.failed {
		p.scheduleResume()
	}
}

var errAborted = errors.New("sim: run aborted")
