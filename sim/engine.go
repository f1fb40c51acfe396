package sim

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"unsafe"

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
	// Replay says that the body's operations (its sends, receives, waits
	// and reductions, with their peers, tags and sizes) depend neither on
	// timing nor on data, and that ranks share no state. The engine may
	// then run the body once per rank ahead of the simulation, on several
	// goroutines, recording its operations, and replay them without
	// coroutines: much faster and smaller at scale, with results
	// identical to the coroutines' (delays and switch operations
	// included; a recording link answers MachineLink and CanSwitchReduce
	// as the run's links do). It falls back to coroutines, with the
	// same results, when data is HostData, the body reads the clock
	// (Link.Now), spawns, returns an error or panics, when an operation
	// fails or the ranks deadlock, when the network may fail ranks
	// ([RankFailure]), and when it fails links ([LinkFailure]) whose loss
	// may leave a device unreachable, or the run has switch operations: a
	// link failure that every message can be routed around does not
	// change the programs, and replays.
	Replay bool
	// Context, if not nil, stops the run once it is done: Run then
	// returns an error that wraps its cause, and no result. The engine
	// looks at it every pollEvents events and between the ranks it
	// records, so a run stops within milliseconds.
	Context context.Context
	// Machine, if not nil, is what the ranks' links tell algorithms of
	// their hardware (algos.MachineLink): the GPU and CPU and their
	// figures. Where its Node is nil and the network is built on a
	// topology (Placer), each rank's node is the domain of the device it
	// is placed on (Node.Domain), in a copy; a nil Machine on such a
	// network gives a Machine of those nodes alone, and nil elsewhere.
	// Every link of the run returns the same Machine, computed the first
	// time a body asks. The engine does not modify it.
	Machine *algos.Machine
	// Progress, if not nil, is told how far the run is, every pollEvents
	// events and every 64 ranks recorded, and once at the end. It
	// is called from one goroutine at a time, not always Run's, and must
	// be quick; it cannot change the run.
	Progress func(Progress)
	// Symmetry, with Replay, lets the engine simulate one rank for all
	// where it proves that the others repeat it (see Symmetry).
	Symmetry Symmetry
}

// Progress says how far a run is.
type Progress struct {
	// Recorded is how many ranks' bodies were recorded so far (see
	// Config.Replay); World once the recording is over.
	Recorded int
	// Now is the simulated time reached; Messages and Events are those
	// so far.
	Now      Time
	Messages int64
	Events   int64
}

// pollEvents is how many events run between two looks at Config.Context
// and two calls of Config.Progress: a few milliseconds' worth.
const pollEvents = 1 << 13

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
	// Replayed says that the ranks' recorded programs were replayed (see
	// Config.Replay) rather than run as coroutines; nothing else in the
	// result depends on it.
	Replayed bool
	// SymmetryGroup names the group ("cyclic", "xor") under which one
	// rank was simulated for all (Config.Symmetry), "" for a full run.
	SymmetryGroup string
}

// Engine runs one simulation. Models use it to read the clock, schedule
// events and deliver messages; everything else about it is internal.
type Engine struct {
	now      Time
	queue    eventQueue
	net      Network
	ovh      Overheads // nil if the network charges none
	ranks    rankTable
	hostData bool
	obs      Observer
	messages int64
	events   int64
	// current is the process whose coroutine is running, if any.
	current *proc
	// info is what the links tell bodies of the network (runInfo).
	info *runInfo

	// progs are the programs of a replay, nil when ranks run coroutines;
	// stopped is set when a replay has to stop (see stopReplay).
	progs   *programs
	slots   []request // the replayed processes' requests past the first inlineSlots (proc.request)
	stopped bool
	// finishes are, by rank, when a replayed process returned; they
	// become the result's Finish (no second array at the end).
	finishes []Time
	// starts are, by rank, when a replayed process's blocking operation
	// began, for the observer's spans (proc.began); nil without one.
	starts []Time

	// ctx and progress are Config's; the engine looks at them when events
	// reaches nextPoll. cancelled is the error of a run ctx stopped.
	ctx       context.Context
	progress  func(Progress)
	nextPoll  int64
	cancelled error

	// Switch operations (switch.go): the queues that match them, by a
	// hash of (group, tag); those whose members' requests are not all
	// complete; how many were created.
	swQueues map[uint64][]*switchQueue
	swLive   []*SwitchOp
	swIDs    int64

	// Match queues, messages and requests to hand out (see newQueue,
	// newMessage, newRequest).
	queues *matchQueue // linked through matchQueue.next
	// hostBufs are the buffers of the requests with real bytes (HostData)
	// not yet sent or filled, by request.
	hostBufs map[*request][]byte
	freeMsgs *Message // linked through Message.next
	msgBlock []Message
	reqBlock []coRequest
}

