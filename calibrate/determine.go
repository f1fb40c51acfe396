package calibrate

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/units"
)

// finding is a parameter the samples do not determine, to be held.
type finding struct {
	param int
	why   string
	// unused is set for a parameter no prediction depends on: it is held,
	// required or not, at its Default if it is optional, else where it
	// is (its value changes nothing).
	unused bool
	// keep is set for a required latency the samples do not determine
	// beside a bandwidth they do: it is held where the fit put it.
	keep bool
}

// shares is, for each parameter, the largest part of a sample's
// predicted time it accounts for, over the samples that weigh in the
// fit: |d t_i / d theta_j| theta_j / t_i, exact for a time linear in the
// parameters.
func (pr *problem) shares(sol *solution) []float64 {
	k := len(pr.spec.Params)
	out := make([]float64, k)
	for i := range pr.samples {
		if pr.weights[i] < 0.5 || !(sol.predicted[i] > 0) {
			continue
		}
		for j := range k {
			out[j] = math.Max(out[j], math.Abs(sol.jacobian.At(i, j))*sol.theta[j]/sol.predicted[i])
		}
	}
	return out
}

// undetermined finds the free parameters the samples do not determine:
// the optional ones to hold at their Default, or, when a required one is
// among them, the reason to refuse the fit.
func (pr *problem) undetermined(sol *solution, held map[int]bool) (found []finding, refusal string) {
	spec := pr.spec
	k := len(spec.Params)
	// A parameter no prediction depends on (the QUIC path of realnet's
	// eager mode, a rendezvous factor when every sample is eager) says
	// nothing, and the model does not need it on these samples.
	for j := range k {
		if !held[j] && pr.unused(sol.jacobian, j) {
			why := "no sample's prediction depends on it (the model does not use it for these samples and settings)"
			if spec.Params[j].Symbol == "gamma" && !pr.reduces() {
				why = "no sample reduces data"
			}
			found = append(found, finding{param: j, why: why, unused: true})
		}
	}
	if len(found) > 0 {
		return found, ""
	}
	marked := make([]bool, k)
	// Parameters whose derivatives point the same way move every
	// prediction alike: only a combination of them is determined (beta
	// and gamma on ring-only samples, whose bandwidth term is
	// 2(p-1)/p n beta + (p-1)/p n gamma; latency and bandwidth on samples
	// of one size).
	for _, pair := range pr.collinear(sol.jacobian, held, 0.9999) {
		a, b := pair[0], pair[1]
		if marked[a] || marked[b] {
			continue
		}
		pa, pb := spec.Params[a], spec.Params[b]
		hold := b
		if pb.Required {
			hold = a
		}
		if spec.Params[hold].Required {
			return nil, pr.alike(pa, pb)
		}
		keep := a + b - hold
		marked[hold] = true
		found = append(found, finding{param: hold, why: fmt.Sprintf("%s and %s change every prediction alike on these samples, so only a combination of them is determined: "+
			"%s carries it (add algorithms or sizes that weigh them differently)", spec.Params[keep].Symbol, spec.Params[hold].Symbol, spec.Params[keep].Symbol)})
	}
	if len(found) > 0 {
		// Fit again before judging what each part weighs: the
		// parameter that carries a pair's part has it only then.
		return found, ""
	}
	shares := pr.shares(sol)
	for j, p := range spec.Params {
		if held[j] || marked[j] || shares[j] >= minShare {
			continue
		}
		if p.Required {
			// An optional parameter may have taken this one's part
			// (LogGP's g beside L; gamma beside beta, on noisy samples of
			// allreduce): hold the one that moves the predictions most
			// like it, and fit again.
			best, bestCos := -1, math.Inf(-1)
			for o, q := range spec.Params {
				if q.Required || held[o] || marked[o] {
					continue
				}
				if c := pr.cosine(sol.jacobian, j, o); c > bestCos {
					best, bestCos = o, c
				}
			}
			if best >= 0 {
				found = append(found, finding{param: best, why: fmt.Sprintf("so that %s, which the model needs, is determined: on these samples %s took its part", p.Symbol, spec.Params[best].Symbol)})
			}
			if len(found) > 0 {
				return found, "" // and judge this one again
			}
			if !p.PerByte && !p.Factor && pr.bandwidthDetermined(shares, held) {
				// Every sample is bandwidth-bound: the bandwidth is what
				// they measure, and the latency is held where the fit
				// put it, named, rather than the fit refused.
				marked[j] = true
				found = append(found, finding{param: j, keep: true, why: fmt.Sprintf(
					"it accounts for at most %.1f%% of any sample's time: every sample lies where bandwidth dominates, so they do not determine it; "+
						"held where the fit put it, which predicts small sizes poorly (add smaller sizes, or hold %s at a value you know)", 100*shares[j], p.Name)})
				continue
			}
			return nil, pr.regime(p, shares[j])
		}
		why := fmt.Sprintf("it accounts for at most %.1f%% of any sample's time, too little to determine it", 100*shares[j])
		switch {
		case p.Symbol == "gamma" && !pr.reduces():
			why = "no sample reduces data"
		case sol.theta[j] <= p.Min:
			why = "it fitted to its bound: the samples give it no weight, or a negative value fitted them better"
		}
		marked[j] = true
		found = append(found, finding{param: j, why: why})
	}
	return found, ""
}

