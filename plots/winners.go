package plots

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
)

// TieTolerance is the relative difference below which two times count as
// equal. Closed-form and simulated times of algorithms that cost the same
// (ring and halving-doubling at p = 2, say) differ only by floating-point
// rounding, and a map coloured by rounding noise would be a lie.
const TieTolerance = 1e-9

// Winner is the fastest algorithm at one (world, bytes) sweep point.
type Winner struct {
	Bytes int64
	// Algorithm is the fastest of those that compete (neither auto nor a
	// lossy algorithm, see algos.Competes). Among algorithms within
	// TieTolerance of the fastest time, the simplest wins
	// (algos.CompareSimplicity: fewest parameters, then the catalogue's
	// order), the rule derive's crossovers and tuning tables follow.
	Algorithm string
	Time      float64 // the winner's time, seconds
	// RunnerUp is the second fastest algorithm and RunnerUpTime its time;
	// RunnerUp is "" when only one algorithm ran at this point.
	RunnerUp     string
	RunnerUpTime float64
}

// Margin is how much slower the runner-up is than the winner, as a
// fraction (0.05 = 5%); 0 when there is no runner-up, the two tie, or the
// winner took no time.
func (w Winner) Margin() float64 {
	if w.RunnerUp == "" || w.Time <= 0 || w.RunnerUpTime <= w.Time*(1+TieTolerance) {
		return 0
	}
	return w.RunnerUpTime/w.Time - 1
}

// Tie reports whether the runner-up is within TieTolerance of the winner.
func (w Winner) Tie() bool {
	return w.RunnerUp != "" && w.RunnerUpTime <= w.Time*(1+TieTolerance)
}

// WinnerRow is the winners at every size of one world size, by size.
type WinnerRow struct {
	World int
	Cells []Winner
}

// Winners is the table a crossover map is drawn from: for each world size
// of the collective (ascending) and each message size (ascending), the
// fastest algorithm. Neither [Auto] nor a lossy algorithm (a compressed
// allreduce, which computes something else) is a candidate: they are drawn
// in the other figures, never called best. Points of zero size are
// included (a barrier's winner is still a winner). When several points share
// an (algorithm, world, bytes) key, the fastest counts.
//
// The errors are those of the figure constructors: ErrNoData when no
// algorithm that competes ran, ErrMixedDTypes, an *InvalidPointError.
func Winners(points []Point, collective string) ([]WinnerRow, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, err
	}
	return s.winners()
}

func (s *selection) winners() ([]WinnerRow, error) {
	type key struct {
		world int
		bytes int64
	}
	cand := make([]Point, 0, len(s.points))
	for _, p := range s.points {
		if p.Algorithm != Auto && s.competes(p.Algorithm) {
			cand = append(cand, p)
		}
	}
	if len(cand) == 0 {
		return nil, fmt.Errorf("%w: collective %q has only %q and lossy points", ErrNoData, s.collective, Auto)
	}
	// Group by (world, bytes), fastest first; equal times fall back to the
	// order of simplicity so the table never depends on the input order.
	slices.SortFunc(cand, func(a, b Point) int {
		return cmp.Or(
			cmp.Compare(a.World, b.World),
			cmp.Compare(a.Bytes, b.Bytes),
			cmp.Compare(a.Time, b.Time),
			algos.CompareSimplicity(s.collective, a.Algorithm, b.Algorithm),
		)
	})
	var rows []WinnerRow
	for i := 0; i < len(cand); {
		k := key{cand[i].World, cand[i].Bytes}
		j := i + 1
		for j < len(cand) && (key{cand[j].World, cand[j].Bytes}) == k {
			j++
		}
		g := cand[i:j] // by time, then simplicity
		best := 0
		for t := 1; t < len(g) && g[t].Time <= g[0].Time*(1+TieTolerance); t++ {
			if algos.CompareSimplicity(s.collective, g[t].Algorithm, g[best].Algorithm) < 0 {
				best = t
			}
		}
		w := Winner{Bytes: k.bytes, Algorithm: g[best].Algorithm, Time: g[best].Time}
		if len(g) > 1 {
			ru := 0
			if best == 0 {
				ru = 1
			}
			w.RunnerUp, w.RunnerUpTime = g[ru].Algorithm, g[ru].Time
		}
		if n := len(rows); n == 0 || rows[n-1].World != k.world {
			rows = append(rows, WinnerRow{World: k.world})
		}
		rows[len(rows)-1].Cells = append(rows[len(rows)-1].Cells, w)
		i = j
	}
	return rows, nil
}