// Now is the current virtual time.
func (e *Engine) Now() Time { return e.now }

// World is the number of ranks.
func (e *Engine) World() int { return e.ranks.len() }

// At schedules h to fire at time t, which must not be in the past.
func (e *Engine) At(t Time, h Handler) {
	if t < e.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now (%v)", t, e.now))
	}
	if t == e.now {
		e.queue.pushNow(h)
		return
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
	if r := m.relayOf(); r != nil {
		r.delivered(m)
		return
	}
	src, dst := e.ranks.at(m.Src), e.ranks.at(m.Dst)
	src.inflight--
	switch {
	case src.crashed:
	case dst.crashed:
		m.completeSend(dst.rare.crashErr)
	default:
		if e.obs != nil {
			e.obs.MessageDelivered(m, e.now)
		}
		m.completeSend(nil)
		dst.arrive(m)
	}
	e.checkDead(src)
}

// completeSend completes m's send with err, unless Release completed it.
func (m *Message) completeSend(err error) {
	if m.send != nil {
		m.send.complete(err)
	}
}

// Release completes m's send now, before m is delivered: an eager
// protocol has copied the message, and its sender may go on (reuse its
// buffer, post more). Delivering m later completes nothing more on the
// sender's side.
func (e *Engine) Release(m *Message) {
	if !e.ranks.at(m.Src).crashed {
		m.completeSend(nil)
		// The send is done with: a replay may give its request to the
		// sender's next operation before m is delivered.
		m.send = nil
	}
}

// Exited reports whether rank has returned (all its processes), so that
// it will post no more receives.
func (e *Engine) Exited(rank int) bool { return e.ranks.at(rank).exited }

// Unreceivable fails the send of m, which waits for a receive that its
// destination, having returned, will never post (see Holder).
func (e *Engine) Unreceivable(m *Message) {
	src, dst := e.ranks.at(m.Src), e.ranks.at(m.Dst)
	src.inflight--
	root := dst.exitErr()
	var pe *PeerExitedError
	if errors.As(root, &pe) {
		root = pe.Err
	}
	if !src.crashed {
		m.completeSend(&NoReceiveError{Dst: m.Dst, Err: root})
	}
	e.checkDead(src)
}

