package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// Sample is one measured time of one collective call: what a model is
// calibrated against.
type Sample struct {
	Collective string
	// Algorithm is the variant's name as results name it: "ring",
	// "pipelined_ring(segment=2MiB)"; Params its parameters.
	Algorithm string
	Params    map[string]int
	World     int
	// Bytes is the message size as nccl-tests counts it.
	Bytes int
	DType device.DType
	Op    device.Op
	Root  int
	// Time is the measured time in seconds.
	Time float64
	// Source says where the sample comes from: "file:line".
	Source string
}

func (s Sample) String() string {
	return fmt.Sprintf("%s/%s p=%d %s", s.Collective, s.Algorithm, s.World, plots.FormatBytes(float64(s.Bytes)))
}

// SamplesFromRows turns results rows (of nexar-live, or of nexar-sim)
// into samples; source names the file.
func SamplesFromRows(rs []sweep.Row, source string) ([]Sample, error) {
	out := make([]Sample, 0, len(rs))
	for i, r := range rs {
		params, err := sweep.ParseParams(r.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", source, i+1, err)
		}
		dt, err := device.ParseDType(r.DType)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", source, i+1, err)
		}
		op := device.Sum
		if r.Op != "" {
			if op, err = device.ParseOp(r.Op); err != nil {
				return nil, fmt.Errorf("%s: row %d: %v", source, i+1, err)
			}
		}
		out = append(out, Sample{
			Collective: r.Collective, Algorithm: r.Algorithm, Params: params, World: r.World, Bytes: r.Bytes,
			DType: dt, Op: op, Time: r.Time, Source: fmt.Sprintf("%s:%d", source, i+2),
		})
	}
	return out, nil
}

// FitParam is one parameter of a model being fitted.
type FitParam struct {
	// Name is the scenario key it is written as ("latency", "bandwidth",
	// ...) and Symbol the model's letter ("alpha", "G", ...).
	Name, Symbol string
	// PerByte is set for parameters in seconds per byte (written as
	// bandwidths, 1/value); the others are durations in seconds.
	PerByte bool
	// floor is the smallest value the parameter may take.
	floor float64
	// step is the least finite-difference step.
	step float64
}

// ModelSpec is a network model Calibrate can fit: its parameters, and
// how a vector of them becomes a sim.Model.
type ModelSpec struct {
	Name   string
	Params []FitParam
	Build  func(theta []float64) sim.Model
}

// rate turns seconds per byte into bytes per second, infinite for 0.
func rate(perByte float64) float64 {
	if perByte <= 0 {
		return math.Inf(1)
	}
	return 1 / perByte
}

// Models Calibrate can fit, by scenario model name.
var fitModels = []ModelSpec{
	{
		Name: "alpha-beta",
		Params: []FitParam{
			{Name: "latency", Symbol: "alpha", floor: 0, step: 1e-7},
			{Name: "bandwidth", Symbol: "beta", PerByte: true, floor: 1e-15, step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, floor: 0, step: 1e-13},
		},
		Build: func(th []float64) sim.Model {
			return sim.AlphaBeta{Latency: sim.FromSeconds(th[0]), Bandwidth: rate(th[1]), ReduceBandwidth: rate(th[2])}
		},
	},
	{
		Name: "loggp",
		Params: []FitParam{
			{Name: "latency", Symbol: "L", floor: 0, step: 1e-7},
			{Name: "overhead", Symbol: "o", floor: 0, step: 1e-7},
			{Name: "gap", Symbol: "g", floor: 0, step: 1e-7},
			{Name: "bandwidth", Symbol: "G", PerByte: true, floor: 1e-15, step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, floor: 0, step: 1e-13},
		},
		Build: func(th []float64) sim.Model {
			return sim.LogGP{Latency: sim.FromSeconds(th[0]), Overhead: sim.FromSeconds(th[1]), Gap: sim.FromSeconds(th[2]),
				Bandwidth: rate(th[3]), ReduceBandwidth: rate(th[4])}
		},
	},
}

// FitModels lists the models Calibrate fits.
func FitModels() []ModelSpec { return slices.Clone(fitModels) }

func fitModel(name string) (*ModelSpec, error) {
	for i := range fitModels {
		if fitModels[i].Name == name {
			return &fitModels[i], nil
		}
	}
	names := make([]string, len(fitModels))
	for i, m := range fitModels {
		names[i] = m.Name
	}
	return nil, fmt.Errorf("calibrate: cannot calibrate model %q (want %s)", name, strings.Join(names, " or "))
}

