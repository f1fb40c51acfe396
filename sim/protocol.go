package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Protocol gives a network model an MPI library's message protocol (keys
// eager_limit, envelope, lat_factors, bw_factors and handshake of
// [network], for any model). Every field is a plain value that a fitter
// may set.
//
// Eager and rendezvous. With EagerLimit >= 0, a message of fewer payload
// bytes is eager: its send completes as soon as it is posted (the library
// copied it), so the sender's next send may overlap it on the wire; it
// moves once its receive is posted, as SimGrid SMPI's detached sends do,
// or at once, to wait at the receiver, with EagerAtOnce (an MPI library's
// eager protocol over TCP). A message of EagerLimit bytes or more goes by
// rendezvous: it reaches the network only once the receive it matches is
// posted and the Handshake is done, and its send completes when it is
// delivered. With EagerLimit < 0 there is no protocol: sends complete on
// delivery and messages move at once, the models' behaviour on their own.
//
// What that means per model: on the flow model with unlimited slots, a
// rank's eager sends share its link while its blocking rendezvous sends go
// one at a time (with the defaults, SimGrid SMPI's protocol exactly). On
// LogGP a message is handed to the NIC when it may start. On alpha-beta a rank has one
// egress port: eager messages still cross it one after the other in the
// order they were posted (the protocol frees the sender, not the port),
// and a rendezvous joins the port's queue when it may start.
//
// Envelope bytes are added to every message on the wire (SimGrid SMPI
// adds 16). The factors scale each message's latency and bandwidth by its
// size on the wire, envelope included, as SimGrid's smpi/lat-factor and
// smpi/bw-factor do: a bandwidth factor f makes a message move at f times
// the bandwidth it is given, holding its share of every link (the rest is
// overhead on the wire).
//
// Switch operations (SwitchNetwork) are not messages: they go to Model as
// they are, with no envelope, factors or rendezvous.
type Protocol struct {
	Model Model
	// EagerLimit is the size in bytes from which messages go by
	// rendezvous (key "eager_limit"); negative: no protocol, 0: every
	// message by rendezvous.
	EagerLimit int
	// Envelope is the bytes added to every message on the wire (key
	// "envelope").
	Envelope int
	// LatencyFactors and BandwidthFactors scale a message's latency and
	// bandwidth by its size on the wire (keys "lat_factors",
	// "bw_factors"); nil is 1 at every size.
	LatencyFactors, BandwidthFactors Factors
	// Handshake is what a rendezvous costs before its payload moves (keys
	// "handshake", "handshake_delay").
	Handshake Handshake
	// EagerAtOnce makes eager messages move as soon as they are sent, to
	// wait in the receiver's memory for their receive (key eager_moves =
	// "at_once"), as the eager protocol of an MPI library over TCP does.
	// By default (eager_moves = "on_match") an eager message moves once
	// its receive is posted, as SimGrid SMPI's detached sends do: its
	// sender is free at once all the same.
	EagerAtOnce bool
}

// NoProtocol is the EagerLimit of a Protocol that only adds its envelope
// and factors: sends complete on delivery, messages move at once.
const NoProtocol = -1

// Handshake is the cost of a rendezvous before its payload moves. The zero
// Handshake costs nothing: the payload starts the moment both the send
// and the matching receive are posted, as in SimGrid SMPI.
type Handshake struct {
	// RTSCTS charges the control messages of a real rendezvous: a request
	// to send leaves when the send is posted; once it has arrived and the
	// receive is posted, a clear to send goes back; the payload starts
	// when that arrives. Each is an envelope-sized message that takes the
	// time such a message takes alone on its path (latency and bandwidth
	// with their factors); they hold no port or link.
	RTSCTS bool
	// Delay is added before the payload starts, after the later of the
	// two posts (or the clear to send), for a fitted handshake.
	Delay Time
}

func (h Handshake) String() string {
	switch {
	case h.RTSCTS && h.Delay > 0:
		return fmt.Sprintf("rts_cts+%v", h.Delay)
	case h.RTSCTS:
		return "rts_cts"
	}
	return h.Delay.String()
}