// Drop tells the engine that the network gave up on m now (no path left
// for it): its send fails with err, and so does the receive at its
// destination that would have matched it, now or when it is posted.
func (e *Engine) Drop(m *Message, err error) {
	if e.progs != nil {
		e.stopReplay()
		return
	}
	if r := m.relayOf(); r != nil {
		e.Drop(r.orig, err)
		return
	}
	src, dst := e.ranks.at(m.Src), e.ranks.at(m.Dst)
	src.inflight--
	if !src.crashed {
		m.completeSend(err)
		if !dst.crashed {
			m.more().err = err
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
	if e.progs != nil {
		e.stopReplay()
		return
	}
	r := e.ranks.at(rank)
	if r.crashed || r.exited {
		return
	}
	err := &RankFailedError{Rank: rank, At: e.now, Cause: cause}
	f := r.faults()
	r.crashed, f.crashAt, f.crashErr, f.deadErr = true, e.now, err, err
	if d, ok := e.net.(RankDropper); ok {
		for _, m := range d.DropRank(rank) {
			src := e.ranks.at(m.Src)
			src.inflight--
			if m.Src != rank {
				m.completeSend(err)
				e.checkDead(src)
			}
		}
	}
	e.failReceivesFrom(rank, err)
	e.failSwitchMember(rank, err, true)
}

// checkDead fails the receives from r that can never complete: r returned
// with an error and nothing it sent is still in flight.
func (e *Engine) checkDead(r *rank) {
	if !r.exited || r.exitErr() == nil || r.rare.deadErr != nil || r.inflight > 0 {
		return
	}
	root := r.rare.exitErr
	var pe *PeerExitedError
	if errors.As(root, &pe) {
		root = pe.Err
	}
	r.rare.deadErr = &PeerExitedError{Peer: r.id(), Err: root}
	e.failReceivesFrom(r.id(), r.rare.deadErr)
}

// failReceivesFrom fails every receive posted from src on the other live
// ranks, in rank and then tag order.
func (e *Engine) failReceivesFrom(src int, err error) {
	for _, r := range e.ranks.all() {
		if r.id() != src && !r.crashed {
			r.failReceivesFrom(src, err)
		}
	}
}

// newMessage returns a zero message, reusing one that is done with.
// Messages are allocated in blocks, so that a run does not allocate one
// by one what it sends.
func (e *Engine) newMessage() *Message {
	if m := e.freeMsgs; m != nil {
		e.freeMsgs, m.next = m.next, nil
		return m
	}
	if len(e.msgBlock) == 0 {
		e.msgBlock = make([]Message, allocBlock)
	}
	m := &e.msgBlock[0]
	e.msgBlock = e.msgBlock[1:]
	return m
}

// freeMessage takes back m, whose receive has taken it: networks and
// observers keep no message past its delivery. Its exported fields stay
// as they are until it is reused, at a later send: the network that
// delivered it may still read them on its way out of Deliver.
func (e *Engine) freeMessage(m *Message) {
	m.extra, m.send = nil, nil
	m.next, e.freeMsgs = e.freeMsgs, m
}

// newRequest returns a new request of owner's link, from a block of
// them: of kind, with peer (-1 for none), tag and bytes.
func (e *Engine) newRequest(owner *rank, kind reqKind, peer int, tag algos.Tag, bytes int) *coRequest {
	if len(e.reqBlock) == 0 {
		e.reqBlock = make([]coRequest, allocBlock)
	}
	q := &e.reqBlock[0]
	e.reqBlock = e.reqBlock[1:]
	*q = coRequest{request: request{bytes: bytes}, owner: owner, tag: tag, peer: int32(peer), kind: kind}
	return q
}

// keepHost keeps the host bytes of req's buffer, if it has any and the run
// moves real bytes, until the request is sent or filled (takeHost).
func (e *Engine) keepHost(req *request, buf device.Buffer) {
	if !e.hostData {
		return
	}
	if h, ok := device.HostBytes(buf); ok {
		if e.hostBufs == nil {
			e.hostBufs = map[*request][]byte{}
		}
		e.hostBufs[req] = h
	}
}

// takeHost returns and forgets the host bytes kept for req.
func (e *Engine) takeHost(req *request) ([]byte, bool) {
	if e.hostBufs == nil {
		return nil, false
	}
	h, ok := e.hostBufs[req]
	if ok {
		delete(e.hostBufs, req)
	}
	return h, ok
}

// allocBlock is how many messages or requests the engine allocates at once.
const allocBlock = 256

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
	info := newRunInfo(cfg)
	if cfg.Replay && !cfg.HostData {
		if res, ok, err := runReplay(cfg, body, info); ok || err != nil {
			return res, err
		}
	}
	e, err := newEngine(cfg, false, info)
	if err != nil {
		return nil, err
	}
	for _, r := range e.ranks.all() {
		r.spawn(func(ctx context.Context) error { return body(ctx, &simLink{r: r}) }, nil)
	}
	defer func() {
		for _, r := range e.ranks.all() {
			for _, p := range r.processes() {
				p.stop()
			}
		}
	}()
	e.loop()
	if e.cancelled != nil {
		return nil, e.cancelled
	}
	return e.result()
}

// CheckNetwork reports whether cfg's model can be built for cfg.World: a
// topology large enough, a placement that fits, faults naming ranks that
// exist. A model that can refuse a world (CheckedModel) has its network
// built once, on an engine without ranks as the probe's (runInfo.probeNet),
// with no programs and no run, so that checking a world of millions of
// ranks costs what the network's own state does, not what Run of an empty
// body would; any other model fits every world and is not built.
func CheckNetwork(cfg Config) error {
	if cfg.World < 1 {
		return fmt.Errorf("sim: world size %d, want at least 1", cfg.World)
	}
	if cfg.Model == nil {
		return errors.New("sim: no network model")
	}
	// The constructors ask the engine for its world size and the run's
	// information only; no rank is built.
	e := &Engine{info: newRunInfo(cfg), ranks: rankTable{n: cfg.World}}
	if cm, ok := cfg.Model.(CheckedModel); ok {
		if _, err := cm.NewNetworkChecked(e); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return nil
}

// runReplay records body and replays it (see Config.Replay). ok is false,
// with no error, when the body or the network cannot be replayed, or the
// replay stopped: then the run must be simulated with coroutines. With an
// observer the replay runs twice, first without it, so that the observer
// sees nothing of a replay that stops.
func runReplay(cfg Config, body Body, info *runInfo) (res *Result, ok bool, err error) {
	if modelFailsRanks(cfg.Model) {
		return nil, false, nil
	}
	// Record before building the engine, so that the recording's
	// garbage does not pile up beside the engine's state.
	progs, err := record(cfg, body, info)
	if err != nil {
		var nr errNotReplayable
		if errors.As(err, &nr) {
			return nil, false, nil
		}
		return nil, true, err
	}
	if res, ok := runSymmetric(cfg, progs); ok {
		return res, true, nil
	}
	c := cfg
	c.Observer = nil
	e, err := newEngine(c, true, info)
	if err != nil || !replayableFor(e.net, len(progs.groups) > 0) {
		return nil, err != nil, err
	}
	for pass := 0; ; pass++ {
		e.progs = progs
		// Every rank's request slots past its first in one array, in
		// rank order.
		n := 0
		for _, p := range progs.ranks {
			n += max(p.slots-inlineSlots, 0)
		}
		if n > math.MaxInt32 {
			return nil, false, nil // more slots than a process indexes: coroutines
		}
		e.slots = make([]request, n)
		e.finishes = make([]Time, e.ranks.len())
		if e.obs != nil {
			e.starts = make([]Time, e.ranks.len())
		}
		n = 0
		for i := range e.ranks.len() {
			e.ranks.pairs[i].p.startReplay(n)
			n += max(progs.ranks[i].slots-inlineSlots, 0)
		}
		// Building a world of millions of ranks takes a second or more:
		// a run stopped meanwhile stops before its first event.
		if !e.done() {
			e.loop()
		}
		switch {
		case e.cancelled != nil:
			return nil, true, e.cancelled
		case e.stopped:
			return nil, false, nil
		}
		if res, err = e.result(); err != nil {
			// A deadlock: the coroutines report it exactly.
			return nil, false, nil
		}
		if pass > 0 || cfg.Observer == nil {
			res.Replayed = true
			return res, true, nil
		}
		if e, err = newEngine(cfg, true, info); err != nil {
			return nil, true, err
		}
	}
}

// newEngine builds the engine of a run, its ranks and its network. For a
// replay each rank is allocated beside its one process (rankTable.pairs), which a
// message touches together. info is shared by every engine of one Run.
func newEngine(cfg Config, replay bool, info *runInfo) (*Engine, error) {
	e := &Engine{hostData: cfg.HostData, obs: cfg.Observer, ctx: cfg.Context, progress: cfg.Progress, nextPoll: pollEvents, info: info}
	e.ranks.n = cfg.World
	if replay {
		e.ranks.pairs = make([]rankProc, cfg.World)
	} else {
		e.ranks.solo = make([]rank, cfg.World)
		e.ranks.bodies = make([]*coProc, cfg.World)
	}
	for _, r := range e.ranks.all() {
		r.e = e
		r.match.one.src = -1 // (no key yet)
	}
	net, err := newInner(cfg.Model, e)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	e.net = net
	e.ovh, _ = e.net.(Overheads)
	return e, nil
}

// result is the outcome of a run whose events are over.
func (e *Engine) result() (*Result, error) {
	res := &Result{Finish: e.finishes, Messages: e.messages, Events: e.events}
	if res.Finish == nil {
		res.Finish = make([]Time, e.ranks.len())
	}
	var blocked []BlockedRank
	var failed RankErrors
	for i, r := range e.ranks.all() {
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

// rankTable is the ranks of a run, side by side in one array: a rank is
// found by its number without a pointer to load (a run of 2^24 ranks
// keeps no array of pointers to them).
type rankTable struct {
	// pairs holds the ranks of a replay, each beside its process; solo
	// those of a run with coroutines, and bodies their first processes.
	pairs  []rankProc
	solo   []rank
	bodies []*coProc
	// n is how many ranks there are (a probe's engine has n and no
	// ranks).
	n int
	// portsTaken is set once a network took the ports beside the ranks
	// (takePorts).
	portsTaken bool
}

// at returns rank i.
func (t *rankTable) at(i int) *rank {
	if t.pairs != nil {
		return &t.pairs[i].r
	}
	return &t.solo[i]
}

func (t *rankTable) len() int { return t.n }

// all yields every rank, by number.
func (t *rankTable) all() iter.Seq2[int, *rank] {
	return func(yield func(int, *rank) bool) {
		for i := range t.len() {
			if !yield(i, t.at(i)) {
				return
			}
		}
	}
}

// rankProc is a rank and its process, side by side, for a replay, with
// the process's first request slots and the rank's alpha-beta ports, if
// the run's network is alpha-beta (see takePorts): a message touches its
// ranks, their processes, requests and ports together. The process is
// first: proc.rank finds the rank from it.
type rankProc struct {
	p proc
	// s are the process's first request slots (see proc.request).
	s  [inlineSlots]request
	r  rank
	ab abPort
}

// inlineSlots is how many of a replayed process's request slots sit
// beside it (rankProc.s); the others are in the engine's (Engine.slots).
// Most programs need two: a receive and a send.
const inlineSlots = 2

// takePorts returns where rank 0's alpha-beta ports are beside it, the
// others following a rankProc apart, for the first alpha-beta network
// built on the engine of a replay; nil for any other (its ports are its
// own).
func (t *rankTable) takePorts() unsafe.Pointer {
	if t.pairs == nil || t.portsTaken {
		return nil
	}
	t.portsTaken = true
	return unsafe.Pointer(&t.pairs[0].ab)
}

// stopReplay stops a replay that met what only the body could answer (an
// operation failed): the run is simulated again with coroutines.
func (e *Engine) stopReplay() { e.stopped = true }

// loop runs events in time order until none is left. After each instant's
// events it lets the network settle, which may schedule more events at the
// same instant.
func (e *Engine) loop() {
	q := &e.queue
	defer e.report()
	for {
		// The slots due now were filled in earlier instants, so their
		// events go before those scheduled in this one.
		for len(q.heap) > 0 && q.next() == e.now {
			s := q.popSlot()
			for !s.q.empty() && !e.stopped {
				e.events++
				q.take(&s.q).Fire()
				if e.events >= e.nextPoll {
					e.poll()
				}
			}
			q.freeSlot(s)
		}
		for !q.now.empty() && !e.stopped {
			e.events++
			q.take(&q.now).Fire()
			if e.events >= e.nextPoll {
				e.poll()
			}
		}
		if e.stopped {
			return
		}
		e.net.Settle()
		if !q.now.empty() {
			continue
		}
		if len(q.heap) == 0 {
			return
		}
		e.now = q.next()
	}
}

// poll looks at the run's context and reports progress.
func (e *Engine) poll() {
	e.nextPoll = e.events + pollEvents
	if e.done() {
		return
	}
	e.report()
}

// done reports whether the run's context is done, and if so stops the
// run with its cause.
func (e *Engine) done() bool {
	if e.ctx == nil || e.ctx.Err() == nil {
		return false
	}
	e.cancelled = fmt.Errorf("sim: stopped at %v of simulated time: %w", e.now, context.Cause(e.ctx))
	e.stopped = true
	return true
}

// report tells Config.Progress how far the run is.
func (e *Engine) report() {
	if e.progress != nil {
		e.progress(Progress{Recorded: e.ranks.len(), Now: e.now, Messages: e.messages, Events: e.events})
	}
}
