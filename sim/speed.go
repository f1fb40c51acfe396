package sim

import (
	"iter"
	"math"
	"sync"
	"time"
)

// A run's estimated time (EstimateRun) is priced, not timed: its events,
// and on the flow model its messages and max-min work, at costs fitted on
// one machine. Another machine runs them faster or slower, and not by one
// factor: the price of a replayed event follows the speed of a heap
// operation on the engine's queue and of the memory behind it, that of an
// event on coroutines the speed of a goroutine switch as well. So the
// prices are scaled by this machine's speed at those two elementary costs,
// measured once per process (machineSpeed): a few milliseconds of a heap
// and of coroutine switches, as BenchmarkScale's floor measures them,
// against what the machine the prices were fitted on read.

// refHeapNs and refSwitchNs are what the probe would read on a machine
// the prices fit. The prices were fitted on a 2.5 GHz Xeon (see
// eventSeconds and the flow costs); the probe came later, on an AMD EPYC
// with two virtual CPUs, where it read 91 ns a heap operation and 60 ns a
// switch, quiet, and where the unscaled prices read 2.5 to 2.8 times the
// replayed runs (halving-doubling of 4096 to 2^20 ranks on alpha-beta and
// on the flow model, the ring of 4096): hence 91 x 2.65. Runs on
// coroutines took 1046 to 1333 ns a message in most processes there
// (halving-doubling of 4096 ranks) and 2336 in one: the switch reading
// fits the faster, which leaves halving-doubling of 4096 and 2^16 ranks on
// coroutines within 1.5x of it, and the slower at half its time. The ring
// of 1024 ranks on coroutines costs about a third of what it is priced,
// as it cost about half on the Xeon (BenchmarkScale, BenchmarkScaleFlow,
// each point in a process of its own).
const (
	refHeapNs   = 241
	refSwitchNs = 110
)

// machineSpeed is this machine's cost of a heap operation and of a
// coroutine switch, each over the reference machine's (refHeapNs,
// refSwitchNs): 2 means twice as slow. Measured on first use.
var machineSpeed = sync.OnceValues(func() (heap, coroutine float64) {
	h, s := probeNs()
	clamp := func(x float64) float64 { return min(max(x, 0.2), 5) }
	return clamp(h / refHeapNs), clamp(s / refSwitchNs)
})

// probeRounds of probeOps operations each; the fastest round counts, so
// that a moment of other work on the machine does not.
const (
	probeRounds = 5
	probeOps    = 1 << 14
	probeQueue  = 4096
)

// probeNs times a heap operation (pop the earliest of probeQueue pending
// events, push one a pseudo-random time later) and a switch to a
// coroutine and back, in ns each.
func probeNs() (heapNs, switchNs float64) {
	f := newFloor(probeQueue)
	next, stop := switcher()
	defer stop()
	heapNs, switchNs = math.Inf(1), math.Inf(1)
	for range probeRounds {
		start := time.Now()
		f.run(probeOps, nil)
		heapNs = min(heapNs, float64(time.Since(start).Nanoseconds())/probeOps)
		start = time.Now()
		for range probeOps {
			next()
		}
		switchNs = min(switchNs, float64(time.Since(start).Nanoseconds())/probeOps)
	}
	return heapNs, switchNs
}

// switcher returns a coroutine that yields as soon as it is resumed: a
// switch to it and back is the floor's and the probe's coroutine switch.
func switcher() (next func() (struct{}, bool), stop func()) {
	return iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
}

// floor is the floor of an event's cost that BenchmarkScale holds runs
// against and the probe times: a plain typed binary heap of pending
// events of the engine's event's size.
type floor struct {
	h       floorHeap
	x, seq  uint64
	handler any
}

// newFloor returns a floor with n events pending.
func newFloor(n int) *floor {
	f := &floor{h: make(floorHeap, 0, n), x: 88172645463325252}
	f.handler = &f.seq
	for range n {
		f.seq++
		f.h.push(floorEvent{at: f.rnd(), seq: f.seq, h: f.handler})
	}
	return f
}

// rnd is xorshift64, mod 4096.
func (f *floor) rnd() int64 {
	f.x ^= f.x << 13
	f.x ^= f.x >> 7
	f.x ^= f.x << 17
	return int64(f.x % 4096)
}

// run does ops operations: pop the earliest event and push one a
// pseudo-random time later, then, unless next is nil, switch to its
// coroutine and back.
func (f *floor) run(ops int, next func() (struct{}, bool)) {
	for range ops {
		e := f.h.pop()
		f.seq++
		f.h.push(floorEvent{at: e.at + 1 + f.rnd(), seq: f.seq, h: e.h})
		if next != nil {
			next()
		}
	}
}

// floorEvent is an event of the floor heap, of the engine's event's size.
type floorEvent struct {
	at  int64
	seq uint64
	h   any
}

func (a *floorEvent) before(b *floorEvent) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// floorHeap is a plain typed binary min-heap, of its own rather than
// heap.go's generic one, which costs 1.5x as much an operation (141 ns
// against 91 on the probe's queue): the floor stays the cost of a typed
// heap, as the engine's queue is.
type floorHeap []floorEvent

func (q *floorHeap) push(e floorEvent) {
	h := append(*q, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*q = h
}

func (q *floorHeap) pop() floorEvent {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = floorEvent{}
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if l+1 < n && h[l+1].before(&h[l]) {
			c = l + 1
		}
		if !h[c].before(&h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	*q = h
	return top
}
