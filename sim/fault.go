package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fault is a disturbance of a run: latency noise, a straggler, a slow
// link, a link or a rank that fails. Each describes itself (String) so that
// a report says what was injected. WithFaults applies faults to a model.
//
// The TOML keys meant for them, in a [[fault]] array of tables, are given
// on each type: kind = "jitter" | "straggler" | "stragglers" | "slow_link"
// | "link_failure" | "rank_failure", and the fields below.
type Fault interface {
	fmt.Stringer
	// apply installs the fault on the network of one run.
	apply(n *faultyNet) error
}

// Jitter delays every message by a random time drawn from a named
// distribution (kind = "jitter"; keys "dist", "mean", "stddev"). The delay
// is spent before the message reaches the network, holding no port or
// link: it models noise in the sender's software stack and the network's
// entry. A sender's messages still reach the network in the order they
// were posted (a message waits for the one before it). Draws come from a
// PCG generator of the run's seed, one draw per message in the order
// messages are posted, so a seed reproduces a run exactly. Switch
// operations (SwitchNetwork) are not delayed.
//
// Every distribution is given by its mean and standard deviation:
// "constant" (always Mean), "exponential" (Stddev is ignored: it equals
// the mean), "normal" (draws below zero count as zero), "lognormal",
// "gamma", "uniform" (on Mean ± Stddev·√3, which must not go below zero)
// and "pareto" (heavy-tailed: shape 1+√(1+Mean²/Stddev²)).
type Jitter struct {
	Dist   string
	Mean   Time
	Stddev Time
}

func (j Jitter) String() string {
	return fmt.Sprintf("latency jitter %s(mean %v, stddev %v)", j.Dist, j.Mean, j.Stddev)
}

// sampler returns a function drawing delays in seconds from src.
func (j Jitter) sampler(src rand.Source) (func() float64, error) {
	mu, sd := j.Mean.Seconds(), j.Stddev.Seconds()
	if mu < 0 || sd < 0 {
		return nil, fmt.Errorf("%v: mean and stddev must not be negative", j)
	}
	switch j.Dist {
	case "constant":
		return func() float64 { return mu }, nil
	case "exponential":
		if mu == 0 {
			return func() float64 { return 0 }, nil
		}
		return distuv.Exponential{Rate: 1 / mu, Src: src}.Rand, nil
	case "normal":
		return distuv.Normal{Mu: mu, Sigma: sd, Src: src}.Rand, nil
	case "lognormal":
		if mu == 0 {
			return nil, fmt.Errorf("%v: a lognormal needs a positive mean", j)
		}
		s2 := math.Log1p(sd * sd / (mu * mu))
		return distuv.LogNormal{Mu: math.Log(mu) - s2/2, Sigma: math.Sqrt(s2), Src: src}.Rand, nil
	case "gamma":
		if mu == 0 || sd == 0 {
			return nil, fmt.Errorf("%v: a gamma needs a positive mean and stddev", j)
		}
		return distuv.Gamma{Alpha: mu * mu / (sd * sd), Beta: mu / (sd * sd), Src: src}.Rand, nil
	case "uniform":
		w := sd * math.Sqrt(3)
		if mu-w < 0 {
			return nil, fmt.Errorf("%v: the uniform range goes below zero", j)
		}
		return distuv.Uniform{Min: mu - w, Max: mu + w, Src: src}.Rand, nil
	case "pareto":
		if mu == 0 || sd == 0 {
			return nil, fmt.Errorf("%v: a pareto needs a positive mean and stddev", j)
		}
		alpha := 1 + math.Sqrt(1+mu*mu/(sd*sd))
		return distuv.Pareto{Xm: mu * (alpha - 1) / alpha, Alpha: alpha, Src: src}.Rand, nil
	}
	return nil, fmt.Errorf("jitter distribution %q: want constant, exponential, normal, lognormal, gamma, uniform or pareto", j.Dist)
}

func (j Jitter) apply(n *faultyNet) error {
	draw, err := j.sampler(n.stream("jitter"))
	if err != nil {
		return err
	}
	n.jitter = append(n.jitter, draw)
	return nil
}

// Straggler makes one rank's compute (reductions and per-message
// overheads) Factor times slower (kind = "straggler"; keys "rank",
// "factor").
type Straggler struct {
	Rank   int
	Factor float64
}

func (s Straggler) String() string {
	return fmt.Sprintf("rank %d computes %gx slower", s.Rank, s.Factor)
}

// checkFactor rejects a slow-down factor that is not a positive finite
// number; f names the fault in the error.
func checkFactor(f fmt.Stringer, factor float64) error {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return fmt.Errorf("%v: factor must be positive", f)
	}
	return nil
}

func (s Straggler) apply(n *faultyNet) error {
	if err := n.checkRank(s.Rank); err != nil {
		return fmt.Errorf("%v: %w", s, err)
	}
	if err := checkFactor(s, s.Factor); err != nil {
		return err
	}
	n.slow[s.Rank] *= s.Factor
	return nil
}

