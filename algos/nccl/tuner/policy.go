package tuner

import (
	"fmt"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl"
)

// PolicyName is the name of NCCL's choice as a policy, as a scenario's
// policy key gives it.
const PolicyName = "nccl"

// Policy is NCCL's choice as an algos.Policy for "auto": for each call
// it picks the catalogue's algorithm for the pair NCCL 2.30.7 would pick
// on the cluster (nccl_<algorithm>_<protocol>, nccl_pat, nccl_nvls,
// nccl_nvls_tree, nccl_collnet_direct) with NCCL's channel count as its
// "channels" parameter. It covers broadcast, reduce, allgather,
// reduce_scatter and allreduce, and leaves the others to the table.
//
// A call's nodes are the machine's (algos.Machine.Nodes) where the link
// knows them, else the ranks filling the cluster's nodes in order; its
// channels the cluster's Channels, else the machine's, else the model's.
// A Policy is safe for concurrent use: it keeps one Model a communicator
// shape.
type Policy struct {
	cluster Cluster
	mu      sync.Mutex
	models  map[shape]*Model
}

type shape struct{ ranks, nodes, channels int }

// NewPolicy returns NCCL's policy on cluster c.
func NewPolicy(c Cluster) (*Policy, error) {
	if _, err := c.System(max(c.GPUsPerNode, 1)); err != nil {
		return nil, err
	}
	return &Policy{cluster: c, models: map[shape]*Model{}}, nil
}

// Name implements algos.Policy.
func (*Policy) Name() string { return PolicyName }

// Cluster returns the cluster the policy models.
func (p *Policy) Cluster() Cluster { return p.cluster }

// Model returns NCCL's model of a communicator of ranks ranks on nodes
// nodes of the cluster running on channels channels (0: the cluster's or
// the model's).
func (p *Policy) Model(ranks, nodes, channels int) (*Model, error) {
	key := shape{ranks, nodes, channels}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.models[key]; ok {
		return m, nil
	}
	s, err := p.cluster.SystemNodes(ranks, nodes)
	if err != nil {
		return nil, err
	}
	if s.Channels == 0 {
		s.Channels = channels
	}
	m, err := Tune(s)
	if err != nil {
		return nil, err
	}
	p.models[key] = m
	return m, nil
}

// Select implements algos.Policy.
func (p *Policy) Select(collective string, m *algos.Machine, world, bytes, count int) (algos.Choice, error) {
	coll, ok := CollOf(collective)
	if !ok {
		return algos.Choice{}, fmt.Errorf("NCCL's tuner does not choose for %s: %w", collective, algos.ErrNoChoice)
	}
	nodes := (world + p.cluster.GPUsPerNode - 1) / p.cluster.GPUsPerNode
	channels := 0
	if m != nil {
		if m.Node != nil {
			nodes = m.Nodes(world)
		}
		channels = m.Channels
	}
	model, err := p.Model(world, nodes, channels)
	if err != nil {
		return algos.Choice{}, err
	}
	ch, err := model.Choose(Call{Coll: coll, Bytes: bytes})
	if err != nil {
		return algos.Choice{}, err
	}
	name := CatalogueName(ch.Algo, ch.Proto)
	c, err := algos.Lookup(collective)
	if err == nil {
		_, err = c.Algorithm(name)
	}
	if name == "" || err != nil {
		return algos.Choice{}, fmt.Errorf("NCCL would run %s/%s for %s, which the catalogue does not have", ch.Algo, ch.Proto, collective)
	}
	return algos.Choice{Algorithm: name, Params: map[string]int{"channels": ch.Channels},
		From: fmt.Sprintf("policy nccl: %s/%s on %d channels, %.1f us predicted", ch.Algo, ch.Proto, ch.Channels, ch.Time)}, nil
}

// CatalogueName returns the name of the catalogue's algorithm that runs
// NCCL's a over p (package algos/nccl): "nccl_ring_ll", "nccl_tree_simple",
// "nccl_pat", "nccl_nvls", "nccl_nvls_tree", "nccl_collnet_direct"; "" for
// a pair the catalogue has no algorithm for (CollNet chain, or a protocol
// other than Simple for PAT, NVLS and CollNet).
func CatalogueName(a Algo, p Protocol) string {
	switch a {
	case Ring, Tree:
		return "nccl_" + a.String() + "_" + p.String()
	case PAT, NVLS, NVLSTree, CollNetDirect:
		if p == nccl.Simple {
			return "nccl_" + a.String()
		}
	}
	return ""
}

// ParseCatalogueName returns NCCL's algorithm and protocol of a catalogue
// algorithm's name, the inverse of CatalogueName, and false for a name
// that is not one of NCCL's.
func ParseCatalogueName(name string) (Algo, Protocol, bool) {
	for a := range NumAlgos {
		for p := range Protocol(NumProtocols) {
			if n := CatalogueName(a, p); n != "" && n == name {
				return a, p, true
			}
		}
	}
	return 0, 0, false
}

var _ algos.Policy = (*Policy)(nil)
