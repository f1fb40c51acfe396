package sim

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

// queue returns r's match queue for key, making it if needed.
func (r *rank) queue(key matchKey) *matchQueue {
	q := r.match[key]
	if q == nil {
		if r.match == nil {
			r.match = map[matchKey]*matchQueue{}
		}
		if k := len(r.spare); k > 0 {
			q = r.spare[k-1]
			r.spare = r.spare[:k-1]
		} else {
			q = &matchQueue{}
		}
		r.match[key] = q
	}
	return q
}

// finish marks slot s of q done. Once q is empty it is forgotten (and
// kept for reuse) if the rank has many queues: the map then stays about as
// small as what is pending, where an alltoall would leave a queue for
// every source; with few, it stays in the map, ready for the next message
// of an algorithm that reuses its tag step after step.
func (r *rank) finish(key matchKey, q *matchQueue, s *matchSlot) {
	s.done = true
	if q.trim() && len(r.match) > keepQueues {
		r.forget(key, q)
	}
}

// keepQueues is how many match queues a rank keeps when they empty.
const keepQueues = 16

// forget removes q, empty, from r's map and keeps it for reuse.
func (r *rank) forget(key matchKey, q *matchQueue) {
	delete(r.match, key)
	*q = matchQueue{slots: q.slots[:0]}
	r.spare = append(r.spare, q)
}
