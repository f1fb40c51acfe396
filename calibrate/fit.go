package calibrate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// Options tune Calibrate.
type Options struct {
	// MaxIter bounds the Gauss-Newton steps of each fit (default 30).
	MaxIter int
	// Tuning is the table "auto" samples select by (nil: nexar's).
	Tuning *algos.Tuning
	// Hold fixes parameters at the values given, by name or symbol
	// ("latency", "bandwidth"; seconds, or seconds per byte for the
	// PerByte ones): the fit determines the others. It also gives the
	// model's settings (thresholds, in bytes; -1 for "never"), which are
	// held otherwise at the value the samples' runs recorded (see
	// Sample.Transport), else at their Default. With several models
	// (SelectModel), a name applies to the models that have it.
	Hold map[string]float64
	// Folds is the number of parts SelectModel splits the samples into
	// to measure each model's error on points it did not fit (default 5).
	Folds int
	// LeastSquares weighs every sample alike, as plain least squares on
	// relative error does, instead of giving less weight to the samples
	// the model cannot follow.
	LeastSquares bool
}

// Estimate is one parameter of a fitted model.
type Estimate struct {
	Param
	// Value is in seconds, or seconds per byte for PerByte parameters.
	Value float64
	// Held is set when the fit did not determine the value: it was given
	// (Options.Hold; Why is "given"), or the samples cannot determine it
	// and it is held at its Default (Why says why).
	Held bool
	Why  string
	// Share is the largest part of a sample's predicted time that the
	// parameter accounts for (0.3: 30%), over the samples that weigh in
	// the fit: how much the samples say about it.
	Share float64
}

// SettingValue is a model's setting as a fit held it.
type SettingValue struct {
	Setting
	Value int
	// Given is set when Options.Hold gave the value; else Recorded says
	// which runs recorded it ("recorded by the run (FILE)": see
	// Sample.Transport), or it is the Default.
	Given    bool
	Recorded string
}

// How says where the value comes from: "given", "given: " and the runs
// that recorded it, or "held: " and why the Default.
func (v SettingValue) How() string {
	switch {
	case v.Given:
		return "given"
	case v.Recorded != "":
		return "given: " + v.Recorded
	}
	return "held: " + v.Why
}

// Fit is a calibrated model.
type Fit struct {
	Model *ModelSpec
	// Estimates are the parameters in the order of Model.Params, and
	// Values their values.
	Estimates []Estimate
	Values    []float64
	// Settings are the model's settings, in the order of Model.Settings.
	Settings []SettingValue
	// Samples are the samples fitted, Predicted the model's time for
	// each and Weights their weight in the fit (1 for all with
	// Options.LeastSquares; less for samples the model does not follow).
	Samples   []Sample
	Predicted []float64
	Weights   []float64
	// Iterations is the number of Gauss-Newton steps taken, over every
	// reweighting and refit.
	Iterations int
	// Notes say what the fit left out, held or weighed less, and why.
	Notes []string
}

// SimModel is the calibrated model.
func (f *Fit) SimModel() sim.Model { return f.Model.Build(f.Values, settingValues(f.Settings)) }

// settingValues are the values of settings.
func settingValues(settings []SettingValue) []int {
	out := make([]int, len(settings))
	for i, s := range settings {
		out[i] = s.Value
	}
	return out
}

// settingsOf resolves spec's settings: the value hold gives, else the one
// the samples' runs recorded, else the Default; with the notes that says.
func settingsOf(spec *ModelSpec, hold map[string]float64, samples []Sample) ([]SettingValue, []string, error) {
	out := make([]SettingValue, len(spec.Settings))
	var notes []string
	for i, st := range spec.Settings {
		out[i] = SettingValue{Setting: st, Value: st.Default}
		if err := holdSetting(&out[i], hold); err != nil {
			return nil, nil, err
		}
		n, err := applyRecorded(&out[i], samples)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, n...)
	}
	return out, notes, nil
}

// holdSetting gives v the value hold has for it, if any.
func holdSetting(v *SettingValue, hold map[string]float64) error {
	st := v.Setting
	h, ok := hold[st.Name]
	if !ok {
		return nil
	}
	n := int(h)
	if float64(n) != h || (n < st.Min && !(st.Never && n == -1)) {
		want := fmt.Sprintf("a whole number of bytes, at least %d", st.Min)
		if st.Never {
			want += `, or -1 ("never")`
		}
		return fmt.Errorf("calibrate: %s held at %g: want %s", st.Name, h, want)
	}
	v.Value, v.Given = n, true
	return nil
}

// heldGiven is the Why of parameters Options.Hold gives.
const heldGiven = "given"

// RefusedError is a fit that determines nothing useful: a parameter the
// model needs is one the samples cannot determine. Reason says which and
// what would help.
type RefusedError struct {
	Model  string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("calibrate: no %s model from these samples: %s", e.Model, e.Reason)
}

