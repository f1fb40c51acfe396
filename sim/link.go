package sim

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// simLink is the simulator's implementation of algos.Link for one rank.
type simLink struct {
	r *rank
}

var (
	_ algos.Link        = (*simLink)(nil)
	_ algos.Spawner     = (*simLink)(nil)
	_ algos.MachineLink = (*simLink)(nil)
	_ algos.Delayer     = (*simLink)(nil)
	_ algos.LateSender  = (*simLink)(nil)
	_ algos.Signaler    = (*simLink)(nil)
	_ algos.FixedWaiter = (*simLink)(nil)
)

func (l *simLink) Rank() int { return l.r.id() }
func (l *simLink) Size() int { return l.r.e.ranks.len() }

func (l *simLink) Now() time.Duration { return l.r.e.now.Duration() }

// Machine implements algos.MachineLink: Config.Machine, its Node filled
// from the topology where it has none (see Config.Machine). Every link of
// a run returns the same one.
func (l *simLink) Machine() *algos.Machine {
	e := l.r.e
	return e.info.machineFrom(func() Network { return e.net })
}

func (l *simLink) Alloc(n int) device.Buffer {
	if l.r.e.hostData {
		return make(device.Host, n)
	}
	return device.Phantom(n)
}

func (l *simLink) checkPeer(peer int) error {
	if peer < 0 || peer >= l.r.e.ranks.len() {
		return fmt.Errorf("sim: rank %d: peer %d outside world of %d ranks", l.r.id(), peer, l.r.e.ranks.len())
	}
	return nil
}

func (l *simLink) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	r, e := l.r, l.r.e
	cr := e.newRequest(r, reqSend, dst, tag, buf.Len())
	req := &cr.request
	if err := l.checkPeer(dst); err != nil {
		req.complete(err)
		return cr
	}
	e.keepHost(req, buf)
	if e.ovh != nil && dst != r.id() {
		if err := l.compute(e.ovh.SendOverhead(r.id(), buf.Len()), SpanOverhead, buf.Len()); err != nil {
			req.complete(err)
			return cr
		}
	}
	r.send(req, dst, tag)
	return cr
}

// send posts the message of send request req to dst with tag, its
// sender's overhead spent.
func (r *rank) send(req *request, dst int, tag algos.Tag) {
	e := r.e
	if r.crashed {
		req.complete(errAborted)
		return
	}
	if d := e.ranks.at(dst); d.crashed {
		req.complete(d.rare.crashErr)
		return
	}
	r.inflight++
	m := e.newMessage()
	*m = Message{Src: r.id(), Dst: dst, Tag: tag, Bytes: req.bytes, ID: e.messages, Posted: e.now, send: req,
		wire: req.bytes, latFac: 1, bwFac: 1}
	e.messages++
	if h, ok := e.takeHost(req); ok {
		// The sender may reuse its buffer once the send completes, which
		// can be before the receive is posted; so the message keeps its
		// own copy, as an eager protocol does.
		m.more().payload = append([]byte(nil), h...)
	}
	e.ranks.at(dst).announce(m)
	if dst == r.id() {
		if e.obs != nil {
			e.obs.MessageStarted(m, e.now)
		}
		e.Deliver(m)
		return
	}
	e.net.Post(m)
}

// IsendAfter implements algos.LateSender: the send is posted now, and its
// message reaches the network d later (as a message posted then: its
// Posted time, its place among its sender's messages), while the calling
// process goes on. A sender's overhead (LogGP's o) is not charged: the
// program's process is not the one that sends. A rank that has failed by
// then fails the send.
func (l *simLink) IsendAfter(d time.Duration, dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	if d <= 0 {
		return l.Isend(dst, tag, buf)
	}
	r, e := l.r, l.r.e
	cr := e.newRequest(r, reqSend, dst, tag, buf.Len())
	req := &cr.request
	if err := l.checkPeer(dst); err != nil {
		req.complete(err)
		return cr
	}
	e.keepHost(req, buf)
	e.At(e.now+Time(d)*Nanosecond, &lateSend{r: r, req: cr})
	return cr
}

// lateSend posts a send of IsendAfter when its delay is over.
type lateSend struct {
	r   *rank
	req *coRequest
}

func (s *lateSend) Fire() { s.r.send(&s.req.request, int(s.req.peer), s.req.tag) }

func (l *simLink) Irecv(src int, tag algos.Tag, buf device.Buffer) algos.Request {
	r := l.r
	cr := r.e.newRequest(r, reqRecv, src, tag, buf.Len())
	req := &cr.request
	if err := l.checkPeer(src); err != nil {
		req.complete(err)
		return cr
	}
	r.e.keepHost(req, buf)
	r.recv(req, src, tag)
	return cr
}

// recv posts receive request req from src with tag (see rank.receive).
func (r *rank) recv(req *request, src int, tag algos.Tag) {
	if r.crashed {
		req.complete(errAborted)
		return
	}
	r.receive(req, src, tag)
}

func (l *simLink) Wait(ctx context.Context, reqs ...algos.Request) error {
	return l.wait(ctx, reqs)
}

// WaitOne implements algos.FixedWaiter: Wait without an argument list on
// the heap.
func (l *simLink) WaitOne(ctx context.Context, a algos.Request) error {
	reqs := [1]algos.Request{a}
	return l.wait(ctx, reqs[:])
}

// WaitTwo implements algos.FixedWaiter: Wait without an argument list on
// the heap.
func (l *simLink) WaitTwo(ctx context.Context, a, b algos.Request) error {
	reqs := [2]algos.Request{a, b}
	return l.wait(ctx, reqs[:])
}

