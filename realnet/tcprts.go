package realnet

import (
	"errors"
	"fmt"
)

// The rendezvous on TCP. A rank that sends small messages on QUIC (the
// default: Thresholds.Eager 0) still sends the request to send of every
// bulk message on the eager connection, where it costs a TCP write
// instead of a QUIC stream (quic-go's goroutines, packets and
// acknowledgements at both ends); the clear-to-send comes back on it as
// for every bulk transfer, and the payload goes on the bulk connection.
// So a bulk message costs no QUIC round trip on any path.
//
// A peer's messages are matched first in first out per tag, but now
// arrive on two channels: small messages on QUIC streams (in the order
// they were opened), requests to send on the eager connection (in the
// order they were written). The sender keeps them in Isend order (one
// queue, p.openQ, for both: a send waits behind those Isend before it,
// whether for a stream or for credit), and tells the receiver how they
// interleave: each message stream's header carries in its ID the number
// of requests to send queued before it, and a kindAfter frame before a
// request to send the number of message streams opened before it, when
// that changed. The receiver matches a request to send only once it has
// accepted that many streams (until then it holds it, in order, charged
// to the sender's credit), and a message stream only once that many
// requests to send have been matched (the accept loop waits for the eager
// reader, which never waits for the accept loop: no cycle).
//
// Requests to send on TCP are bounded by credit as eager messages are: the
// sender asks for rtsWindow bytes, each request is charged eagerOverhead
// until it is cleared.

// rtsWindow is the credit a rank that sends only requests to send on the
// eager connection asks for: 64 of them outstanding.
const rtsWindow = 64 * eagerOverhead

// tcpRTS reports whether this rank sends r's request to send on the eager
// connection while its small messages go on QUIC.
func (p *peer) tcpRTS(r *request) bool {
	return p.eager != nil && !p.useEager() && p.useBulk(len(r.buf))
}

// startTCPRTSLocked queues r's request to send on the eager connection if
// the credit covers it, after a kindAfter frame if streams were opened
// since the last one.
func (p *peer) startTCPRTSLocked(r *request) bool {
	if p.credit < eagerOverhead {
		return false
	}
	p.credit -= eagerOverhead
	p.opened++
	p.nextID++
	r.bulkID, r.loc = p.nextID, locRTS
	p.rts[r.bulkID] = r
	if p.quicOpened != p.quicMarked {
		p.quicMarked = p.quicOpened
		p.queueEagerLocked(msgHeader{Kind: kindAfter, Len: p.quicOpened}, nil)
	}
	p.queueEagerLocked(msgHeader{Kind: kindRTS, Tag: r.tag, Len: uint64(len(r.buf)), ID: r.bulkID}, nil)
	p.tcpSent++
	return true
}

// openTCPRTS is the opener's turn for r, a send whose request goes on the
// eager connection: it waits for credit (the sends behind r wait with
// it), then queues the request. It returns false when the link is going
// down.
func (p *peer) openTCPRTS(r *request) bool {
	l := p.l
	l.mu.Lock()
	for r.state != stDone && !l.closing && l.broken == nil && p.gone == nil && !p.startTCPRTSLocked(r) {
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-p.openSig: // creditedLocked signals it
		case <-wake:
		case <-l.ctx.Done():
			l.mu.Lock()
			p.opening = false
			l.wakeLocked()
			l.mu.Unlock()
			return false
		}
		l.mu.Lock()
	}
	if r.state != stDone && r.loc == locOpening {
		// Not queued: the link or the peer went down first.
		err := l.failureLocked(r.peer)
		if err == nil {
			err = ErrClosed
		}
		l.finishLocked(r, err)
	}
	l.mu.Unlock()
	p.flushEager()
	return true
}

// afterFrameLocked handles a kindAfter frame: the requests to send that
// follow come after the sender's first n message streams.
func (p *peer) afterFrameLocked(n uint64) error {
	if n < p.quicNeed {
		return &ProtocolError{What: "eager frame", Err: fmt.Errorf("requests to send after %d streams, after %d before", n, p.quicNeed)}
	}
	p.quicNeed = n
	return nil
}

// heldRTS is a request to send from the eager connection that came before
// the message streams it follows.
type heldRTS struct {
	h    msgHeader
	need uint64 // streams to accept first
}

// holdRTSLocked reports whether the request to send with header h, just
// read from the eager connection, must wait for message streams sent
// before it, and if so holds it.
func (p *peer) holdRTSLocked(h msgHeader) bool {
	if p.heldQ.len() == 0 && p.quicIn >= p.quicNeed {
		return false
	}
	p.heldQ.push(heldRTS{h: h, need: p.quicNeed})
	return true
}

// rtsMatchedLocked counts a request to send from the eager connection as
// matched, for the message streams that wait for it.
func (p *peer) rtsMatchedLocked() {
	p.tcpIn++
	signal(p.tcpSig)
}

// streamAccepted counts a message stream as accepted and matches the
// requests to send held for it.
func (p *peer) streamAccepted() error {
	l := p.l
	l.mu.Lock()
	p.quicIn++
	for p.heldQ.len() > 0 && p.heldQ.peek().need <= p.quicIn {
		h := p.heldQ.pop().h
		l.mu.Unlock()
		l.arrive(p, h, nil)
		l.mu.Lock()
		p.rtsMatchedLocked()
		if err := p.arrivedLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
	}
	l.mu.Unlock()
	return nil
}

// errStreamsGone ends the accept loop's wait for requests to send: the
// peer or the link is gone.
var errStreamsGone = errors.New("peer gone")

// awaitRTS waits until n requests to send from the eager connection have
// been matched: the message stream whose header says so follows them.
func (p *peer) awaitRTS(n uint64) error {
	l := p.l
	for {
		l.mu.Lock()
		done := p.tcpIn >= n
		down := l.closing || l.broken != nil || p.gone != nil
		l.mu.Unlock()
		switch {
		case done:
			return nil
		case down:
			return errStreamsGone
		}
		select {
		case <-p.tcpSig:
		case <-l.ctx.Done():
			return errStreamsGone
		case <-p.conn.Context().Done():
			return errStreamsGone
		}
	}
}
