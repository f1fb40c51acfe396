package realnet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
)

// Matching. A message is matched to a receive by (source, tag), first in
// first out: the sender opens one stream per message in Isend order, the
// receiver accepts the streams of a peer in that order and reads their
// headers one after the other, and both sides queue in arrival order.
//
// A message that finds its receive posted is read straight into the
// receive's buffer. One that does not is unexpected: its payload is read
// into link memory if the MaxUnexpected budget allows, else it is parked
// unread, its bytes held back by the sender's flow-control window, until
// its receive is posted or budget frees up.

type inState uint8

const (
	inParked   inState = iota // unread, waiting for a receive or for budget
	inTemp                    // being read into link memory
	inBuffered                // complete in link memory
	inMatched                 // handed to a receive
	inFailed                  // its bytes will not come: err says why
)

// inbound is a message whose header has arrived.
type inbound struct {
	p      *peer // nil for a message to oneself
	tag    algos.Tag
	n      int64
	kind   byte
	id     uint64              // kindRTS: the bulk transfer id
	stream *quic.ReceiveStream // kindData on QUIC: the payload follows on it
	self   bool
	// viaEager: the message came on the eager connection (eager.go): its
	// payload was read with its header, and it is accounted in the
	// sender's credit, not in the QUIC path's budget.
	viaEager bool
	// relayed: a message relayed to this rank (relay.go), charged
	// relayCharge of relayHeld while this rank holds it; kindRelayRTS
	// also carries its origin.
	relayed     bool
	relayCharge int64
	origin      int

	// Under l.mu.
	state inState
	data  []byte   // inTemp, inBuffered
	recv  *request // inTemp: the receive waiting for the read to finish
	// parkCharge is what a parked message is charged against the budget:
	// msgOverhead, and for a payload on its stream what quic-go may hold
	// of it unread (its stream's initial window).
	parkCharge int64
	credited   bool // an eager request to send: its credit went back
	awaitRecv  bool // a bulk transfer waiting for its receive (rtsGrace), not in the parked list
	discard    bool // inTemp: drop the data when the read finishes
	refunded   bool // inTemp: its read failed and its charge went back (tempRefund)
	err        error
	// grant, for a bulk transfer granted into link memory (inTemp), is
	// the grant its payload comes under.
	grant *grant
}

// releaseStream lets m's sender open another stream in place of m's: m
// has left the unread state (or its payload is read). Before that, an
// unread message holds one of the maxStreams its sender may have open, so
// that parked messages are bounded by stream credit however small.
func (m *inbound) releaseStream() {
	if m.stream != nil {
		m.stream.ReleaseStreamCredit()
	}
	if m.viaEager && m.kind == kindRTS && !m.credited {
		// The eager path's equivalent: the credit its request held.
		m.credited = true
		m.p.l.releaseEagerLocked(m.p, eagerOverhead)
	}
}

// grant is a bulk transfer the receiver has cleared to send.
type grant struct {
	id  uint64
	n   int64
	dst []byte   // where the payload goes; nil: discard it
	r   *request // the receive to finish, or nil
	m   *inbound // the unexpected message read into link memory, or nil
	// started: the bulk reader has taken the grant (its r, dst and m are
	// the reader's from then on).
	started bool
}

func nop() {}

// msgOverhead is what an unexpected message is charged beyond its payload:
// its inbound record, queue entry and stream state (about 1.4 KB measured
// for an empty message), so that a flood of empty or tiny messages uses up
// the MaxUnexpected budget as its memory does, rather than costing nothing.
const msgOverhead = 2 << 10

// cost is what an unexpected message of n payload bytes is charged.
func cost(n int64) int64 { return n + msgOverhead }

