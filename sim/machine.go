package sim

import (
	"sync"

	"github.com/nexar-go/nexar-go/algos"
)

// Placer is implemented by networks built on a topology: the topology and
// the device each rank is placed on. It is how a run's links learn the
// node (Node.Domain) of each rank for algos.MachineLink. Decorators
// forward it.
type Placer interface {
	Placement() (*Topology, Placement)
}

// Placement implements Placer.
func (n *flowNet) Placement() (*Topology, Placement) { return n.topo, n.dev }

// machineOf is the Machine a run's links describe (see Config.Machine):
// base, with Node filled from net's topology where base has none (base
// nil and a topology: a Machine of the nodes alone). It returns base
// itself when there is nothing to add.
func machineOf(base *algos.Machine, net Network, world int) *algos.Machine {
	if base != nil && base.Node != nil {
		return base
	}
	pl, ok := net.(Placer)
	if !ok {
		return base
	}
	t, dev := pl.Placement()
	if t == nil || len(dev) < world {
		return base
	}
	node := make([]int, world)
	for r := range node {
		node[r] = t.Domain(dev[r])
	}
	m := &algos.Machine{}
	if base != nil {
		*m = *base
	}
	m.Node = node
	return m
}

// runInfo is what the links of one Run tell their bodies about the
// network itself, the same whether a body runs as a coroutine or is
// being recorded: its Machine (one per run, computed the first time a
// body asks) and, while recording, whether a switch reduces for a group.
// A recording has no engine yet; it asks a network of the run's model
// built for the purpose (the probe), once, and only if a body asks.
type runInfo struct {
	cfg Config

	machineOnce sync.Once
	machine     *algos.Machine

	probeOnce sync.Once
	probe     Network
	// probeMu serialises the recorders' questions to the probe, whose
	// answers may fill caches.
	probeMu sync.Mutex
}

func newRunInfo(cfg Config) *runInfo { return &runInfo{cfg: cfg} }

// machineFrom returns the run's Machine, computing it from the network
// net returns the first time it is asked.
func (ri *runInfo) machineFrom(net func() Network) *algos.Machine {
	ri.machineOnce.Do(func() {
		var n Network
		if ri.cfg.Machine == nil || ri.cfg.Machine.Node == nil {
			n = net()
		}
		ri.machine = machineOf(ri.cfg.Machine, n, ri.cfg.World)
	})
	return ri.machine
}

// probeNet returns the probe: a network of the run's model for its world,
// on an engine that never runs; nil if the model cannot be built (the run
// itself then reports why).
func (ri *runInfo) probeNet() Network {
	ri.probeOnce.Do(func() {
		if ri.cfg.Model == nil || ri.cfg.World < 1 {
			return
		}
		defer func() {
			if recover() != nil {
				ri.probe = nil // a model that panics on its world: Run says why
			}
		}()
		e := &Engine{ranks: rankTable{n: ri.cfg.World}}
		if n, err := newInner(ri.cfg.Model, e); err == nil {
			ri.probe = n
		}
	})
	return ri.probe
}

// recordedMachine is the run's Machine for a recording link.
func (ri *runInfo) recordedMachine() *algos.Machine {
	return ri.machineFrom(ri.probeNet)
}

// canSwitchReduce answers algos.SwitchReducer's CanSwitchReduce for a
// recording link, from the probe.
func (ri *runInfo) canSwitchReduce(group []int) bool {
	n := ri.probeNet()
	ri.probeMu.Lock()
	defer ri.probeMu.Unlock()
	s, ok := n.(SwitchNetwork)
	return ok && s.CanSwitchReduce(group)
}
