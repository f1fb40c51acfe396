package sim

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// request is the simulator's algos.Request: one posted send or receive.
type request struct {
	owner *rank
	send  bool
	peer  int
	tag   algos.Tag
	buf   device.Buffer

	done bool
	err  error
	// waited is set while the owner is blocked in Wait on this request.
	waited bool
}

func (r *request) String() string {
	if r.send {
		return fmt.Sprintf("send to rank %d, tag %d, %d bytes", r.peer, r.tag, r.buf.Len())
	}
	return fmt.Sprintf("receive from rank %d, tag %d, %d bytes", r.peer, r.tag, r.buf.Len())
}

// complete marks r done with err, and wakes its owner if this was the last
// request it waited for, or if the request failed.
func (r *request) complete(err error) {
	if r.done {
		return
	}
	r.done, r.err = true, err
	if r.waited {
		r.owner.requestDone(r)
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