// arrive matches a message whose header came from p.
// A nil s is an rts that came on the eager connection.
func (l *Link) arrive(p *peer, h msgHeader, s *quic.ReceiveStream) {
	m := &inbound{p: p, tag: h.Tag, n: int64(h.Len), kind: h.Kind, id: h.ID, stream: s, viaEager: s == nil}
	key := matchKey{p.rank, h.Tag}
	l.mu.Lock()
	if l.closing || l.broken != nil {
		reset := l.resetLocked()
		l.mu.Unlock()
		if s != nil {
			s.CancelRead(reset)
			s.ReleaseStreamCredit()
		}
		return
	}
	var after func()
	if r := l.popPostedLocked(key); r != nil {
		r.loc = locNone
		after = l.matchLocked(m, r, true)
	} else {
		l.pushUnexpectedLocked(p.rank, m)
		after = l.unexpectedLocked(m, true)
	}
	l.mu.Unlock()
	after()
}

// unexpectedLocked accounts for message m, just arrived and queued
// unexpected: read into link memory if the budget allows, else parked.
func (l *Link) unexpectedLocked(m *inbound, inline bool) func() {
	if m.kind == kindRTS {
		// A bulk transfer is granted once its receive is posted, so
		// that its payload lands in the receive's buffer: no link
		// memory, no copy out of it. It waits for that queued
		// unexpected, charged its overhead as a parked message is, but
		// out of the parked list, for at most rtsGrace; then it is
		// granted into link memory as any unexpected message (or
		// parked for budget), so that a sender is never held up for
		// ever by a receive posted only after its send completes.
		m.state, m.awaitRecv = inParked, true
		m.parkCharge = msgOverhead
		l.parkHeld += m.parkCharge
		time.AfterFunc(rtsGrace(m.n), func() { l.graceOver(m) })
		return nop
	}
	if l.heldLocked()+cost(m.n) <= l.quicBudget() {
		return l.startTempLocked(m, inline)
	}
	m.state = inParked
	m.parkCharge = msgOverhead
	if m.kind == kindData && m.stream != nil {
		m.parkCharge += min(m.n, streamWindow(l.cfg))
	}
	l.parkHeld += m.parkCharge
	l.parked = append(l.parked, m)
	return nop
}

// rtsGrace is how long a bulk transfer that arrived before its receive
// waits for it before it is granted into link memory: 1 ms, and as long
// again as the payload takes at 0.5 GB/s, about what the sealed bulk path
// moves on a loaded machine. Shorter, more transfers of a pipelined ring
// gave up waiting (at 200 µs + 1 ns a byte, the CPU a 64 MiB allreduce on
// 4 ranks saves fell from 17% to 7%); longer, a sender whose receive is
// posted only after its send completes waits longer.
func rtsGrace(n int64) time.Duration {
	return time.Millisecond + 2*time.Duration(n)*time.Nanosecond
}

// graceOver ends bulk transfer m's wait for its receive (rtsGrace): if it
// is still unmatched, it is read into link memory if the budget allows,
// else parked with the other messages waiting for budget.
func (l *Link) graceOver(m *inbound) {
	l.mu.Lock()
	if m.state != inParked || !m.awaitRecv || l.closing || l.broken != nil {
		l.mu.Unlock()
		return
	}
	m.awaitRecv = false
	after := nop
	if l.heldLocked()-m.parkCharge+cost(m.n) <= l.quicBudget() {
		l.unchargeParkedLocked(m)
		after = l.startTempLocked(m, false)
	} else {
		l.parked = append(l.parked, m)
	}
	l.mu.Unlock()
	after()
}

