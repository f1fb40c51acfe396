package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// DefaultHierarchicalGroup is the default group of HierarchicalAllreduce:
// the GPUs of one node.
const DefaultHierarchicalGroup = 8

// Salts of the sub-communicator ids HierarchicalAllreduce derives.
const (
	saltIntra = 1 + iota
	saltInter
)

// HierarchicalGroup returns the group size HierarchicalAllreduce uses on p
// ranks when asked for groups of group: the largest divisor of p that is
// at most group. Groups must be equal for the levels to line up (block i of
// every group is reduced across groups by the i-th ranks), so a world that
// group does not divide gets smaller groups: 12 ranks with group 8 run as
// 2 groups of 6, a prime world larger than group as p groups of 1 (a flat
// ring across all ranks), and a world of at most group ranks as one group
// (a ring reduce-scatter and allgather, no inter-group step).
func HierarchicalGroup(p, group int) int {
	g := min(max(group, 1), p)
	for p%g != 0 {
		g--
	}
	return g
}

// HierarchicalAllreduce is the two-level allreduce of NCCL-style systems:
// ranks are grouped by g consecutive ranks (a node's GPUs; g from
// HierarchicalGroup), the buffer is reduce-scattered inside each group,
// every rank allreduces its block with the ranks holding the same block in
// the other groups, and the blocks are allgathered inside each group.
//
// The levels run over sub-communicators built with Sub (the groups and the
// "same position in every group" sets are known to every rank, so nothing
// is exchanged): a ring reduce-scatter over the g ranks of a group, a ring
// allreduce over the G = p/g ranks of a position, a ring allgather over the
// group. On alpha-beta, n divisible by p:
//
//	(g-1)α + ((g-1)/g)n(β+γ)                        reduce-scatter in the group
//	+ 2(G-1)α + 2((G-1)/G)(n/g)β + ((G-1)/G)(n/g)γ   allreduce across groups
//	+ (g-1)α + ((g-1)/g)nβ                          allgather in the group
//	= 2(g + G - 2)α + 2((p-1)/p)nβ + ((p-1)/p)nγ
//
// the ring's bandwidth and reduction terms with 2(g + p/g - 2) latencies
// instead of 2(p-1). On a flat network that makes it beat the ring
// whenever both levels have more than one rank; on a real cluster it wins
// because only n/g bytes per rank cross the slow inter-node links.
func HierarchicalAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, group int) error {
	if err := checkPositive("hierarchical", "group", group); err != nil {
		return err
	}
	count, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	r, p := l.Rank(), l.Size()
	g := HierarchicalGroup(p, group)
	gi, li := r/g, r%g
	intraMembers := make([]int, g)
	for i := range intraMembers {
		intraMembers[i] = gi*g + i
	}
	interMembers := make([]int, p/g)
	for i := range interMembers {
		interMembers[i] = i*g + li
	}
	parent, seq := CommID(l), opSeq(l)
	intra, err := Sub(l, intraMembers, deriveCommID(parent, seq, saltIntra, uint64(gi)))
	if err != nil {
		return err
	}
	inter, err := Sub(l, interMembers, deriveCommID(parent, seq, saltInter, uint64(li)))
	if err != nil {
		return err
	}
	bl := blocks{count: count, p: g}
	own := Scratch(l, bl.len(li)*dt.Size())
	if err := reduceScatterBlocks(ctx, intra, buf, own, bl, dt, op); err != nil {
		return err
	}
	if err := RingAllreduce(ctx, inter, own, dt, op); err != nil {
		return err
	}
	if err := allgatherBlocks(ctx, intra, own, buf, bl, dt); err != nil {
		return err
	}
	Release(l, own)
	return nil
}
