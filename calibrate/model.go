package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// Param is one parameter of a model Calibrate fits.
type Param struct {
	// Name is the scenario key it is written as ("latency",
	// "bandwidth", ...) and Symbol the model's letter ("alpha", "G").
	Name, Symbol string
	// PerByte is set for parameters in seconds per byte (written as
	// bandwidths, 1/value); Factor for plain numbers (a factor on another
	// parameter); the others are durations in seconds.
	PerByte, Factor bool
	// Required is set for the parameters a model is no use without
	// (latency and bandwidth): a fit whose samples do not determine one
	// is refused, unless it is held. An optional parameter the samples
	// do not determine is held at Default, and the fit says so.
	Required bool
	// Default is the value an optional parameter is held at: 0, which
	// makes its cost vanish (free reductions, no overhead), or 1 for a
	// factor.
	Default float64
	// Min is the least value the parameter may take; Step the least
	// finite-difference step of its derivatives.
	Min, Step float64
	// Needs says which samples determine the parameter, for a refusal,
	// where that is not simply smaller or larger sizes ("" for those).
	Needs string
}

// Setting is a size a model needs that is not fitted but held (a
// protocol's threshold: the predicted times jump at it, so least squares
// cannot move it): at Default, or at the value Options.Hold gives.
type Setting struct {
	// Name is the scenario key ("eager_limit", "bulk_threshold").
	Name string
	// Default is the value held when none is given, and Why says why
	// that value.
	Default int
	Why     string
	// Min is the least value; with Never set, -1 is allowed too
	// (written "never": the threshold is never reached).
	Min   int
	Never bool
}

// ModelSpec is a network model Calibrate can fit: its parameters, and
// how a vector of their values (in the order of Params) becomes a
// sim.Model. A model is added by adding one to Models' list.
type ModelSpec struct {
	Name   string
	Params []Param
	// Settings are the sizes the model holds (in this order in Build's
	// settings).
	Settings []Setting
	Build    func(theta []float64, settings []int) sim.Model
	// Overlaps is set for models in which back-to-back messages from
	// one rank overlap their latency (LogGP: the next may start a gap
	// after the last). In the others (alpha-beta: a message holds its
	// port for its latency too) the window of messages osu_bw and
	// osu_bibw stream is simulated as one transfer of the window's
	// bytes, which is how Hockney's model times a stream, and how the
	// hardware behaves: the messages of a window are in flight together.
	Overlaps bool
	// Summary says in a line what the model is, for --help and listings.
	Summary string
	// network writes the [network] table of the calibrated scenario;
	// nil: model = Name and every parameter under its Name.
	network func(b *bytes.Buffer, f *Fit)
}

// Param returns the index of the parameter called name, or -1.
func (m *ModelSpec) Param(name string) int {
	return slices.IndexFunc(m.Params, func(p Param) bool { return p.Name == name || p.Symbol == name })
}

// Setting returns the index of the setting called name, or -1.
func (m *ModelSpec) Setting(name string) int {
	return slices.IndexFunc(m.Settings, func(s Setting) bool { return s.Name == name })
}

