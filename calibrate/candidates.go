package calibrate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sweep"
)

// Candidate is the fit of one algorithm assumed for the samples whose
// measurement does not say which ran.
type Candidate struct {
	Algorithm string
	// Fit is the fit with it, or nil; Err says why there is none (a
	// *RefusedError, or no sample's collective has the algorithm).
	Fit *Fit
	Err error
	// Median is the fit's median |predicted/measured - 1| over all its
	// samples, by which candidates are ranked.
	Median float64
	// Ties is set for a candidate whose median is the best one's, to a
	// tenth of a percentage point: the samples do not tell the two apart
	// (on one world size, every algorithm whose time is latency plus
	// bytes times a constant fits alike, with another bandwidth).
	Ties bool
}

// FitCandidates fits the model once for each algorithm of candidates,
// each assumed for every sample that has Assumed set and whose
// collective has an algorithm of that name (a variant such as
// "pipelined_ring(segment=512KiB)" is allowed), and returns the fits,
// the best first: the one whose median |predicted/measured - 1| is
// least, refused fits last; candidates that tie keep the order given.
// It fails only when no candidate gives a fit, with the first
// candidate's error.
func FitCandidates(samples []Sample, model string, candidates []string, opt Options) ([]Candidate, error) {
	if len(candidates) == 0 {
		return nil, errors.New("calibrate: no algorithm to try")
	}
	out := make([]Candidate, 0, len(candidates))
	for _, name := range candidates {
		c := Candidate{Algorithm: name}
		assumed, err := assume(samples, name)
		if err == nil {
			c.Fit, err = Calibrate(assumed, model, opt)
		}
		c.Err = err
		if c.Fit != nil {
			c.Median = c.Fit.Summary().Median
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b Candidate) int {
		switch {
		case a.Fit == nil && b.Fit == nil:
			return 0
		case a.Fit == nil:
			return 1
		case b.Fit == nil:
			return -1
		}
		return cmp.Compare(rank(a), rank(b))
	})
	for i := 1; i < len(out); i++ {
		out[i].Ties = out[i].Fit != nil && out[0].Fit != nil && rank(out[i]) == rank(out[0])
	}
	if out[0].Fit == nil {
		for _, c := range out {
			if c.Algorithm == candidates[0] {
				return out, c.Err
			}
		}
	}
	return out, nil
}

// rank is a candidate's median to a tenth of a percentage point.
func rank(c Candidate) float64 { return math.Round(c.Median * 1000) }

// assume returns samples with algorithm name assumed where it applies.
func assume(samples []Sample, name string) ([]Sample, error) {
	params, err := variantParams(name)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %v", err)
	}
	base := sweep.BaseAlgorithm(name)
	out := slices.Clone(samples)
	changed := 0
	for i, s := range out {
		if !s.Assumed {
			continue
		}
		coll, err := algos.Lookup(s.Collective)
		if err != nil {
			continue
		}
		if _, err := coll.Algorithm(base); err != nil {
			continue
		}
		out[i].Algorithm, out[i].Params = name, params
		changed++
	}
	if changed == 0 {
		return nil, fmt.Errorf("calibrate: no sample of a log has a collective with algorithm %q", base)
	}
	return out, nil
}
