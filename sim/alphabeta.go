package sim

import (
	"fmt"
	"math"
)

// AlphaBeta is the contention-free Hockney model of the reference cost
// model: every rank has one egress and one ingress port, usable at once; a
// message of m bytes holds its sender's egress and its receiver's ingress
// together for Latency + m/Bandwidth, and completes at the end of that
// interval. A sender's messages start in the order they were posted; when
// several senders wait for one ingress port, the one that asked first goes
// first, ties to the lower sender rank. Transfers are eager. Reducing k
// bytes takes k/ReduceBandwidth of the rank's compute.
type AlphaBeta struct {
	// Latency is alpha, the fixed cost of a message.
	Latency Time
	// Bandwidth is 1/beta in bytes per second.
	Bandwidth float64
	// ReduceBandwidth is 1/gamma in bytes (of one operand) per second;
	// +Inf or 0 makes reductions free.
	ReduceBandwidth float64
}

// Validate reports parameters the model cannot run with.
func (a AlphaBeta) Validate() error {
	switch {
	case a.Latency < 0:
		return fmt.Errorf("latency %v is negative", a.Latency)
	case !(a.Bandwidth > 0):
		return fmt.Errorf("bandwidth %g B/s must be positive", a.Bandwidth)
	case a.ReduceBandwidth < 0 || math.IsNaN(a.ReduceBandwidth):
		return fmt.Errorf("reduce bandwidth %g B/s must be positive", a.ReduceBandwidth)
	}
	return nil
}

// MessageTime is alpha + m*beta, the time a message of m bytes holds its ports.
func (a AlphaBeta) MessageTime(m int) Time { return a.Latency + TransferTime(m, a.Bandwidth) }

// messageTime is MessageTime for m as it goes on the wire: its wire
// bytes, and its latency and bandwidth scaled by its factors (see
// Protocol).
func (a AlphaBeta) messageTime(m *Message) Time {
	return m.latency(a.Latency) + m.transferTime(a.Bandwidth)
}

// ControlTime implements ControlTimer: a message alone on its ports.
func (n *alphaBetaNet) ControlTime(m *Message) Time { return n.messageTime(m) }

// NewNetwork implements Model.
func (a AlphaBeta) NewNetwork(e *Engine) Network {
	n := &alphaBetaNet{
		AlphaBeta: a,
		e:         e,
		ports:     make([]abPort, e.World()),
	}
	for i := range n.ports {
		n.ports[i].done = abDone{n: n, src: i}
	}
	return n
}

// alphaBetaNet is the state of the alpha-beta model for one run.
type alphaBetaNet struct {
	AlphaBeta
	e     *Engine
	ports []abPort
	// dirty lists ingress ports that freed or gained an asker in this
	// instant; Settle arbitrates them.
	dirty []int
}

// abPort is the pair of ports of one rank.
type abPort struct {
	// egress side
	queue   fifo[*Message] // posted, not yet started; head is asking when !sending
	sending *Message       // the message holding the egress port
	asking  bool
	done    abDone
	// ingress side
	receiving bool
	askers    askers
	dirty     bool
}

// asker is a message waiting for its receiver's port (or a receive slot),
// and when it began to wait.
type asker struct {
	at Time
	m  *Message
}

// askers are the messages waiting for one receiver, in the order they
// asked.
type askers []asker

// take removes and returns the message that goes next: the first to ask,
// ties to the lower sender rank. The alpha-beta and flow models share this
// rule. as must not be empty.
func (as *askers) take() *Message {
	q := *as
	best := 0
	for i, a := range q[1:] {
		b := q[best]
		if a.at < b.at || (a.at == b.at && a.m.Src < b.m.Src) {
			best = i + 1
		}
	}
	m := q[best].m
	*as = append(q[:best], q[best+1:]...)
	return m
}

// abDone fires when the message on src's egress completes.
type abDone struct {
	n   *alphaBetaNet
	src int
}

func (d *abDone) Fire() { d.n.complete(d.src) }

func (n *alphaBetaNet) Post(m *Message) {
	p := &n.ports[m.Src]
	p.queue.push(m)
	if p.sending == nil && !p.asking {
		n.ask(m.Src)
	}
}

// ask makes src's head message ask for its receiver's ingress port now.
func (n *alphaBetaNet) ask(src int) {
	p := &n.ports[src]
	m := p.queue.front()
	p.asking = true
	dst := &n.ports[m.Dst]
	dst.askers = append(dst.askers, asker{at: n.e.Now(), m: m})
	n.markDirty(m.Dst)
}

func (n *alphaBetaNet) markDirty(r int) {
	if !n.ports[r].dirty {
		n.ports[r].dirty = true
		n.dirty = append(n.dirty, r)
	}
}

func (n *alphaBetaNet) Settle() {
	for _, r := range n.dirty {
		p := &n.ports[r]
		p.dirty = false
		if p.receiving || len(p.askers) == 0 {
			continue
		}
		n.start(p.askers.take())
	}
	n.dirty = n.dirty[:0]
}

// start puts m on the wire: both its ports are held until it completes.
func (n *alphaBetaNet) start(m *Message) {
	src := &n.ports[m.Src]
	src.queue.pop()
	src.asking = false
	src.sending = m
	n.ports[m.Dst].receiving = true
	n.e.Started(m)
	n.e.At(n.e.Now()+n.messageTime(m), &src.done)
}

// complete frees the ports of src's message, delivers it, and lets src's
// next message ask for its receiver.
func (n *alphaBetaNet) complete(src int) {
	p := &n.ports[src]
	m := p.sending
	p.sending = nil
	n.ports[m.Dst].receiving = false
	n.markDirty(m.Dst)
	n.e.Deliver(m)
	if p.queue.len() > 0 {
		n.ask(src)
	}
}

func (n *alphaBetaNet) ReduceTime(_, bytes int) Time {
	if n.ReduceBandwidth == 0 {
		return 0
	}
	return TransferTime(bytes, n.ReduceBandwidth)
}
