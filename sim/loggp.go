package sim

import (
	"fmt"
	"math"
)

// LogGP is the LogGP model of Alexandrov et al. (model = "loggp"): a
// contention-free network with per-message CPU overheads and a NIC that
// injects messages one at a time. Exactly:
//
//   - Isend of k bytes holds the sending process for Overhead (o) of its
//     rank's compute (after whatever the compute is busy with), then hands
//     the message to the rank's NIC.
//   - The NIC injects messages in the order it got them: a message starts
//     at s = max(handed, previous start + max(Gap, previous k·G)), i.e. no
//     sooner than Gap (g) after the previous one started nor before its
//     last byte left; its last byte leaves at s + k·G (G = 1/Bandwidth,
//     rounded as TransferTime) and arrives at s + k·G + Latency (L). (The
//     paper counts (k-1)·G; k·G makes a k-byte message take k/Bandwidth,
//     as in the other models.)
//   - The send completes when the message arrives. The receive it matches
//     completes after the receiving rank's compute has spent Overhead on
//     it, from when it arrived or the receive was posted, whichever is
//     later.
//   - Receivers take any number of messages at once (LogGP's capacity
//     limit ceil(L/g) is not modelled); reductions take
//     bytes/ReduceBandwidth of compute.
//   - No switch reduces in the network (algos.SwitchReducer's
//     CanSwitchReduce is false).
type LogGP struct {
	// Latency is L (key "latency").
	Latency Time
	// Overhead is o, at sender and receiver (key "overhead").
	Overhead Time
	// Gap is g, the least time between two message starts at a NIC (key
	// "gap").
	Gap Time
	// Bandwidth is 1/G in bytes per second (key "bandwidth").
	Bandwidth float64
	// ReduceBandwidth is 1/gamma (key "reduce_bandwidth"); 0 or +Inf
	// makes reductions free.
	ReduceBandwidth float64
}

// Validate reports parameters the model cannot run with.
func (g LogGP) Validate() error {
	switch {
	case g.Latency < 0 || g.Overhead < 0 || g.Gap < 0:
		return fmt.Errorf("loggp: L %v, o %v and g %v must not be negative", g.Latency, g.Overhead, g.Gap)
	case !(g.Bandwidth > 0):
		return fmt.Errorf("loggp: bandwidth %g B/s must be positive", g.Bandwidth)
	case g.ReduceBandwidth < 0 || math.IsNaN(g.ReduceBandwidth):
		return fmt.Errorf("loggp: reduce bandwidth %g B/s must be positive", g.ReduceBandwidth)
	}
	return nil
}

// NewNetwork implements Model; it panics if the parameters are invalid.
func (g LogGP) NewNetwork(e *Engine) Network {
	n, err := g.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (g LogGP) NewNetworkChecked(e *Engine) (Network, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &logGPNet{LogGP: g, e: e, next: make([]Time, e.World())}, nil
}

type logGPNet struct {
	LogGP
	e *Engine
	// next is, per rank, the earliest time its NIC may start a message.
	next []Time
}

// logGPMsg is a message's two events: its start, then its arrival.
type logGPMsg struct {
	n       *logGPNet
	m       *Message
	started bool
}

func (x *logGPMsg) Fire() {
	n := x.n
	if !x.started {
		x.started = true
		n.e.Started(x.m)
		n.e.At(n.e.Now()+x.m.transferTime(n.Bandwidth)+x.m.latency(n.Latency), x)
		return
	}
	n.e.Deliver(x.m)
}

func (n *logGPNet) Post(m *Message) {
	now := n.e.Now()
	s := max(now, n.next[m.Src])
	k := m.transferTime(n.Bandwidth)
	n.next[m.Src] = s + max(n.Gap, k)
	x := &logGPMsg{n: n, m: m}
	if s == now {
		x.Fire()
		return
	}
	n.e.At(s, x)
}

func (n *logGPNet) Settle() {}

// ControlTime implements ControlTimer: kG + L, without overheads or gaps.
func (n *logGPNet) ControlTime(m *Message) Time {
	return m.transferTime(n.Bandwidth) + m.latency(n.Latency)
}

func (n *logGPNet) ReduceTime(_, bytes int) Time {
	if n.ReduceBandwidth == 0 {
		return 0
	}
	return TransferTime(bytes, n.ReduceBandwidth)
}

func (n *logGPNet) SendOverhead(_, _ int) Time { return n.Overhead }
func (n *logGPNet) RecvOverhead(_, _ int) Time { return n.Overhead }

// Overhead adds LogGP's per-message CPU overhead to another model (key
// "overhead" with model = "alpha-beta" or "flow"): Send is spent by the
// sending process inside Isend, Recv by the receiving rank's compute
// before a matched receive completes, as in LogGP (see Overheads). The
// inner model's timing is otherwise unchanged.
type Overhead struct {
	Model      Model
	Send, Recv Time
}

// Unwrap implements Unwrapper: it returns the model it decorates.
func (o Overhead) Unwrap() Model { return o.Model }

// Rewrap implements Rewrapper: a copy of o that decorates inner.
func (o Overhead) Rewrap(inner Model) Model {
	o.Model = inner
	return o
}

// NewNetwork implements Model.
func (o Overhead) NewNetwork(e *Engine) Network {
	n, err := o.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (o Overhead) NewNetworkChecked(e *Engine) (Network, error) {
	if o.Send < 0 || o.Recv < 0 {
		return nil, fmt.Errorf("overheads %v and %v must not be negative", o.Send, o.Recv)
	}
	inner, err := newInner(o.Model, e)
	if err != nil {
		return nil, err
	}
	return &overheadNet{wrapped: wrapped{inner}, o: o}, nil
}

type overheadNet struct {
	wrapped
	o Overhead
}

func (n *overheadNet) SendOverhead(rank, bytes int) Time {
	return n.o.Send + n.wrapped.SendOverhead(rank, bytes)
}

func (n *overheadNet) RecvOverhead(rank, bytes int) Time {
	return n.o.Recv + n.wrapped.RecvOverhead(rank, bytes)
}
