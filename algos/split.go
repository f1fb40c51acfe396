package algos

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Sub-communicators.
//
// A sub-communicator is a Link over some of the ranks of another: its ranks
// are numbered 0..len(members)-1, it translates them to the parent's, and it
// writes its communicator id into bits 63..40 of every tag (see tags.go),
// keeping the operation sequence and the algorithm's tag below. Two
// sub-communicators with different ids therefore never match each other's
// messages, even between the same two ranks and with the same algorithm
// running on both at once; nor do they match the world's, whose id is 0.
//
// A sub-communicator of a sub-communicator is built directly over the root
// link, with the ranks translated twice, so its id is not overwritten on
// the way down. Built over a link that Scoped an operation, it keeps the
// operation's sequence number (and so can be used inside that operation by
// an algorithm such as HierarchicalAllreduce).

// tagSplit is the tag of Split's exchange of colors and keys.
const tagSplit Tag = 0x7f00

// commShift is where the communicator id starts in a tag.
const commShift = AlgoTagBits + OpSeqBits

// MaxCommID is the largest communicator id a tag can carry.
const MaxCommID = 1<<CommBits - 1

// withComm replaces the communicator bits of t by id.
func withComm(t Tag, id uint64) Tag {
	return Tag(id)<<commShift | t&(1<<commShift-1)
}

// subLink is a Link over the members of a sub-communicator.
type subLink struct {
	Link        // the root link: never a subLink or a scopedLink
	ranks []int // sub-communicator rank -> root rank
	rank  int
	id    uint64
}

func (s *subLink) Rank() int { return s.rank }
func (s *subLink) Size() int { return len(s.ranks) }

// root translates a rank of s to the root link's, or -1 (which the root
// link rejects with an error on the request) if it is out of range.
func (s *subLink) root(r int) int {
	if r < 0 || r >= len(s.ranks) {
		return -1
	}
	return s.ranks[r]
}

func (s *subLink) Isend(dst int, tag Tag, buf device.Buffer) Request {
	return s.Link.Isend(s.root(dst), withComm(tag, s.id), buf)
}

func (s *subLink) Irecv(src int, tag Tag, buf device.Buffer) Request {
	return s.Link.Irecv(s.root(src), withComm(tag, s.id), buf)
}

// Unwrap implements Unwrapper.
func (s *subLink) Unwrap() Link { return s.Link }

// IsendAfter implements LateSender over the root's ranks, with the
// communicator's id in the tag.
func (s *subLink) IsendAfter(d time.Duration, dst int, tag Tag, buf device.Buffer) Request {
	return IsendAfter(s.Link, d, s.root(dst), withComm(tag, s.id), buf)
}

// Machine implements MachineLink: the root's machine with its ranks
// renumbered as s numbers them; nil if the root knows none.
func (s *subLink) Machine() *Machine {
	m := MachineOf(s.Link)
	if m == nil {
		return nil
	}
	sub := *m
	if m.Node != nil {
		sub.Node = make([]int, len(s.ranks))
		for i, r := range s.ranks {
			sub.Node[i] = m.NodeOf(r)
		}
	}
	return &sub
}

// CanSwitchReduce implements SwitchReducer over the root's ranks.
func (s *subLink) CanSwitchReduce(group []int) bool {
	sr, ok := s.Link.(SwitchReducer)
	if !ok {
		return false
	}
	g, ok := s.rootGroup(group)
	return ok && sr.CanSwitchReduce(g)
}

// ISwitchReduce implements SwitchReducer over the root's ranks, with the
// communicator's id in the tag.
func (s *subLink) ISwitchReduce(group []int, tag Tag, send, recv device.Buffer, dt device.DType, op device.Op) Request {
	sr, ok := s.Link.(SwitchReducer)
	g, inRange := s.rootGroup(group)
	if !ok || !inRange {
		return noSwitch(s.Link)
	}
	return sr.ISwitchReduce(g, withComm(tag, s.id), send, recv, dt, op)
}

// rootGroup translates group to the root's ranks, ascending.
func (s *subLink) rootGroup(group []int) ([]int, bool) {
	g := make([]int, len(group))
	for i, r := range group {
		if g[i] = s.root(r); g[i] < 0 {
			return nil, false
		}
	}
	slices.Sort(g)
	return g, true
}

// spawnSubLink is a subLink over a root link that can spawn processes; it
// spawns them on the root.
type spawnSubLink struct{ *subLink }

func (s spawnSubLink) Spawn(fn func(ctx context.Context) error) Request {
	return s.Link.(Spawner).Spawn(fn)
}

var (
	_ Link          = (*subLink)(nil)
	_ Spawner       = spawnSubLink{}
	_ MachineLink   = (*subLink)(nil)
	_ SwitchReducer = (*subLink)(nil)
)