// matchLocked hands message m to receive r and returns what to do once
// l.mu is released. inline lets a small payload be read on the calling
// goroutine (the accept loop's).
func (l *Link) matchLocked(m *inbound, r *request, inline bool) func() {
	if r.claim != nil {
		return l.claimLocked(m, r, true) // relay.go
	}
	if m.n > int64(len(r.buf)) {
		l.finishLocked(r, l.tooLong(r.peer, m.tag, m.n, r))
		return l.discardLocked(m)
	}
	r.got = m.n
	switch m.state {
	case inParked:
		if m.kind == kindRelayRTS {
			return l.relayMatchLocked(m, r) // relay.go
		}
		l.unchargeParkedLocked(m)
		m.state, m.awaitRecv = inMatched, false
		dst := r.buf[:m.n]
		if m.kind == kindRTS {
			m.releaseStream()
			l.grantLocked(m.p, &grant{id: m.id, n: m.n, dst: dst, r: r})
			return nop
		}
		r.state = stIO
		r.recvS = m.stream // cancelling r cancels the read (takeCancel)
		return l.readLater(m, dst, r, inline)
	case inTemp:
		if g := m.grant; g != nil && !g.started {
			return l.retargetLocked(m, r)
		}
		// Being read: a bulk transfer's reader hands the rest of it to r
		// before its next piece (takeOverLocked); anything else is
		// copied into r once it is in.
		m.recv, r.msg, r.loc = r, m, locTemp
		return nop
	case inBuffered:
		if m.kind == kindRTS {
			l.late.copied++
		}
		m.state = inMatched
		r.state = stIO
		l.releaseLocked(m)
		after := l.unparkLocked()
		data := m.data
		m.data = nil
		return func() {
			copy(r.buf, data)
			l.recycle(m, data)
			l.finish(r, nil)
			after()
		}
	case inFailed:
		l.finishLocked(r, m.err)
	}
	return nop
}

// readLater returns an action that reads m's payload into dst and then
// finishes r (or, when r is nil, completes m's read into link memory). The
// message counts as arrived once its bytes are in: the end of its stream,
// which must follow them, is checked afterwards, so that a receive never
// waits for a stream's FIN when the data is complete (a peer whose stream
// runs on past its header's length still breaks the protocol).
//
// inline is true only on the accept loop of m's peer, which arrive runs
// on: a small payload is then read by that loop itself, through the
// peer's readInline, with no closure made per message.
func (l *Link) readLater(m *inbound, dst []byte, r *request, inline bool) func() {
	if inline && m.n <= inlineMax {
		m.p.inl = inlineRead{m: m, dst: dst, r: r}
		return m.p.readInl
	}
	// A payload read into link memory holds up the budget: a sender
	// that stalls it past the link's Timeout breaks the protocol and is
	// reported.
	deadline := r == nil
	return func() { l.ep.wg.Go(func() { l.readPayload(m, dst, r, deadline) }) }
}

// readInline reads the payload readLater left for the accept loop.
func (p *peer) readInline() {
	in := p.inl
	p.inl = inlineRead{}
	// On the accept loop, a payload holds up the peer's later messages:
	// one stalled past the link's Timeout breaks the protocol.
	p.l.readPayload(in.m, in.dst, in.r, true)
}

// readPayload is readLater's read: m's payload into dst, then r finished
// (or m's read into link memory completed), then the stream's end, under
// the link's Timeout if deadline.
func (l *Link) readPayload(m *inbound, dst []byte, r *request, deadline bool) {
	s := m.stream
	// The message has left the unread state: its stream's credit
	// goes back now, before the read that completes the stream, so
	// that quic-go deletes it there and its MAX_STREAMS frame rides
	// with the next packet (released after, it went in a packet of
	// its own: three datagrams per small message instead of one).
	s.ReleaseStreamCredit()
	if deadline {
		s.SetReadDeadline(time.Now().Add(l.cfg.Timeout))
	}
	err := stalled(readBody(s, dst), "payload", l.cfg.Timeout)
	if err != nil && r == nil {
		l.tempRefund(m) // before the verdict breaks the link (bulkReader)
	}
	if err != nil && m.p != nil {
		err = m.p.payloadErr(err, r)
	}
	if r != nil {
		// No yield here for the receive just completed: with one
		// P its next send would go out before this stream's end
		// is read, so the MAX_STREAMS frame the end frees no
		// longer rides with that send's packet (issue 30: the
		// QUIC allreduce's CPU per iteration rose by a third
		// with the yield).
		l.finish(r, err)
	} else {
		l.tempDone(m, err)
	}
	if err == nil {
		if err := stalled(readEnd(s), "end of stream", l.cfg.Timeout); err != nil && m.p != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				m.p.protocolError(pe.What, pe.Err)
			}
			// Anything else (the connection going down, the
			// sender resetting a stream it had written whole)
			// leaves the message, which is complete, as it is.
		}
	}
	if deadline {
		s.SetReadDeadline(time.Time{})
	}
}

