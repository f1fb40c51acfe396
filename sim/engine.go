package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
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
	// Links is the network's account of its links, if it keeps one (see
	// LinkReporter): bytes carried and busy time per edge.
	Links []LinkUsage
}

// Engine runs one simulation. Models use it to read the clock, schedule
// events and deliver messages; everything else about it is internal.
type Engine struct {
	now      Time
	queue    eventQueue
	net      Network
	ovh      Overheads // nil if the network charges none
	ranks    []*rank
	hostData bool
	obs      Observer
	messages int64
	events   int64
	// current is the process whose coroutine is running, if any.
	current *proc
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
// one is posted. A message whose sender failed (FailRank) before it was
// delivered is lost; one to a failed rank fails its send.
func (e *Engine) Deliver(m *Message) {
	src, dst := e.ranks[m.Src], e.ranks[m.Dst]
	src.inflight--
	switch {
	case src.crashed:
	case dst.crashed:
		m.send.complete(dst.crashErr)
	default:
		if e.obs != nil {
			e.obs.MessageDelivered(m, e.now)
		}
		m.send.complete(nil)
		dst.arrive(m)
	}
	e.checkDead(src)
}

// Release completes m's send now, before m is delivered: an eager
// protocol has copied the message, and its sender may go on (reuse its
// buffer, post more). Delivering m later completes nothing more on the
// sender's side.
func (e *Engine) Release(m *Message) {
	if !e.ranks[m.Src].crashed {
		m.send.complete(nil)
	}
}

// Exited reports whether rank has returned (all its processes), so that
// it will post no more receives.
func (e *Engine) Exited(rank int) bool { return e.ranks[rank].exited }

// Unreceivable fails the send of m, which waits for a receive that its
// destination, having returned, will never post (see Holder).
func (e *Engine) Unreceivable(m *Message) {
	src, dst := e.ranks[m.Src], e.ranks[m.Dst]
	src.inflight--
	root := dst.exitErr
	var pe *PeerExitedError
	if errors.As(root, &pe) {
		root = pe.Err
	}
	if !src.crashed {
		m.send.complete(&NoReceiveError{Dst: m.Dst, Err: root})
	}
	e.checkDead(src)
}

// Drop tells the engine that the network gave up on m now (no path left
// for it): its send fails with err, and so does the receive at its
// destination that would have matched it, now or when it is posted.
func (e *Engine) Drop(m *Message, err error) {
	src, dst := e.ranks[m.Src], e.ranks[m.Dst]
	src.inflight--
	if !src.crashed {
		m.send.complete(err)
		if !dst.crashed {
			m.err = err
			dst.arrive(m)
		}
	}
	e.checkDead(src)
}

// FailRank makes rank fail now, as a crash, with cause saying why. Its
// processes stop where they are; its Finish is now and its error a
// *RankFailedError. Messages it sent that were not delivered yet are lost;
// sends to it fail, now if the network implements RankDropper and
// otherwise when they arrive; every receive from it that nothing delivered
// can match fails, now or when posted. Ranks whose operations fail return
// errors, and receives from them fail in turn once they have nothing left
// in flight (see PeerExitedError), so a failure reaches every rank that
// depends on it and nobody hangs. A rank that has already returned is not
// affected.
func (e *Engine) FailRank(rank int, cause string) {
	r := e.ranks[rank]
	if r.crashed || r.exited {
		return
	}
	err := &RankFailedError{Rank: rank, At: e.now, Cause: cause}
	r.crashed, r.crashAt, r.crashErr, r.deadErr = true, e.now, err, err
	if d, ok := e.net.(RankDropper); ok {
		for _, m := range d.DropRank(rank) {
			src := e.ranks[m.Src]
			src.inflight--
			if m.Src != rank {
				m.send.complete(err)
				e.checkDead(src)
			}
		}
	}
	e.failReceivesFrom(rank, err)
}

// checkDead fails the receives from r that can never complete: r returned
// with an error and nothing it sent is still in flight.
func (e *Engine) checkDead(r *rank) {
	if r.deadErr != nil || !r.exited || r.exitErr == nil || r.inflight > 0 {
		return
	}
	root := r.exitErr
	var pe *PeerExitedError
	if errors.As(root, &pe) {
		root = pe.Err
	}
	r.deadErr = &PeerExitedError{Peer: r.id, Err: root}
	e.failReceivesFrom(r.id, r.deadErr)
}

// failReceivesFrom fails every receive posted from src on the other live
// ranks, in rank and then tag order.
func (e *Engine) failReceivesFrom(src int, err error) {
	for _, r := range e.ranks {
		if r.id != src && !r.crashed {
			r.failReceivesFrom(src, err)
		}
	}
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
	if cm, ok := cfg.Model.(CheckedModel); ok {
		net, err := cm.NewNetworkChecked(e)
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		e.net = net
	} else {
		e.net = cfg.Model.NewNetwork(e)
	}
	e.ovh, _ = e.net.(Overheads)
	for _, r := range e.ranks {
		r.spawn(func(ctx context.Context) error { return body(ctx, &simLink{r: r}) }, nil)
	}
	defer func() {
		for _, r := range e.ranks {
			for _, p := range r.procs {
				p.stop()
			}
		}
	}()
	e.loop()

	res := &Result{Finish: make([]Time, len(e.ranks)), Messages: e.messages, Events: e.events}
	var blocked []BlockedRank
	var failed RankErrors
	for i, r := range e.ranks {
		finish, finished, err := r.outcome()
		res.Finish[i] = finish
		res.End = max(res.End, finish)
		switch {
		case !finished:
			blocked = append(blocked, r.blockedReport())
		case err != nil:
			failed = append(failed, RankError{Rank: i, Err: err})
		}
	}
	if lr, ok := e.net.(LinkReporter); ok {
		res.Links = lr.LinkUsage(res.End)
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