// Factors is a piecewise-constant function of a message's size on the
// wire, as SimGrid's smpi/bw-factor and smpi/lat-factor are: a step
// applies to messages larger than its From bytes, up to and including the
// next step's From; a message no larger than the first step's From gets 1.
// Steps are kept sorted by From.
type Factors []FactorStep

// FactorStep is one step of Factors.
type FactorStep struct {
	From   int
	Factor float64
}

// At returns the factor for a message of bytes on the wire.
func (f Factors) At(bytes int) float64 {
	v := 1.0
	for _, s := range f {
		if bytes <= s.From {
			break
		}
		v = s.Factor
	}
	return v
}

// Validate reports steps out of order, sizes below zero and factors that
// are not positive and finite.
func (f Factors) Validate() error {
	for i, s := range f {
		switch {
		case s.From < 0:
			return fmt.Errorf("step %d: size %d is negative", i+1, s.From)
		case !(s.Factor > 0) || math.IsInf(s.Factor, 1):
			return fmt.Errorf("step %d: factor %g must be positive and finite", i+1, s.Factor)
		case i > 0 && s.From <= f[i-1].From:
			return fmt.Errorf("step %d: size %d does not follow %d", i+1, s.From, f[i-1].From)
		}
	}
	return nil
}

// String writes f in SimGrid's syntax, "0:1;65472:0.94".
func (f Factors) String() string {
	parts := make([]string, len(f))
	for i, s := range f {
		parts[i] = strconv.Itoa(s.From) + ":" + strconv.FormatFloat(s.Factor, 'g', -1, 64)
	}
	return strings.Join(parts, ";")
}

// Validate reports parameters the protocol cannot run with.
func (p Protocol) Validate() error {
	if p.Envelope < 0 {
		return fmt.Errorf("envelope of %d bytes is negative", p.Envelope)
	}
	if p.Handshake.Delay < 0 {
		return fmt.Errorf("handshake delay %v is negative", p.Handshake.Delay)
	}
	if err := p.LatencyFactors.Validate(); err != nil {
		return fmt.Errorf("latency factors: %w", err)
	}
	if err := p.BandwidthFactors.Validate(); err != nil {
		return fmt.Errorf("bandwidth factors: %w", err)
	}
	return nil
}

func (p Protocol) String() string {
	s := modelName(p.Model)
	if p.EagerLimit >= 0 {
		s += fmt.Sprintf(", eager below %d bytes, rendezvous (handshake %v) from it", p.EagerLimit, p.Handshake)
	}
	if p.Envelope > 0 {
		s += fmt.Sprintf(", %d-byte envelope", p.Envelope)
	}
	if len(p.LatencyFactors) > 0 {
		s += ", latency factors " + p.LatencyFactors.String()
	}
	if len(p.BandwidthFactors) > 0 {
		s += ", bandwidth factors " + p.BandwidthFactors.String()
	}
	return s
}

// ControlTimer is implemented by networks that can say how long a small
// control message takes alone on the path from src to dst: what a
// rendezvous handshake charges (Handshake.RTSCTS). The message m carries
// the wire bytes and factors to use.
type ControlTimer interface {
	ControlTime(m *Message) Time
}

// Unwrap implements Unwrapper: it returns the model it decorates.
func (p Protocol) Unwrap() Model { return p.Model }

// Rewrap implements Rewrapper: a copy of p that decorates inner.
func (p Protocol) Rewrap(inner Model) Model {
	p.Model = inner
	return p
}

