package sim

import (
	"github.com/nexar-go/nexar-go/algos"
)

// request is one posted send or receive: a replayed process's request
// slot, or the request part of a coRequest. It names no owner: a slot
// belongs to the process whose slots hold it, and a request a link
// returned carries its rank in its coRequest, which Wait checks.
type request struct {
	// waiter is the process blocked in Wait on this request, if any.
	waiter *proc
	// x holds what few requests have: a switch request's operation, a
	// failed request's error; and whether the request is done: nil for
	// a request not done, reqDone for one done without either. (The
	// host buffer of a request with real bytes is in Engine.hostBufs: a
	// request of a 2^24-rank run, 24 bytes, holds no buffer and no flag.)
	x *reqExtra
	// bytes is the size of the send, of the receive's buffer, or of the
	// switch operation. (The peer and tag are the message's and the
	// match queue's once posted; a coRequest keeps them for reports.)
	bytes int
}

// reqDone is the extra record of every request done with no error and no
// switch operation. It is never written.
var reqDone = reqExtra{done: true}

// done reports whether the request completed.
func (r *request) done() bool { return r.x != nil && r.x.done }

// coRequest is the simulator's algos.Request: a request a rank's link
// returned to a body running as coroutines, with the rank it belongs to,
// so that Wait refuses another rank's, and its peer (-1 for none) and
// tag, for deadlock reports.
type coRequest struct {
	request
	owner *rank
	tag   algos.Tag
	peer  int32
	kind  reqKind
	// waitedFor is set once a Wait has included the request, so its error
	// reached somebody.
	waitedFor bool
}

// reqExtra is what a request seldom has.
type reqExtra struct {
	// sw is the switch operation of a switch request (peer is then -1).
	sw *SwitchOp
	// err is what the request failed with.
	err error
	// done: the request completed.
	done bool
}

// failure is the error the request completed with, nil if none (yet).
func (r *request) failure() error {
	if r.x == nil {
		return nil
	}
	return r.x.err
}

// switchOp is the switch operation of a switch request, nil for others.
func (r *request) switchOp() *SwitchOp {
	if r.x == nil {
		return nil
	}
	return r.x.sw
}

// extra returns r's own extra record, making it (a copy of reqDone, for
// a request done without one).
func (r *request) extra() *reqExtra {
	if r.x == nil || r.x == &reqDone {
		x := &reqExtra{}
		if r.x != nil {
			*x = reqDone
		}
		r.x = x
	}
	return r.x
}

// reqKind says what a request is for.
type reqKind uint8

const (
	reqRecv reqKind = iota // a receive, or a switch operation's request
	reqSend
	reqSpawn  // completes when a spawned process returns
	reqSignal // a request of Signal, completed by another process
)

// wait describes the request for a deadlock report.
func (r *coRequest) wait() Wait {
	if r.kind == reqSpawn {
		return Wait{Spawned: true}
	}
	if r.kind == reqSignal {
		return Wait{Signal: true, Peer: -1}
	}
	if sw := r.switchOp(); sw != nil {
		return sw.wait(r.bytes)
	}
	return Wait{Send: r.kind == reqSend, Peer: int(r.peer), Tag: r.tag, Bytes: r.bytes}
}

// complete marks r done with err, and wakes its owner if this was the last
// request it waited for, or if the request failed.
func (r *request) complete(err error) {
	switch {
	case r.done():
		return
	case err != nil:
		x := r.extra()
		x.err, x.done = err, true
	case r.x != nil:
		r.x.err, r.x.done = nil, true
	default:
		r.x = &reqDone
	}
	if r.waiter != nil {
		r.waiter.requestDone(r)
	}
}

// matchKey is what receives match messages by.
type matchKey struct {
	src int
	tag algos.Tag
}

// fifo is a first-in first-out queue that reuses its storage.
type fifo[T any] struct {
	items []T
	head  int
}

func (q *fifo[T]) push(x T) { q.items = append(q.items, x) }

func (q *fifo[T]) len() int { return len(q.items) - q.head }

func (q *fifo[T]) pop() T {
	var zero T
	x := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return x
}
