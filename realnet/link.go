package realnet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Link is one rank's connection to the world over QUIC: it implements
// algos.Link, so every algorithm of algos runs on it unchanged. Unlike the
// contract of algos.Link requires, its methods may be called from several
// goroutines at once (Spawn relies on it).
type Link struct {
	ep      *Endpoint
	cfg     Config
	rank    int
	size    int
	session Session
	start   time.Time
	peers   []*peer // nil at this rank's own index, and for ranks a sparse mesh does not join to it
	// members maps ranks to the members whose certificates they hold,
	// in a world rebuilt by the membership coordinator; nil: rank r is
	// member r.
	members []int
	relay   *relay // nil with the full mesh (relay.go)

	// ctx is cancelled when the link shuts down; every goroutine of the
	// link watches it.
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	posted     map[matchKey]*fifo[*request] // receives waiting for a message
	unexpected map[matchKey]*fifo[*inbound] // messages waiting for a receive
	parked     []*inbound                   // unexpected, unread for lack of budget, in arrival order
	buffered   int64                        // bytes of unexpected messages of the QUIC path (and bulk payloads) held in link memory, with msgOverhead each
	// parkHeld is what parked messages are charged (their parkCharge):
	// the budget covers it and buffered together.
	parkHeld int64
	// eagerReserve is the eager credit granted to peers, which the QUIC
	// path may not buffer (eager.go).
	eagerReserve int64
	// relayHeld is what relayed messages this rank holds are charged
	// (relay.go): forwards until the next hop has them, and those for
	// this rank that arrived before their receive. The budget covers it
	// with buffered and parkHeld.
	relayHeld int64
	// freed, when not nil, is closed (and cleared) when a charge against
	// the budget goes back: relay loops waiting for budget watch it.
	freed   chan struct{}
	live    map[*request]struct{} // requests not yet done
	wake    chan struct{}         // closed (and replaced) when a request fails or a peer's state changes
	broken  error                 // the *PeerError of the first peer lost
	closing bool
	leave   leaving // how the link leaves, once closing

	// A queue of posted and of unexpected each, emptied and taken out
	// of its map, for the next key: algorithms use a tag a message, so
	// a queue would otherwise be made per message (dropQueue).
	sparePosted     *fifo[*request]
	spareUnexpected *fifo[*inbound]

	// late counts, under mu, the bulk transfers granted into link memory
	// (their receive posted after rtsGrace) by how their receive got the
	// payload: straight into its buffer (retargetLocked), the part that
	// had come copied and the rest read there (takeOverLocked), or copied
	// whole.
	late struct{ direct, takenOver, copied int64 }

	// scratch keeps the memory algorithms release (algos.Release), and
	// the link memory of late bulk transfers (scratch.go).
	scratch scratchPool
}

type matchKey struct {
	peer int
	tag  algos.Tag
}

var _ algos.Link = (*Link)(nil)

// Rank implements algos.Link.
func (l *Link) Rank() int { return l.rank }

// Size implements algos.Link.
func (l *Link) Size() int { return l.size }

// Now implements algos.Link: monotonic time since the link was connected.
func (l *Link) Now() time.Duration { return time.Since(l.start) }

// Alloc implements algos.Link with host memory.
func (l *Link) Alloc(n int) device.Buffer { return make(device.Host, n) }

// Reduce implements algos.Link.
func (l *Link) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	return device.Reduce(dst, src, dt, op)
}

// Copy implements algos.Link.
func (l *Link) Copy(dst, src device.Buffer) error { return device.Copy(dst, src) }

// memberOf is the member whose certificate rank r holds.
func (l *Link) memberOf(r int) int {
	if l.members == nil {
		return r
	}
	return l.members[r]
}

// Session returns the identity of the world this link belongs to.
func (l *Link) Session() Session { return l.session }

type reqKind uint8

const (
	reqSend reqKind = iota
	reqRecv
	reqSpawn
)

type reqState uint8

const (
	// stQueued: the request sits in one of the link's queues (loc says
	// which); nothing touches its buffer.
	stQueued reqState = iota
	// stIO: a goroutine owns the request and will finish it; cancel makes
	// it stop soon.
	stIO
	stDone
)

// Where a queued request sits.
type reqLoc uint8

const (
	locNone       reqLoc = iota
	locPosted            // receive in l.posted
	locOpenQ             // send waiting for a stream in p.openQ
	locOpening           // send whose stream the opener is opening
	locRTS               // bulk send waiting for the receiver's cts
	locBulkQ             // bulk send granted, waiting for the TCP writer
	locTemp              // receive matched to a message still being read into link memory
	locGrant             // bulk receive granted, the TCP reader not there yet
	locCreditQ           // eager send waiting for credit in p.creditQ
	locRelayGrant        // receive of a relayed message cleared to be sent, waiting for its segments (relay.go)
)