// NewNetwork implements Model; it panics where NewNetworkChecked fails.
func (p Protocol) NewNetwork(e *Engine) Network {
	n, err := p.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (p Protocol) NewNetworkChecked(e *Engine) (Network, error) {
	if p.Model == nil {
		return nil, errors.New("protocol on no model")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	inner, err := newInner(p.Model, e)
	if err != nil {
		return nil, err
	}
	n := &protocolNet{wrapped: wrapped{inner}, p: p, e: e, held: map[*Message]*rendezvous{}}
	if p.Handshake.RTSCTS {
		ct, ok := inner.(ControlTimer)
		if !ok {
			return nil, fmt.Errorf("handshake rts_cts: %s cannot time control messages", modelName(p.Model))
		}
		n.ctl = ct
	}
	return n, nil
}

// protocolNet is the state of a Protocol for one run.
type protocolNet struct {
	wrapped
	p   Protocol
	e   *Engine
	ctl ControlTimer
	// held are the rendezvous messages not yet handed to the inner
	// network.
	held map[*Message]*rendezvous
}

// rendezvous is a message held until it may start.
type rendezvous struct {
	n *protocolNet
	m *Message
	// rts is when its request to send reaches the receiver (RTSCTS).
	rts Time
	// scheduled is set once its start is an event.
	scheduled bool
	// eager is set on an eager message held for its receive.
	eager bool
}

// Fire hands the message to the inner network: its handshake is done.
func (r *rendezvous) Fire() {
	if r.n.held[r.m] != r {
		return // dropped meanwhile
	}
	delete(r.n.held, r.m)
	r.n.inner.Post(r.m)
}

func (n *protocolNet) Post(m *Message) {
	m.wire = m.Bytes + n.p.Envelope
	m.latFac = n.p.LatencyFactors.At(m.wire)
	m.bwFac = n.p.BandwidthFactors.At(m.wire)
	switch {
	case n.p.EagerLimit < 0:
		n.inner.Post(m)
	case m.Bytes < n.p.EagerLimit && n.p.EagerAtOnce:
		n.e.Release(m)
		n.inner.Post(m)
	default:
		r := &rendezvous{n: n, m: m, rts: n.e.Now(), eager: m.Bytes < n.p.EagerLimit}
		if r.eager {
			n.e.Release(m)
		} else if n.ctl != nil {
			r.rts += n.control(m.Src, m.Dst)
		}
		if !m.Matched() && n.e.Exited(m.Dst) {
			n.e.Unreceivable(m)
			return
		}
		n.held[m] = r
		if m.Matched() {
			n.Matched(m)
		}
	}
}

// HeldFor implements Holder: the messages held for a receive of rank,
// which returned, in the order they were posted.
func (n *protocolNet) HeldFor(rank int) []*Message {
	out := n.wrapped.HeldFor(rank)
	for m, r := range n.held {
		if m.Dst == rank && !r.scheduled {
			delete(n.held, m)
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *Message) int { return cmpInt64(a.ID, b.ID) })
	return out
}

// control is the time of one control message of the handshake from src
// to dst: the request to send, or the clear to send.
func (n *protocolNet) control(src, dst int) Time {
	c := &Message{Src: src, Dst: dst, wire: n.p.Envelope}
	c.latFac = n.p.LatencyFactors.At(c.wire)
	c.bwFac = n.p.BandwidthFactors.At(c.wire)
	if h, ok := n.ctl.(handshakeTimer); ok {
		return h.HandshakeTime(c)
	}
	return n.ctl.ControlTime(c)
}

// Matched implements Matcher: the receive of a held message is posted.
func (n *protocolNet) Matched(m *Message) {
	r := n.held[m]
	if r == nil || r.scheduled {
		// Not ours (an eager message, or one still held by a decorator
		// outside), or on its way already.
		n.wrapped.Matched(m)
		return
	}
	r.scheduled = true
	at := n.e.Now()
	if !r.eager {
		if n.ctl != nil {
			at = max(at, r.rts) + n.control(m.Dst, m.Src)
		}
		at += n.p.Handshake.Delay
	}
	if at == n.e.Now() {
		r.Fire()
		return
	}
	n.e.At(at, r)
}

// DropRank implements RankDropper: held messages from or to rank are
// dropped here, the rest by the inner network.
func (n *protocolNet) DropRank(rank int) []*Message {
	out := n.wrapped.DropRank(rank)
	for m := range n.held {
		if m.Src == rank || m.Dst == rank {
			delete(n.held, m)
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *Message) int { return cmpInt64(a.ID, b.ID) })
	return out
}