// Fit is a calibrated model.
type Fit struct {
	Model *ModelSpec
	// Values are the parameters in the order of Model.Params, in seconds
	// or seconds per byte.
	Values []float64
	// Samples are the samples fitted, Predicted the model's time for each.
	Samples   []Sample
	Predicted []float64
	// Iterations is the number of Gauss-Newton steps taken.
	Iterations int
	// Notes say what the data could not determine.
	Notes []string
}

// SimModel is the calibrated model.
func (f *Fit) SimModel() sim.Model { return f.Model.Build(f.Values) }

// CalibrateOptions tune Calibrate.
type CalibrateOptions struct {
	// MaxIter bounds the Gauss-Newton steps (default 30).
	MaxIter int
	// Tuning is the table "auto" samples select by (nil: nexar's).
	Tuning *algos.Tuning
}

// Calibrate fits the parameters of the named model ("alpha-beta" or
// "loggp") to samples by least squares on relative error: it minimises
// the sum over samples of ((predicted - measured) / measured)², so that
// an 8-byte and a 64 MiB point weigh alike. Predictions are simulations
// of each sample's algorithm on the model (not closed forms), so every
// algorithm of the catalogue can be fitted, including those whose time no
// formula gives.
//
// A simulated time is piecewise linear in the parameters (each message
// and reduction adds its alpha, bytes x beta, bytes x gamma along the
// critical path), so the fit is Gauss-Newton: at the current parameters
// the time of each sample is linearised by finite differences of
// simulations, the linear least-squares problem is solved with every
// parameter kept at or above its floor (an active-set search over which
// parameters sit on their floor, each subset solved by QR), and the step
// is taken if it lowers the simulated error (halved otherwise), until the
// parameters stop moving.
func Calibrate(samples []Sample, model string, opt CalibrateOptions) (*Fit, error) {
	spec, err := fitModel(model)
	if err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, errors.New("calibrate: no samples to calibrate with")
	}
	maxIter := opt.MaxIter
	if maxIter <= 0 {
		maxIter = 30
	}
	sims := make([]*sampleSim, len(samples))
	for i, s := range samples {
		if !(s.Time > 0) || math.IsInf(s.Time, 0) {
			return nil, fmt.Errorf("calibrate: %s (%s): time %g s cannot be fitted", s, s.Source, s.Time)
		}
		if sims[i], err = newSampleSim(s, opt.Tuning); err != nil {
			return nil, fmt.Errorf("calibrate: %s (%s): %v", s, s.Source, err)
		}
	}
	f, J, err := gaussNewton(spec, samples, sims, maxIter, 0)
	if err != nil {
		return nil, err
	}
	// Parameters the samples cannot tell apart drift along a flat valley
	// of the objective: hold the second of each such pair at its floor
	// and refit; keep that fit if it is as good.
	pairs := collinear(spec, samples, J)
	var held uint
	for _, pr := range pairs {
		held |= 1 << pr[1]
	}
	var notes []string
	if held != 0 {
		g, _, err := gaussNewton(spec, samples, sims, maxIter, held)
		if err != nil {
			return nil, err
		}
		if objective(samples, g.Predicted) <= objective(samples, f.Predicted)*1.01+1e-12 {
			f = g
			for _, pr := range pairs {
				a, b := spec.Params[pr[0]], spec.Params[pr[1]]
				notes = append(notes, fmt.Sprintf("%s and %s change every prediction alike on these samples: only a combination is determined; "+
					"%s is held at %g and %s carries both (add algorithms or sizes that weigh them differently)", a.Symbol, b.Symbol, b.Symbol, b.floor, a.Symbol))
			}
		}
	}
	f.Notes = append(notes, unexercised(spec, samples, f.Values, held)...)
	return f, nil
}

