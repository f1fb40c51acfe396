package sim

import "slices"

// flowEnds orders the flows in their bandwidth phase by (end, seq): the
// order wakeUp ends them in. The flows that end at one picosecond share
// a batch, and the batches are a heap by (end, id). A collective's flows
// end together (a ring's step, a symmetric exchange), and a heap of
// flows paid a sift of log n levels for each, every level writing the
// index of a flow elsewhere in memory; a batch takes a flow with an
// append, drops it by clearing its entry, and is put in seq order once,
// when it comes due (already in order, most often: flows that start
// alone are pushed as they start).
type flowEnds struct {
	heap []*endBatch // by (end, id), each batch at its hidx
	last *endBatch   // the batch pushed to last: pushes in a row share an end
	free []*endBatch
	ids  uint64
}

// endBatch is the flows that end at one picosecond.
type endBatch struct {
	end Time
	// items are the flows from head on, in seq order when sorted; a
	// flow that left the batch leaves its entry with f nil.
	items  []endEntry
	head   int
	live   int
	sorted bool
	// merged is set once the batches of the same end made before it
	// came due were merged into it (see pop).
	merged bool
	hidx   int    // index in flowEnds.heap, -1 once recycled
	id     uint64 // the order of making: of two batches of one end, the
	// older holds the older flows, all but those started while it is
	// being ended
}

func (a *endBatch) before(b *endBatch) bool {
	return a.end < b.end || (a.end == b.end && a.id < b.id)
}

// endEntry keeps a flow's seq beside it, so that ordering a batch reads
// no flow.
type endEntry struct {
	seq uint64
	f   *flowState
}

func (q *flowEnds) len() int { return len(q.heap) }

// next is the earliest end; the queue must not be empty.
func (q *flowEnds) next() Time { return q.heap[0].end }

// push puts f, which is in no batch, in a batch of f.end: the last one
// pushed to if it has that end, else a new one. Batches of one end are
// merged when they come due (pop), rather than found by end at each
// push.
func (q *flowEnds) push(f *flowState) {
	b := q.last
	if b == nil || b.end != f.end || b.hidx < 0 {
		b = q.newBatch(f.end)
		q.last = b
	}
	if n := len(b.items); b.sorted && n > b.head && b.items[n-1].seq > f.seq {
		b.sorted = false
	}
	if len(b.items)-b.head > 2*b.live+16 {
		b.compact()
	}
	f.batch, f.hidx = b, len(b.items)
	b.items = append(b.items, endEntry{f.seq, f})
	b.live++
}

// remove takes f out of its batch.
func (q *flowEnds) remove(f *flowState) {
	b := f.batch
	b.items[f.hidx].f = nil
	f.batch, f.hidx = nil, -1
	b.live--
	if b.live == 0 {
		q.drop(b)
	}
}

// fix moves f, whose end moved, to its new end's batch.
func (q *flowEnds) fix(f *flowState) {
	if f.batch.end == f.end {
		return
	}
	q.remove(f)
	q.push(f)
}

// pop takes out the first flow by (end, seq); the queue must not be
// empty.
func (q *flowEnds) pop() *flowState {
	b := q.heap[0]
	if !b.merged {
		q.merge(b)
	}
	if !b.sorted {
		b.sort()
	}
	for b.items[b.head].f == nil {
		b.head++
	}
	f := b.items[b.head].f
	b.items[b.head].f = nil
	b.head++
	f.batch, f.hidx = nil, -1
	b.live--
	if b.live == 0 {
		q.drop(b)
	}
	return f
}

func (q *flowEnds) newBatch(end Time) *endBatch {
	var b *endBatch
	if k := len(q.free); k > 0 {
		b = q.free[k-1]
		q.free = q.free[:k-1]
	} else {
		b = &endBatch{}
	}
	b.end, b.sorted, b.merged, b.hidx, b.id = end, true, false, len(q.heap), q.ids
	q.ids++
	q.heap = append(q.heap, b)
	q.up(b.hidx)
	return b
}

// merge moves into b, the first batch, the flows of the other batches of
// its end, made after it: all of them but those that start while b is
// being ended, which have later seqs than all of b's and so may wait in
// a batch of their own.
func (q *flowEnds) merge(b *endBatch) {
	b.merged = true
	for {
		var twin *endBatch
		for _, c := range []int{1, 2} { // the next by (end, id) is a child of the root
			if c < len(q.heap) && q.heap[c].end == b.end && (twin == nil || q.heap[c].before(twin)) {
				twin = q.heap[c]
			}
		}
		if twin == nil {
			return
		}
		for _, it := range twin.items[twin.head:] {
			if it.f != nil {
				if n := len(b.items); n > b.head && b.items[n-1].seq > it.seq {
					b.sorted = false
				}
				it.f.batch, it.f.hidx = b, len(b.items)
				b.items = append(b.items, it)
				b.live++
			}
		}
		twin.live = 0
		q.drop(twin)
	}
}

// drop takes the empty batch b out of the heap and keeps it for reuse.
func (q *flowEnds) drop(b *endBatch) {
	i, last := b.hidx, len(q.heap)-1
	if i != last {
		q.heap[i] = q.heap[last]
		q.heap[i].hidx = i
	}
	q.heap[last] = nil
	q.heap = q.heap[:last]
	if i != last {
		q.down(i)
		q.up(i)
	}
	if q.last == b {
		q.last = nil
	}
	clear(b.items)
	b.items, b.head, b.live, b.hidx = b.items[:0], 0, 0, -1
	q.free = append(q.free, b)
}

// compact drops the entries of flows that left b.
func (b *endBatch) compact() {
	k := 0
	for _, it := range b.items[b.head:] {
		if it.f != nil {
			it.f.hidx = k
			b.items[k] = it
			k++
		}
	}
	clear(b.items[k:])
	b.items, b.head = b.items[:k], 0
}

// sort puts b's flows in seq order.
func (b *endBatch) sort() {
	b.compact()
	bySeq := func(x, y endEntry) int {
		if x.seq < y.seq {
			return -1
		}
		if x.seq > y.seq {
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(b.items, bySeq) {
		slices.SortFunc(b.items, bySeq)
		for i, it := range b.items {
			it.f.hidx = i
		}
	}
	b.sorted = true
}

func (q *flowEnds) up(i int) {
	h := q.heap
	b := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !b.before(h[p]) {
			break
		}
		h[i] = h[p]
		h[i].hidx = i
		i = p
	}
	h[i] = b
	b.hidx = i
}

func (q *flowEnds) down(i int) {
	h := q.heap
	n := len(h)
	b := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if l+1 < n && h[l+1].before(h[l]) {
			c = l + 1
		}
		if !h[c].before(b) {
			break
		}
		h[i] = h[c]
		h[i].hidx = i
		i = c
	}
	h[i] = b
	b.hidx = i
}
