package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Residual is one sample beside the calibrated model's time for it.
type Residual struct {
	Sample
	// Predicted is the model's time in seconds.
	Predicted float64
}

// Ratio is Predicted / measured time: above 1 the model is pessimistic,
// below 1 optimistic.
func (r Residual) Ratio() float64 { return r.Predicted / r.Time }

// RelErr is |Predicted/measured - 1|, the error the fit minimises.
func (r Residual) RelErr() float64 { return math.Abs(r.Ratio() - 1) }

// Residuals returns every sample beside the model's time for it.
func (f *Fit) Residuals() []Residual {
	rs := make([]Residual, len(f.Samples))
	for i, s := range f.Samples {
		rs[i] = Residual{Sample: s, Predicted: f.Predicted[i]}
	}
	return rs
}

// Summary says how far the model's times are from the samples'.
type Summary struct {
	N int
	// Median and Mean of |predicted/measured - 1|.
	Median, Mean float64
	// Worst are the samples of largest error, worst first (at most 5).
	Worst []Residual
}

// Summary summarises the fit's residuals.
func (f *Fit) Summary() Summary {
	rs := f.Residuals()
	s := Summary{N: len(rs)}
	if len(rs) == 0 {
		return s
	}
	errs := make([]float64, len(rs))
	for i, r := range rs {
		errs[i] = r.RelErr()
	}
	s.Mean = stat.Mean(errs, nil)
	slices.Sort(errs)
	s.Median = (errs[(len(errs)-1)/2] + errs[len(errs)/2]) / 2
	slices.SortStableFunc(rs, func(a, b Residual) int { return cmp.Compare(b.RelErr(), a.RelErr()) })
	s.Worst = rs[:min(5, len(rs))]
	return s
}

func (s Summary) String() string {
	return fmt.Sprintf("%d points: median |predicted/measured - 1| = %.1f%%, mean %.1f%%", s.N, 100*s.Median, 100*s.Mean)
}