// gaussNewton fits spec to samples from the initial guess, with the
// parameters of mask held at their floors; it returns the fit and the
// last Jacobian.
func gaussNewton(spec *ModelSpec, samples []Sample, sims []*sampleSim, maxIter int, held uint) (*Fit, *mat.Dense, error) {
	k := len(spec.Params)
	theta := initialGuess(spec, samples)
	for j := range k {
		if held&(1<<j) != 0 {
			theta[j] = spec.Params[j].floor
		}
	}
	eval := func(th []float64) ([]float64, float64, error) {
		ts, err := simulateAll(sims, spec.Build(th))
		if err != nil {
			return nil, 0, err
		}
		return ts, objective(samples, ts), nil
	}
	cur, obj, err := eval(theta)
	if err != nil {
		return nil, nil, err
	}
	f := &Fit{Model: spec, Samples: samples}
	converged := false
	var lastJ *mat.Dense
	for !converged && f.Iterations < maxIter {
		f.Iterations++
		// The Jacobian, column by column.
		J := mat.NewDense(len(samples), k, nil)
		for j, p := range spec.Params {
			h := math.Max(theta[j]*0.01, p.step)
			th := slices.Clone(theta)
			th[j] += h
			ts, err := simulateAll(sims, spec.Build(th))
			if err != nil {
				return nil, nil, err
			}
			for i := range samples {
				J.Set(i, j, (ts[i]-cur[i])/h)
			}
		}
		lastJ = J
		next, ok := solveBounded(spec, samples, J, cur, theta, held)
		if !ok {
			f.Notes = append(f.Notes, "the linearised problem had no solution; stopped early")
			break
		}
		// Take the step if it helps, else shorter ones.
		improved := false
		for try := 0; try < 6; try++ {
			ts, o, err := eval(next)
			if err != nil {
				return nil, nil, err
			}
			if o < obj {
				converged = relMove(theta, next, spec) < 1e-6
				theta, cur, obj, improved = next, ts, o, true
				break
			}
			for j := range next {
				next[j] = (next[j] + theta[j]) / 2
			}
		}
		if !improved {
			break
		}
	}
	f.Values, f.Predicted = theta, cur
	return f, lastJ, nil
}

// objective is the sum of squared relative errors.
func objective(samples []Sample, ts []float64) float64 {
	s := 0.0
	for i, x := range samples {
		r := (ts[i] - x.Time) / x.Time
		s += r * r
	}
	return s
}