// bandwidthDetermined reports whether every required per-byte
// parameter that is free accounts for a large part (half) of some
// sample's time: the samples determine the bandwidth well.
func (pr *problem) bandwidthDetermined(shares []float64, held map[int]bool) bool {
	some := false
	for j, p := range pr.spec.Params {
		if !p.Required || !p.PerByte || held[j] {
			continue
		}
		if shares[j] < 0.5 {
			return false
		}
		some = true
	}
	return some
}

// unused reports whether column j of the Jacobian is zero: no sample's
// prediction moves with parameter j.
func (pr *problem) unused(J *mat.Dense, j int) bool {
	for i := range pr.samples {
		if J.At(i, j) != 0 {
			return false
		}
	}
	return true
}

// collinear returns the pairs of free parameters whose columns of the
// weighted relative Jacobian point the same way: the cosine of their
// angle above cos.
func (pr *problem) collinear(J *mat.Dense, held map[int]bool, cos float64) [][2]int {
	var pairs [][2]int
	k := len(pr.spec.Params)
	for a := range k {
		for b := a + 1; b < k; b++ {
			if !held[a] && !held[b] && pr.cosine(J, a, b) > cos {
				pairs = append(pairs, [2]int{a, b})
			}
		}
	}
	return pairs
}

// cosine is the cosine of the angle between columns a and b of the
// weighted relative Jacobian; -1 if one is zero.
func (pr *problem) cosine(J *mat.Dense, a, b int) float64 {
	var ab, aa, bb float64
	for i, s := range pr.samples {
		w := math.Sqrt(pr.weights[i]) / s.Time
		x, y := J.At(i, a)*w, J.At(i, b)*w
		ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
	}
	if aa == 0 || bb == 0 {
		return -1
	}
	return ab / math.Sqrt(aa*bb)
}

// reduces reports whether some sample reduces data.
func (pr *problem) reduces() bool {
	for _, s := range pr.samples {
		if c, err := algos.Lookup(s.Collective); err == nil && c.Reduces && s.Bytes > 0 {
			return true
		}
	}
	return false
}

// alike is the reason to refuse a fit whose samples cannot tell two
// required parameters apart.
func (pr *problem) alike(a, b Param) string {
	first := pr.samples[0]
	one := true
	for _, s := range pr.samples {
		if s.Bytes != first.Bytes || s.World != first.World || s.Collective != first.Collective || s.Algorithm != first.Algorithm {
			one = false
			break
		}
	}
	if one {
		return fmt.Sprintf("every sample is of one size (%s, %s on %d ranks): %s and %s change its time alike, and only a combination of them is determined; "+
			"measure several sizes, or hold one of them at a value you know", formatSize(first.Bytes), first.Collective, first.World, a.Name, b.Name)
	}
	return fmt.Sprintf("%s and %s change every prediction alike on these samples, and only a combination of them is determined; "+
		"measure sizes or algorithms that weigh them differently, or hold one of them at a value you know", a.Name, b.Name)
}

// regime is the reason to refuse a fit in which a required parameter
// accounts for too small a part of every sample's time.
func (pr *problem) regime(p Param, share float64) string {
	lo, hi := math.MaxInt, 0
	for i, s := range pr.samples {
		if pr.weights[i] >= 0.5 {
			lo, hi = min(lo, s.Bytes), max(hi, s.Bytes)
		}
	}
	if p.Needs != "" {
		return fmt.Sprintf("%s (%s) accounts for at most %.1f%% of any sample's time (samples of %s to %s), so they do not determine it; "+
			"add %s, or hold %s at a value you know", p.Name, p.Symbol, 100*share, formatSize(lo), formatSize(hi), p.Needs, p.Name)
	}
	where, add := "latency", "larger"
	if !p.PerByte {
		where, add = "bandwidth", "smaller"
	}
	return fmt.Sprintf("%s (%s) accounts for at most %.1f%% of any sample's time: the samples (%s to %s) all lie where %s dominates, so they do not determine it; "+
		"add %s sizes, or hold %s at a value you know", p.Name, p.Symbol, 100*share, formatSize(lo), formatSize(hi), where, add, p.Name)
}

// formatSize writes a size in binary units.
func formatSize(n int) string { return units.FormatBytes(float64(n)) }

// formatValue writes a parameter's value for people: a duration, or a
// bandwidth for PerByte ones.
func formatValue(p Param, v float64) string {
	switch {
	case p.Factor:
		return strconv.FormatFloat(v, 'g', 4, 64)
	case p.PerByte:
		return formatRateHuman(v)
	}
	return units.FormatSeconds(v)
}