// Robust weighting (Tukey's biweight) of relative residuals: samples more
// than biweightC scales off weigh nothing. The scale is the residuals'
// median absolute value (as a standard deviation), at least minScale: a
// benchmark's own noise.
const (
	biweightC = 4.685
	minScale  = 0.02
	// minShare is the least part of some sample's time a parameter must
	// account for to be determined by the samples.
	minShare = 0.05
)

// Calibrate fits the parameters of the named model (one of ModelNames:
// "alpha-beta", "realnet", ...) to samples by least squares on relative
// error, its Settings held (at opt.Hold's values, else at those the
// samples' runs recorded, else at their Default): it minimises
// the sum over samples of w_i ((predicted - measured) / measured)², so
// that an 8-byte and a 64 MiB point weigh alike. Predictions are
// simulations of each sample's algorithm on the model (not closed
// forms), so every algorithm of the catalogue can be fitted, including
// those whose time no formula gives; see problem.gaussNewton for the
// solver.
//
// The weights w_i are 1 at first; then, unless opt.LeastSquares, the
// fit is repeated with Tukey's biweight of each sample's residual (scale:
// the residuals' median absolute value, at least 2%) until the weights
// settle. A model of two parameters cannot follow a benchmark whose
// library changes protocol with size (NCCL's LL, LL128 and Simple): its
// least-squares fit spreads the misfit over every sample and lands
// between the regimes, its bandwidth well under the peak. The robust fit
// follows the samples where each parameter dominates, weighs the
// samples between them less, and its Notes name them.
//
// A model's settings (thresholds) are held at the values the samples'
// runs recorded (Sample.Transport: realnet's bulk_threshold and
// eager_threshold as they are; the eager_limit of the protocol models at
// the eager threshold in eager mode, else at the bulk threshold), and
// Fit.Settings says so. Runs that recorded values that disagree are an
// error, unless opt.Hold gives the setting, which wins over a recorded
// value (a note says it overrides it). A model without settings does not
// look at the thresholds.
//
// Samples of zero bytes (but barriers' and point-to-point ones) are left
// out: nothing moves, and the model predicts no time. A parameter the
// samples cannot determine is found two ways: its derivative moves
// every prediction as another's does (only a combination of the two is
// determined), or it accounts for less than 5% of every sample's
// predicted time. An optional one (gamma, LogGP's o and g) is then held
// at its Default and the fit repeated; a required one (latency,
// bandwidth) makes the fit fail with a *RefusedError, unless opt.Hold
// gives its value.
func Calibrate(samples []Sample, model string, opt Options) (*Fit, error) {
	spec, err := LookupModel(model)
	if err != nil {
		return nil, err
	}
	k := len(spec.Params)
	held := map[int]bool{}
	why := make([]string, k)
	var notes []string
	kept := make([]Sample, 0, len(samples))
	var zero []Sample
	for _, s := range samples {
		if s.Bytes == 0 && s.Collective != "barrier" && s.Collective != PointToPoint {
			zero = append(zero, s)
			continue
		}
		kept = append(kept, s)
	}
	if len(zero) > 0 {
		notes = append(notes, fmt.Sprintf("%d sample(s) of 0 bytes left out (%s): nothing moves, and the model predicts no time", len(zero), zero[0].Source))
	}
	if len(kept) == 0 {
		return nil, errors.New("calibrate: no samples to calibrate with")
	}
	maxIter := opt.MaxIter
	if maxIter <= 0 {
		maxIter = 30
	}
	settings, settingNotes, err := settingsOf(spec, opt.Hold, kept)
	if err != nil {
		return nil, err
	}
	notes = append(notes, settingNotes...)
	pr := &problem{spec: spec, settings: settings, samples: kept, sims: make([]simulator, len(kept)), maxIter: maxIter}
	for i, s := range kept {
		if !(s.Time > 0) || math.IsInf(s.Time, 0) {
			return nil, fmt.Errorf("calibrate: %s (%s): time %g s cannot be fitted", s, s.Source, s.Time)
		}
		if pr.sims[i], err = newSimulator(s, spec, opt.Tuning); err != nil {
			return nil, fmt.Errorf("calibrate: %s (%s): %v", s, s.Source, err)
		}
	}
	theta := initialGuess(spec, kept)
	for _, name := range slices.Sorted(maps.Keys(opt.Hold)) {
		v := opt.Hold[name]
		if spec.Setting(name) >= 0 {
			continue
		}
		j := spec.Param(name)
		if j < 0 {
			return nil, fmt.Errorf("calibrate: the %s model has no parameter %q (want %s)", spec.Name, name, spec.ParamNames())
		}
		if !(v >= spec.Params[j].Min) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("calibrate: %s held at %g: want at least %g", name, v, spec.Params[j].Min)
		}
		theta[j], held[j], why[j] = v, true, heldGiven
	}
	iterations := 0
	for {
		sol, err := pr.gaussNewton(theta, held, !opt.LeastSquares)
		if err != nil {
			return nil, err
		}
		iterations += sol.iterations
		found, refusal := pr.undetermined(sol, held)
		if refusal != "" {
			return nil, &RefusedError{Model: spec.Name, Reason: refusal}
		}
		if len(found) == 0 {
			f := pr.fit(sol, held, why)
			f.Iterations = iterations
			f.Notes = append(notes, f.Notes...)
			if sol.stalled {
				f.Notes = append(f.Notes, "the linearised problem had no solution within the bounds; the fit stopped early")
			}
			return f, nil
		}
		theta = sol.theta
		for _, u := range found {
			j := u.param
			if !u.keep && (!u.unused || !spec.Params[j].Required) {
				theta[j] = spec.Params[j].Default
			}
			held[j], why[j] = true, u.why
		}
	}
}

