package derive_test

import (
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/sweep"
)

func TestMeasuredCrossover(t *testing.T) {
	sizes := []int{1000, 2000, 4000, 8000, 16000, 32000}
	for _, c := range []struct {
		name         string
		below, above []float64
		hint         float64
		lo, hi       int
		side         string
		disagree     int
		bytes        float64 // 0: not checked
	}{
		{"clean", []float64{1, 1, 1, 2, 4, 8}, []float64{2, 2, 2, 2.5, 2, 2}, 0, 8000, 16000, "", 0, 0},
		// ln(below/above) goes from ln(1/2) at 2000 to ln(4/1) at 4000:
		// zero a third of the way on the log scale, at 2000·2^(1/3).
		// (Interpolating the times linearly in the size, as live read
		// measured crossovers before, put it at 2500.)
		{"interpolated", []float64{1, 1, 4, 4, 4, 4}, []float64{4, 2, 1, 1, 1, 1}, 0, 2000, 4000, "", 0, 2000 * math.Cbrt(2)},
		// Power laws, straight lines on log-log axes, cross exactly
		// where the rule says: 1e-5·n against 1e-3·n^0.5 at 10^4.
		{"power laws", powers(sizes, 1e-5, 1), powers(sizes, 1e-3, 0.5), 0, 8000, 16000, "", 0, 10000},
		// Affine times, 10 + n/1000 against 20 + n/2000, cross at 20000;
		// the log-log rule reads 20038 from the sizes 16000 and 32000
		// (the linear rule read 20000).
		{"affine", []float64{11, 12, 14, 18, 26, 42}, []float64{20.5, 21, 22, 24, 28, 36}, 0, 16000, 32000, "", 0, 0},
		// One noisy size above the crossover does not make three.
		{"noisy", []float64{1, 1, 1, 3, 1, 3}, []float64{2, 2, 2, 2, 2, 2}, 0, 4000, 8000, "", 1, 0},
		{"below everywhere", []float64{1, 1, 1, 1, 1, 1}, []float64{2, 2, 2, 2, 2, 2}, 0, 32000, 32000, "below", 0, 0},
		{"above everywhere", []float64{3, 3, 3, 3, 3, 3}, []float64{2, 2, 2, 2, 2, 2}, 0, 1000, 1000, "above", 0, 0},
		// Alternating: every boundary is as bad; the hint picks.
		{"hinted", []float64{1, 3, 1, 3, 1, 3}, []float64{2, 2, 2, 2, 2, 2}, 20000, 16000, 32000, "", 2, 0},
	} {
		got := derive.MeasuredCrossover(sizes, c.below, c.above, c.hint)
		if got.Lo != c.lo || got.Hi != c.hi || got.Side != c.side || got.Disagree != c.disagree ||
			c.side == "" && !(got.Bytes >= float64(got.Lo) && got.Bytes <= float64(got.Hi)) ||
			c.bytes != 0 && math.Abs(got.Bytes/c.bytes-1) > 1e-9 {
			t.Errorf("%s: %+v, want [%d, %d] side %q disagree %d bytes %g", c.name, got, c.lo, c.hi, c.side, c.disagree, c.bytes)
		}
	}
	affine := derive.MeasuredCrossover(sizes, []float64{11, 12, 14, 18, 26, 42}, []float64{20.5, 21, 22, 24, 28, 36}, 0)
	if math.Abs(affine.Bytes/20000-1) > 0.002 {
		t.Errorf("affine: %g, want 20000 within 0.2%%", affine.Bytes)
	}
}

func powers(sizes []int, c, k float64) []float64 {
	out := make([]float64, len(sizes))
	for i, n := range sizes {
		out[i] = c * math.Pow(float64(n), k)
	}
	return out
}

// TestOneRule: a crossover read from measurements (MeasuredCrossover) is
// the one Derive reads from a sweep of the same times.
func TestOneRule(t *testing.T) {
	sizes := []int{1000, 2000, 4000, 8000, 16000, 32000}
	below := []float64{11, 12, 14, 18, 26, 42}
	above := []float64{20.5, 21, 22, 24, 28, 36}
	var rows []sweep.Row
	for i, n := range sizes {
		rows = append(rows, row("allreduce", "recursive_doubling", 4, n, below[i]), row("allreduce", "ring", 4, n, above[i]))
	}
	res, err := derive.Derive(rows, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Crossovers) != 1 {
		t.Fatalf("crossovers %+v", res.Crossovers)
	}
	predicted := res.Crossovers[0]
	measured := derive.MeasuredCrossover(sizes, below, above, 0)
	if measured.Bytes != predicted.Bytes || measured.Lo != predicted.Lo || measured.Hi != predicted.Hi {
		t.Errorf("measured %+v, derived %+v: want one crossover", measured, predicted)
	}
}
