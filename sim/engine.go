package sim

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Config describes one simulated run.
type Config struct {
	// World is the number of ranks, at least 1.
	World int
	// Model is the network model, for example AlphaBeta.
	Model Model
	// HostData makes Link.Alloc return host buffers with real bytes, and
	// messages carry their bytes; otherwise buffers are phantom and only
	// time is simulated.
	HostData bool
	// Observer, if not nil, is told of every message and span of compute,
	// for timelines and per-link accounting.
	Observer Observer
}

// Body is the program every rank runs: typically one or more collectives.
// It must use only l to communicate.
type Body func(ctx context.Context, l algos.Link) error

// Result is what a run measured.
type Result struct {
	// Finish is the virtual time at which each rank's body returned.
	Finish []Time
	// End is the latest finish time: the time of the collective.
	End Time
	// Messages is the number of messages sent, to oneself included.
	Messages int64
	// Events is the number of events the engine processed.
	Events int64
}

// Engine runs one simulation. Models use it to read the clock, schedule
// events and deliver messages; everything else about it is internal.
type Engine struct {
	now      Time
	queue    eventQueue
	net      Network
	ranks    []*rank
	hostData bool
	obs      Observer
	messages int64
	events   int64
}

// Now is the current virtual time.
func (e *Engine) Now() Time { return e.now }

// World is the number of ranks.
func (e *Engine) World() int { return len(e.ranks) }

// At schedules h to fire at time t, which must not be in the past.
func (e *Engine) At(t Time, h Handler) {
	if t < e.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now (%v)", t, e.now))
	}
	e.queue.push(t, h)
}

// Started tells the observer that m began to move at the current time.
// Networks call it so that timelines show when a message held the wire.
func (e *Engine) Started(m *Message) {
	if e.obs != nil {
		e.obs.MessageStarted(m, e.now)
	}
}

// Deliver completes m at the current time: the sender's request completes
// and the message is matched to a receive at its destination, or kept until
// one is posted.
func (e *Engine) Deliver(m *Message) {
	if e.obs != nil {
		e.obs.MessageDelivered(m, e.now)
	}
	m.send.complete(nil)
	e.ranks[m.Dst].arrive(m)
}

// Run simulates body on every rank of cfg.World and returns when every
// rank has returned. It returns an error if any rank's body returned one
// (a *RankErrors), or if the ranks deadlock (a *DeadlockError).
func Run(cfg Config, body Body) (*Result, error) {
	if cfg.World < 1 {
		return nil, fmt.Errorf("sim: world size %d, want at least 1", cfg.World)
	}
	if cfg.Model == nil {
		return nil, errors.New("sim: no network model")
	}
	e := &Engine{hostData: cfg.HostData, obs: cfg.Observer}
	e.ranks = make([]*rank, cfg.World)
	for i := range e.ranks {
		e.ranks[i] = newRank(e, i)
	}
	e.net = cfg.Model.NewNetwork(e)
	for _, r := range e.ranks {
		r.start(body)
	}
	defer func() {
		for _, r := range e.ranks {
			r.stop()
		}
	}()
	e.loop()

	res := &Result{Finish: make([]Time, len(e.ranks)), Messages: e.messages, Events: e.events}
	var blocked []BlockedRank
	var failed RankErrors
	for i, r := range e.ranks {
		res.Finish[i] = r.finish
		res.End = max(res.End, r.finish)
		switch {
		case !r.finished:
			blocked = append(blocked, r.blockedReport())
		case r.err != nil:
			failed = append(failed, RankError{Rank: i, Err: r.err})
		}
	}
	if len(blocked) > 0 {
		return res, &DeadlockError{At: e.now, Blocked: blocked, Failed: failed}
	}
	if len(failed) > 0 {
		return res, &failed
	}
	return res, nil
}