// request is what Isend, Irecv and Spawn return.
type request struct {
	l      *Link
	kind   reqKind
	peer   int
	tag    algos.Tag
	buf    []byte
	commit func() error // staging commit of a receive
	done   chan struct{}
	err    error // set before done is closed

	// Under l.mu.
	state  reqState
	loc    reqLoc
	cancel func(quic.StreamErrorCode) // stIO: stops the stream I/O with that code
	// sendS or recvS, for a request in stIO whose I/O is a QUIC stream's
	// write or read, is that stream, which cancelling the request
	// cancels: a field, not a cancel closure made per message.
	sendS  *quic.SendStream
	recvS  *quic.ReceiveStream
	msg    *inbound
	grant  *grant
	bulkID uint64
	rgrant *relayGrant // locRelayGrant
	// got is the length of the message a receive was matched to.
	got int64
	// onDone, if set, runs (under l.mu) when the request is done.
	onDone func()
	// claim, on a receive a relay loop posts, takes the payload of a
	// relayed message for this rank and hands it on as a message from
	// its origin (relay.go).
	claim *relayClaim
}

func (l *Link) newRequest(kind reqKind, peer int, tag algos.Tag) *request {
	return &request{l: l, kind: kind, peer: peer, tag: tag, done: make(chan struct{})}
}

// failNow returns a request that has already failed with err.
func (l *Link) failNow(r *request, err error) *request {
	r.state, r.err = stDone, err
	close(r.done)
	l.mu.Lock()
	l.wakeLocked()
	l.mu.Unlock()
	return r
}

func (l *Link) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// finishLocked completes r with err. It returns false if r was done
// already. The caller holds l.mu.
func (l *Link) finishLocked(r *request, err error) bool {
	if r.state == stDone {
		return false
	}
	if err == nil && r.commit != nil {
		err = r.commit()
	}
	r.state, r.loc, r.err, r.cancel, r.sendS, r.recvS = stDone, locNone, err, nil, nil, nil
	delete(l.live, r)
	if err != nil {
		l.wakeLocked()
	}
	close(r.done)
	if f := r.onDone; f != nil {
		r.onDone = nil
		f()
	}
	return true
}

// whenDoneLocked runs f (under l.mu) once r is done: now if it is.
func (l *Link) whenDoneLocked(r *request, f func()) {
	if r.state == stDone {
		f()
		return
	}
	r.onDone = f
}

// finish completes r, which the calling goroutine owns (stIO), with err.
// A receive's staging commit runs first, outside the link's lock: a
// device copy must not hold up the other ranks' messages.
func (l *Link) finish(r *request, err error) {
	commit := r.commit
	if err == nil && commit != nil {
		err = commit()
	}
	l.mu.Lock()
	if commit != nil {
		r.commit = nil // run already
	}
	l.finishLocked(r, err)
	l.mu.Unlock()
}

// failure returns the error an operation with peer fails with, if it
// must: the link is broken or closed, or the peer is gone.
func (l *Link) failure(peer int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failureLocked(peer)
}

// failureLocked is failure, with l.mu held.
func (l *Link) failureLocked(peer int) error {
	if l.broken != nil {
		return l.broken
	}
	if l.closing {
		return ErrClosed
	}
	if p := l.peers[peer]; p != nil && p.gone != nil {
		return p.gone
	}
	return nil
}

func (l *Link) checkPeer(peer int) error {
	if peer < 0 || peer >= l.size {
		return fmt.Errorf("realnet: rank %d: peer %d outside world of %d ranks", l.rank, peer, l.size)
	}
	return nil
}

// Isend implements algos.Link. A message below the bulk threshold goes on
// a QUIC stream of its own; a larger one announces itself on a stream and
// travels on the bulk TCP connection once the receiver grants it.
func (l *Link) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	r := l.newRequest(reqSend, dst, tag)
	if err := l.checkPeer(dst); err != nil {
		return l.failNow(r, err)
	}
	b, err := stageSend(buf)
	if err != nil {
		return l.failNow(r, err)
	}
	r.buf = b
	if dst == l.rank {
		l.sendSelf(r)
		return r
	}
	if !l.joined(dst) {
		return l.relaySend(dst, tag, b)
	}
	p := l.peers[dst]
	l.mu.Lock()
	if err := l.failureLocked(dst); err != nil {
		l.mu.Unlock()
		return l.failNow(r, err)
	}
	l.live[r] = struct{}{}
	after := p.enqueueSendLocked(r)
	l.mu.Unlock()
	after.run()
	return r
}

