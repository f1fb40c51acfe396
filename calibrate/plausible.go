package calibrate

import (
	"fmt"
	"math"
	"slices"

	"github.com/nexar-go/nexar-go/units"
)

// Bounds are what a fitted value may be on real hardware: a fit that
// lands outside them has put into one parameter what the samples owe to
// another (a reduction bandwidth that carries the cores' contention, a
// bandwidth the sizes never reach), and Fit.Implausible says so.
type Bounds struct {
	// MaxBandwidth is the fastest any fitted bandwidth may be, in bytes
	// per second: the memory's, since every byte a collective moves or
	// reduces is read from memory and written to it. MaxWhy says where
	// the figure comes from.
	MaxBandwidth float64
	MaxWhy       string
	// MinReduceBandwidth is the slowest a fitted reduction bandwidth
	// (gamma) may be, in bytes per second: any processor adds numbers
	// faster. MinReduceWhy says why.
	MinReduceBandwidth float64
	MinReduceWhy       string
}

// DefaultBounds are conservative bounds for samples from any machine:
// 8 TB/s, the fastest memory a collective's bytes pass through today
// (HBM3e of an NVIDIA B200); and 1 GB/s for reductions, which one CPU core
// of the last fifteen years beats several times over adding float32, and
// a GPU by hundreds of times. Samples measured on the machine calibrate
// runs on are better held against its own memory bandwidth (the
// calibrate command's --memory-bandwidth measure).
func DefaultBounds() Bounds {
	return Bounds{
		MaxBandwidth:       8e12,
		MaxWhy:             "8 TB/s, the fastest memory a collective's bytes pass through today (HBM3e)",
		MinReduceBandwidth: 1e9,
		MinReduceWhy:       "1 GB/s: one CPU core adds float32 several times faster, a GPU hundreds of times",
	}
}

// Implausible lists the fitted values of f outside b, and the latencies
// outside what the samples allow, each with what it means: a bandwidth
// above b.MaxBandwidth; a reduction bandwidth below b.MinReduceBandwidth;
// a latency (any parameter in seconds) at or below zero, or above the
// time of the fastest sample whose prediction depends on it (a message's
// latency cannot exceed a whole collective that sends one). Held values
// are not judged: the user gave them, or the fit says why it held them.
// opt is the fit's (its tuning table predicts "auto").
func (f *Fit) Implausible(b Bounds, opt Options) ([]string, error) {
	var out []string
	for j, e := range f.Estimates {
		if e.Held {
			continue
		}
		switch {
		case e.Factor:
		case e.PerByte:
			out = append(out, f.implausibleRate(e, b)...)
		default:
			w, err := f.implausibleLatency(j, opt)
			if err != nil {
				return nil, err
			}
			out = append(out, w...)
		}
	}
	return out, nil
}

// implausibleRate judges a fitted per-byte parameter against b.
func (f *Fit) implausibleRate(e Estimate, b Bounds) []string {
	bw := rate(e.Value)
	name := fmt.Sprintf("%s (%s) = %s", e.Name, e.Symbol, formatValue(e.Param, e.Value))
	switch {
	case b.MaxBandwidth > 0 && bw > b.MaxBandwidth:
		return []string{fmt.Sprintf("%s is above the memory's bandwidth, %s: no path moves bytes faster than they are read and written; "+
			"the samples do not reach sizes where it binds, or another parameter took its part (add larger sizes, or hold %s at a value you know)",
			name, b.MaxWhy, e.Name)}
	case e.Symbol == "gamma" && b.MinReduceBandwidth > 0 && bw < b.MinReduceBandwidth:
		return []string{fmt.Sprintf("%s is below %s: the fit put on reductions a cost that is likely something else "+
			"(more ranks than cores taking turns, copies, a protocol's steps); compare a fit with --hold reduce_bandwidth=inf, or measure with no more ranks than cores",
			name, b.MinReduceWhy)}
	}
	return nil
}

// implausibleLatency judges the fitted parameter j, in seconds: at or
// below zero, or above the fastest sample whose prediction depends on
// it.
func (f *Fit) implausibleLatency(j int, opt Options) ([]string, error) {
	e := f.Estimates[j]
	name := fmt.Sprintf("%s (%s) = %s", e.Name, e.Symbol, units.FormatSeconds(e.Value))
	if e.Value <= 0 {
		return []string{fmt.Sprintf("%s: a latency is more than zero; the fit pushed it to its bound, so a negative one would fit the small sizes better, "+
			"which no network has (the model overestimates them otherwise: another model may follow them)", name)}, nil
	}
	// Which samples' predictions depend on it: predict them again with
	// it doubled.
	moved := *f
	moved.Values = slices.Clone(f.Values)
	moved.Values[j] *= 2
	pred, err := Predict(f.Samples, &moved, opt)
	if err != nil {
		return nil, err
	}
	fastest := -1
	for i, s := range f.Samples {
		if math.Abs(pred[i]-f.Predicted[i]) > 1e-9*f.Predicted[i] && (fastest < 0 || s.Time < f.Samples[fastest].Time) {
			fastest = i
		}
	}
	if fastest < 0 || e.Value <= f.Samples[fastest].Time {
		return nil, nil
	}
	s := f.Samples[fastest]
	return []string{fmt.Sprintf("%s is above the whole time of %s (%s), %s, the fastest sample it is part of: "+
		"one message cannot take longer than a collective that sends it; the model's other costs are too small for the samples (try another model)",
		name, s, s.Source, units.FormatSeconds(s.Time))}, nil
}
