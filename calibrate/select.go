package calibrate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ModelChoice is one candidate model of SelectModel: its error on points
// it did not fit, and its fit on every sample.
type ModelChoice struct {
	Model string
	// HeldOut is the median |predicted/measured - 1| over every sample,
	// each predicted by the model fitted without the fold it is in: the
	// error the model makes on points it did not fit, by which the
	// candidates are ranked. HeldOutMean is their mean.
	HeldOut, HeldOutMean float64
	// Fit is the model fitted on every sample; Err says why a candidate
	// has none, or failed in a fold (a *RefusedError, a parameter Hold
	// gives that it lacks, ...). A candidate with Err is ranked last.
	Fit *Fit
	Err error
}

// defaultFolds is SelectModel's number of folds by default.
const defaultFolds = 5

// SelectModel fits each of models (names Calibrate accepts) to samples
// and ranks them by their error on points they did not fit (K-fold cross
// validation, K = opt.Folds, default 5): the samples, in the order of
// their collective, algorithm, world size and size, are dealt into K
// folds in turn, so that every fold holds points of every algorithm and
// of sizes across the range; each fold's samples are predicted by the
// model fitted on the other folds, and the candidate's error is the
// median over all samples of |predicted/measured - 1|. A model with more
// parameters fits its own points at least as well; only its error on
// points it did not see says whether the parameters follow the machine
// or its noise. The best first; candidates whose error ties (to a tenth of
// a percentage point) keep the order given. Each candidate is also fitted
// on every sample (ModelChoice.Fit), which is what the best one's
// calibrated scenario uses.
//
// opt.Hold gives each model the held values of the parameters and
// settings it has; a name no candidate has is an error. SelectModel fails
// only when no candidate has a fit, with the first candidate's error.
func SelectModel(samples []Sample, models []string, opt Options) ([]ModelChoice, error) {
	if len(models) == 0 {
		return nil, errors.New("calibrate: no model to select from")
	}
	specs := make([]*ModelSpec, len(models))
	for i, name := range models {
		spec, err := LookupModel(name)
		if err != nil {
			return nil, err
		}
		specs[i] = spec
	}
	for name := range opt.Hold {
		if !slices.ContainsFunc(specs, func(s *ModelSpec) bool { return s.Param(name) >= 0 || s.Setting(name) >= 0 }) {
			return nil, fmt.Errorf("calibrate: no model of %s has a parameter %q", strings.Join(models, ", "), name)
		}
	}
	k := opt.Folds
	if k <= 0 {
		k = defaultFolds
	}
	folds := foldsOf(samples, k)
	out := make([]ModelChoice, len(models))
	for i, spec := range specs {
		mopt := opt
		mopt.Hold = map[string]float64{}
		for name, v := range opt.Hold {
			if spec.Param(name) >= 0 || spec.Setting(name) >= 0 {
				mopt.Hold[name] = v
			}
		}
		c := &out[i]
		c.Model = spec.Name
		c.Fit, c.Err = Calibrate(samples, spec.Name, mopt)
		if c.Err == nil {
			c.HeldOut, c.HeldOutMean, c.Err = crossValidate(samples, folds, spec, mopt)
		}
	}
	slices.SortStableFunc(out, func(a, b ModelChoice) int {
		switch {
		case a.Err != nil && b.Err != nil:
			return 0
		case a.Err != nil:
			return 1
		case b.Err != nil:
			return -1
		}
		return cmp.Compare(math.Round(a.HeldOut*1000), math.Round(b.HeldOut*1000))
	})
	if out[0].Err != nil {
		for _, c := range out {
			if c.Model == models[0] {
				return out, c.Err
			}
		}
	}
	return out, nil
}

// foldsOf deals the samples' indices into k folds, in the order of their
// collective, algorithm, world size and size; fewer folds when there are
// fewer than k samples.
func foldsOf(samples []Sample, k int) [][]int {
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := samples[a], samples[b]
		return cmp.Or(cmp.Compare(x.Collective, y.Collective), cmp.Compare(x.Algorithm, y.Algorithm),
			cmp.Compare(x.World, y.World), cmp.Compare(x.Bytes, y.Bytes))
	})
	k = min(k, len(samples))
	folds := make([][]int, k)
	for n, i := range idx {
		folds[n%k] = append(folds[n%k], i)
	}
	return folds
}

// crossValidate fits spec on all folds but one in turn and predicts the
// one left out: the median and mean of |predicted/measured - 1| over every
// sample so predicted.
func crossValidate(samples []Sample, folds [][]int, spec *ModelSpec, opt Options) (median, mean float64, err error) {
	if len(folds) < 2 {
		return 0, 0, errors.New("calibrate: too few samples to hold any out")
	}
	var errs []float64
	for f, test := range folds {
		var train, held []Sample
		for g, fold := range folds {
			for _, i := range fold {
				if g == f {
					held = append(held, samples[i])
				} else {
					train = append(train, samples[i])
				}
			}
		}
		fit, err := Calibrate(train, spec.Name, opt)
		if err != nil {
			return 0, 0, fmt.Errorf("fitted without fold %d of %d (%d samples): %w", f+1, len(folds), len(test), err)
		}
		pred, err := Predict(held, fit, opt)
		if err != nil {
			return 0, 0, err
		}
		for i, s := range held {
			if s.Time > 0 && !math.IsNaN(pred[i]) {
				errs = append(errs, math.Abs(pred[i]/s.Time-1))
			}
		}
	}
	if len(errs) == 0 {
		return 0, 0, errors.New("calibrate: no held-out sample could be predicted")
	}
	slices.Sort(errs)
	for _, e := range errs {
		mean += e
	}
	return (errs[(len(errs)-1)/2] + errs[len(errs)/2]) / 2, mean / float64(len(errs)), nil
}

// Predict simulates samples on a fitted model: each one's time in
// seconds, NaN for a sample Calibrate would leave out (0 bytes, but
// barriers and point-to-point ones).
func Predict(samples []Sample, fit *Fit, opt Options) ([]float64, error) {
	out := make([]float64, len(samples))
	var sims []simulator
	var at []int
	for i, s := range samples {
		out[i] = math.NaN()
		if s.Bytes == 0 && s.Collective != "barrier" && s.Collective != PointToPoint {
			continue
		}
		x, err := newSimulator(s, fit.Model, opt.Tuning)
		if err != nil {
			return nil, fmt.Errorf("calibrate: %s (%s): %v", s, s.Source, err)
		}
		sims, at = append(sims, x), append(at, i)
	}
	ts, err := simulateAll(sims, fit.SimModel())
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = ts[j]
	}
	return out, nil
}