// biweights are Tukey's biweights of the samples' relative residuals.
func biweights(samples []Sample, predicted []float64) []float64 {
	r := make([]float64, len(samples))
	abs := make([]float64, len(samples))
	for i, s := range samples {
		r[i] = predicted[i]/s.Time - 1
		abs[i] = math.Abs(r[i])
	}
	slices.Sort(abs)
	if len(abs) == 0 {
		return nil
	}
	scale := math.Max(1.4826*(abs[(len(abs)-1)/2]+abs[len(abs)/2])/2, minScale)
	c := biweightC * scale
	w := make([]float64, len(r))
	for i, x := range r {
		if u := x / c; math.Abs(u) < 1 {
			w[i] = (1 - u*u) * (1 - u*u)
		}
	}
	return w
}

// fit is the Fit of a solution.
func (pr *problem) fit(sol *solution, held map[int]bool, why []string) *Fit {
	spec := pr.spec
	f := &Fit{Model: spec, Values: sol.theta, Settings: pr.settings, Samples: pr.samples, Predicted: sol.predicted, Weights: slices.Clone(pr.weights)}
	shares := pr.shares(sol)
	for j, p := range spec.Params {
		e := Estimate{Param: p, Value: sol.theta[j], Held: held[j], Why: why[j], Share: shares[j]}
		f.Estimates = append(f.Estimates, e)
		if e.Held && e.Why != heldGiven {
			f.Notes = append(f.Notes, fmt.Sprintf("%s (%s) is held at %s: %s", p.Name, p.Symbol, formatValue(p, e.Value), e.Why))
		}
	}
	for _, st := range f.Settings {
		if st.Given {
			continue
		}
		if st.Recorded != "" {
			f.Notes = append(f.Notes, fmt.Sprintf("%s is %s, %s (hold another with %s=SIZE)", st.Name, formatSetting(st.Value), st.Recorded, st.Name))
			continue
		}
		f.Notes = append(f.Notes, fmt.Sprintf("%s is held at %s: %s (hold another with %s=SIZE)", st.Name, formatSetting(st.Value), st.Why, st.Name))
	}
	if n := noteDownweighted(pr.samples, sol.predicted, pr.weights); n != "" {
		f.Notes = append(f.Notes, n)
	}
	return f
}

// noteDownweighted says which samples the robust fit weighed less.
func noteDownweighted(samples []Sample, predicted, weights []float64) string {
	lo, hi, n := math.MaxInt, -1, 0
	least, most := math.Inf(1), 0.0 // measured / predicted
	one := ""
	for i, s := range samples {
		if weights[i] >= 0.5 {
			continue
		}
		n++
		one = fmt.Sprintf("%v, %s", s, s.Source)
		lo, hi = min(lo, s.Bytes), max(hi, s.Bytes)
		r := s.Time / predicted[i]
		least, most = math.Min(least, r), math.Max(most, r)
	}
	if n == 0 {
		return ""
	}
	what := fmt.Sprintf("sizes %s to %s, measured %.2g to %.2g times what it predicts", formatSize(lo), formatSize(hi), least, most)
	if n == 1 {
		what = fmt.Sprintf("%s, measured %.2g times what it predicts", one, least)
	}
	return fmt.Sprintf("the model does not follow %d of %d samples (%s): they weigh less in the fit, "+
		"which follows the samples where each parameter dominates (a library that changes protocol with size does this; see the residuals)",
		n, len(samples), what)
}

// initialGuess starts the fit from what the smallest and largest samples
// say: the smallest time over its critical path of about 2(p-1) messages
// gives the latency, the largest bytes per second the bandwidth.
func initialGuess(spec *ModelSpec, samples []Sample) []float64 {
	small, large := samples[0], samples[0]
	for _, s := range samples {
		if s.Bytes < small.Bytes || (s.Bytes == small.Bytes && s.Time < small.Time) {
			small = s
		}
		if s.Bytes > large.Bytes {
			large = s
		}
	}
	alpha := small.Time / float64(2*max(small.World-1, 1))
	beta := 1e-9
	if large.Bytes > 0 {
		beta = math.Max(large.Time/(2*float64(large.Bytes)), 1e-12)
	}
	th := make([]float64, len(spec.Params))
	for i, p := range spec.Params {
		switch {
		case p.Factor:
			th[i] = p.Default
		case p.Symbol == "gamma":
			th[i] = beta / 4
		case p.PerByte:
			th[i] = beta
		case p.Symbol == "o":
			th[i] = alpha / 4
		case p.Symbol == "g":
			th[i] = 0
		default:
			th[i] = alpha
		}
	}
	return th
}
