package sim

import (
	"math"

	"github.com/nexar-go/nexar-go/algos"
)

// Model describes a network: its parameters, free of the state of any run.
// A Model is safe to use from several runs at once.
type Model interface {
	// NewNetwork returns the state of the network for one run on e.
	NewNetwork(e *Engine) Network
}

// Network decides when messages between ranks move and how long local
// reductions take, for one run. The engine calls it from one goroutine.
type Network interface {
	// Post hands the network a message that its sender has just posted,
	// at e.Now(). The network must eventually call e.Deliver(m).
	// Messages from a rank to itself never reach the network.
	Post(m *Message)
	// Settle is called once all events of the current instant have run,
	// and again whenever it schedules events at the current instant. A
	// network that arbitrates between messages asking for the same
	// resource at the same instant does it here, so that the outcome does
	// not depend on the order in which ranks ran.
	Settle()
	// ReduceTime is the compute time of rank for reducing bytes (the size
	// of one operand).
	ReduceTime(rank, bytes int) Time
}

// Message is one point-to-point message in flight. The engine reuses a
// message once the receive it matched has taken it: a network must not
// keep it after it calls Deliver or Drop (it may read it until that call
// returns), nor an observer after MessageDelivered returns.
type Message struct {
	Src, Dst int
	Tag      algos.Tag
	Bytes    int
	// ID numbers messages in the order they were posted, from 0.
	ID int64
	// Posted is when the sender posted the message.
	Posted Time

	// extra holds what few messages have: nil for most (a message of a
	// 2^24-rank run is 104 bytes).
	extra *msgExtra
	send  *request
	// next links the messages waiting for their sender's egress port on
	// the alpha-beta model (abPort.head), the messages waiting for a receiver
	// on it (abPort.askers), and the engine's free messages.
	next *Message

	// mseq holds, in its low 62 bits, the message's place among those
	// from Src to Dst with Tag: it matches the seq-th receive Dst posts
	// for them (see matchQueue); and two flags (msgMatched: the receive
	// it matches is posted; msgArrived: it is delivered), in what would
	// otherwise be a word of padding.
	mseq uint64

	// What the network carries and how fast, set by a Protocol (the
	// engine sets Bytes and factors of 1): wire bytes (the payload and
	// the envelope), and the factors its latency and bandwidth are
	// multiplied by.
	wire          int
	latFac, bwFac float64
}

// The flags of Message.mseq, above its sequence number.
const (
	msgMatched = 1 << 62
	msgArrived = 1 << 63
	msgSeqMask = msgMatched - 1
)

// seq is m's place among the messages from Src to Dst with Tag.
func (m *Message) seq() int64 { return int64(m.mseq & msgSeqMask) }

// setSeq sets m's place, keeping its flags.
func (m *Message) setSeq(k int64) { m.mseq = m.mseq&^msgSeqMask | uint64(k) }

// setMatched marks m matched: the receive it matches is posted.
func (m *Message) setMatched() { m.mseq |= msgMatched }

// isArrived reports whether m was delivered.
func (m *Message) isArrived() bool { return m.mseq&msgArrived != 0 }

// setArrived marks m delivered.
func (m *Message) setArrived() { m.mseq |= msgArrived }

// msgExtra is what a message seldom has.
type msgExtra struct {
	payload []byte // a private copy of host data; nil for phantom data
	// err is set on a message the network gave up on (Engine.Drop): the
	// receive it matches fails with it.
	err error
	// relay is set on a hop of a relayed message (see Relayed): the
	// engine hands it back to its relay rather than to a rank.
	relay *relay
	// part is set on the alpha-beta model's messages to and from its
	// switch (see AlphaBeta), which never reach the engine.
	part *abPart
}

// partOf returns the alpha-beta switch part m carries, or nil.
func (m *Message) partOf() *abPart {
	if m.extra == nil {
		return nil
	}
	return m.extra.part
}

// relayOf returns the relay of a hop of a relayed message, or nil.
func (m *Message) relayOf() *relay {
	if m.extra == nil {
		return nil
	}
	return m.extra.relay
}

// more returns m's extra fields, making them.
func (m *Message) more() *msgExtra {
	if m.extra == nil {
		m.extra = &msgExtra{}
	}
	return m.extra
}

// Matched reports whether the receive m matches has been posted: a
// rendezvous may start.
func (m *Message) Matched() bool { return m.mseq&msgMatched != 0 }