// Irecv implements algos.Link.
func (l *Link) Irecv(src int, tag algos.Tag, buf device.Buffer) algos.Request {
	r := l.newRequest(reqRecv, src, tag)
	if err := l.checkPeer(src); err != nil {
		return l.failNow(r, err)
	}
	b, commit, err := stageRecv(buf)
	if err != nil {
		return l.failNow(r, err)
	}
	r.buf, r.commit = b, commit
	key := matchKey{src, tag}
	l.mu.Lock()
	if l.broken != nil || l.closing {
		err := l.failureLocked(src)
		l.mu.Unlock()
		return l.failNow(r, err)
	}
	l.live[r] = struct{}{}
	if q := l.unexpected[key]; q != nil && q.len() > 0 {
		m := q.pop()
		if q.len() == 0 {
			dropQueue(l.unexpected, key, q, &l.spareUnexpected)
		}
		after := l.matchLocked(m, r, false)
		l.mu.Unlock()
		after()
		return r
	}
	if p := l.peers[src]; p != nil && p.gone != nil {
		l.finishLocked(r, p.gone)
		l.mu.Unlock()
		return r
	}
	l.postLocked(key, r)
	l.mu.Unlock()
	return r
}

// popPostedLocked takes the first receive posted for key, nil if none.
func (l *Link) popPostedLocked(key matchKey) *request {
	q := l.posted[key]
	if q == nil || q.len() == 0 {
		return nil
	}
	r := q.pop()
	if q.len() == 0 {
		dropQueue(l.posted, key, q, &l.sparePosted)
	}
	return r
}

// postLocked queues receive r, which nothing here matched yet, behind the
// receives posted for key before it.
func (l *Link) postLocked(key matchKey, r *request) {
	queueFor(l.posted, key, &l.sparePosted).push(r)
	r.loc = locPosted
}

// sendSelf delivers a message to this rank at once: into a posted
// receive, or into a copy kept until one is posted.
func (l *Link) sendSelf(r *request) {
	key := matchKey{l.rank, r.tag}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.failureLocked(l.rank); err != nil {
		r.state, r.err = stDone, err
		close(r.done)
		return
	}
	if rr := l.popPostedLocked(key); rr != nil {
		if len(r.buf) > len(rr.buf) {
			l.finishLocked(rr, l.tooLong(l.rank, r.tag, int64(len(r.buf)), rr))
		} else {
			rr.got = int64(copy(rr.buf, r.buf))
			l.finishLocked(rr, nil)
		}
	} else {
		m := &inbound{tag: r.tag, n: int64(len(r.buf)), state: inBuffered, data: slices.Clone(r.buf), self: true}
		l.pushUnexpectedLocked(l.rank, m)
	}
	r.state = stDone
	close(r.done)
}

func (l *Link) tooLong(peer int, tag algos.Tag, n int64, r *request) error {
	return &TooLongError{Local: l.rank, Peer: peer, Tag: tag, Len: n, Buf: int64(len(r.buf))}
}

func (l *Link) pushUnexpectedLocked(peer int, m *inbound) {
	queueFor(l.unexpected, matchKey{peer, m.tag}, &l.spareUnexpected).push(m)
}

// Spawn runs fn on its own goroutine and returns a request that completes,
// with fn's error, when fn returns: the algos.Spawner interface. fn gets a
// context that is cancelled when the link closes.
func (l *Link) Spawn(fn func(ctx context.Context) error) algos.Request {
	r := l.newRequest(reqSpawn, l.rank, 0)
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return l.failNow(r, ErrClosed)
	}
	r.state = stIO
	l.live[r] = struct{}{}
	l.ep.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.ep.wg.Done()
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("realnet: rank %d: spawned function panicked: %v", l.rank, v)
				}
			}()
			err = fn(l.ctx)
		}()
		l.finish(r, err)
	}()
	return r
}

