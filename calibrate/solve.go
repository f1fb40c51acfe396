package calibrate

import (
	"math"
	"math/bits"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// problem is a least-squares problem: the samples, their simulators, and
// the weight of each.
type problem struct {
	spec     *ModelSpec
	settings []SettingValue
	samples  []Sample
	sims     []simulator
	weights  []float64
	maxIter  int
}

// solution is where Gauss-Newton stopped.
type solution struct {
	theta, predicted []float64
	objective        float64
	// jacobian is the last one computed, d predicted_i / d theta_j.
	jacobian   *mat.Dense
	iterations int
	stalled    bool
}

// predict simulates every sample on the model of theta.
func (pr *problem) predict(theta []float64) ([]float64, error) {
	return simulateAll(pr.sims, pr.spec.Build(theta, settingValues(pr.settings)))
}

// objective is the weighted sum of squared relative errors.
func (pr *problem) objective(ts []float64) float64 {
	s := 0.0
	for i, x := range pr.samples {
		r := (ts[i] - x.Time) / x.Time
		s += pr.weights[i] * r * r
	}
	return s
}

// gaussNewton fits the parameters from theta, those in held staying at
// their values; with robust set, the samples' weights are Tukey's
// biweights of their residuals (see Calibrate), else all 1.
//
// A simulated time is piecewise linear in the parameters (each message
// and reduction adds its alpha, bytes x beta, bytes x gamma along the
// critical path), so at the current parameters the time of each sample
// is linearised by finite differences of simulations, and the weighted
// linear least-squares problem is solved with every free parameter at or
// above its Min (solveBounded); with robust set, the weights and the
// solution are iterated on the linearised times until the weights
// settle, which costs no simulation. The step is taken if it lowers the
// simulated objective (halved otherwise), until the parameters stop
// moving; the weights are then those of the final residuals.
func (pr *problem) gaussNewton(theta []float64, held map[int]bool, robust bool) (*solution, error) {
	k := len(pr.spec.Params)
	theta = slices.Clone(theta)
	pr.weights = make([]float64, len(pr.samples))
	for i := range pr.weights {
		pr.weights[i] = 1
	}
	cur, err := pr.predict(theta)
	if err != nil {
		return nil, err
	}
	sol := &solution{theta: theta, predicted: cur}
	for sol.iterations < pr.maxIter {
		sol.iterations++
		J, err := pr.jacobian(sol.theta, sol.predicted)
		if err != nil {
			return nil, err
		}
		sol.jacobian = J
		next, ok := pr.solveBounded(J, sol.predicted, sol.theta, held)
		for i := 0; ok && robust && i < 20; i++ {
			w := biweights(pr.samples, linearised(J, sol.predicted, sol.theta, next))
			moved := 0.0
			for i := range w {
				moved = math.Max(moved, math.Abs(w[i]-pr.weights[i]))
			}
			pr.weights = w
			if moved < 0.01 {
				break
			}
			next, ok = pr.solveBounded(J, sol.predicted, sol.theta, held)
		}
		if !ok {
			sol.stalled = true
			break
		}
		// Take the step if it helps, else shorter ones.
		obj := pr.objective(sol.predicted)
		improved, converged := false, false
		for range 6 {
			ts, err := pr.predict(next)
			if err != nil {
				return nil, err
			}
			if pr.objective(ts) < obj {
				converged = relMove(sol.theta, next, pr.spec) < 1e-6
				sol.theta, sol.predicted, improved = next, ts, true
				break
			}
			for j := range k {
				next[j] = (next[j] + sol.theta[j]) / 2
			}
		}
		if !improved || converged {
			break
		}
	}
	if robust {
		pr.weights = biweights(pr.samples, sol.predicted)
	}
	if sol.jacobian == nil {
		if sol.jacobian, err = pr.jacobian(sol.theta, sol.predicted); err != nil {
			return nil, err
		}
	}
	sol.objective = pr.objective(sol.predicted)
	return sol, nil
}

// linearised is the times J predicts at x, from cur at theta.
func linearised(J *mat.Dense, cur, theta, x []float64) []float64 {
	out := slices.Clone(cur)
	n, k := J.Dims()
	for i := range n {
		for j := range k {
			out[i] += J.At(i, j) * (x[j] - theta[j])
		}
	}
	return out
}

// jacobian differentiates the predicted times by every parameter.
func (pr *problem) jacobian(theta, cur []float64) (*mat.Dense, error) {
	J := mat.NewDense(len(pr.samples), len(pr.spec.Params), nil)
	for j, p := range pr.spec.Params {
		h := math.Max(theta[j]*0.01, p.Step)
		th := slices.Clone(theta)
		th[j] += h
		ts, err := pr.predict(th)
		if err != nil {
			return nil, err
		}
		for i := range pr.samples {
			J.Set(i, j, (ts[i]-cur[i])/h)
		}
	}
	return J, nil
}

// relMove is the largest relative change of a parameter, each relative to
// its scale.
func relMove(a, b []float64, spec *ModelSpec) float64 {
	m := 0.0
	for i := range a {
		scale := math.Max(math.Max(math.Abs(a[i]), math.Abs(b[i])), spec.Params[i].Step)
		m = math.Max(m, math.Abs(a[i]-b[i])/scale)
	}
	return m
}

// solveBounded solves the linearised weighted least-squares problem
// min sum_i w_i ((cur_i + J_i (x - theta) - t_i) / t_i)^2 over x with
// every free x_j at or above its Min and the held ones at their values:
// for each set of free parameters put on their Min, the others by QR;
// the best solution within the bounds wins.
func (pr *problem) solveBounded(J *mat.Dense, cur, theta []float64, held map[int]bool) ([]float64, bool) {
	n, k := J.Dims()
	spec := pr.spec
	// y_i = t_i - cur_i + J_i theta: the linear model is J x ≈ y.
	y := make([]float64, n)
	w := make([]float64, n) // sqrt(weight) / t_i
	for i := range n {
		y[i] = pr.samples[i].Time - cur[i]
		for j := range k {
			y[i] += J.At(i, j) * theta[j]
		}
		w[i] = math.Sqrt(pr.weights[i]) / pr.samples[i].Time
	}
	var best []float64
	bestObj, bestFixed := math.Inf(1), -1
	for mask := 0; mask < 1<<k; mask++ { // bit j set: x_j fixed (held, or at its Min)
		skip := false
		for j := range held {
			if mask&(1<<j) == 0 {
				skip = true
			}
		}
		if skip {
			continue
		}
		x := make([]float64, k)
		var free []int
		for j := range k {
			switch {
			case held[j]:
				x[j] = theta[j]
			case mask&(1<<j) != 0:
				x[j] = spec.Params[j].Min
			default:
				free = append(free, j)
			}
		}
		if len(free) > 0 {
			if n < len(free) {
				continue
			}
			A := mat.NewDense(n, len(free), nil)
			b := mat.NewVecDense(n, nil)
			scale := make([]float64, len(free))
			for c, j := range free {
				// Columns scaled to unit norm: alpha (µs) and beta
				// (ns/B) differ by orders of magnitude.
				s := 0.0
				for i := range n {
					v := J.At(i, j) * w[i]
					s += v * v
				}
				scale[c] = math.Sqrt(s)
				if scale[c] == 0 {
					scale[c] = 1
				}
			}
			for i := range n {
				rhs := y[i]
				for j := range k {
					if mask&(1<<j) != 0 {
						rhs -= J.At(i, j) * x[j]
					}
				}
				b.SetVec(i, rhs*w[i])
				for c, j := range free {
					A.Set(i, c, J.At(i, j)*w[i]/scale[c])
				}
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
				if x[j] < spec.Params[j].Min || math.IsNaN(x[j]) {
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
			r := (p - y[i]) * w[i]
			o += r * r
		}
		// Where the data cannot tell (parameters that move predictions
		// alike), the solution with more parameters on their bounds is
		// as good and says less: prefer it.
		fixed := bits.OnesCount(uint(mask))
		tol := math.Max(1e-9*bestObj, 1e-12*float64(n))
		if o < bestObj-tol || (o <= bestObj+tol && fixed > bestFixed) {
			best, bestObj, bestFixed = x, o, fixed
		}
	}
	return best, best != nil
}
