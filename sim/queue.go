package sim

// Handler is something that happens at a point in virtual time: a message
// arriving, a rank resuming, a port freeing.
type Handler interface {
	Fire()
}

// eventQueue holds the events not yet run, in the order they run: by time,
// and events due at the same time in the order they were scheduled, which
// is itself deterministic because exactly one thing runs at a time; so the
// order of events is total and never depends on goroutine scheduling.
//
// Collectives move in lock step: thousands of messages end at the same
// picosecond. So the queue keeps events in slots, each a FIFO of the
// events due at one time, and only the slots in a binary min-heap, by
// (time, creation): an event goes into the slot of its time if one of the
// last few slots created has it, and otherwise into a new slot. Slots of
// one time created one after another hold events scheduled one after
// another (an event never goes into a slot older than the newest of its
// time), so running slots in heap order, each in FIFO order, runs events
// in the order they were scheduled. Events scheduled at the current
// instant while it runs go into a FIFO of their own, which runs after the
// instant's slots: they were scheduled after every event of those.
//
// A slot's events are kept in blocks of evBlockLen, linked, which the
// slots of a run share through a free list: a slot that grows to hold a
// whole world's events leaves no garbage behind (as a slice growing by
// doubling would), and what it held goes to the next slots when it is run.
type eventQueue struct {
	heap   []slotRef
	recent [recentSlots]*slot // the slots created last, newest at head-1
	head   int
	free   []*slot
	now    evList
	seq    uint64
	// blocks are the free event blocks, linked through evBlock.next.
	blocks *evBlock
}

// evBlockLen is how many events a block holds.
const evBlockLen = 128

// evBlock is a block of a slot's events.
type evBlock struct {
	h    [evBlockLen]Handler
	next *evBlock
}

// evList is a first-in first-out list of events in linked blocks: they
// are taken from head at hi and added to tail at ti.
type evList struct {
	head, tail *evBlock
	hi, ti     int32
}

func (l *evList) empty() bool { return l.head == nil }

// add appends h to l.
func (q *eventQueue) add(l *evList, h Handler) {
	if l.tail == nil || l.ti == evBlockLen {
		b := q.blocks
		if b != nil {
			q.blocks, b.next = b.next, nil
		} else {
			b = &evBlock{}
		}
		if l.tail == nil {
			l.head = b
		} else {
			l.tail.next = b
		}
		l.tail, l.ti = b, 0
	}
	l.tail.h[l.ti] = h
	l.ti++
}

// take removes and returns the first event of the non-empty l, giving
// back its block once the block is spent.
func (q *eventQueue) take(l *evList) Handler {
	b := l.head
	h := b.h[l.hi]
	b.h[l.hi] = nil
	l.hi++
	switch {
	case b == l.tail && l.hi == l.ti:
		*l = evList{}
	case l.hi == evBlockLen:
		l.head, l.hi = b.next, 0
	default:
		return h
	}
	b.next, q.blocks = q.blocks, b
	return h
}

// recentSlots is how many of the slots created last an event may join.
const recentSlots = 8

// slot is the events due at one time, in the order they were scheduled.
type slot struct {
	at Time
	q  evList
}

// slotRef is a slot in the heap, with its ordering key at hand.
type slotRef struct {
	at  Time
	seq uint64
	s   *slot
}

func (a *slotRef) before(b *slotRef) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// pushNow schedules h at the current instant, after everything scheduled
// before it.
func (q *eventQueue) pushNow(h Handler) { q.add(&q.now, h) }

// push schedules h at a later instant at.
func (q *eventQueue) push(at Time, h Handler) {
	for i := range recentSlots {
		s := q.recent[(q.head-1-i+recentSlots)%recentSlots]
		if s != nil && s.at == at {
			q.add(&s.q, h)
			return
		}
	}
	var s *slot
	if k := len(q.free); k > 0 {
		s, q.free = q.free[k-1], q.free[:k-1]
	} else {
		s = &slot{}
	}
	s.at = at
	q.add(&s.q, h)
	q.recent[q.head] = s
	q.head = (q.head + 1) % recentSlots
	q.seq++
	q.heapPush(slotRef{at: at, seq: q.seq, s: s})
}

// next returns the time of the earliest slot; there must be one.
func (q *eventQueue) next() Time { return q.heap[0].at }

// popSlot removes the earliest slot and returns it; its events are run by
// the caller, which then gives it back with freeSlot.
func (q *eventQueue) popSlot() *slot {
	s := q.heapPop().s
	for i, r := range q.recent {
		if r == s {
			q.recent[i] = nil
		}
	}
	return s
}

func (q *eventQueue) freeSlot(s *slot) {
	for !s.q.empty() { // (events left by a run that stopped)
		q.take(&s.q)
	}
	q.free = append(q.free, s)
}

func (q *eventQueue) heapPush(x slotRef) {
	q.heap = append(q.heap, x)
	h := q.heap
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *eventQueue) heapPop() slotRef {
	h := q.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = slotRef{}
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].before(&h[l]) {
			c = r
		}
		if !h[c].before(&h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	q.heap = h
	return top
}