// relMove is the largest relative change of a parameter, each relative to
// its scale.
func relMove(a, b []float64, spec *ModelSpec) float64 {
	m := 0.0
	for i := range a {
		scale := math.Max(math.Max(math.Abs(a[i]), math.Abs(b[i])), spec.Params[i].step)
		m = math.Max(m, math.Abs(a[i]-b[i])/scale)
	}
	return m
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

// solveBounded solves the linearised weighted least-squares problem
// min sum_i ((cur_i + J_i (x - theta) - t_i) / t_i)^2 over x with every
// x_j at or above its floor: for each set of parameters held at their
// floors, the others by QR; the best solution within the bounds wins.
func solveBounded(spec *ModelSpec, samples []Sample, J *mat.Dense, cur, theta []float64, held uint) ([]float64, bool) {
	n, k := J.Dims()
	// y_i = t_i - cur_i + J_i theta: the linear model is J x ≈ y.
	y := make([]float64, n)
	for i := range n {
		y[i] = samples[i].Time - cur[i]
		for j := range k {
			y[i] += J.At(i, j) * theta[j]
		}
	}
	var best []float64
	bestObj, bestHeld := math.Inf(1), -1
	for mask := 0; mask < 1<<k; mask++ { // bit j set: x_j held at its floor
		if uint(mask)&held != held {
			continue
		}
		var free []int
		for j := range k {
			if mask&(1<<j) == 0 {
				free = append(free, j)
			}
		}
		x := make([]float64, k)
		for j := range k {
			x[j] = spec.Params[j].floor
		}
		if len(free) > 0 {
			A := mat.NewDense(n, len(free), nil)
			b := mat.NewVecDense(n, nil)
			scale := make([]float64, len(free))
			for c, j := range free {
				// Columns scaled to unit norm: alpha (µs) and beta
				// (ns/B) differ by orders of magnitude.
				s := 0.0
				for i := range n {
					v := J.At(i, j) / samples[i].Time
					s += v * v
				}
				scale[c] = math.Sqrt(s)
				if scale[c] == 0 {
					scale[c] = 1
				}
			}
			for i := range n {
				w := 1 / samples[i].Time
				rhs := y[i]
				for j := range k {
					if mask&(1<<j) != 0 {
						rhs -= J.At(i, j) * x[j]
					}
				}
				b.SetVec(i, rhs*w)
				for c, j := range free {
					A.Set(i, c, J.At(i, j)*w/scale[c])
				}
			}
			if n < len(free) {
				continue
			}
			var qr mat.QR
			qr.Factorize(A)
			var sol mat.VecDense
			if err := qr.SolveVecTo(&sol, false, b); err != nil {
				continue
			}
			feasible := true
			for c, j := range free {
				x[j] = sol.AtVec(c) / scale[c]
				if x[j] < spec.Params[j].floor || math.IsNaN(x[j]) {
					feasible = false
				}
			}
			if !feasible {
				continue
			}
		}
		o := 0.0
		for i := range n {
			p := 0.0
			for j := range k {
				p += J.At(i, j) * x[j]
			}
			r := (p - y[i]) / samples[i].Time
			o += r * r
		}
		// Where the data cannot tell (parameters that move predictions
		// alike), the solution with more parameters on their floors is
		// as good and says less: prefer it.
		held := bits.OnesCount(uint(mask))
		tol := math.Max(1e-9*bestObj, 1e-12*float64(n))
		if o < bestObj-tol || (o <= bestObj+tol && held > bestHeld) {
			best, bestObj, bestHeld = x, o, held
		}
	}
	return best, best != nil
}

// collinear returns the pairs of parameters whose columns of the
// relative Jacobian point the same way: they move every prediction alike,
// so the samples determine a combination of them, not each (beta and
// gamma on ring-only samples, whose bandwidth term is
// 2(p-1)/p n beta + (p-1)/p n gamma).
func collinear(spec *ModelSpec, samples []Sample, J *mat.Dense) [][2]int {
	if J == nil {
		return nil
	}
	var pairs [][2]int
	n, k := J.Dims()
	for a := range k {
		for b := a + 1; b < k; b++ {
			var ab, aa, bb float64
			for i := range n {
				x, y := J.At(i, a)/samples[i].Time, J.At(i, b)/samples[i].Time
				ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
			}
			if aa > 0 && bb > 0 && ab/math.Sqrt(aa*bb) > 0.9999 {
				pairs = append(pairs, [2]int{a, b})
			}
		}
	}
	return pairs
}

// unexercised notes parameters the samples do not determine.
func unexercised(spec *ModelSpec, samples []Sample, theta []float64, held uint) []string {
	var notes []string
	reduces := false
	for _, s := range samples {
		if c, err := algos.Lookup(s.Collective); err == nil && c.Reduces && s.Bytes > 0 {
			reduces = true
		}
	}
	for i, p := range spec.Params {
		switch {
		case held&(1<<i) != 0:
		case p.Symbol == "gamma" && !reduces:
			notes = append(notes, "no sample reduces data: gamma (reduce_bandwidth) is not determined")
		case theta[i] <= p.floor && p.floor == 0:
			notes = append(notes, fmt.Sprintf("%s (%s) fitted to 0: the samples give it no weight, or a negative value fitted better", p.Symbol, p.Name))
		}
	}
	return notes
}

// sampleSim simulates one sample on a model.
type sampleSim struct {
	s          Sample
	alg        *algos.Algorithm
	send, recv int
	tuning     *algos.Tuning
}

func newSampleSim(s Sample, tuning *algos.Tuning) (*sampleSim, error) {
	coll, err := algos.Lookup(s.Collective)
	if err != nil {
		return nil, err
	}
	alg, err := coll.Algorithm(sweep.BaseAlgorithm(s.Algorithm))
	if err != nil {
		return nil, err
	}
	if s.World < 1 {
		return nil, fmt.Errorf("world size %d", s.World)
	}
	if s.Root < 0 || s.Root >= s.World {
		s.Root = 0
	}
	sz := s.DType.Size()
	send, recv, _ := coll.Layout(s.Bytes/sz, s.World)
	return &sampleSim{s: s, alg: alg, send: send * sz, recv: recv * sz, tuning: tuning}, nil
}

func (x *sampleSim) run(m sim.Model) (float64, error) {
	res, err := sim.Run(sim.Config{World: x.s.World, Model: m}, func(ctx context.Context, l algos.Link) error {
		c := algos.Call{DType: x.s.DType, Op: x.s.Op, Root: x.s.Root, Params: x.s.Params, Tuning: x.tuning, Buf: l.Alloc(x.recv)}
		if x.send > 0 {
			c.Send = l.Alloc(x.send)
		}
		return x.alg.Run(ctx, l, c)
	})
	if err != nil {
		return 0, fmt.Errorf("simulating %s: %w", x.s, err)
	}
	return res.End.Seconds(), nil
}

// simulateAll simulates every sample on m, on every CPU.
func simulateAll(sims []*sampleSim, m sim.Model) ([]float64, error) {
	out := make([]float64, len(sims))
	errs := make([]error, len(sims))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = sims[i].run(m)
			}
		})
	}
	for i := range sims {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}
