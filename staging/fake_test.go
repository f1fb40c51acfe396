package staging

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
)

// fakeMover implements mover on host memory, to test the Link's staging
// without a GPU. Reductions and device-to-device copies run at once; the
// staging copies are deferred, as a GPU's copy engines defer them: a copy
// happens only when its fence completes, and a fence completes only after
// a seeded random number of polls (done) or when waited for, together with
// every earlier copy in the same direction. Data that the Link hands on
// before its copy's fence completes is therefore stale, and the results
// are wrong; pinned and device memory start poisoned so stale bytes show.
type fakeMover struct {
	rng     *rand.Rand
	polls   func() int      // polls before a fence completes
	queues  [2][]*fakeFence // pending copies per direction
	pinned  map[*byte]int   // live pinned regions and their sizes
	copies  int             // staging copies issued
	reduces int             // reductions run
	closed  bool
	fail    error // if set, staging copies fail with it
}

// fakeDev is the fake's device memory.
type fakeDev []byte

func (f fakeDev) Len() int { return len(f) }

func (f fakeDev) Slice(off, n int) device.Buffer { return f[off : off+n : off+n] }

const poison = 0xA5

func newFakeMover(seed uint64, rank int) *fakeMover {
	m := &fakeMover{rng: rand.New(rand.NewPCG(seed, uint64(rank)+100)), pinned: map[*byte]int{}}
	m.polls = func() int { return m.rng.IntN(4) }
	return m
}

type fakeFence struct {
	m         *fakeMover
	dir       int
	run       func()
	polls     int
	completed bool
}

func (m *fakeMover) isDevice(b device.Buffer) bool {
	_, ok := b.(fakeDev)
	return ok
}

func (m *fakeMover) alloc(n int) (device.Buffer, error) {
	b := make(fakeDev, n)
	for i := range b {
		b[i] = poison
	}
	return b, nil
}

func (m *fakeMover) allocPinned(n int) ([]byte, error) {
	if m.closed {
		return nil, errors.New("fake: closed")
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = poison
	}
	m.pinned[unsafe.SliceData(b)] = n
	return b, nil
}

func (m *fakeMover) freePinned(b []byte) error {
	p := unsafe.SliceData(b)
	if n, ok := m.pinned[p]; !ok || n != len(b) {
		return fmt.Errorf("fake: freeing %d bytes that are not a pinned region", len(b))
	}
	delete(m.pinned, p)
	return nil
}

func (m *fakeMover) enqueue(dir int, run func()) (fence, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	m.copies++
	f := &fakeFence{m: m, dir: dir, run: run, polls: m.polls()}
	m.queues[dir] = append(m.queues[dir], f)
	return f, nil
}

func (m *fakeMover) toHost(dst []byte, src device.Buffer) (fence, error) {
	s, ok := src.(fakeDev)
	if !ok || len(s) != len(dst) {
		return nil, fmt.Errorf("fake: toHost of %T (%d bytes) into %d bytes", src, src.Len(), len(dst))
	}
	return m.enqueue(0, func() { copy(dst, s) })
}

func (m *fakeMover) fromHost(dst device.Buffer, src []byte) (fence, error) {
	d, ok := dst.(fakeDev)
	if !ok || len(d) != len(src) {
		return nil, fmt.Errorf("fake: fromHost of %d bytes into %T (%d bytes)", len(src), dst, dst.Len())
	}
	return m.enqueue(1, func() { copy(d, src) })
}

func (m *fakeMover) reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	d, dok := dst.(fakeDev)
	s, sok := src.(fakeDev)
	if !dok || !sok {
		return fmt.Errorf("fake: reduce of %T into %T", src, dst)
	}
	m.reduces++
	return device.Reduce(device.Host(d), device.Host(s), dt, op)
}

func (m *fakeMover) copy(dst, src device.Buffer) error {
	d, dok := dst.(fakeDev)
	s, sok := src.(fakeDev)
	if !dok || !sok || len(d) != len(s) {
		return fmt.Errorf("fake: copy of %T into %T", src, dst)
	}
	copy(d, s)
	return nil
}

// sync completes every pending copy, as a device's synchronization waits
// for all its streams.
func (m *fakeMover) sync() error {
	for dir, q := range m.queues {
		if n := len(q); n > 0 {
			q[n-1].complete()
		}
		m.queues[dir] = nil
	}
	return nil
}

func (m *fakeMover) close() error {
	m.closed = true
	if len(m.pinned) != 0 {
		return fmt.Errorf("fake: %d pinned regions not freed", len(m.pinned))
	}
	return nil
}

// pending is the number of staging copies not yet completed.
func (m *fakeMover) pending() int { return len(m.queues[0]) + len(m.queues[1]) }

// complete runs every copy of f's direction up to and including f.
func (f *fakeFence) complete() {
	q := f.m.queues[f.dir]
	for len(q) > 0 {
		g := q[0]
		q = q[1:]
		g.run()
		g.completed = true
		if g == f {
			break
		}
	}
	f.m.queues[f.dir] = q
}

func (f *fakeFence) done() (bool, error) {
	if f.completed {
		return true, nil
	}
	if f.polls > 0 {
		f.polls--
		return false, nil
	}
	f.complete()
	return true, nil
}

func (f *fakeFence) wait() error {
	if !f.completed {
		f.complete()
	}
	return nil
}