// ParamNames lists the names of the model's parameters and settings, for
// messages.
func (m *ModelSpec) ParamNames() string {
	names := make([]string, 0, len(m.Params)+len(m.Settings))
	for _, p := range m.Params {
		names = append(names, p.Name)
	}
	for _, s := range m.Settings {
		names = append(names, s.Name)
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
		Name:    "alpha-beta",
		Summary: "alpha + m beta per message, one port per rank; gamma per reduced byte",
		Params: []Param{
			{Name: "latency", Symbol: "alpha", Required: true, Step: 1e-7},
			{Name: "bandwidth", Symbol: "beta", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
		},
		Build: func(th []float64, _ []int) sim.Model {
			return sim.AlphaBeta{Latency: sim.FromSeconds(th[0]), Bandwidth: rate(th[1]), ReduceBandwidth: rate(th[2])}
		},
	},
	{
		Name: "alpha-beta-protocol",
		Summary: "alpha-beta with a message protocol: eager below eager_limit (the send completes at once, the message moves at once), " +
			"rendezvous from it (request and clear to send of alpha each, then the payload at its own latency and bandwidth factors)",
		Params: []Param{
			{Name: "latency", Symbol: "alpha", Required: true, Step: 1e-7},
			{Name: "bandwidth", Symbol: "beta", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
			{Name: "rendezvous_latency_factor", Symbol: "f_alpha", Factor: true, Default: 1, Min: 1e-3, Step: 1e-3},
			{Name: "rendezvous_bandwidth_factor", Symbol: "f_beta", Factor: true, Default: 1, Min: 1e-3, Step: 1e-3},
		},
		Settings: []Setting{{Name: "eager_limit", Default: algos.DefaultBulkThreshold, Min: 1,
			Why: "nexar-live's bulk threshold (its --bulk-threshold default), where realnet's protocol changes; the samples cannot move a threshold"}},
		Build:   buildProtocol,
		network: writeProtocol,
	},
	{
		Name: "shared-host",
		Summary: "alpha-beta-protocol for ranks that share one machine: each rank's port has its own latency and bandwidth, " +
			"and every message also crosses a backplane they all share (the flow model on a crossbar with backplane_bandwidth), " +
			"as the cores and memory of a machine move so many bytes a second whichever ranks send them",
		Params: []Param{
			{Name: "latency", Symbol: "alpha", Required: true, Step: 1e-7},
			// Optional: a port's own limit binds only where one message
			// alone is slower than its share of the backplane; where it
			// never does (loopback: the cores are the limit), the port is
			// held unlimited and the backplane carries the bandwidth.
			{Name: "bandwidth", Symbol: "beta", PerByte: true, Step: 1e-13,
				Needs: "large sizes of algorithms that send one message at a time (binomial_tree) beside ones that keep several in flight (ring, direct)"},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
			{Name: "rendezvous_latency_factor", Symbol: "f_alpha", Factor: true, Default: 1, Min: 1e-3, Step: 1e-3},
			{Name: "rendezvous_bandwidth_factor", Symbol: "f_beta", Factor: true, Default: 1, Min: 1e-3, Step: 1e-3},
			{Name: "backplane_bandwidth", Symbol: "beta_b", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13,
				Needs: "sizes large enough for their bytes to count (MiBs)"},
		},
		Settings: []Setting{{Name: "eager_limit", Default: algos.DefaultBulkThreshold, Min: 1,
			Why: "nexar-live's bulk threshold (its --bulk-threshold default), where realnet's protocol changes; the samples cannot move a threshold"}},
		Build:   buildSharedHost,
		network: writeSharedHost,
	},
	{
		Name:    "loggp",
		Summary: "LogGP: L, o and g per message, G per byte (back-to-back messages overlap); gamma per reduced byte",
		Params: []Param{
			{Name: "latency", Symbol: "L", Required: true, Step: 1e-7},
			{Name: "overhead", Symbol: "o", Step: 1e-7},
			{Name: "gap", Symbol: "g", Step: 1e-7},
			{Name: "bandwidth", Symbol: "G", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
		},
		Overlaps: true,
		Build: func(th []float64, _ []int) sim.Model {
			return sim.LogGP{Latency: sim.FromSeconds(th[0]), Overhead: sim.FromSeconds(th[1]), Gap: sim.FromSeconds(th[2]),
				Bandwidth: rate(th[3]), ReduceBandwidth: rate(th[4])}
		},
	},
	{
		Name: "realnet",
		Summary: "realnet's two paths (sim.TwoPaths): QUIC below bulk_threshold, from it a request and a clear to send on TCP " +
			"and the payload on the bulk TCP connection; with eager_threshold every message on TCP",
		Params: []Param{
			{Name: "quic_latency", Symbol: "alpha_q", Required: true, Step: 1e-7,
				Needs: "sizes whose messages are small and below the bulk threshold"},
			{Name: "quic_bandwidth", Symbol: "beta_q", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13,
				Needs: "sizes whose messages are below the bulk threshold but large enough for their bytes to count (KiBs)"},
			// Optional: the bulk path's bytes dominate its latency from
			// the bulk threshold on, so samples often cannot determine it.
			{Name: "bulk_latency", Symbol: "alpha_t", Step: 1e-7},
			{Name: "bulk_bandwidth", Symbol: "beta_t", PerByte: true, Required: true, Min: 1e-15, Step: 1e-13,
				Needs: "sizes whose messages reach the bulk threshold"},
			{Name: "reduce_bandwidth", Symbol: "gamma", PerByte: true, Step: 1e-13},
		},
		Settings: []Setting{
			{Name: "bulk_threshold", Default: algos.DefaultBulkThreshold, Min: 0, Never: true,
				Why: "nexar-live's default (--bulk-threshold), for samples whose file does not record the run's"},
			{Name: "eager_threshold", Default: 0, Min: 0,
				Why: "nexar-live's default (--eager-threshold)"},
		},
		Build: func(th []float64, set []int) sim.Model {
			return sim.TwoPaths{
				QUIC:       sim.AlphaBeta{Latency: sim.FromSeconds(th[0]), Bandwidth: rate(th[1])},
				Bulk:       sim.AlphaBeta{Latency: sim.FromSeconds(th[2]), Bandwidth: rate(th[3])},
				Thresholds: algos.Thresholds{Bulk: set[0], Eager: set[1]}, ReduceBandwidth: rate(th[4]),
			}
		},
		network: writeRealnet,
	},
}

// buildProtocol is the alpha-beta-protocol model: alpha-beta under the
// protocol withProtocol describes.
func buildProtocol(th []float64, set []int) sim.Model {
	return withProtocol(sim.AlphaBeta{Latency: sim.FromSeconds(th[0]), Bandwidth: rate(th[1]), ReduceBandwidth: rate(th[2])}, th, set)
}

// buildSharedHost is the shared-host model: the same protocol over the
// flow model on a crossbar of the same ports whose messages all cross a
// backplane of th[5] seconds per byte.
func buildSharedHost(th []float64, set []int) sim.Model {
	return withProtocol(sim.Flow{
		Topology:        sim.Crossbar{Latency: sim.FromSeconds(th[0]), Bandwidth: rate(th[1]), Backplane: rate(th[5])},
		ReduceBandwidth: rate(th[2]),
	}, th, set)
}

// withProtocol puts inner under sim.Protocol with the eager limit set[0],
// eager messages moving at once (realnet's QUIC streams, an MPI library
// over TCP), a rendezvous handshake of two control messages, and a
// latency and bandwidth factor th[3], th[4] for the messages from the
// limit on (a step of lat_factors and bw_factors just below it), so that
// each protocol has its own alpha and beta.
func withProtocol(inner sim.Model, th []float64, set []int) sim.Protocol {
	limit := set[0]
	from := max(limit-1, 0) // a step applies above its size: from limit bytes on
	return sim.Protocol{
		Model:            inner,
		EagerLimit:       limit,
		EagerAtOnce:      true,
		Handshake:        sim.Handshake{RTSCTS: true},
		LatencyFactors:   sim.Factors{{From: from, Factor: th[3]}},
		BandwidthFactors: sim.Factors{{From: from, Factor: th[4]}},
	}
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