// WireBytes is the number of bytes m puts on the wire: its payload and,
// under a Protocol, its envelope.
func (m *Message) WireBytes() int { return m.wire }

// latency is lat scaled by m's latency factor.
func (m *Message) latency(lat Time) Time {
	if m.latFac == 1 || lat == 0 {
		return lat
	}
	return Time(math.Round(float64(lat) * m.latFac))
}

// transferTime is the time m's wire bytes take at bandwidth bw scaled by
// m's bandwidth factor.
func (m *Message) transferTime(bw float64) Time {
	return TransferTime(m.wire, bw*m.bwFac)
}

// wireVolume is what m's bytes count for on a shared link: its wire bytes
// divided by its bandwidth factor, so that it moves at the factor times
// its share of the link, as SimGrid's bandwidth factors do.
func (m *Message) wireVolume() float64 {
	return float64(m.wire) / m.bwFac
}

// The optional interfaces below extend Network. The engine and the fault
// decorator look for them with a type assertion; a network that lacks one
// simply does not model what it describes. Decorators forward them.

// CheckedModel is a Model that can fail to fit a world (a topology too
// small, a bad placement). Run calls NewNetworkChecked instead of
// NewNetwork and returns its error.
type CheckedModel interface {
	Model
	NewNetworkChecked(e *Engine) (Network, error)
}

// Unwrapper is implemented by models that decorate another (Faulty,
// Overhead, Staged, Protocol, Relayed, and those of other packages, such
// as a scenario's flow model placed for each world): Unwrap returns the
// model it decorates. What looks through decorators for the network
// underneath (Estimate's figures, HostBandwidthOf, whether a run may
// fail ranks or links) asks it, so a decorator is seen through wherever
// it is defined; one that does not implement it hides what it wraps.
type Unwrapper interface {
	Unwrap() Model
}

// Rewrapper is a decorator that can put its decoration around another
// model: Rewrap returns a copy of it that decorates inner instead of
// what it decorated, or nil where inner is not a model it can decorate.
// EstimateRun's time estimate for the flow model rebuilds the decorators
// around a flow model that counts its work this way; a decorator that
// implements Unwrapper but not Rewrapper leaves that estimate to the
// price of the run's events (see Estimate.Seconds), which does not see
// the flow model's max-min work.
type Rewrapper interface {
	Unwrapper
	Rewrap(inner Model) Model
}

// Overheads is implemented by networks that charge CPU time per message
// (LogGP's o). SendOverhead is spent by the sending process inside Isend,
// on its rank's compute, before the message reaches the network;
// RecvOverhead is spent on the receiving rank's compute when a message is
// matched to its receive, which completes after it. Both are serialised
// with the rank's reductions.
type Overheads interface {
	SendOverhead(rank, bytes int) Time
	RecvOverhead(rank, bytes int) Time
}

// RankDropper is implemented by networks that can forget the messages of
// a failed rank. DropRank removes every message from or to rank that the
// network holds, started or not, and returns them in the order they were
// posted; the engine fails the sends to the rank and loses the rest.
// Networks without it keep carrying such messages; the engine then fails
// or loses them when they are delivered.
type RankDropper interface {
	DropRank(rank int) []*Message
}

// LinkFaulter is implemented by networks built on a Topology, whose links
// can fail or slow down. Edges are indices into Topology().Edges().
type LinkFaulter interface {
	Topology() *Topology
	// FailLink makes edge carry nothing from now on.
	FailLink(edge int)
	// ScaleLink sets edge's bandwidth to factor times its nominal one.
	ScaleLink(edge int, factor float64)
}

// Matcher is implemented by networks that hold messages until the
// receive they match is posted (a rendezvous protocol). The engine calls
// Matched(m) when that receive is posted after m was; a message whose
// receive was posted first is already Matched when Post sees it.
// Decorators forward it.
type Matcher interface {
	Matched(m *Message)
}

// Holder is implemented by networks that hold messages for their receive
// (see Matcher). When a rank has returned, so that it will post no more
// receives, the engine calls HeldFor with it: the network returns, and
// forgets, the messages to it that it holds, and the engine fails their
// sends with a *NoReceiveError. Decorators forward it.
type Holder interface {
	HeldFor(rank int) []*Message
}

// LinkReporter is implemented by networks that account for their links;
// Run puts the report, taken at the end of the run, in Result.Links.
type LinkReporter interface {
	LinkUsage(end Time) []LinkUsage
}