// Sub returns the sub-communicator of l made of members, in that order
// (member i becomes rank i), with communicator id id. It does not
// communicate: every member must call it with the same members and id,
// which suits sub-communicators whose members every rank can compute, as
// HierarchicalAllreduce's groups. The calling rank must be a member. id
// must be in [1, MaxCommID]; ids of sub-communicators used at the same
// time between the same ranks must differ.
func Sub(l Link, members []int, id uint64) (Link, error) {
	if id == 0 || id > MaxCommID {
		return nil, fmt.Errorf("algos: communicator id %d outside [1, %d]", id, uint64(MaxCommID))
	}
	if pl, ok := asScoped(l); ok {
		s, err := Sub(pl.Link, members, id)
		if err != nil {
			return nil, err
		}
		return scope(s, withComm(pl.base, id)), nil
	}
	if pl, ok := l.(spawnSubLink); ok {
		return Sub(pl.subLink, members, id)
	}
	me, size := l.Rank(), l.Size()
	ranks := make([]int, len(members))
	rank := -1
	seen := make(map[int]bool, len(members))
	for i, m := range members {
		if m < 0 || m >= size {
			return nil, fmt.Errorf("algos: member %d of a sub-communicator outside the parent's %d ranks", m, size)
		}
		if seen[m] {
			return nil, fmt.Errorf("algos: rank %d is twice a member of a sub-communicator", m)
		}
		seen[m] = true
		if m == me {
			rank = i
		}
		ranks[i] = m
	}
	if rank < 0 {
		return nil, fmt.Errorf("algos: rank %d builds a sub-communicator it is not a member of", me)
	}
	root := l
	if ps, ok := l.(*subLink); ok {
		for i, m := range ranks {
			ranks[i] = ps.ranks[m]
		}
		root = ps.Link
	}
	s := &subLink{Link: root, ranks: ranks, rank: rank, id: id}
	if _, ok := root.(Spawner); ok {
		return spawnSubLink{s}, nil
	}
	return s, nil
}

// CommID returns the communicator id l writes into its tags: 0 for the
// world, a sub-communicator's own id, or the id a Scoped link was given.
func CommID(l Link) uint64 {
	if pl, ok := asScoped(l); ok {
		return uint64(pl.base >> commShift)
	}
	switch pl := l.(type) {
	case *subLink:
		return pl.id
	case spawnSubLink:
		return pl.id
	}
	return 0
}

// opSeq returns the operation sequence number of a Scoped link, else 0.
func opSeq(l Link) uint64 {
	if pl, ok := asScoped(l); ok {
		return uint64(pl.base>>AlgoTagBits) & uint64(opSeqMask)
	}
	return 0
}

// unscoped strips the operation scope off l.
func unscoped(l Link) Link {
	if pl, ok := asScoped(l); ok {
		return pl.Link
	}
	return l
}

// ErrSplitNeedsBytes is returned by Split on a link whose buffers carry no
// bytes (the simulator without HostData), over which colors and keys cannot
// be exchanged. Sub builds sub-communicators without exchanging anything.
var ErrSplitNeedsBytes = errors.New("algos: Split needs a link that moves bytes (host buffers); use Sub on phantom links")

// Split partitions the ranks of l into sub-communicators, as MPI_Comm_split:
// the ranks that pass the same color form one, ordered by key and then by
// their rank in l. It returns the calling rank's sub-communicator, or nil
// if color is negative (the rank joins none).
//
// Split is a collective operation on l: every rank of l must call it, in
// the same order relative to l's other operations, or the ranks wait for
// each other forever. Each rank sends its (color, key) to every other, as
// two 64-bit integers, so it costs (p-1)(α + 16β) on alpha-beta.
//
// The new communicator's id is derived from l's communicator id, the
// sequence number of the operation l is scoped to (Scoped, as Comm does for
// each operation), and the color, so every rank computes the same id
// without agreeing on it, and sub-communicators of different Split calls or
// colors get different ids. Ids are 24 bits, so two unrelated
// sub-communicators may share one with probability about 2^-24 per pair;
// two Splits of an unscoped link with the same color always share one (so
// scope Split as Comm does). The returned link is not scoped: scope each
// operation on it, as on the world.
func Split(ctx context.Context, l Link, color, key int) (Link, error) {
	r, p := l.Rank(), l.Size()
	if device.IsPhantom(l.Alloc(0)) {
		return nil, ErrSplitNeedsBytes
	}
	// Host bytes whatever the link's own buffers are: the exchange is
	// control data, read here on the CPU.
	mine := make([]byte, 16*p)
	all := device.Host(mine)
	put := func(b []byte, color, key int) {
		binary.LittleEndian.PutUint64(b, uint64(int64(color)))
		binary.LittleEndian.PutUint64(b[8:], uint64(int64(key)))
	}
	put(mine[16*r:], color, key)
	reqs := make([]Request, 0, 2*(p-1))
	for j := 1; j < p; j++ {
		src := mod(r-j, p)
		reqs = append(reqs, l.Irecv(src, tagSplit, all.Slice(16*src, 16)))
	}
	for j := 1; j < p; j++ {
		reqs = append(reqs, l.Isend(mod(r+j, p), tagSplit, all.Slice(16*r, 16)))
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return nil, err
	}
	if color < 0 {
		return nil, nil
	}
	type entry struct{ key, rank int }
	var group []entry
	for q := 0; q < p; q++ {
		c := int(int64(binary.LittleEndian.Uint64(mine[16*q:])))
		k := int(int64(binary.LittleEndian.Uint64(mine[16*q+8:])))
		if c == color {
			group = append(group, entry{k, q})
		}
	}
	slices.SortFunc(group, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.rank, b.rank))
	})
	members := make([]int, len(group))
	for i, e := range group {
		members[i] = e.rank
	}
	return Sub(unscoped(l), members, deriveCommID(CommID(l), opSeq(l), 0, uint64(int64(color))))
}

// deriveCommID returns a communicator id in [1, MaxCommID] determined by
// its arguments: the parent's id, the sequence number of the operation
// creating it, a salt naming the kind of sub-communicator, and its color.
func deriveCommID(parent, seq, salt, color uint64) uint64 {
	h := mix64(parent + 0x9e3779b97f4a7c15)
	h = mix64(h ^ seq)
	h = mix64(h ^ salt)
	h = mix64(h ^ color)
	id := h & MaxCommID
	if id == 0 || id == parent {
		id = (id + 1) & MaxCommID
		if id == 0 {
			id = 1
		}
	}
	return id
}

// mix64 is the finalizer of SplitMix64: a bijection that scatters bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
