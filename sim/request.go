package sim

import (
	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// request is the simulator's algos.Request: one posted send or receive.
type request struct {
	owner *rank
	// waiter is the process blocked in Wait on this request, if any.
	waiter *proc
	// sw is the switch operation of a switch request (peer is then -1).
	sw *SwitchOp
	// buf is the buffer of a coroutine's request (nil in a replay, whose
	// buffers are phantom): a receive copies host bytes into it.
	buf   device.Buffer
	err   error
	peer  int
	tag   algos.Tag
	bytes int

	spawn bool // completes when a spawned process returns
	// signal marks a request of Signal, completed by another process.
	signal bool
	send   bool
	done   bool
	// waitedFor is set once a Wait has included the request, so its error
	// reached somebody.
	waitedFor bool
}

// wait describes the request for a deadlock report.
func (r *request) wait() Wait {
	if r.spawn {
		return Wait{Spawned: true}
	}
	if r.signal {
		return Wait{Signal: true, Peer: -1}
	}
	if r.sw != nil {
		return r.sw.wait(r.bytes)
	}
	return Wait{Send: r.send, Peer: r.peer, Tag: r.tag, Bytes: r.bytes}
}

// complete marks r done with err, and wakes its owner if this was the last
// request it waited for, or if the request failed.
func (r *request) complete(err error) {
	if r.done {
		return
	}
	r.done, r.err = true, err
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

func (q *fifo[T]) front() T { return q.items[q.head] }