// stalled turns a read that ran past its deadline into a protocol error:
// what of a message was still to come did not come within timeout.
func stalled(err error, what string, timeout time.Duration) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &ProtocolError{What: "message", Err: fmt.Errorf("%s stalled for %v", what, timeout)}
	}
	return err
}

// readBody reads exactly len(dst) bytes of a message's payload.
func readBody(s *quic.ReceiveStream, dst []byte) error {
	if _, err := io.ReadFull(s, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || (err == io.EOF && len(dst) > 0) {
			return &ProtocolError{What: "message", Err: errors.New("stream ended before the length its header announced")}
		}
		return err
	}
	return nil
}

// readEnd reads the end of a message's stream, which must follow its
// payload.
func readEnd(s *quic.ReceiveStream) error {
	var one [1]byte
	n, err := s.Read(one[:])
	for n == 0 && err == nil {
		n, err = s.Read(one[:])
	}
	if n > 0 {
		return &ProtocolError{What: "message", Err: errors.New("stream longer than the length its header announced")}
	}
	if err != io.EOF {
		return err
	}
	return nil
}

// payloadErr turns an error reading a payload from p into the request's
// error, and closes the connection of a peer that broke the protocol.
func (p *peer) payloadErr(err error, r *request) error {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		p.protocolError(pe.What, pe.Err)
	}
	return p.ioErr(err, r)
}

// startTempLocked starts reading unexpected message m into link memory:
// a bulk transfer's payload into memory of the link's pool, which it goes
// back to once its receive has it (recycle).
func (l *Link) startTempLocked(m *inbound, inline bool) func() {
	if m.kind == kindRelayRTS {
		return l.relayTempLocked(m) // relay.go
	}
	m.state = inTemp
	l.buffered += cost(m.n)
	if m.kind == kindRTS {
		m.data = l.scratch.get(int(m.n))
		m.releaseStream()
		m.grant = &grant{id: m.id, n: m.n, dst: m.data, m: m}
		l.grantLocked(m.p, m.grant)
		return nop
	}
	m.data = make([]byte, m.n)
	return l.readLater(m, m.data, nil, inline)
}

// recycle gives the link memory data that unexpected message m was read
// into back to the pool it came from, once nothing reads or writes it.
func (l *Link) recycle(m *inbound, data []byte) {
	if m.kind == kindRTS {
		l.scratch.put(data)
	}
}

// retargetLocked hands bulk transfer m, granted into link memory but not
// begun (its grant still queued for the bulk reader), to receive r: the
// payload goes straight into r's buffer, as if r had been posted first,
// and the link memory back to the pool.
func (l *Link) retargetLocked(m *inbound, r *request) func() {
	g := m.grant
	g.dst, g.r, g.m = r.buf[:m.n], r, nil
	r.loc, r.grant = locGrant, g
	l.late.direct++
	m.state, m.grant = inMatched, nil
	l.releaseLocked(m)
	l.recycle(m, m.data)
	m.data = nil
	return l.unparkLocked()
}