// Stragglers makes Count ranks, drawn at random from the run's seed,
// compute Factor times slower (kind = "stragglers"; keys "count",
// "factor").
type Stragglers struct {
	Count  int
	Factor float64
}

func (s Stragglers) String() string {
	return fmt.Sprintf("%d random ranks compute %gx slower", s.Count, s.Factor)
}

func (s Stragglers) apply(n *faultyNet) error {
	w := n.e.World()
	if s.Count < 0 || s.Count > w {
		return fmt.Errorf("%v: count must be between 0 and the world size %d", s, w)
	}
	if err := checkFactor(s, s.Factor); err != nil {
		return err
	}
	for _, r := range rand.New(n.stream("stragglers")).Perm(w)[:s.Count] {
		n.slow[r] *= s.Factor
	}
	return nil
}

// SlowLink runs a link at Factor times its bandwidth from time At on
// (kind = "slow_link"; keys "link", "factor", "at"). Link names edges as
// Topology.FindEdges does: "a->b" one direction, "a<->b" both. The model
// must be built on a topology (the flow model).
type SlowLink struct {
	Link   string
	Factor float64
	At     Time
}

func (s SlowLink) String() string {
	return fmt.Sprintf("link %s at %gx bandwidth from %v", s.Link, s.Factor, s.At)
}

func (s SlowLink) apply(n *faultyNet) error {
	edges, err := n.edges(s, s.Link, s.At)
	if err != nil {
		return err
	}
	if err := checkFactor(s, s.Factor); err != nil {
		return err
	}
	t := n.Topology()
	for _, e := range edges {
		if math.IsInf(t.edges[e].Bandwidth, 1) {
			return fmt.Errorf("%v: edge %s has unlimited bandwidth", s, t.edges[e].Name)
		}
	}
	n.e.At(s.At, &faultEvent{fn: func() {
		for _, e := range edges {
			n.ScaleLink(e, s.Factor)
		}
	}})
	return nil
}

// LinkFailure makes a link fail at time At (kind = "link_failure"; keys
// "link", "at"): see Flow for what happens to the messages crossing it.
type LinkFailure struct {
	Link string
	At   Time
}

func (l LinkFailure) String() string { return fmt.Sprintf("link %s fails at %v", l.Link, l.At) }

func (l LinkFailure) apply(n *faultyNet) error {
	edges, err := n.edges(l, l.Link, l.At)
	if err != nil {
		return err
	}
	n.failedEdges = append(n.failedEdges, edges...)
	n.e.At(l.At, &faultEvent{fn: func() {
		for _, e := range edges {
			n.FailLink(e)
		}
	}})
	return nil
}

// RankFailure makes a rank fail (crash) at time At (kind =
// "rank_failure"; keys "rank", "at"): see Engine.FailRank. The switch
// operations it has not posted, or whose contribution it has not
// delivered to the switch, fail too (see SwitchNetwork).
type RankFailure struct {
	Rank int
	At   Time
}

func (r RankFailure) String() string { return fmt.Sprintf("rank %d fails at %v", r.Rank, r.At) }

func (r RankFailure) apply(n *faultyNet) error {
	n.ranksFail = true
	if err := n.checkRank(r.Rank); err != nil {
		return fmt.Errorf("%v: %w", r, err)
	}
	if r.At < 0 {
		return fmt.Errorf("%v: time is negative", r)
	}
	cause := r.String()
	n.e.At(r.At, &faultEvent{fn: func() { n.e.FailRank(r.Rank, cause) }})
	return nil
}

// faultEvent runs a fault at its time.
type faultEvent struct{ fn func() }

func (f *faultEvent) Fire() { f.fn() }

// Faulty is a model with faults applied: build it with WithFaults. Seed
// seeds every random draw of the run (jitter, random stragglers); each
// kind of draw has its own PCG stream of the seed, so adding one fault
// does not change the draws of another kind.
type Faulty struct {
	Model  Model
	Seed   uint64
	Faults []Fault
}

// WithFaults returns model with faults applied, drawing randomness from
// seed.
func WithFaults(model Model, seed uint64, faults ...Fault) Faulty {
	return Faulty{Model: model, Seed: seed, Faults: faults}
}

// String lists the faults, for reports.
func (f Faulty) String() string {
	s := make([]string, len(f.Faults))
	for i, x := range f.Faults {
		s[i] = x.String()
	}
	return fmt.Sprintf("%s with seed %d: %s", modelName(f.Model), f.Seed, strings.Join(s, "; "))
}

// Unwrap implements Unwrapper: it returns the model it decorates.
func (f Faulty) Unwrap() Model { return f.Model }

// Rewrap implements Rewrapper: a copy of f that decorates inner.
func (f Faulty) Rewrap(inner Model) Model {
	f.Model = inner
	return f
}

