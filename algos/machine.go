package algos

import (
	"context"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Machine describes the hardware a world of ranks runs on, as far as
// algorithms that adapt to it need to know: NCCL's (package algos/nccl)
// build their rings inside and across nodes, their trees over nodes, and
// charge a GPU's per-step costs in the simulator. Algorithms that do not
// adapt ignore it.
type Machine struct {
	// Node is the node each rank runs on, indexed by rank: ranks with the
	// same value share a node's fast fabric (an NVLink domain, which on
	// GB200 NVL72 spans several hosts), and ranks of different nodes talk
	// through the inter-node network. nil means one node for all ranks.
	Node []int
	// GPU names the generation of the ranks' devices, for algorithms that
	// model a GPU's costs: "volta", "ampere", "hopper", "blackwell"; ""
	// when the ranks are not GPUs or the generation is not known, and
	// then no such cost is charged.
	GPU string
	// CPU names the vendor of the hosts' CPUs ("intel", "amd", "arm"),
	// which some of NCCL's figures depend on across nodes; "" is unknown.
	CPU string
	// Channels is the number of channels NCCL builds on this hardware
	// (what its graph search finds, and nccl-tests' INFO line "N coll
	// channels" reports), which NCCL's algorithms use when a call sets
	// none; 0 is unknown, and they use 1.
	Channels int
	// Figures override named figures of the hardware that algorithms
	// read in place of their defaults for GPU and CPU, in SI units (bytes
	// per second, seconds); package algos/nccl lists the names it reads
	// (nccl.Figures). nil or a missing name keeps the default.
	Figures map[string]float64
	// NCCLAlgo and NCCLProto are NCCL_ALGO and NCCL_PROTO as the runs set
	// them ("" unset), which limit what NCCL's tuner may choose (package
	// algos/nccl/tuner).
	NCCLAlgo, NCCLProto string
	// FLOPS is the rate at which one rank's device computes, in
	// floating-point operations per second, for work given as FLOPs
	// (Stream.ComputeFLOPs): the rate a program reaches, not necessarily
	// the datasheet's peak. 0 is unknown, and work given in FLOPs fails.
	FLOPS float64
}

// Nodes returns the number of distinct nodes of m among the first world
// ranks (1 when m.Node is nil).
func (m *Machine) Nodes(world int) int {
	if m == nil || m.Node == nil {
		return 1
	}
	seen := map[int]bool{}
	for r := 0; r < world && r < len(m.Node); r++ {
		seen[m.Node[r]] = true
	}
	return max(len(seen), 1)
}

// NodeOf returns the node of rank r (0 when m or m.Node is nil, or r is
// outside it).
func (m *Machine) NodeOf(r int) int {
	if m == nil || r < 0 || r >= len(m.Node) {
		return 0
	}
	return m.Node[r]
}

// MachineLink is implemented by links that know the hardware their ranks
// run on: the simulator, from the scenario's network (its topology's
// nodes and the scenario's GPU keys); realnet, from the hosts its ranks
// run on. The Machine returned must not be modified.
type MachineLink interface {
	Machine() *Machine
}

// MachineOf returns what l knows of its hardware: l's Machine if it is a
// MachineLink (or a decorator over one, see Unwrapper), else nil (one
// node, no GPU figures).
func MachineOf(l Link) *Machine {
	for l != nil {
		if m, ok := l.(MachineLink); ok {
			return m.Machine()
		}
		l = unwrap(l)
	}
	return nil
}

// Unwrapper is implemented by decorators of links (Scoped, Sub) that
// rewrite tags or ranks but keep the inner link's clock, processes and
// requests: a request of the inner link may be waited on through the
// decorator. Optional interfaces that do not involve tags or ranks
// (Delayer, Spawner, Signaler) are found through it (SpawnerOf, Delay,
// IsModel, NewStreams), and Scoped also keeps them itself; the decorators
// implement those that do (MachineLink, SwitchReducer) themselves. They
// keep the inner link's memory too (its Alloc), so that Scratch takes from
// the inner link's ScratchPool: a decorator that allocates otherwise is
// no Unwrapper.
type Unwrapper interface {
	Unwrap() Link
}

func unwrap(l Link) Link {
	if u, ok := l.(Unwrapper); ok {
		return u.Unwrap()
	}
	return nil
}

// SpawnerOf returns the Spawner of l or of the link it decorates (see
// Unwrapper), and whether there is one.
func SpawnerOf(l Link) (Spawner, bool) {
	for l != nil {
		if s, ok := l.(Spawner); ok {
			return s, true
		}
		l = unwrap(l)
	}
	return nil, false
}

// delayerOf returns the Delayer of l or of the link it decorates.
func delayerOf(l Link) (Delayer, bool) {
	for l != nil {
		if d, ok := l.(Delayer); ok {
			return d, true
		}
		l = unwrap(l)
	}
	return nil, false
}

// signalerOf returns the Signaler of l or of the link it decorates.
func signalerOf(l Link) (Signaler, bool) {
	for l != nil {
		if s, ok := l.(Signaler); ok {
			return s, true
		}
		l = unwrap(l)
	}
	return nil, false
}

// IsModel reports whether l's clock is a model's (the simulator's): l or
// the link it decorates is a Delayer.
func IsModel(l Link) bool {
	_, ok := delayerOf(l)
	return ok
}

// Delayer is implemented by links whose clock is a model: the simulator.
// Delay holds the calling process for d of the link's time, as work the
// hardware does that the program itself does not (a GPU's per-step
// protocol costs: fences, flag polling, the rate at which a channel's
// threads move data), so that the model charges it. Other processes of
// the rank, its compute and its ports go on meanwhile. Links to real
// hardware do not implement it: there that work costs what it costs.
type Delayer interface {
	Delay(ctx context.Context, d time.Duration) error
}

// Delay holds the calling process for d on l's clock if l is a Delayer,
// and does nothing otherwise (see Delayer).
func Delay(ctx context.Context, l Link, d time.Duration) error {
	if dl, ok := delayerOf(l); ok && d > 0 {
		return dl.Delay(ctx, d)
	}
	return nil
}

// SwitchReducer is implemented by links whose network can reduce and
// multicast in its switches: NVLink SHARP (NVLS, the multimem operations
// of an NVSwitch) inside an NVLink domain, InfiniBand SHARP (NCCL's
// CollNet) across nodes. One operation covers a group of ranks: the ranks
// that contribute send their buffers up to a switch that all of the group
// reach, the switch reduces them, and sends the result down to the ranks
// that receive. A multicast (multimem.st) is the operation with one
// contributor; NVLS's ld_reduce is the one with one receiver.
type SwitchReducer interface {
	// CanSwitchReduce reports whether the network has a switch that
	// reduces for the ranks of group (ranks of this link, ascending, this
	// rank among them).
	CanSwitchReduce(group []int) bool
	// ISwitchReduce posts this rank's part in one in-network reduction
	// among group and returns at once. send, if not nil, is this rank's
	// contribution; recv, if not nil, receives the reduction with op over
	// elements of dt of every contribution once all of them have reached
	// the switch. Every rank of the group posts the operation, with the
	// same group, tag, dt and op, and buffers of one length; the k-th
	// operation a rank posts on (group, tag) matches the k-th of every
	// other rank of the group. The request completes for this rank once
	// its contribution has reached the switch and, if it receives, the
	// result is in recv; send must not be modified and recv not touched
	// until then. A network that has no such switch for group fails the
	// request.
	ISwitchReduce(group []int, tag Tag, send, recv device.Buffer, dt device.DType, op device.Op) Request
}

// LateSender is implemented by links whose clock is a model (the
// simulator): IsendAfter posts a send as Isend does, but the message
// leaves d later on the link's clock, as if something the program does
// not run held it that long (NCCL's proxy thread between a GPU and its
// NIC); the calling process goes on at once. The request completes as
// Isend's would from then.
type LateSender interface {
	IsendAfter(d time.Duration, dst int, tag Tag, buf device.Buffer) Request
}

// IsendAfter posts a send that leaves d later on l's clock if l is a
// LateSender, and an ordinary Isend otherwise (on real hardware the
// latency is the hardware's own).
func IsendAfter(l Link, d time.Duration, dst int, tag Tag, buf device.Buffer) Request {
	if ls, ok := l.(LateSender); ok && d > 0 {
		return ls.IsendAfter(d, dst, tag, buf)
	}
	return l.Isend(dst, tag, buf)
}
