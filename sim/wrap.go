package sim

import "slices"

// wrapped is the base of network decorators: it forwards Network and every
// optional interface to the network it wraps, so that a decorator only
// writes what it changes and the engine still sees what the inner network
// can do.
type wrapped struct {
	inner Network
}

var (
	_ Overheads     = (*wrapped)(nil)
	_ RankDropper   = (*wrapped)(nil)
	_ LinkFaulter   = (*wrapped)(nil)
	_ LinkReporter  = (*wrapped)(nil)
	_ Matcher       = (*wrapped)(nil)
	_ ControlTimer  = (*wrapped)(nil)
	_ Holder        = (*wrapped)(nil)
	_ Placer        = (*wrapped)(nil)
	_ SwitchNetwork = (*wrapped)(nil)
)

func (w *wrapped) Post(m *Message)                 { w.inner.Post(m) }
func (w *wrapped) Settle()                         { w.inner.Settle() }
func (w *wrapped) ReduceTime(rank, bytes int) Time { return w.inner.ReduceTime(rank, bytes) }

func (w *wrapped) SendOverhead(rank, bytes int) Time {
	if o, ok := w.inner.(Overheads); ok {
		return o.SendOverhead(rank, bytes)
	}
	return 0
}

func (w *wrapped) RecvOverhead(rank, bytes int) Time {
	if o, ok := w.inner.(Overheads); ok {
		return o.RecvOverhead(rank, bytes)
	}
	return 0
}

func (w *wrapped) DropRank(rank int) []*Message {
	if d, ok := w.inner.(RankDropper); ok {
		return d.DropRank(rank)
	}
	return nil
}

func (w *wrapped) Matched(m *Message) {
	if mt, ok := w.inner.(Matcher); ok {
		mt.Matched(m)
	}
}

func (w *wrapped) HeldFor(rank int) []*Message {
	if h, ok := w.inner.(Holder); ok {
		return h.HeldFor(rank)
	}
	return nil
}

// ControlTime returns the inner network's time for a control message, or
// 0 if it cannot tell (Protocol checks that it can before it asks).
func (w *wrapped) ControlTime(m *Message) Time {
	if c, ok := w.inner.(ControlTimer); ok {
		return c.ControlTime(m)
	}
	return 0
}

// Topology returns the inner network's topology, or nil if it has none.
func (w *wrapped) Topology() *Topology {
	if f, ok := w.inner.(LinkFaulter); ok {
		return f.Topology()
	}
	return nil
}

// Placement returns the inner network's topology and placement, or nils
// if it has none.
func (w *wrapped) Placement() (*Topology, Placement) {
	if p, ok := w.inner.(Placer); ok {
		return p.Placement()
	}
	return nil, nil
}

// CanSwitchReduce reports whether the inner network has a switch that
// reduces for group; false if it has none.
func (w *wrapped) CanSwitchReduce(group []int) bool {
	s, ok := w.inner.(SwitchNetwork)
	return ok && s.CanSwitchReduce(group)
}

// PostSwitch hands a switch operation to the inner network, untouched
// (no jitter, envelope or relaying): the engine calls it only where
// CanSwitchReduce said yes.
func (w *wrapped) PostSwitch(op *SwitchOp, i int) { w.inner.(SwitchNetwork).PostSwitch(op, i) }

func (w *wrapped) FailLink(edge int) { w.inner.(LinkFaulter).FailLink(edge) }

func (w *wrapped) ScaleLink(edge int, factor float64) { w.inner.(LinkFaulter).ScaleLink(edge, factor) }

func (w *wrapped) LinkUsage(end Time) []LinkUsage {
	if r, ok := w.inner.(LinkReporter); ok {
		return r.LinkUsage(end)
	}
	return nil
}

// newInner builds the network of a wrapped model.
func newInner(m Model, e *Engine) (Network, error) {
	if cm, ok := m.(CheckedModel); ok {
		return cm.NewNetworkChecked(e)
	}
	return m.NewNetwork(e), nil
}

// failer is implemented by networks that may fail ranks or links during a
// run; a replay is not attempted on them, since the body decides what a
// failure does.
type failer interface {
	mayFail() bool
}

func (w *wrapped) mayFail() bool { return !replayable(w.inner) }

// replayable reports whether a replay may run on n: it cannot fail ranks
// or links.
func replayable(n Network) bool {
	f, ok := n.(failer)
	return !ok || !f.mayFail()
}

// reroutingFailer is implemented by networks (Faulty's, and decorators
// over it) that can say their only failures are links whose loss leaves
// every device reachable from every other: the flow model reroutes each
// message a failure meets, so no point-to-point message fails and a
// program's course does not depend on the failures. A switch operation
// may still fail (its route through the reducing switch can be cut).
type reroutingFailer interface {
	failsOnlyRerouted() bool
}

func (w *wrapped) failsOnlyRerouted() bool {
	if f, ok := w.inner.(reroutingFailer); ok {
		return f.failsOnlyRerouted()
	}
	return replayable(w.inner)
}

// replayableFor reports whether a replay of recorded programs may run on
// n: n cannot fail, or, for programs without switch operations, n's only
// failures are links that every message can be rerouted around.
func replayableFor(n Network, switchOps bool) bool {
	if replayable(n) {
		return true
	}
	f, ok := n.(reroutingFailer)
	return ok && !switchOps && f.failsOnlyRerouted()
}

// modelFailsRanks reports whether a model is known, before its network is
// built, to fail ranks (a RankFailure under any decorator): its runs are
// never replayed. A model that fails links only is recorded, and its
// network then says whether a replay may run (replayableFor).
func modelFailsRanks(m Model) bool {
	return modelHasFault(m, func(f Fault) bool { _, ok := f.(RankFailure); return ok })
}

// modelMayFail reports whether a model is known, before its network is
// built, to fail ranks or links: faults of those kinds, under any of the
// decorators (see beneath). (Other models are asked once their network
// is built; see failer.)
func modelMayFail(m Model) bool {
	return modelHasFault(m, func(f Fault) bool {
		switch f.(type) {
		case RankFailure, LinkFailure:
			return true
		}
		return false
	})
}

// modelHasFault reports whether m, or a model beneath its decorators, is
// a Faulty with a fault that is.
func modelHasFault(m Model, is func(Fault) bool) bool {
	if x, ok := m.(Faulty); ok && slices.ContainsFunc(x.Faults, is) {
		return true
	}
	if inner, ok := beneath(m); ok {
		return modelHasFault(inner, is)
	}
	return false
}

// beneath returns the model that m decorates, and false for a model
// that decorates none: what looks through decorators for the network
// underneath asks here. It asks Unwrapper, so a decorator defined outside
// this package (a scenario's placed flow model) is seen through as the
// package's own are.
func beneath(m Model) (Model, bool) {
	if u, ok := m.(Unwrapper); ok {
		if inner := u.Unwrap(); inner != nil {
			return inner, true
		}
	}
	return nil, false
}

var (
	_ Rewrapper = Faulty{}
	_ Rewrapper = Overhead{}
	_ Rewrapper = Staged{}
	_ Rewrapper = Protocol{}
	_ Rewrapper = Relayed{}
)