// loop runs events in time order until none is left. After each instant's
// events it lets the network settle, which may schedule more events at the
// same instant.
func (e *Engine) loop() {
	for {
		for e.queue.len() > 0 && e.queue.peek().at == e.now {
			ev := e.queue.pop()
			e.events++
			ev.h.Fire()
		}
		e.net.Settle()
		if e.queue.len() == 0 {
			return
		}
		if next := e.queue.peek().at; next > e.now {
			e.now = next
		}
	}
}

// rank is one simulated process: the body runs as a coroutine that the
// engine resumes when what it waits for has happened, so exactly one rank
// runs at a time and the run is deterministic.
type rank struct {
	e  *Engine
	id int

	next   func() (struct{}, bool)
	cancel func()
	yield  func(struct{}) bool

	finished bool
	finish   Time
	err      error
	aborted  bool

	// resumeScheduled is true while a resume event for this rank is queued.
	resumeScheduled bool
	// waiting holds the requests of the Wait this rank is blocked in.
	waiting []*request
	pending int
	failed  bool

	posted     map[matchKey]*fifo[*request]
	unexpected map[matchKey]*fifo[*Message]
}

func newRank(e *Engine, id int) *rank {
	return &rank{e: e, id: id, posted: map[matchKey]*fifo[*request]{}, unexpected: map[matchKey]*fifo[*Message]{}}
}

func (r *rank) start(body Body) {
	link := &simLink{r: r}
	seq := func(yield func(struct{}) bool) {
		r.yield = yield
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
			r.finished, r.finish = true, r.e.now
		}()
		r.err = body(context.Background(), link)
	}
	r.next, r.cancel = iter.Pull(seq)
	r.scheduleResume()
}

// stop ends the coroutine of a rank that never finished (after a deadlock).
func (r *rank) stop() {
	r.aborted = true
	r.cancel()
}

// Fire resumes the rank's body until it blocks again or returns.
func (r *rank) Fire() {
	r.resumeScheduled = false
	r.next()
}

func (r *rank) scheduleResume() {
	if !r.resumeScheduled {
		r.resumeScheduled = true
		r.e.At(r.e.now, r)
	}
}

// block suspends the body until the engine resumes it. It returns false if
// the run is being torn down and the body must return.
func (r *rank) block() bool {
	if r.aborted || !r.yield(struct{}{}) {
		r.aborted = true
		return false
	}
	return true
}

// requestDone is called when a request this rank waits on completes.
func (r *rank) requestDone(q *request) {
	r.pending--
	if q.err != nil {
		r.failed = true
	}
	if r.pending == 0 || r.failed {
		r.scheduleResume()
	}
}

// arrive matches a delivered message with the oldest receive posted for
// it, or keeps it until one is.
func (r *rank) arrive(m *Message) {
	key := matchKey{src: m.Src, tag: m.Tag}
	if q := r.posted[key]; q != nil && q.len() > 0 {
		r.fill(q.pop(), m)
		return
	}
	q := r.unexpected[key]
	if q == nil {
		q = &fifo[*Message]{}
		r.unexpected[key] = q
	}
	q.push(m)
}

// fill completes receive req with message m.
func (r *rank) fill(req *request, m *Message) {
	if m.Bytes > req.buf.Len() {
		req.complete(fmt.Errorf("sim: rank %d: message of %d bytes from rank %d (tag %d) is longer than its receive buffer of %d bytes",
			r.id, m.Bytes, m.Src, m.Tag, req.buf.Len()))
		return
	}
	if h, ok := device.HostBytes(req.buf); ok && m.payload != nil {
		copy(h, m.payload)
	}
	req.complete(nil)
}

func (r *rank) blockedReport() BlockedRank {
	b := BlockedRank{Rank: r.id}
	for _, q := range r.waiting {
		if !q.done {
			b.Waits = append(b.Waits, Wait{Send: q.send, Peer: q.peer, Tag: q.tag, Bytes: q.buf.Len()})
		}
	}
	return b
}

var errAborted = errors.New("sim: run aborted")

var _ algos.Link = (*simLink)(nil)