// takeOverLocked hands bulk transfer m, being read into link memory, to
// the receive matched to it since (m.recv), if there is one: the receive
// becomes the bulk reader's, which copies what it has read of the payload
// into the receive's buffer and reads the rest straight there
// (peer.readUnexpected). It returns the receive, nil if none, and what to
// run once l.mu is released.
func (l *Link) takeOverLocked(m *inbound) (*request, func()) {
	r := m.recv
	if r == nil {
		return nil, nop
	}
	m.recv, m.state, m.data, m.grant = nil, inMatched, nil, nil
	r.state, r.loc, r.msg = stIO, locNone, nil
	l.late.takenOver++
	p := m.p
	r.cancel = func(quic.StreamErrorCode) { p.lose(errors.New("bulk transfer abandoned")) }
	l.releaseLocked(m)
	return r, l.unparkLocked()
}

// tempRefund gives back what unexpected message m, whose read failed,
// was charged, ahead of tempDone with the error: the error is the link's
// verdict on the peer, which breaks the link, and nobody who sees the
// link broken may still find m charged.
func (l *Link) tempRefund(m *inbound) {
	l.mu.Lock()
	l.refundLocked(m)
	after := l.unparkLocked()
	l.mu.Unlock()
	after()
}

// refundLocked gives back m's charge and its data, once.
func (l *Link) refundLocked(m *inbound) {
	if m.refunded {
		return
	}
	m.refunded = true
	l.releaseLocked(m)
	l.recycle(m, m.data)
	m.data = nil
}

// tempDone completes the read of unexpected message m into link memory.
func (l *Link) tempDone(m *inbound, err error) {
	l.mu.Lock()
	if err != nil || m.discard {
		l.refundLocked(m)
		after := l.unparkLocked()
		if err != nil {
			m.state, m.err = inFailed, err
			if r := m.recv; r != nil {
				m.recv = nil
				l.finishLocked(r, err)
			}
		}
		l.mu.Unlock()
		after()
		return
	}
	m.stream = nil // read to its end: nothing more is needed of it
	r := m.recv
	if r == nil {
		m.state = inBuffered
		l.mu.Unlock()
		return
	}
	m.state, m.recv = inMatched, nil
	r.state, r.loc, r.msg = stIO, locNone, nil
	if m.kind == kindRTS {
		l.late.copied++
	}
	l.releaseLocked(m)
	data := m.data
	m.data = nil
	after := l.unparkLocked()
	l.mu.Unlock()
	copy(r.buf, data)
	l.recycle(m, data)
	l.finish(r, nil)
	after()
}

// discardLocked throws away message m, whose receive was too short.
func (l *Link) discardLocked(m *inbound) func() {
	switch m.state {
	case inParked:
		if m.kind == kindRelayRTS {
			return l.relayDiscardLocked(m) // relay.go
		}
		l.unchargeParkedLocked(m)
		m.state, m.awaitRecv = inMatched, false
		if m.kind == kindRTS {
			m.releaseStream()
			l.grantLocked(m.p, &grant{id: m.id, n: m.n})
			return nop
		}
		s := m.stream
		return func() {
			l.ep.wg.Go(func() {
				s.ReleaseStreamCredit() // before the read that ends it, as in readLater
				io.Copy(io.Discard, s)
			})
		}
	case inTemp:
		m.discard = true
	case inBuffered:
		m.state = inMatched
		l.releaseLocked(m)
		l.recycle(m, m.data)
		m.data = nil
		return l.unparkLocked()
	}
	return nop
}

// releaseLocked accounts for unexpected message m's bytes leaving link
// memory: the QUIC path's budget gets them back, or, for an eager message,
// its sender's credit.
func (l *Link) releaseLocked(m *inbound) {
	defer l.freedLocked()
	switch {
	case m.relayed:
		l.relayHeld -= m.relayCharge
		m.relayCharge = 0
	case m.self:
	case m.viaEager && m.kind == kindData:
		l.releaseEagerLocked(m.p, eagerCost(m.n))
	default:
		l.buffered -= cost(m.n)
	}
}

// unchargeParkedLocked takes parked message m's charge off the budget: it
// is leaving the parked state.
func (l *Link) unchargeParkedLocked(m *inbound) {
	l.parkHeld -= m.parkCharge
	m.parkCharge = 0
	l.freedLocked()
}

