package synth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// Collectives are the collectives Synth makes algorithms of, by their
// names in package algos.
var Collectives = []string{"broadcast", "allgather", "allreduce", "reduce", "reduce_scatter"}

// WithFailed returns spec with links failed (each named as
// sim.Topology.FindEdges names them: "a<->b", "a-b" both directions,
// "a->b" one), which the topologies it builds lack (see Without): what a
// scenario's links that fail from the start leave to pack trees on.
func WithFailed(spec sim.TopologySpec, links ...string) sim.TopologySpec {
	if len(links) == 0 {
		return spec
	}
	return failedSpec{spec, slices.Clone(links)}
}

type failedSpec struct {
	spec  sim.TopologySpec
	links []string
}

func (f failedSpec) Build(world int) (*sim.Topology, error) {
	t, err := f.spec.Build(world)
	for _, l := range f.links {
		if err != nil {
			return nil, err
		}
		t, err = Without(t, l)
	}
	return t, err
}

func (f failedSpec) String() string {
	return fmt.Sprintf("%v without %s", f.spec, strings.Join(f.links, ", "))
}

// Algorithm returns the synthesized algorithm of collective (one of
// Collectives), named name.
func (s *Synth) Algorithm(collective, name string) (*algos.Algorithm, error) {
	switch collective {
	case "broadcast":
		bc, _ := s.Algorithms(name)
		return bc, nil
	case "allgather":
		_, ag := s.Algorithms(name)
		return ag, nil
	case "allreduce":
		return s.Allreduce(name), nil
	case "reduce":
		return s.Reduce(name), nil
	case "reduce_scatter":
		return s.ReduceScatter(name), nil
	}
	return nil, fmt.Errorf("no synthesized %s: the trees make %s", collective, strings.Join(Collectives, ", "))
}

// Prepare packs the trees that collective's algorithm runs on world
// ranks, so that a topology too small for world, or one whose trees
// cannot be packed, is reported before a run.
func (s *Synth) Prepare(collective string, world int) error {
	kind := 1
	if collective == "broadcast" || collective == "reduce" {
		kind = 0
	}
	_, err := s.plan(world, kind)
	return err
}
