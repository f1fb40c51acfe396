package nexarlive

import (
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/results"
)

// crossoverBand reads from a nexar-live results file where the faster of
// two variants changes, as far as the run's own jitter can tell: at each
// size both ran, the two differ beyond their jitter when |ln(t_below /
// t_above)| exceeds the sum of their relative spreads (half the range of
// the repeats over the median). lo is the largest size at which below is
// faster beyond jitter (the smallest size if none), hi the smallest size
// above lo at which above is faster beyond jitter (the largest if none):
// the crossover lies in [lo, hi], and a bound on it is only as tight as
// that band.
func crossoverBand(t *testing.T, file, below, above string) (lo, hi int) {
	t.Helper()
	tab, err := results.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ b, a *results.Row }
	bySize := map[int]*pair{}
	var sizes []int
	for i := range tab.Rows {
		r := &tab.Rows[i]
		if r.Algorithm != below && r.Algorithm != above {
			continue
		}
		p := bySize[r.Bytes]
		if p == nil {
			p = &pair{}
			bySize[r.Bytes] = p
			sizes = append(sizes, r.Bytes)
		}
		if r.Algorithm == below {
			p.b = r
		} else {
			p.a = r
		}
	}
	var sure []int // -1: below faster beyond jitter, 1: above, 0: within it
	var at []int
	for _, n := range sizes {
		p := bySize[n]
		if p.a == nil || p.b == nil || p.a.Time <= 0 || p.b.Time <= 0 {
			continue
		}
		f := math.Log(p.b.Time / p.a.Time)
		jitter := p.b.Spread/p.b.Time + p.a.Spread/p.a.Time
		s := 0
		if f < -jitter {
			s = -1
		} else if f > jitter {
			s = 1
		}
		sure, at = append(sure, s), append(at, n)
	}
	if len(at) < 2 {
		t.Fatalf("%s: %s and %s both ran at %d sizes, want 2 or more", file, below, above, len(at))
	}
	lo, hi = at[0], at[len(at)-1]
	k := -1
	for i, s := range sure {
		if s < 0 {
			lo, k = at[i], i
		}
	}
	for i := k + 1; i < len(at); i++ {
		if sure[i] > 0 {
			hi = at[i]
			break
		}
	}
	return lo, hi
}
