package sim

import (
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
// slots are dropped from the front once both sides are done. The first
// slot not dropped sits in the queue (most queues never hold a second),
// the others in more.
type matchQueue struct {
	// tag and src are the queue's key; src is -1 in a rank's own queue
	// (matches.one) while it has none.
	tag  algos.Tag
	src  int32
	head int32 // the slot after first is (*more)[head]
	base int64 // the index of first
	// sent and posted count the messages and receives so far, from
	// base on, so that a queue holds no two 64-bit counts. (sent is
	// below 0 once receives that no message came for failed and were
	// dropped: their source is gone and sends nothing more.)
	sent, posted int32
	// next links a rank's other queues from its own (matches.one),
	// while it keeps them in a list, and the engine's free queues: a
	// rank's second queue needs no record of its own.
	next *matchQueue
	// first is slot base, in the queue, so that a message and its
	// receive meet in their queue's cache line; more holds the slots
	// after it, nil until a queue holds two: a queue is 64 bytes.
	first matchSlot
	more  *[]matchSlot
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
	i := int(k - q.base)
	if i == 0 {
		return &q.first
	}
	if q.more == nil {
		q.more = new([]matchSlot)
	}
	j := int(q.head) + i - 1
	for j >= len(*q.more) {
		*q.more = append(*q.more, matchSlot{})
	}
	return &(*q.more)[j]
}

// live is how many slots the queue holds from base on.
func (q *matchQueue) live() int { return int(max(q.sent, q.posted)) }

// slotAt returns the queue's i-th slot from base on.
func (q *matchQueue) slotAt(i int) *matchSlot {
	if i == 0 {
		return &q.first
	}
	return &(*q.more)[int(q.head)+i-1]
}

// trim drops the finished slots at the front, and reports whether the
// queue is empty (nothing sent or posted is waiting), so that its owner
// can forget it. A queue whose receives outnumbered its messages is empty
// once they are dropped: they failed because their source is gone, which
// sends nothing more to match.
func (q *matchQueue) trim() bool {
	for n := q.live(); n > 0 && q.first.done(); n-- {
		if n > 1 {
			s := &(*q.more)[q.head]
			q.first, *s = *s, matchSlot{}
			q.head++
		} else {
			q.first = matchSlot{}
		}
		q.base++
		q.sent--
		q.posted--
	}
	if q.more != nil && int(q.head) == len(*q.more) {
		*q.more, q.head = (*q.more)[:0], 0
	}
	return q.live() == 0
}

// announce records m, just sent, and reports the receive it matches if
// that is already posted.
func (q *matchQueue) announce(m *Message) *request {
	k := q.base + int64(q.sent)
	m.setSeq(k)
	q.sent++
	s := q.slot(k)
	s.m = m
	return s.req
}

// post records req, just posted, and returns the message it matches if
// that was sent already (arrived or not).
func (q *matchQueue) post(req *request) (*matchSlot, *Message) {
	k := q.base + int64(q.posted)
	q.posted++
	s := q.slot(k)
	s.req = req
	return s, s.m
}

// matches are a rank's match queues that have something pending, by
// key. Most ranks have one at a time, kept in the rank (one, while it is
// used), which a message reaches without a pointer; the others are a
// short list linked from it (one.next), searched in order, and past
// matchListMax (an alltoall posting every receive at once) a map in the
// rank's rare record. A queue that empties leaves; one of the list goes
// back to the engine's pool for the next key of any rank.
type matches struct {
	one matchQueue
}

// matchListMax is the most queues a rank keeps in its list.
const matchListMax = 16

// byKey is r's map of queues beside matches.one, nil while it keeps them
// in a list.
func (r *rank) byKey() map[matchKey]*matchQueue {
	if r.rare == nil {
		return nil
	}
	return r.rare.matches
}

// lookup returns r's match queue for key, or nil.
func (r *rank) lookup(key matchKey) *matchQueue {
	m := &r.match
	if m.one.is(key) {
		return &m.one
	}
	for q := m.one.next; q != nil; q = q.next {
		if q.is(key) {
			return q
		}
	}
	if r.rare == nil || r.rare.matches == nil {
		return nil
	}
	return r.rare.matches[key]
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
	if byKey := r.byKey(); byKey != nil {
		byKey[key] = q
		return q
	}
	n := 0
	for y := m.one.next; y != nil; y = y.next {
		n++
	}
	if n < matchListMax {
		q.next, m.one.next = m.one.next, q
		return q
	}
	byKey := make(map[matchKey]*matchQueue, 2*matchListMax)
	for y := m.one.next; y != nil; {
		next := y.next
		y.next = nil
		byKey[y.key()] = y
		y = next
	}
	m.one.next = nil
	byKey[key] = q
	r.faults().matches = byKey
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
		*q = matchQueue{more: q.more, src: -1, next: q.next}
		return
	case r.byKey() != nil:
		delete(r.rare.matches, q.key())
	default:
		prev := &m.one
		for prev.next != q {
			prev = prev.next
		}
		prev.next = q.next
	}
	r.e.freeQueue(q)
}

// keys returns the keys of r's queues from src.
func (r *rank) keys(src int) []matchKey {
	var out []matchKey
	add := func(q *matchQueue) {
		if int(q.src) == src {
			out = append(out, q.key())
		}
	}
	m := &r.match
	if m.one.src >= 0 {
		add(&m.one)
	}
	for q := m.one.next; q != nil; q = q.next {
		add(q)
	}
	for _, q := range r.byKey() {
		add(q)
	}
	return out
}

// newQueue returns an empty match queue, reusing one given back.
func (e *Engine) newQueue() *matchQueue {
	if q := e.queues; q != nil {
		e.queues, q.next = q.next, nil
		return q
	}
	return &matchQueue{}
}

// freeQueue takes back q, empty, keeping its slots' storage.
func (e *Engine) freeQueue(q *matchQueue) {
	*q = matchQueue{more: q.more, next: e.queues}
	e.queues = q
}
