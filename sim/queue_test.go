package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// tagged is a handler that says which event it is.
type tagged struct {
	seq int
	out *[]int
}

func (t *tagged) Fire() { *t.out = append(*t.out, t.seq) }

// TestQueueOrder schedules events at random times, a few distinct ones and
// many, some at the current instant while it runs, and checks that the
// engine's loop runs them by time and then in the order they were
// scheduled.
func TestQueueOrder(t *testing.T) {
	for _, spread := range []int{1, 3, 20, 1000} {
		rng := rand.New(rand.NewPCG(uint64(spread), 1))
		e := &Engine{net: &alphaBetaNet{}}
		type ev struct {
			at  Time
			seq int
		}
		var want []ev
		var got []int
		seq := 0
		var schedule func(n int)
		schedule = func(n int) {
			for range n {
				at := e.now + Time(rng.IntN(spread))
				if rng.IntN(4) == 0 {
					at = e.now
				}
				want = append(want, ev{at, seq})
				h := &tagged{seq: seq, out: &got}
				seq++
				if rng.IntN(3) == 0 && seq < 20000 {
					e.At(at, handlerFunc(func() { h.Fire(); schedule(2) }))
				} else {
					e.At(at, h)
				}
			}
		}
		schedule(500)
		e.loop()
		slices.SortStableFunc(want, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
		if len(got) != len(want) {
			t.Fatalf("spread %d: %d events ran, %d scheduled", spread, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i].seq {
				t.Fatalf("spread %d: event %d ran %dth, want %d", spread, got[i], i, want[i].seq)
			}
		}
	}
}

type handlerFunc func()

func (f handlerFunc) Fire() { f() }