// wait waits for reqs, which it does not keep.
func (l *simLink) wait(ctx context.Context, reqs []algos.Request) error {
	r := l.r
	if err := ctx.Err(); err != nil {
		return err
	}
	p := r.e.current
	if p == nil || p.rank() != r {
		return fmt.Errorf("sim: rank %d: Wait called outside the rank's own processes", r.id())
	}
	var pending int32
	for _, x := range reqs {
		cq, ok := x.(*coRequest)
		if !ok || cq.owner != r {
			return fmt.Errorf("sim: rank %d: Wait on a request (%T) this link did not return", r.id(), x)
		}
		q := &cq.request
		if q.waiter != nil {
			return fmt.Errorf("sim: rank %d: two processes wait on one request (%+v)", r.id(), cq.wait())
		}
		cq.waitedFor = true
		if !q.done() {
			pending++
		}
	}
	if pending > 0 && !firstError(reqs) {
		p.coro().waiting = p.coro().waiting[:0]
		for _, x := range reqs {
			q := x.(*coRequest)
			if !q.done() {
				q.waiter = p
				p.coro().waiting = append(p.coro().waiting, q)
			}
		}
		start := p.park(pending)
		ok := p.block()
		p.unpark(start, ok)
		if !ok {
			return errAborted
		}
	}
	for _, x := range reqs {
		if q := x.(*coRequest); q.done() && q.failure() != nil {
			return q.failure()
		}
	}
	return nil
}

// Spawn implements algos.Spawner: fn runs as another process of this rank,
// starting now, and the returned request completes when it returns.
func (l *simLink) Spawn(fn func(ctx context.Context) error) algos.Request {
	done := &coRequest{owner: l.r, peer: -1, kind: reqSpawn}
	l.r.spawn(fn, done)
	return done
}

// Signal implements algos.Signaler: a request of this rank that completes
// when fire is called, by any of the rank's processes, with no message and
// no time spent. A deadlock report names it as a signal.
func (l *simLink) Signal() (algos.Request, func()) {
	req := l.r.e.newRequest(l.r, reqSignal, -1, 0, 0)
	return req, func() { req.complete(nil) }
}

// firstError reports whether any of reqs has already failed.
func firstError(reqs []algos.Request) bool {
	for _, x := range reqs {
		if q := x.(*coRequest); q.done() && q.failure() != nil {
			return true
		}
	}
	return false
}

func (l *simLink) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	if err := device.Reduce(dst, src, dt, op); err != nil {
		return err
	}
	return l.compute(l.r.e.net.ReduceTime(l.r.id(), src.Len()), SpanReduce, src.Len())
}

func (l *simLink) Copy(dst, src device.Buffer) error {
	return device.Copy(dst, src)
}

// compute holds the calling process busy for d of virtual time.
func (l *simLink) compute(d Time, kind SpanKind, bytes int) error {
	if d <= 0 {
		return nil
	}
	r, e := l.r, l.r.e
	p := e.current
	if p == nil || p.rank() != r {
		return fmt.Errorf("sim: rank %d: compute called outside the rank's own processes", r.id())
	}
	start := p.startCompute(d)
	if !p.block() {
		return errAborted
	}
	if e.obs != nil {
		e.obs.Span(r.id(), kind, bytes, start, e.now)
	}
	return nil
}

// Delay implements algos.Delayer: the calling process sleeps for d of
// virtual time (d's nanoseconds exactly), holding neither the rank's
// compute nor its ports, so that its other processes, its reductions and
// its messages go on meanwhile. The observer is told of it as a span of
// SpanDelay.
func (l *simLink) Delay(ctx context.Context, d time.Duration) error {
	r, e := l.r, l.r.e
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t, err := delayTime(d)
	if err != nil {
		return fmt.Errorf("sim: rank %d: %w", r.id(), err)
	}
	p := e.current
	if p == nil || p.rank() != r {
		return fmt.Errorf("sim: rank %d: Delay called outside the rank's own processes", r.id())
	}
	start := p.sleep(t)
	if !p.block() {
		return errAborted
	}
	if e.obs != nil {
		e.obs.Span(r.id(), SpanDelay, 0, start, e.now)
	}
	return nil
}

// delayTime converts a positive delay to virtual time, exactly.
func delayTime(d time.Duration) (Time, error) {
	if d > time.Duration(math.MaxInt64/int64(Nanosecond)) {
		return 0, fmt.Errorf("delay of %v is beyond the simulator's clock", d)
	}
	return Time(d) * Nanosecond, nil
}

// sleep puts the process to sleep for d, from now, and returns now.
func (p *proc) sleep(d Time) (start Time) {
	e := p.rank().e
	e.At(e.now+d, p)
	p.resumeScheduled = true
	return e.now
}

// startCompute puts the process to sleep until the rank's compute has
// spent d on it, and returns when that began. The rank computes one thing
// at a time, whichever of its processes asks.
func (p *proc) startCompute(d Time) (start Time) {
	r, e := p.rank(), p.rank().e
	start = max(e.now, r.computeFree)
	r.computeFree = start + d
	e.At(r.computeFree, p)
	p.resumeScheduled = true
	return start
}

// park makes the process wait for its pending requests, and
// returns when it began to wait.
func (p *proc) park(pending int32) (start Time) {
	p.pending, p.failed = pending, false
	return p.rank().e.now
}

// unpark ends a wait that began at start; resumed says whether the
// process was resumed (rather than torn down).
func (p *proc) unpark(start Time, resumed bool) {
	r := p.rank()
	if resumed && r.e.obs != nil {
		r.e.obs.Span(r.id(), SpanWait, 0, start, r.e.now)
	}
	if p.coro() == nil {
		return // a replay clears its requests' waiter itself (endWait)
	}
	for _, q := range p.coro().waiting {
		q.waiter = nil
	}
	p.coro().waiting = p.coro().waiting[:0]
}
