package sim

import (
	"slices"

	"github.com/nexar-go/nexar-go/algos"
)

// matchQueue pairs the messages from one source with one tag with the
// receives posted for them at their destination, by order alone: the k-th
// message sent matches the k-th receive posted (MPI's rule that messages
// between a pair with the same tag do not overtake each other), whenever
// each of them arrives. So a message that a network delivers before an
// earlier one of the same pair and tag (a flow with several slots, an
// eager message passing a rendezvous one) still lands in its own receive.
//
// Slot k holds the k-th message and the k-th receive as each is posted;
// slots are dropped from the front once both sides are done.
type matchQueue struct {
	// tag and src are the queue's key; src is -1 in a rank's own queue
	// (matches.one) while it has none, so that a queue is 64 bytes.
	tag   algos.Tag
	src   int32
	head  int32
	base  int64 // the index of slots[head]
	slots []matchSlot
	// sent and posted count the messages and receives so far.
	sent, posted int64
}

// key is the queue's key.
func (q *matchQueue) key() matchKey { return matchKey{src: int(q.src), tag: q.tag} }

// is reports whether the queue's key is k.
func (q *matchQueue) is(k matchKey) bool { return int(q.src) == k.src && q.tag == k.tag }

// setKey gives the queue key k.
func (q *matchQueue) setKey(k matchKey) { q.src, q.tag = int32(k.src), k.tag }

type matchSlot struct {
	m *Message
	// req is the receive posted, nil before, and slotDone once it
	// completed (filled or failed).
	req *request
}

// slotDone is the request of a match slot whose receive completed: a
// slot is 16 bytes, with no flag beside its two pointers. It is done
// from the start, so that completing it does nothing.
var slotDone = request{x: &reqDone}

// done reports whether the slot's receive completed.
func (s *matchSlot) done() bool { return s.req == &slotDone }

// slot returns slot k, growing the queue as needed.
func (q *matchQueue) slot(k int64) *matchSlot {
	i := int(q.head) + int(k-q.base)
	for i >= len(q.slots) {
		q.slots = append(q.slots, matchSlot{})
	}
	return &q.slots[i]
}

// trim drops the finished slots at the front, and reports whether the
// queue is empty (nothing sent or posted is waiting), so that its owner
// can forget it.
func (q *matchQueue) trim() bool {
	for int(q.head) < len(q.slots) && q.slots[q.head].done() {
		q.slots[q.head] = matchSlot{}
		q.head++
		q.base++
	}
	if int(q.head) == len(q.slots) {
		q.slots, q.head = q.slots[:0], 0
	}
	return len(q.slots) == 0 && q.sent == q.posted
}

// announce records m, just sent, and reports the receive it matches if
// that is already posted.
func (q *matchQueue) announce(m *Message) *request {
	m.setSeq(q.sent)
	q.sent++
	s := q.slot(q.sent - 1)
	s.m = m
	return s.req
}

// post records req, just posted, and returns the message it matches if
// that was sent already (arrived or not).
func (q *matchQueue) post(req *request) (*matchSlot, *Message) {
	k := q.posted
	q.posted++
	s := q.slot(k)
	s.req = req
	return s, s.m
}

// matches are a rank's match queues that have something pending, by
// key. Most ranks have one at a time, kept in the rank (one, while it is
// used), which a message reaches without a pointer; the others are a
// short list searched in order, and past matchListMax (an alltoall
// posting every receive at once) a map. A queue that empties leaves; one
// of the list goes back to the engine's pool for the next key of any
// rank.
type matches struct {
	one  matchQueue
	more *moreMatches // nil until the rank has two queues at once
}

// moreMatches are the queues of a rank beside matches.one.
type moreMatches struct {
	list  []*matchQueue
	byKey map[matchKey]*matchQueue // nil while the list is used
}

// matchListMax is the most queues a rank keeps in its list.
const matchListMax = 16

// lookup returns r's match queue for key, or nil.
func (r *rank) lookup(key matchKey) *matchQueue {
	m := &r.match
	if m.one.is(key) {
		return &m.one
	}
	if m.more == nil {
		return nil
	}
	if m.more.byKey != nil {
		return m.more.byKey[key]
	}
	for _, q := range m.more.list {
		if q.is(key) {
			return q
		}
	}
	return nil
}

// queue returns r's match queue for key, making it if needed.
func (r *rank) queue(key matchKey) *matchQueue {
	if q := r.lookup(key); q != nil {
		return q
	}
	m := &r.match
	if m.one.src < 0 {
		m.one.setKey(key)
		return &m.one
	}
	q := r.e.newQueue()
	q.setKey(key)
	if m.more == nil {
		m.more = &moreMatches{}
	}
	x := m.more
	switch {
	case x.byKey != nil:
		x.byKey[key] = q
	case len(x.list) < matchListMax:
		x.list = append(x.list, q)
	default:
		x.byKey = make(map[matchKey]*matchQueue, 2*matchListMax)
		for _, y := range x.list {
			x.byKey[y.key()] = y
		}
		x.byKey[key] = q
		x.list = nil
	}
	return q
}

// finish marks slot s of q done; once q is empty (nothing sent or posted
// is waiting) it leaves r's queues.
func (r *rank) finish(q *matchQueue, s *matchSlot) {
	s.req = &slotDone
	if q.trim() {
		r.forget(q)
	}
}

// forget removes q, empty, from r's queues and gives it back to the
// engine. A later message or receive of its key starts a new queue,
// numbered from 0 again, which matches as the old one would have: every
// message it had was matched.
func (r *rank) forget(q *matchQueue) {
	m := &r.match
	switch {
	case q == &m.one:
		*q = matchQueue{slots: q.slots[:0], src: -1}
		return
	case m.more.byKey != nil:
		delete(m.more.byKey, q.key())
	default:
		x := m.more
		i := slices.Index(x.list, q)
		last := len(x.list) - 1
		x.list[i] = x.list[last]
		x.list[last] = nil
		x.list = x.list[:last]
	}
	r.e.freeQueue(q)
}

// keys returns the keys of r's queues from src.
func (m *matches) keys(src int) []matchKey {
	var out []matchKey
	add := func(q *matchQueue) {
		if int(q.src) == src {
			out = append(out, q.key())
		}
	}
	if m.one.src >= 0 {
		add(&m.one)
	}
	if m.more == nil {
		return out
	}
	if m.more.byKey != nil {
		for _, q := range m.more.byKey {
			add(q)
		}
	} else {
		for _, q := range m.more.list {
			add(q)
		}
	}
	return out
}

// newQueue returns an empty match queue, reusing one given back.
func (e *Engine) newQueue() *matchQueue {
	if k := len(e.queues); k > 0 {
		q := e.queues[k-1]
		e.queues = e.queues[:k-1]
		return q
	}
	return &matchQueue{}
}

// freeQueue takes back q, empty, keeping its slots' storage.
func (e *Engine) freeQueue(q *matchQueue) {
	*q = matchQueue{slots: q.slots[:0]}
	e.queues = append(e.queues, q)
}
