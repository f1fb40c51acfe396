package sim

import "slices"

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
	key   matchKey
	base  int64 // the index of slots[head]
	head  int
	slots []matchSlot
	// sent and posted count the messages and receives so far.
	sent, posted int64
}

type matchSlot struct {
	m    *Message
	req  *request
	done bool // the receive completed (filled or failed)
}

// slot returns slot k, growing the queue as needed.
func (q *matchQueue) slot(k int64) *matchSlot {
	i := q.head + int(k-q.base)
	for i >= len(q.slots) {
		q.slots = append(q.slots, matchSlot{})
	}
	return &q.slots[i]
}

// trim drops the finished slots at the front, and reports whether the
// queue is empty (nothing sent or posted is waiting), so that its owner
// can forget it.
func (q *matchQueue) trim() bool {
	for q.head < len(q.slots) && q.slots[q.head].done {
		q.slots[q.head] = matchSlot{}
		q.head++
		q.base++
	}
	if q.head == len(q.slots) {
		q.slots, q.head = q.slots[:0], 0
	}
	return len(q.slots) == 0 && q.sent == q.posted
}

// announce records m, just sent, and reports the receive it matches if
// that is already posted.
func (q *matchQueue) announce(m *Message) *request {
	m.seq = q.sent
	q.sent++
	s := q.slot(m.seq)
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
// key. Most ranks have a handful at a time, so they are a short list
// searched in order, which costs a rank of a million-rank run a slice
// header; past matchListMax (an alltoall posting every receive at once)
// they move to a map. A queue that empties leaves, and goes back to the
// engine's pool for the next key of any rank.
type matches struct {
	list  []matchEntry             // in buf while it fits
	byKey map[matchKey]*matchQueue // nil while the list is used
	buf   [2]matchEntry
}

// matchEntry is a queue in a rank's list, with its key at hand: a search
// reads the list alone.
type matchEntry struct {
	key matchKey
	q   *matchQueue
}

// matchListMax is the most queues a rank keeps in its list.
const matchListMax = 16

// lookup returns r's match queue for key, or nil.
func (r *rank) lookup(key matchKey) *matchQueue {
	if r.match.byKey != nil {
		return r.match.byKey[key]
	}
	for _, x := range r.match.list {
		if x.key == key {
			return x.q
		}
	}
	return nil
}

// queue returns r's match queue for key, making it if needed.
func (r *rank) queue(key matchKey) *matchQueue {
	if q := r.lookup(key); q != nil {
		return q
	}
	q := r.e.newQueue()
	q.key = key
	m := &r.match
	switch {
	case m.byKey != nil:
		m.byKey[key] = q
	case len(m.list) < matchListMax:
		if m.list == nil {
			m.list = m.buf[:0]
		}
		m.list = append(m.list, matchEntry{key, q})
	default:
		m.byKey = make(map[matchKey]*matchQueue, 2*matchListMax)
		for _, x := range m.list {
			m.byKey[x.key] = x.q
		}
		m.byKey[key] = q
		m.list = nil
	}
	return q
}

// finish marks slot s of q done; once q is empty (nothing sent or posted
// is waiting) it leaves r's queues.
func (r *rank) finish(q *matchQueue, s *matchSlot) {
	s.done = true
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
	if m.byKey != nil {
		delete(m.byKey, q.key)
	} else {
		i := slices.IndexFunc(m.list, func(x matchEntry) bool { return x.q == q })
		last := len(m.list) - 1
		m.list[i] = m.list[last]
		m.list[last] = matchEntry{}
		m.list = m.list[:last]
	}
	r.e.freeQueue(q)
}

// keys returns the keys of r's queues from src.
func (m *matches) keys(src int) []matchKey {
	var out []matchKey
	add := func(q *matchQueue) {
		if q.key.src == src {
			out = append(out, q.key)
		}
	}
	if m.byKey != nil {
		for _, q := range m.byKey {
			add(q)
		}
	} else {
		for _, x := range m.list {
			add(x.q)
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
