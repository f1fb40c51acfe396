package sim

// Handler is something that happens at a point in virtual time: a message
// arriving, a rank resuming, a port freeing.
type Handler interface {
	Fire()
}

// event is a Handler due at a time. seq breaks ties between events due at
// the same time in the order they were scheduled, which is itself
// deterministic because exactly one thing runs at a time; so the order of
// events is total and never depends on goroutine scheduling.
type event struct {
	at  Time
	seq uint64
	h   Handler
}

func (a *event) before(b *event) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// eventQueue holds the events not yet run, ordered by (at, seq): a binary
// min-heap of the events of later instants, and a FIFO of those scheduled
// at the current instant while it runs. Every event of the FIFO was
// scheduled after every event of the heap due now (seq only grows), so
// running the heap's events due now and then the FIFO's keeps the (at,
// seq) order exactly, and most events (a rank resumed now, a message of
// no duration) never touch the heap. The heap is written out for the
// event type rather than using container/heap, which boxes every element
// in an interface and allocates.
type eventQueue struct {
	ev  []event
	seq uint64
	now fifo[Handler]
}

func (q *eventQueue) len() int { return len(q.ev) }

// peek returns the earliest event of the heap, which must not be empty.
func (q *eventQueue) peek() *event { return &q.ev[0] }

// pushNow schedules h at the current instant, after everything scheduled
// before it.
func (q *eventQueue) pushNow(h Handler) {
	q.seq++
	q.now.push(h)
}

// push schedules h at a later instant.
func (q *eventQueue) push(at Time, h Handler) {
	q.seq++
	q.ev = append(q.ev, event{at: at, seq: q.seq, h: h})
	i := len(q.ev) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.ev[i].before(&q.ev[parent]) {
			break
		}
		q.ev[i], q.ev[parent] = q.ev[parent], q.ev[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	top := q.ev[0]
	last := len(q.ev) - 1
	q.ev[0] = q.ev[last]
	q.ev[last] = event{}
	q.ev = q.ev[:last]
	i, n := 0, last
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && q.ev[r].before(&q.ev[l]) {
			c = r
		}
		if !q.ev[c].before(&q.ev[i]) {
			break
		}
		q.ev[i], q.ev[c] = q.ev[c], q.ev[i]
		i = c
	}
	return top
}
