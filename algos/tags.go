package algos

import (
	"context"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Tags are 64 bits, split so that messages of different communicators and
// of different operations on one communicator never match each other:
//
//	bits 63..40  communicator (0 for the world; Split gives each sub-communicator its own)
//	bits 39..16  operation sequence number on the communicator (wraps)
//	bits 15..0   the algorithm's own tag (phase or step)
//
// Algorithms use only the low 16 bits; whoever calls them (Comm) scopes
// the link so the high bits are set.
const (
	AlgoTagBits = 16
	OpSeqBits   = 24
	CommBits    = 64 - AlgoTagBits - OpSeqBits

	algoTagMask Tag = 1<<AlgoTagBits - 1
	opSeqMask   Tag = 1<<OpSeqBits - 1
)

// ScopeTag returns the tag an algorithm's tag t becomes on communicator
// comm in operation seq.
func ScopeTag(comm, seq uint64, t Tag) Tag {
	return Tag(comm)<<(AlgoTagBits+OpSeqBits) | (Tag(seq)&opSeqMask)<<AlgoTagBits | t&algoTagMask
}

// Scoped returns a Link whose tags are rewritten with ScopeTag(comm, seq,
// tag), so that an algorithm run through it cannot match messages of any
// other operation or communicator. It keeps what l can do besides: it is
// a Spawner, a Delayer or a Signaler where l (or a link l decorates, see
// Unwrapper) is one, and a MachineLink with l's machine, so an algorithm
// that asks its link for one of them directly gets the same answer
// through the scope as SpawnerOf, Delay, NewStreams and MachineOf give.
func Scoped(l Link, comm, seq uint64) Link {
	return scope(l, ScopeTag(comm, seq, 0))
}

type scopedLink struct {
	Link
	base Tag
}

// scoper is implemented by every link scope returns: the *scopedLink
// under the optional interfaces it keeps.
type scoper interface{ scoped() *scopedLink }

func (s *scopedLink) scoped() *scopedLink { return s }

// asScoped returns the scopedLink of a link Scoped returned.
func asScoped(l Link) (*scopedLink, bool) {
	if x, ok := l.(scoper); ok {
		return x.scoped(), true
	}
	return nil, false
}

// scope returns l with its tags scoped by base, keeping the optional
// interfaces whose presence changes what callers do (Spawner, Delayer,
// Signaler) exactly where l has them, itself or through a decorator: the
// link returned embeds the inner link's, in one of the eight combinations.
// The scopedLink is embedded by value, so that a scope is one allocation.
func scope(l Link, base Tag) Link {
	s := scopedLink{Link: l, base: base}
	sp, spawns := SpawnerOf(l)
	d, delays := delayerOf(l)
	sg, signals := signalerOf(l)
	switch {
	case spawns && delays && signals:
		return &struct {
			scopedLink
			Spawner
			Delayer
			Signaler
		}{s, sp, d, sg}
	case spawns && delays:
		return &struct {
			scopedLink
			Spawner
			Delayer
		}{s, sp, d}
	case spawns && signals:
		return &struct {
			scopedLink
			Spawner
			Signaler
		}{s, sp, sg}
	case delays && signals:
		return &struct {
			scopedLink
			Delayer
			Signaler
		}{s, d, sg}
	case spawns:
		return &struct {
			scopedLink
			Spawner
		}{s, sp}
	case delays:
		return &struct {
			scopedLink
			Delayer
		}{s, d}
	case signals:
		return &struct {
			scopedLink
			Signaler
		}{s, sg}
	}
	only := s
	return &only
}

func (s *scopedLink) Isend(dst int, tag Tag, buf device.Buffer) Request {
	return s.Link.Isend(dst, s.base|tag&algoTagMask, buf)
}

func (s *scopedLink) Irecv(src int, tag Tag, buf device.Buffer) Request {
	return s.Link.Irecv(src, s.base|tag&algoTagMask, buf)
}

// WaitOne implements FixedWaiter: the inner link's wait (through its
// FixedWaiter where it has one).
func (s *scopedLink) WaitOne(ctx context.Context, a Request) error {
	return waitOne(ctx, s.Link, a)
}

// WaitTwo implements FixedWaiter: the inner link's wait (through its
// FixedWaiter where it has one).
func (s *scopedLink) WaitTwo(ctx context.Context, a, b Request) error {
	return waitTwo(ctx, s.Link, a, b)
}

// Unwrap implements Unwrapper.
func (s *scopedLink) Unwrap() Link { return s.Link }

// IsendAfter implements LateSender with the tag scoped (an ordinary send
// where the inner link is no LateSender).
func (s *scopedLink) IsendAfter(d time.Duration, dst int, tag Tag, buf device.Buffer) Request {
	return IsendAfter(s.Link, d, dst, s.base|tag&algoTagMask, buf)
}

// Machine implements MachineLink: the inner link's machine (MachineOf),
// nil if it knows none. A scope changes no rank.
func (s *scopedLink) Machine() *Machine { return MachineOf(s.Link) }

// CanSwitchReduce implements SwitchReducer: the inner link's answer, false
// if it has no switch.
func (s *scopedLink) CanSwitchReduce(group []int) bool {
	sr, ok := s.Link.(SwitchReducer)
	return ok && sr.CanSwitchReduce(group)
}

// ISwitchReduce implements SwitchReducer with the tag scoped.
func (s *scopedLink) ISwitchReduce(group []int, tag Tag, send, recv device.Buffer, dt device.DType, op device.Op) Request {
	sr, ok := s.Link.(SwitchReducer)
	if !ok {
		return noSwitch(s.Link)
	}
	return sr.ISwitchReduce(group, s.base|tag&algoTagMask, send, recv, dt, op)
}

// noSwitch returns a request of l that fails: an in-network reduction on
// a link that has none (callers ask CanSwitchReduce first). A send to rank
// -1 is the one request every link fails at once.
func noSwitch(l Link) Request {
	return l.Isend(-1, 0, device.Phantom(0))
}

var (
	_ Link          = (*scopedLink)(nil)
	_ SwitchReducer = (*scopedLink)(nil)
	_ MachineLink   = (*scopedLink)(nil)
	_ FixedWaiter   = (*scopedLink)(nil)
)
