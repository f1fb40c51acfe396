package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/sim"
)

// Param is one parameter of a model Calibrate fits.
type Param struct {
	// Name is the scenario key it is written as ("latency",
	// "bandwidth", ...) and Symbol the model's letter ("alpha", "G").
	Name, Symbol string
	// PerByte is set for parameters in seconds per byte (written as
	// bandwidths, 1/value); the others are durations in seconds.
	PerByte bool
	// Required is set for the parameters a model is no use without
	// (latency and bandwidth): a fit whose samples do not determine one
	// is refused, unless it is held. An optional parameter the samples
	// do not determine is held at Default, and the fit says so.
	Required bool
	// Default is the value an optional parameter is held at: 0, which
	// makes its cost vanish (free reductions, no overhead).
	Default float64
	// Min is the least value the parameter may take; Step the least
	// finite-difference step of its derivatives.
	Min, Step float64
}

// ModelSpec is a network model Calibrate can fit: its parameters, and
// how a vector of their values (in the order of Params) becomes a
// sim.Model. A model is added by adding one to Models' list.
type ModelSpec struct {
	Name   string
	Params []Param
	Build  func(theta []float64) sim.Model
	// Overlaps is set for models in which back-to-back messages from
	// one rank overlap their latency (LogGP: the next may start a gap
	// after the last). In the others (alpha-beta: a message holds its
	// port for its latency too) the window of messages osu_bw and
	// osu_bibw stream is simulated as one transfer of the window's
	// bytes, which is how Hockney's model times a stream, and how the
	// hardware behaves: the messages of a window are in flight together.
	Overlaps bool
}

// Param returns the index of the parameter called name, or -1.
func (m *ModelSpec) Param(name string) int {
	return slices.IndexFunc(m.Params, func(p Param) bool { return p.Name == name || p.Symbol == name })
}

// ParamNames lists the names of the model's parameters, for messages.
func (m *ModelSpec) ParamNames() string {
	names := make([]string, len(m.Params))
	for i, p := range m.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// rate turns seconds per byte into bytes per second, infinite for 0.
func rate(perByte float64) float64 {
	if perByte <= 0 {
		return math.Inf(1)
	}
	return 1 / perByte
}

// fitModels are the models Calibrate fits, by scenario model name.
var fitModels = []ModelSpec{
	{
		Name: "alpha-beta",
		Params: []Param{
			{Name: "latency", Symbol: "alpha", Required: true, Step: 1e-7},
			{Name: "bandwidth", Symbol: "beta", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
		},
		Build: func(th []float64) sim.Model {
			return sim.AlphaBeta{Latency: sim.FromSeconds(th[0]), Bandwidth: rate(th[1]), ReduceBandwidth: rate(th[2])}
		},
	},
	{
		Name: "loggp",
		Params: []Param{
			{Name: "latency", Symbol: "L", Required: true, Step: 1e-7},
			{Name: "overhead", Symbol: "o", Step: 1e-7},
			{Name: "gap", Symbol: "g", Step: 1e-7},
			{Name: "bandwidth", Symbol: "G", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
		},
		Overlaps: true,
		Build: func(th []float64) sim.Model {
			return sim.LogGP{Latency: sim.FromSeconds(th[0]), Overhead: sim.FromSeconds(th[1]), Gap: sim.FromSeconds(th[2]),
				Bandwidth: rate(th[3]), ReduceBandwidth: rate(th[4])}
		},
	},
}

// Models lists the models Calibrate fits.
func Models() []ModelSpec { return slices.Clone(fitModels) }

// ModelNames lists their names.
func ModelNames() []string {
	names := make([]string, len(fitModels))
	for i, m := range fitModels {
		names[i] = m.Name
	}
	return names
}

// LookupModel returns the model Calibrate fits by that name.
func LookupModel(name string) (*ModelSpec, error) {
	for i := range fitModels {
		if fitModels[i].Name == name {
			return &fitModels[i], nil
		}
	}
	return nil, fmt.Errorf("calibrate: cannot calibrate model %q (want %s)", name, strings.Join(ModelNames(), " or "))
}
