package sim

import (
	"fmt"
	"math"
	"unsafe"
)

// AlphaBeta is the contention-free Hockney model of the reference cost
// model: every rank has one egress and one ingress port, usable at once; a
// message of m bytes holds its sender's egress and its receiver's ingress
// together for Latency + m/Bandwidth, and completes at the end of that
// interval. A sender's messages start in the order they were posted; when
// several senders wait for one ingress port, the one that asked first goes
// first, ties to the lower sender rank. Transfers are eager. Reducing k
// bytes takes k/ReduceBandwidth of the rank's compute.
//
// In-network reduction (algos.SwitchReducer). With SwitchBandwidth R > 0
// the network has one ideal switch that every rank reaches, which reduces
// and multicasts for any group of ranks; with R = 0 it has none
// (CanSwitchReduce is false and the request fails with ErrNoSwitch). An
// operation of s bytes (each contribution's, and the result's) with c
// contributors goes exactly so:
//
//   - Each contribution is a message to the switch, posted when its member
//     posts its part: it holds its sender's egress port for α + sβ, in
//     the order of the sender's other messages (FIFO), and needs no
//     ingress port (the switch takes any number at once); it reaches the
//     switch at the end of that interval. A member that contributes and
//     does not receive is done then.
//   - The switch reduces once every member has posted and the last
//     contribution has arrived, taking (c-1)s/R (rounded as TransferTime;
//     0 for R = +Inf or one contributor), one operation after the other
//     in no order: the switch is ideal, each operation reduces alone.
//   - Then the result goes to each receiving member as a message from the
//     switch: it holds the receiver's ingress port for α + sβ, and
//     completes the member's request at the end. It asks for the port
//     when the reduction ends, in ascending rank order; among messages
//     that ask at the same time the switch goes first (as a sender below
//     every rank).
//
// So when every member posts at 0, with idle ports, an allreduce among p
// ranks (all contribute and receive) takes 2(α + sβ) + (p-1)s/R; a
// multicast from one rank to the others (one contributor) 2(α + sβ);
// NVLS's ld_reduce to one rank 2(α + sβ) + (p-1)s/R, and the contributors
// that do not receive are done at α + sβ. Switch operations are not
// messages: they are not counted in Result.Messages nor shown to the
// Observer, and they bypass a Protocol (no envelope, factors or
// rendezvous) and jitter.
type AlphaBeta struct {
	// Latency is alpha, the fixed cost of a message.
	Latency Time
	// Bandwidth is 1/beta in bytes per second.
	Bandwidth float64
	// ReduceBandwidth is 1/gamma in bytes (of one operand) per second;
	// +Inf or 0 makes reductions free.
	ReduceBandwidth float64
	// SwitchBandwidth is R, the rate in bytes of one operand per second
	// at which the network's one switch reduces (key
	// "switch_reduce_bandwidth"); 0: no switch reduces; +Inf: it
	// reduces for free. See In-network reduction above.
	SwitchBandwidth float64
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
	case a.SwitchBandwidth < 0 || math.IsNaN(a.SwitchBandwidth):
		return fmt.Errorf("switch reduce bandwidth %g B/s must be positive (or 0: no switch)", a.SwitchBandwidth)
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
		// (Every port at most once: sized once, no garbage as it grows.)
		dirty: make([]int32, 0, e.World()),
	}
	// A replay keeps each rank's ports beside it (rankProc), so that a
	// message finds its sender's and receiver's ports in the cache lines
	// of their ranks; the first network built on the engine takes them,
	// any other keeps an array of its own.
	if base := e.ranks.takePorts(); base != nil {
		n.portBase, n.portStride = base, unsafe.Sizeof(rankProc{})
	} else {
		ports := make([]abPort, e.World())
		n.portBase, n.portStride = unsafe.Pointer(unsafe.SliceData(ports)), unsafe.Sizeof(abPort{})
	}
	for i := range e.World() {
		n.port(i).done = abDone{n: n, src: int32(i)}
	}
	return n
}

// port returns rank r's ports; r must be a rank of the run.
func (n *alphaBetaNet) port(r int) *abPort {
	return (*abPort)(unsafe.Add(n.portBase, uintptr(r)*n.portStride))
}