// Wait implements algos.Link. It returns when every request is done, when
// one fails, or when ctx ends or the link's Timeout passes; then it
// abandons the requests still pending: their buffers are no longer
// touched once Wait returns.
func (l *Link) Wait(ctx context.Context, reqs ...algos.Request) error {
	rs := make([]*request, len(reqs))
	for i, x := range reqs {
		r, ok := x.(*request)
		if !ok || r.l != l {
			return fmt.Errorf("realnet: rank %d: Wait on a request (%T) this link did not return", l.rank, x)
		}
		rs[i] = r
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	first := 0 // rs[:first] are done and succeeded
	for {
		l.mu.Lock()
		wake := l.wake
		l.mu.Unlock()
		var pending *request
		for i := first; i < len(rs); i++ {
			r := rs[i]
			select {
			case <-r.done:
				if r.err != nil {
					l.abandon(rs, r.err)
					return r.err
				}
				if i == first {
					first++
				}
			default:
				if pending == nil {
					pending = r
				}
			}
		}
		if pending == nil {
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(l.cfg.Timeout)
		}
		select {
		case <-pending.done:
		case <-wake:
		case <-ctx.Done():
			err := fmt.Errorf("realnet: rank %d: wait abandoned: %w", l.rank, context.Cause(ctx))
			l.abandon(rs, err)
			return err
		case <-timer.C:
			err := &TimeoutError{Local: l.rank, Timeout: l.cfg.Timeout}
			for _, r := range rs {
				select {
				case <-r.done:
				default:
					err.Pending = append(err.Pending, Pending{Send: r.kind == reqSend, Peer: r.peer, Tag: r.tag, Bytes: len(r.buf), Spawned: r.kind == reqSpawn})
				}
			}
			l.abandon(rs, err)
			return err
		}
	}
}

// abandon gives up on every request of rs not done yet. When it returns,
// none of their buffers is touched any more (a spawned function keeps
// running: it owns its buffers).
func (l *Link) abandon(rs []*request, cause error) {
	var cancels []func()
	var waits []*request
	l.mu.Lock()
	for _, r := range rs {
		if r.state == stDone || r.kind == reqSpawn {
			continue
		}
		switch {
		case r.state == stIO:
			cancels = append(cancels, takeCancel(r, codeCancelled))
			waits = append(waits, r)
		case r.loc == locRTS || r.loc == locBulkQ:
			// The receiver expects the payload on the bulk connection,
			// which cannot skip it: the connection, hence the peer, is
			// lost, which fails r.
			p := l.peers[r.peer]
			cancels = append(cancels, func() { p.lose(fmt.Errorf("bulk transfer abandoned: %w", cause)) })
			waits = append(waits, r)
		case r.loc == locOpening:
			// The opener sees r done and resets the stream it gets.
			l.finishLocked(r, cause)
		default:
			l.dequeueLocked(r)
			l.finishLocked(r, cause)
		}
	}
	l.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	for _, r := range waits {
		<-r.done
	}
}

// fifo is a queue in arrival order.
type fifo[T comparable] struct {
	items []T
	head  int
}

func (q *fifo[T]) len() int { return len(q.items) - q.head }
func (q *fifo[T]) push(x T) { q.items = append(q.items, x) }
func (q *fifo[T]) peek() T  { return q.items[q.head] }

func (q *fifo[T]) pop() T {
	var zero T
	x := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return x
}

// queueFor returns the queue of key in m, adding one (the spare, if
// there is one) if there is none.
func queueFor[T comparable](m map[matchKey]*fifo[T], key matchKey, spare **fifo[T]) *fifo[T] {
	q := m[key]
	if q == nil {
		if q = *spare; q != nil {
			*spare = nil
		} else {
			q = &fifo[T]{}
		}
		m[key] = q
	}
	return q
}

// spareMax bounds the capacity of a queue kept as a spare.
const spareMax = 64

// dropQueue takes the queue q of key, now empty, out of m, and keeps it as
// the spare unless it grew large.
func dropQueue[T comparable](m map[matchKey]*fifo[T], key matchKey, q *fifo[T], spare **fifo[T]) {
	delete(m, key)
	if cap(q.items) <= spareMax {
		clear(q.items[:cap(q.items)])
		q.items, q.head = q.items[:0], 0
		*spare = q
	}
}

// remove deletes x from the queue, keeping the order of the others.
func (q *fifo[T]) remove(x T) bool {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i] == x {
			copy(q.items[i:], q.items[i+1:])
			var zero T
			q.items[len(q.items)-1] = zero
			q.items = q.items[:len(q.items)-1]
			return true
		}
	}
	return false
}

var _ algos.Spawner = (*Link)(nil)

// takeCancel removes r's cancel and returns a call of it with code.
func takeCancel(r *request, code quic.StreamErrorCode) func() {
	c, ws, rs := r.cancel, r.sendS, r.recvS
	r.cancel, r.sendS, r.recvS = nil, nil, nil
	switch {
	case c != nil:
		return func() { c(code) }
	case ws != nil:
		return func() { ws.CancelWrite(code) }
	case rs != nil:
		return func() { rs.CancelRead(code) }
	}
	return nop
}