// NewNetwork implements Model; it panics where NewNetworkChecked fails.
func (f Faulty) NewNetwork(e *Engine) Network {
	n, err := f.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (f Faulty) NewNetworkChecked(e *Engine) (Network, error) {
	if f.Model == nil {
		return nil, errors.New("faults on no model")
	}
	inner, err := newInner(f.Model, e)
	if err != nil {
		return nil, err
	}
	n := &faultyNet{wrapped: wrapped{inner}, e: e, seed: f.Seed, slow: make([]float64, e.World()), last: make([]Time, e.World())}
	for i := range n.slow {
		n.slow[i] = 1
	}
	for _, x := range f.Faults {
		if err := x.apply(n); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// mayFail implements failer: a rank or a link may fail.
func (n *faultyNet) mayFail() bool {
	return n.ranksFail || len(n.failedEdges) > 0 || n.wrapped.mayFail()
}

// failsOnlyRerouted implements reroutingFailer: no rank fails, and every
// device still reaches every other once all the scenario's links have
// failed, so the flow model reroutes every message a failure meets and
// none fails. It is asked once, by a replay about to start, so the
// topology is walked then rather than whenever the network is built.
func (n *faultyNet) failsOnlyRerouted() bool {
	return !n.ranksFail && (len(n.failedEdges) == 0 || n.Topology().devicesConnectedWithout(n.failedEdges)) &&
		n.wrapped.failsOnlyRerouted()
}

// faultyNet is the state of a Faulty model for one run.
type faultyNet struct {
	wrapped
	e    *Engine
	seed uint64
	// ranksFail is set by a rank failure; failedEdges are the edges the
	// link failures fail. Either makes the network one that may fail.
	ranksFail   bool
	failedEdges []int
	slow        []float64        // compute slowdown per rank
	jitter      []func() float64 // delay samplers, in seconds
	last        []Time           // per sender: when its last message entered the network
	held        []*heldMessage   // messages delayed by jitter, not yet posted
}

// stream returns the PCG source of the seed for one kind of draw.
func (n *faultyNet) stream(kind string) rand.Source {
	h := uint64(14695981039346656037) // FNV-1a of the kind
	for i := range len(kind) {
		h = (h ^ uint64(kind[i])) * 1099511628211
	}
	return rand.NewPCG(n.seed, h)
}

func (n *faultyNet) checkRank(r int) error {
	if r < 0 || r >= n.e.World() {
		return fmt.Errorf("rank %d outside world of %d ranks", r, n.e.World())
	}
	return nil
}

// edges resolves a fault's link on the topology.
func (n *faultyNet) edges(f Fault, link string, at Time) ([]int, error) {
	t := n.Topology()
	if t == nil {
		return nil, fmt.Errorf("%v: the network model has no links (use the flow model)", f)
	}
	if at < 0 {
		return nil, fmt.Errorf("%v: time is negative", f)
	}
	ids, err := t.FindEdges(link)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", f, err)
	}
	return ids, nil
}

// heldMessage is a message waiting out its jitter.
type heldMessage struct {
	n       *faultyNet
	m       *Message
	idx     int
	dropped bool
}

func (h *heldMessage) Fire() {
	if h.dropped {
		return
	}
	n := h.n
	last := len(n.held) - 1
	n.held[h.idx] = n.held[last]
	n.held[h.idx].idx = h.idx
	n.held = n.held[:last]
	n.inner.Post(h.m)
}

func (n *faultyNet) Post(m *Message) {
	now := n.e.Now()
	var d float64
	for _, draw := range n.jitter {
		d += max(draw(), 0)
	}
	at := max(now+FromSeconds(d), n.last[m.Src])
	n.last[m.Src] = at
	if at == now {
		n.inner.Post(m)
		return
	}
	h := &heldMessage{n: n, m: m, idx: len(n.held)}
	n.held = append(n.held, h)
	n.e.At(at, h)
}

func (n *faultyNet) scale(rank int, t Time) Time {
	if f := n.slow[rank]; f != 1 && t > 0 {
		return Time(math.Round(float64(t) * f))
	}
	return t
}

func (n *faultyNet) ReduceTime(rank, bytes int) Time {
	return n.scale(rank, n.inner.ReduceTime(rank, bytes))
}

func (n *faultyNet) SendOverhead(rank, bytes int) Time {
	return n.scale(rank, n.wrapped.SendOverhead(rank, bytes))
}

func (n *faultyNet) RecvOverhead(rank, bytes int) Time {
	return n.scale(rank, n.wrapped.RecvOverhead(rank, bytes))
}

// DropRank implements RankDropper: messages held by jitter are dropped
// here, the rest by the inner network.
func (n *faultyNet) DropRank(rank int) []*Message {
	out := n.wrapped.DropRank(rank)
	keep := n.held[:0]
	for _, h := range n.held {
		if h.m.Src == rank || h.m.Dst == rank {
			h.dropped = true
			out = append(out, h.m)
		} else {
			h.idx = len(keep)
			keep = append(keep, h)
		}
	}
	clear(n.held[len(keep):])
	n.held = keep
	slices.SortFunc(out, func(a, b *Message) int { return cmpInt64(a.ID, b.ID) })
	return out
}

// modelName is a model's own description if it has one, else its type.
func modelName(m Model) string {
	if s, ok := m.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", m)
}