// alphaBetaNet is the state of the alpha-beta model for one run.
type alphaBetaNet struct {
	AlphaBeta
	e *Engine
	// portBase and portStride place rank r's ports (see port): beside
	// the rank in a replay, in an array of their own otherwise.
	portBase   unsafe.Pointer
	portStride uintptr
	// dirty lists ingress ports that freed or gained an asker in this
	// instant; Settle arbitrates them.
	dirty []int32
}

// abPort is the pair of ports of one rank. Its queues are linked through
// Message.next, so that a port holds no slice and allocates nothing.
type abPort struct {
	// egress side
	// head and tail are the messages posted and not yet asking,
	// linked through Message.next.
	head, tail *Message
	// cur is the message asking for its receiver's port or holding the
	// egress port; nil while neither.
	cur *Message
	// askAt is when cur began to ask.
	askAt Time
	// ingress side
	// askers are the messages waiting for this port, the latest to ask
	// first, linked through Message.next (see takeAsker).
	askers *Message
	// done is the egress's completion; the port's flags live in it,
	// beside its rank, so that a port of a 2^24-rank run is 56 bytes.
	done abDone
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
// rule (alpha-beta keeps its askers in a list: takeAsker). as must not be
// empty.
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

// askedAt is when m, one of a port's askers, began to ask: its sender's
// cur, or a result of the switch, which keeps its own.
func (n *alphaBetaNet) askedAt(m *Message) Time {
	if m.Src < 0 {
		return m.partOf().at
	}
	return n.port(m.Src).askAt
}

// takeAsker removes and returns the asker of ports p that goes next, by
// askers.take's rule: the first to ask, ties to the lower sender rank,
// and among messages equal in both (results of the switch) the one that
// asked first. The list holds the latest first, so on equal keys the
// last one seen goes. p must have an asker.
func (n *alphaBetaNet) takeAsker(p *abPort) *Message {
	if m := p.askers; m.next == nil {
		// One asker (the common case) goes without reading when it
		// asked, which is its sender's line.
		p.askers = nil
		return m
	}
	var best, bestPrev, prev *Message
	var bestAt Time
	for m := p.askers; m != nil; prev, m = m, m.next {
		at := n.askedAt(m)
		if best == nil || at < bestAt || (at == bestAt && m.Src <= best.Src) {
			best, bestPrev, bestAt = m, prev, at
		}
	}
	if bestPrev == nil {
		p.askers = best.next
	} else {
		bestPrev.next = best.next
	}
	best.next = nil
	return best
}

// addAsker makes m ask for port r now.
func (n *alphaBetaNet) addAsker(r int, m *Message) {
	p := n.port(r)
	m.next, p.askers = p.askers, m
	n.markDirty(r)
}

// abDone fires when the message on src's egress completes. It also
// holds the flags of src's ports, in what would be its padding.
type abDone struct {
	n   *alphaBetaNet
	src int32
	// receiving: the ingress port is held; dirty: the ingress port is in
	// alphaBetaNet.dirty.
	receiving, dirty bool
}

func (d *abDone) Fire() { d.n.complete(int(d.src)) }

func (n *alphaBetaNet) Post(m *Message) {
	p := n.port(m.Src)
	if p.tail == nil {
		p.head = m
	} else {
		p.tail.next = m
	}
	p.tail = m
	if p.cur == nil {
		n.ask(m.Src)
	}
}

// ask makes src's head message ask for its receiver's ingress port now;
// a contribution to a switch operation needs none and starts.
func (n *alphaBetaNet) ask(src int) {
	p := n.port(src)
	m := p.head
	p.head, m.next = m.next, nil
	if p.head == nil {
		p.tail = nil
	}
	p.cur, p.askAt = m, n.e.Now()
	if m.partOf() != nil {
		n.start(m)
		return
	}
	n.addAsker(m.Dst, m)
}

func (n *alphaBetaNet) markDirty(r int) {
	if !n.port(r).done.dirty {
		n.port(r).done.dirty = true
		n.dirty = append(n.dirty, int32(r))
	}
}

func (n *alphaBetaNet) Settle() {
	for _, r := range n.dirty {
		p := n.port(int(r))
		p.done.dirty = false
		if p.done.receiving || p.askers == nil {
			continue
		}
		n.start(n.takeAsker(p))
	}
	n.dirty = n.dirty[:0]
}

// start puts m on the wire: both its ports are held until it completes.
// A contribution to a switch operation holds only its sender's egress
// port, a result only its receiver's ingress port.
func (n *alphaBetaNet) start(m *Message) {
	if m.Src < 0 {
		n.port(m.Dst).done.receiving = true
		n.e.At(n.e.Now()+n.messageTime(m), m.partOf())
		return
	}
	src := n.port(m.Src)
	if m.partOf() == nil {
		n.port(m.Dst).done.receiving = true
		n.e.Started(m)
	}
	n.e.At(n.e.Now()+n.messageTime(m), &src.done)
}

// complete frees the ports of src's message, delivers it, and lets src's
// next message ask for its receiver.
func (n *alphaBetaNet) complete(src int) {
	p := n.port(src)
	m := p.cur
	p.cur = nil
	if part := m.partOf(); part != nil {
		n.arrived(part)
	} else {
		n.port(m.Dst).done.receiving = false
		n.markDirty(m.Dst)
		n.e.Deliver(m)
	}
	if p.head != nil {
		n.ask(src)
	}
}

// abPart is a contribution to a switch operation (m from member i's rank
// to the switch, Dst -1) or a result of one (m from the switch, Src -1,
// to member i's rank), carried as a message that holds one port.
type abPart struct {
	n  *alphaBetaNet
	m  Message
	op *SwitchOp
	i  int
	// at is when a result began to ask for its receiver's port.
	at Time
}

// Fire ends a result's hold on its receiver's port: the member has it.
func (p *abPart) Fire() {
	n := p.n
	n.port(p.m.Dst).done.receiving = false
	n.markDirty(p.m.Dst)
	n.e.SwitchDelivered(p.op, p.i)
}

func (n *alphaBetaNet) newPart(op *SwitchOp, i, src, dst int) *abPart {
	p := &abPart{n: n, op: op, i: i}
	p.m = Message{Src: src, Dst: dst, Bytes: op.Bytes, wire: op.Bytes, latFac: 1, bwFac: 1, extra: &msgExtra{part: p}}
	return p
}

// CanSwitchReduce implements SwitchNetwork: the one switch, if
// SwitchBandwidth is set, reduces for every group.
func (n *alphaBetaNet) CanSwitchReduce([]int) bool { return n.SwitchBandwidth > 0 }

// PostSwitch implements SwitchNetwork: a contribution joins its sender's
// queue of messages, and the switch reduces if the operation is ready.
func (n *alphaBetaNet) PostSwitch(op *SwitchOp, i int) {
	if op.Contributes(i) {
		n.Post(&n.newPart(op, i, op.Group[i], -1).m)
	}
	n.tryReduce(op)
}

// arrived takes a contribution that has reached the switch.
func (n *alphaBetaNet) arrived(p *abPart) {
	n.e.SwitchArrived(p.op, p.i)
	n.tryReduce(p.op)
}

// tryReduce starts the switch's reduction of op if op is ready: that
// happens once, at the last post or arrival.
func (n *alphaBetaNet) tryReduce(op *SwitchOp) {
	if !op.Ready() {
		return
	}
	d := TransferTime((op.Contributors()-1)*op.Bytes, n.SwitchBandwidth)
	if d == 0 {
		n.multicast(op)
		return
	}
	n.e.At(n.e.Now()+d, &abReduced{n: n, op: op})
}

// abReduced fires when the switch has reduced op.
type abReduced struct {
	n  *alphaBetaNet
	op *SwitchOp
}

func (r *abReduced) Fire() { r.n.multicast(r.op) }

// multicast sends op's result to its receivers: each asks for its
// receiver's ingress port now.
func (n *alphaBetaNet) multicast(op *SwitchOp) {
	if op.Failed() {
		return
	}
	now := n.e.Now()
	for i, r := range op.Group {
		if op.Receives(i) {
			p := n.newPart(op, i, -1, r)
			p.at = now
			n.addAsker(r, &p.m)
		}
	}
}

func (n *alphaBetaNet) ReduceTime(_, bytes int) Time {
	if n.ReduceBandwidth == 0 {
		return 0
	}
	return TransferTime(bytes, n.ReduceBandwidth)
}
