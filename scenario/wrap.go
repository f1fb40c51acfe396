package scenario

import "github.com/nexar-go/nexar-go/sim"

// Wrapped returns a copy of n whose model, for every seed, is wrap applied
// to n's model for that seed: the network of a scenario as something else
// sees it (nexar-live's prediction of a run on GPU buffers wraps it in
// sim.Staged). Faults, randomness and the rest of n are kept.
func (n *Network) Wrapped(wrap func(sim.Model) sim.Model) *Network {
	w := *n
	w.seeded = func(seed uint64) sim.Model { return wrap(n.Seeded(seed)) }
	w.Sim = wrap(n.Sim)
	return &w
}
