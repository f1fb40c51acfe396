package derive

import (
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/units"
)

// Boundary is where the faster of two variants changes, as read from
// measured times at a set of sizes (MeasuredCrossover).
type Boundary struct {
	// Bytes is the crossover size: interpolated between Lo and Hi by the
	// rule of the predicted crossovers (see the package doc), else their
	// geometric mean. NaN when the same variant wins at every size (see
	// Side).
	Bytes  float64
	Lo, Hi int
	// Side is "" for a crossover within the sizes, "below" when Below won
	// everywhere (the crossover is above the largest size), "above" when
	// Above won everywhere (it is below the smallest).
	Side string
	// Disagree is how many sizes the crossover misclassifies: sizes under
	// it where Above was faster and over it where Below was. 0 for a
	// clean crossover; noise shows here.
	Disagree int
}

func (c Boundary) String() string {
	switch c.Side {
	case "below":
		return fmt.Sprintf("> %s", units.FormatBytesExact(int64(c.Lo)))
	case "above":
		return fmt.Sprintf("< %s", units.FormatBytesExact(int64(c.Hi)))
	}
	return units.FormatBytesG(c.Bytes)
}

// MeasuredCrossover finds the crossover of two variants from their times
// at ascending sizes: the boundary that the fewest sizes disagree with
// (Below faster under it, Above over it), the one nearest hint (a
// predicted size; 0 for none) among equally good ones, interpolated where
// ln(below/above) crosses zero by the rule of the predicted crossovers
// (log-time in log-size: see the package doc). Measured times are noisy:
// a single crossover that a few sizes contradict is a better reading of
// them than every sign change.
func MeasuredCrossover(sizes []int, below, above []float64, hint float64) Boundary {
	m := len(sizes)
	f := make([]float64, m)
	for i := range sizes {
		f[i] = math.Log(below[i] / above[i])
	}
	best, cost := fewestDisagreeing(sizes, f, hint)
	c := Boundary{Disagree: cost, Bytes: math.NaN()}
	switch best {
	case 0:
		c.Side, c.Hi, c.Lo = "above", sizes[0], sizes[0]
		return c
	case m:
		c.Side, c.Lo, c.Hi = "below", sizes[m-1], sizes[m-1]
		return c
	}
	c.Lo, c.Hi = sizes[best-1], sizes[best]
	if i := best - 1; f[i] <= 0 && f[i+1] >= 0 && f[i] != f[i+1] {
		c.Bytes = crossing(c.Lo, c.Hi, f[i], f[i+1])
	} else {
		c.Bytes = math.Sqrt(float64(c.Lo) * float64(c.Hi))
	}
	return c
}

// fewestDisagreeing returns the boundary j (the crossover lies before
// sizes[j]; 0 and len(sizes) for none within them) that the fewest of
// the signs f (ln(below/above)) contradict, and how many do; among
// equally good ones, the one nearest hint on the log scale (hint 0: the
// first).
func fewestDisagreeing(sizes []int, f []float64, hint float64) (int, int) {
	m := len(sizes)
	dist := func(j int) float64 {
		if hint <= 0 {
			return 0
		}
		var at float64
		switch j {
		case 0:
			at = float64(sizes[0])
		case m:
			at = float64(sizes[m-1])
		default:
			at = math.Sqrt(float64(sizes[j-1]) * float64(sizes[j]))
		}
		return math.Abs(math.Log(at / hint))
	}
	best, bestCost := -1, math.MaxInt
	for j := 0; j <= m; j++ {
		cost := 0
		for i := range m {
			if i < j && f[i] > 0 || i >= j && f[i] < 0 {
				cost++
			}
		}
		if cost < bestCost || cost == bestCost && dist(j) < dist(best) {
			best, bestCost = j, cost
		}
	}
	return best, bestCost
}
