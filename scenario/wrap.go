package scenario

import (
	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// Wrapped returns a copy of n whose model, for every seed, is wrap applied
// to n's model for that seed: the network of a scenario as something else
// sees it (nexar-live's prediction of a run on GPU buffers wraps it in
// sim.Staged). Faults, randomness and the rest of n are kept.
func (n *Network) Wrapped(wrap func(sim.Model) sim.Model) *Network {
	w := *n
	w.seeded = func(seed uint64) sim.Model { return wrap(n.Seeded(seed)) }
	w.Sim = wrap(n.Sim)
	if n.withThresholds != nil {
		w.withThresholds = func(t algos.Thresholds) func(uint64) sim.Model {
			inner := n.withThresholds(t)
			return func(seed uint64) sim.Model { return wrap(inner(seed)) }
		}
	}
	return &w
}

// WithThresholds returns a copy of n whose model sends messages by realnet's
// thresholds t instead of those of the file (its bulk_threshold and
// eager_threshold): the network that predicts a run whose ranks used t.
// Only a model of realnet's transport (model = "realnet", sim.TwoPaths)
// has thresholds; on any other WithThresholds returns n itself, and
// HasThresholds says which.
func (n *Network) WithThresholds(t algos.Thresholds) *Network {
	if n.withThresholds == nil {
		return n
	}
	w := *n
	w.seeded = n.withThresholds(t)
	w.Sim = w.seeded(n.seed)
	return &w
}

// HasThresholds reports whether n's model has realnet's thresholds, which
// WithThresholds replaces.
func (n *Network) HasThresholds() bool { return n.withThresholds != nil }