// heldLocked is what the budget covers now: unexpected messages buffered
// or parked, and relayed ones held.
func (l *Link) heldLocked() int64 { return l.buffered + l.parkHeld + l.relayHeld }

// freedLocked wakes whoever waits for budget (relay.go's admitRelay).
func (l *Link) freedLocked() {
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
}

// unparkLocked starts reading parked messages, oldest first, as far as the
// budget allows; it returns what to do once l.mu is released.
func (l *Link) unparkLocked() func() {
	afters := l.unparkListLocked()
	if len(afters) == 0 {
		return nop // nothing parked: no closure to allocate
	}
	return func() {
		for _, a := range afters {
			a()
		}
	}
}

// unparkAsyncLocked is unparkLocked for a caller that cannot release
// l.mu (a request's onDone): what is to be done runs on a goroutine.
func (l *Link) unparkAsyncLocked() {
	if l.broken != nil || l.closing {
		return
	}
	if afters := l.unparkListLocked(); len(afters) > 0 {
		l.ep.wg.Go(func() {
			for _, a := range afters {
				a()
			}
		})
	}
}

func (l *Link) unparkListLocked() []func() {
	var afters []func()
	i := 0
	for ; i < len(l.parked); i++ {
		m := l.parked[i]
		if m.state != inParked {
			continue
		}
		if l.heldLocked()-m.parkCharge-m.relayCharge+cost(m.n) > l.quicBudget() {
			break
		}
		l.unchargeParkedLocked(m)
		afters = append(afters, l.startTempLocked(m, false))
	}
	n := copy(l.parked, l.parked[i:])
	clear(l.parked[n:])
	l.parked = l.parked[:n]
	return afters
}

// grantLocked clears bulk transfer g to be sent: the TCP reader expects
// the payloads in the order of the grants, which is the order of the cts
// frames on the control stream, which is the order the sender writes them.
func (l *Link) grantLocked(p *peer, g *grant) {
	if g.r != nil {
		g.r.loc, g.r.grant = locGrant, g
	}
	p.grants.push(g)
	if !p.bulkOwed {
		p.bulkDeadlineLocked()
	}
	if p.eager != nil {
		// On TCP, whichever way the request came: a few microseconds
		// where QUIC takes tens, and one channel for every grant, whose
		// order the payloads follow.
		p.queueEagerLocked(msgHeader{Kind: kindCTS, ID: g.id}, nil)
		signal(p.eagerSig)
		return
	}
	p.queueCtrlLocked(frameCTS, u64Body(g.id))
}

// liveLocked returns the requests not yet done.
func (l *Link) liveLocked() []*request {
	out := make([]*request, 0, len(l.live))
	for r := range l.live {
		out = append(out, r)
	}
	return out
}

// dequeueLocked removes queued request r from the queue it sits in.
func (l *Link) dequeueLocked(r *request) {
	switch r.loc {
	case locPosted:
		key := matchKey{r.peer, r.tag}
		if q := l.posted[key]; q != nil {
			q.remove(r)
			if q.len() == 0 {
				dropQueue(l.posted, key, q, &l.sparePosted)
			}
		}
	case locOpenQ:
		l.peers[r.peer].openQ.remove(r)
	case locRTS:
		delete(l.peers[r.peer].rts, r.bulkID)
	case locCreditQ:
		l.peers[r.peer].creditQ.remove(r)
	case locBulkQ:
		l.peers[r.peer].bulkQ.remove(r)
	case locTemp:
		// The message was matched: it is dropped once read, and its
		// charge goes back then (tempDone).
		r.msg.recv, r.msg.discard = nil, true
	case locGrant:
		r.grant.r, r.grant.dst = nil, nil
	case locRelayGrant:
		r.rgrant.r, r.rgrant.dst = nil, nil
	}
	r.loc = locNone
}

func (l *Link) String() string { return fmt.Sprintf("realnet.Link(rank %d of %d)", l.rank, l.size) }
