package scenario

import (
	"context"
	"fmt"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/schedule/synth"
	"github.com/nexar-go/nexar-go/sim"
)

// SynthTree is the name by which a sweep runs the spanning trees that
// package schedule/synth packs to the max-flow bound of the scenario's
// own network, as the algorithm of the sweep's collective (broadcast,
// allgather, allreduce, reduce or reduce_scatter): the flow model's
// topology, built for each world with ranks on devices 0..world-1, less
// the links of [[fault]]s of kind "link_failure" that fail at time 0. The
// trees are packed once per world when the scenario is read.
const SynthTree = "synth_tree"

// synthTopology returns what synth_tree packs on for the network model
// named model, built as m and suffering faults, or why it cannot.
func synthTopology(model string, m *builtModel, faults []sim.Fault) (sim.TopologySpec, string) {
	if m.topology == nil {
		return nil, fmt.Sprintf("the network model %q has no topology to pack trees on (synth_tree wants model = \"flow\")", model)
	}
	if m.placement != "linear" {
		return nil, fmt.Sprintf("synth_tree packs its trees for ranks on devices 0..world-1, not placement = %q (leave placement out, or \"linear\")", m.placement)
	}
	var failed []string
	for _, f := range faults {
		lf, ok := f.(sim.LinkFailure)
		if !ok {
			continue
		}
		if lf.At != 0 {
			return nil, fmt.Sprintf("%v: synth_tree packs its trees before the run, on the links that fail at 0 only", lf)
		}
		failed = append(failed, lf.Link)
	}
	return synth.WithFailed(m.topology, failed...), ""
}

// synthAlgorithm returns synth_tree as the algorithm of collective.
func (c *checker) synthAlgorithm(collective string) (*algos.Algorithm, error) {
	if c.synthTopo == nil {
		why := c.synthWhy
		if why == "" {
			why = "the [network] is bad or missing"
		}
		return nil, fmt.Errorf("algorithm %q: %s", SynthTree, why)
	}
	if c.synth == nil {
		c.synth = synth.NewSynth(c.synthTopo)
	}
	a, err := c.synth.Algorithm(collective, SynthTree)
	if err != nil {
		return nil, err
	}
	return a, registerSynthName(collective, a)
}

var synthNameMu sync.Mutex

// registerSynthName puts a stand-in for a, a synth_tree of collective, in
// the catalogue, where the tools that read a sweep's rows (derive's
// crossovers and tuning tables) look its name up; it runs nothing: the
// trees are the scenario's, which a sweep runs (Sweep.Algorithms). A
// synth_tree already there (synth.Register's, in a program of the user's)
// stays.
func registerSynthName(collective string, a *algos.Algorithm) error {
	synthNameMu.Lock()
	defer synthNameMu.Unlock()
	coll, err := algos.Lookup(collective)
	if err != nil {
		return err
	}
	if _, err := coll.Algorithm(a.Name); err == nil {
		return nil
	}
	stand := *a
	stand.Run = func(context.Context, algos.Link, algos.Call) error {
		return fmt.Errorf("%s %s: its trees are packed for a scenario's topology: name it in a sweep of that scenario", collective, a.Name)
	}
	return algos.RegisterAlgorithm(collective, &stand)
}

// prepareSynth packs the trees of sw's synth_tree for each of its worlds,
// reporting on the world key those it cannot.
func (c *checker) prepareSynth(t *table, sw *Sweep) {
	if c.synth == nil || sw.Collective == nil {
		return
	}
	for _, a := range sw.Algorithms {
		if a.Name != SynthTree || a.Family != "synth" {
			continue
		}
		for _, w := range sw.World {
			if err := c.synth.Prepare(sw.Collective.Name, w); err != nil {
				t.errorf(joinPath(t.path, "world"), "%s for world %d: %v", SynthTree, w, err)
			}
		}
	}
}
