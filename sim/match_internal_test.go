package sim

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/nexar-go/nexar-go/algos"
)

// testRank returns rank 0 of a bare engine of two replayed ranks.
func testRank() *rank {
	e := &Engine{}
	e.ranks.pairs = make([]rankProc, 2)
	e.ranks.n = 2
	for _, r := range e.ranks.all() {
		r.e = e
		r.match.one.src = -1
	}
	return e.ranks.at(0)
}

// TestMatchQueueSizes pins the layout the per-rank memory rests on: a
// queue of 64 bytes, a replayed rank, its process, its first two request
// slots and its alpha-beta ports in 232 bytes (128, 48 and 56 before
// they moved beside each other).
func TestMatchQueueSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"matchQueue", unsafe.Sizeof(matchQueue{}), 64},
		{"rankProc", unsafe.Sizeof(rankProc{}), 232},
	} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, want %d", c.name, c.got, c.want)
		}
	}
	r := testRank()
	if id := r.e.ranks.at(1).id(); id != 1 || r.id() != 0 {
		t.Errorf("ids %d and %d, want 0 and 1", r.id(), id)
	}
}

// TestMatchQueuesListThenMap: a rank's queues beyond its own are a
// linked list up to matchListMax and then a map; each is found, and
// forgetting one (first, middle or own) leaves the others found.
func TestMatchQueuesListThenMap(t *testing.T) {
	for _, n := range []int{1, 2, 3, matchListMax + 1, matchListMax + 2, 3 * matchListMax} {
		r := testRank()
		for tag := range n {
			r.queue(matchKey{src: 1, tag: algos.Tag(tag)}).posted++
		}
		if got := len(r.keys(1)); got != n {
			t.Fatalf("n=%d: %d keys", n, got)
		}
		if mapped := r.byKey() != nil; mapped != (n > matchListMax+1) {
			t.Errorf("n=%d: map %v", n, mapped)
		}
		gone := []int{0, n / 2, n - 1}
		for _, tag := range gone {
			if q := r.lookup(matchKey{src: 1, tag: algos.Tag(tag)}); q != nil {
				r.forget(q)
			}
		}
		for tag := range n {
			q := r.lookup(matchKey{src: 1, tag: algos.Tag(tag)})
			if (q == nil) != slices.Contains(gone, tag) {
				t.Errorf("n=%d: tag %d found %v", n, tag, q != nil)
			}
		}
		if r.lookup(matchKey{src: 1, tag: algos.Tag(n)}) != nil {
			t.Errorf("n=%d: an unused key found", n)
		}
	}
}

// TestMatchQueueSlots: messages and receives meet by their order alone,
// whichever comes first, across the queue's own first slot and those
// after it, and the queue empties once all are matched.
func TestMatchQueueSlots(t *testing.T) {
	q := &matchQueue{}
	msgs := make([]Message, 5)
	reqs := make([]request, 5)
	// Three messages first, then five receives (the queue is empty after
	// the third), then two messages.
	for i := range 3 {
		if q.announce(&msgs[i]) != nil {
			t.Fatalf("message %d matched before any receive", i)
		}
	}
	for i := range 5 {
		s, m := q.post(&reqs[i])
		if want := i < 3; (m != nil) != want || (m != nil && m != &msgs[i]) {
			t.Fatalf("receive %d got message %p", i, m)
		}
		if i < 3 {
			s.req = &slotDone
			if empty := q.trim(); empty != (i == 2) {
				t.Fatalf("receive %d: queue empty %v", i, empty)
			}
		}
	}
	for i := 3; i < 5; i++ {
		if got := q.announce(&msgs[i]); got != &reqs[i] {
			t.Fatalf("message %d matched %p, want receive %d", i, got, i)
		}
		if msgs[i].seq() != int64(i) {
			t.Errorf("message %d has seq %d", i, msgs[i].seq())
		}
		q.slot(int64(i)).req = &slotDone
	}
	if !q.trim() || q.base != 5 || q.live() != 0 || len(*q.more) != 0 {
		t.Errorf("queue not empty: base %d, live %d", q.base, q.live())
	}
}
