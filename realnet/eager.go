package realnet

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// The eager path. quic-go in user space costs tens of microseconds per
// message between processes where the kernel's TCP costs a few, and every
// pair of ranks with a bulk connection has an authenticated TCP connection
// already. So a rank configured with Config.Thresholds.Eager sends every
// message to such a peer over TCP, as MPI's eager and rendezvous protocols
// do:
//
//   - a message of fewer than Thresholds.Eager bytes goes at once, header
//     and payload together, on the eager connection: a second TCP
//     connection of the pair (TLS and sealed as the bulk one, unless the
//     network is trusted) that carries nothing but such messages and the
//     control frames below, so that a small message never waits behind a
//     bulk payload;
//   - a larger one by rendezvous: its request to send on the eager
//     connection, the receiver's clear-to-send back on it, the payload on
//     the bulk connection, where it never waits for a receiver that is not
//     ready.
//
// The clear-to-send of every bulk transfer travels on the eager connection,
// as does the request to send of a rank that does not send eagerly
// (tcprts.go): TCP latencies instead of QUIC ones per bulk message.
//
// Both travel on the one eager connection in Isend order, so that the
// receiver matches a peer's messages of one tag first-in first-out, as it
// does those of the QUIC streams (a rank sends to a peer either all on
// QUIC or all on TCP; which, is its own configuration's choice).
//
// Unexpected messages stay bounded by credit: a rank that will send
// eagerly asks its peer for credit, the peer grants it a window of
// MaxUnexpected/(2(p-1)) bytes (taken from what its QUIC path may buffer,
// so the sum stays within MaxUnexpected), the sender sends eagerly only
// what its credit covers, each message charged its payload and
// eagerOverhead (a message it does not cover goes by rendezvous, whose
// request costs eagerOverhead of credit until it is cleared; a send
// the credit does not cover even so waits in the sender until it does),
// and the receiver returns the bytes as they leave its memory: at once for
// a message whose receive was posted (read straight into its buffer),
// when it is matched for one that was not. A peer that sends beyond its
// credit breaks the protocol.
//
// Writes go out in the order they were queued: whoever queues a frame while
// no write is under way writes the queue itself (the sender's own
// goroutine, in Isend: no hand-off on the latency path), and the eager
// writer goroutine writes what the receive side queues (clear-to-send and
// credit frames, queued under the link's lock).

// MaxEagerThreshold bounds Config.Thresholds.Eager: an eager message is
// one sealed record.
const MaxEagerThreshold = bulkChunk

// maxEagerCredit bounds the eager credit a rank takes from a peer: far
// above any window a budget grants, far below what overflows its count.
const maxEagerCredit = 1 << 50

// eagerWindow is the credit this rank grants each peer that asks.
func (l *Link) eagerWindow() int64 {
	// At least a few requests to send, or nothing would ever move.
	return max(l.cfg.MaxUnexpected/int64(2*max(l.size-1, 1)), 4*msgOverhead)
}

// eagerOverhead is what an unexpected eager message or request to send is
// charged beyond its payload: its inbound record and queue entry (a few
// hundred bytes; it has no QUIC stream, so less than msgOverhead).
const eagerOverhead = 256

// eagerCost is what an eager message of n payload bytes is charged.
func eagerCost(n int64) int64 { return n + eagerOverhead }

// quicBudget is what the QUIC path may buffer of unexpected messages: what
// eager credit granted leaves of MaxUnexpected.
func (l *Link) quicBudget() int64 { return l.cfg.MaxUnexpected - l.eagerReserve }

// useEager reports whether this rank sends to p over TCP only.
func (p *peer) useEager() bool { return p.eager != nil && p.l.cfg.Thresholds.Eager > 0 }

// startEager launches the eager connection's goroutines and, if this rank
// sends eagerly, asks the peer for credit.
func (p *peer) startEager() {
	p.eager.bufferReads(p.l.cfg.SpinRead)
	wg := &p.l.ep.wg
	wg.Go(p.eagerReader)
	wg.Go(p.eagerWriter)
	var ask uint64 // a full window
	switch {
	case p.useEager():
	case p.l.cfg.Thresholds.Bulk >= 0:
		ask = rtsWindow // requests to send only (tcprts.go)
	default:
		return
	}
	p.l.mu.Lock()
	p.queueEagerLocked(msgHeader{Kind: kindAsk, Len: ask}, nil)
	signal(p.eagerSig)
	p.l.mu.Unlock()
}

// eagerSendLocked starts a send to p on TCP: eagerly if it is small and
// the peer's credit covers it (the request is done as soon as its bytes
// are queued), else by rendezvous, whose request to send costs eagerOverhead
// of credit too (the receiver keeps it until the transfer is cleared); a
// send that the credit does not cover even so waits, behind any that wait
// already, until credit comes back. It returns the write of the queue, to
// run once l.mu is released.
func (p *peer) eagerSendLocked(r *request) func() {
	if p.creditQ.len() > 0 || !p.eagerStartLocked(r) {
		r.loc = locCreditQ
		p.creditQ.push(r)
		return nop
	}
	return p.flush
}

// eagerStartLocked queues r's frame if the credit covers it.
func (p *peer) eagerStartLocked(r *request) bool {
	l := p.l
	n := len(r.buf)
	switch {
	case n < l.cfg.Thresholds.Eager && eagerCost(int64(n)) <= p.credit:
		p.credit -= eagerCost(int64(n))
		p.opened++
		p.queueEagerLocked(msgHeader{Kind: kindData, Tag: r.tag, Len: uint64(n)}, r.buf)
		l.finishLocked(r, nil)
	case eagerOverhead <= p.credit:
		p.credit -= eagerOverhead
		p.opened++
		p.nextID++
		r.bulkID, r.loc = p.nextID, locRTS
		p.rts[r.bulkID] = r
		p.queueEagerLocked(msgHeader{Kind: kindRTS, Tag: r.tag, Len: uint64(n), ID: r.bulkID}, nil)
	default:
		return false
	}
	return true
}

// creditedLocked starts the sends that waited for credit, in order, as far
// as it goes.
func (p *peer) creditedLocked() {
	for p.creditQ.len() > 0 && p.eagerStartLocked(p.creditQ.peek()) {
		p.creditQ.pop()
	}
	signal(p.eagerSig)
	signal(p.openSig) // a request to send may wait for it (tcprts.go)
}

// queueEagerLocked queues a frame of the eager connection: a header and,
// for data, its payload, copied.
func (p *peer) queueEagerLocked(h msgHeader, payload []byte) {
	p.outQ = append(h.append(p.outQ), payload...)
}

// flushEager writes the queued frames, unless a write is under way (its
// writer takes them too).
func (p *peer) flushEager() {
	l := p.l
	l.mu.Lock()
	if p.writing {
		l.mu.Unlock()
		return
	}
	p.writing = true
	for len(p.outQ) > 0 {
		b := p.outQ
		p.outQ, p.outSpare = p.outSpare[:0], nil
		l.mu.Unlock()
		err := p.eager.writeFrames(b)
		l.mu.Lock()
		p.outSpare = b[:0]
		if err != nil {
			p.writing = false
			l.wakeLocked()
			l.mu.Unlock()
			if l.ctx.Err() == nil {
				p.bulkLost(fmt.Errorf("eager connection: %w", err))
			}
			return
		}
	}
	p.writing = false
	if l.closing {
		l.wakeLocked() // Close waits for the queue to drain
	}
	l.mu.Unlock()
}

// eagerIdleLocked reports whether nothing is queued for the eager
// connection or being written to it.
func (p *peer) eagerIdleLocked() bool { return !p.writing && len(p.outQ) == 0 }

// eagerWriter writes the frames the receive side queues.
func (p *peer) eagerWriter() {
	for {
		select {
		case <-p.eagerSig:
		case <-p.l.ctx.Done():
			return
		}
		p.flushEager()
	}
}

// eagerReader reads the eager connection's frames: messages, which it
// matches as the accept loop matches QUIC streams, and control frames.
func (p *peer) eagerReader() {
	l := p.l
	for {
		h, err := p.eager.readEagerHeader(MaxEagerThreshold, uint64(l.cfg.MaxMessage), l.cfg.Timeout)
		if err == nil {
			err = p.eagerFrame(h)
		}
		if err != nil {
			p.bulkReadErr(stalled(err, "eager frame", l.cfg.Timeout))
			return
		}
		if p.eager.drained() {
			// The next read finds nothing yet (a system call that
			// fails, then a wait): let the receive this frame may
			// have completed run first, so that the call is not on
			// its path (with one P, it would be).
			runtime.Gosched()
		}
	}
}

// eagerFrame handles one frame of the eager connection.
func (p *peer) eagerFrame(h msgHeader) error {
	l := p.l
	switch h.Kind {
	case kindData:
		if err := l.arriveEager(p, h); err != nil {
			return err
		}
	case kindRTS:
		held, err := l.arriveRTS(p, h)
		if err != nil || held {
			return err
		}
	case kindAfter:
		l.mu.Lock()
		defer l.mu.Unlock()
		return p.afterFrameLocked(h.Len)
	case kindCTS:
		l.mu.Lock()
		err := p.clearedLocked(h.ID)
		l.mu.Unlock()
		return err
	case kindCredit:
		l.mu.Lock()
		defer l.mu.Unlock()
		// Credit comes back as the receiver frees what it granted: more
		// than a budget could hold is a receiver breaking the protocol
		// (or overflowing the count, which would leave no credit at all).
		if h.Len > maxEagerCredit || p.credit > maxEagerCredit-int64(h.Len) {
			return &ProtocolError{What: "eager credit", Err: fmt.Errorf("%d bytes granted on top of %d", h.Len, p.credit)}
		}
		p.credit += int64(h.Len)
		p.creditedLocked()
		return nil
	case kindAsk:
		l.mu.Lock()
		if p.granted == 0 {
			p.granted = l.eagerWindow()
			if h.Len > 0 {
				p.granted = min(p.granted, int64(min(h.Len, rtsWindow)))
				p.rtsOnly = true
			}
			l.eagerReserve += p.granted
			p.queueEagerLocked(msgHeader{Kind: kindCredit, Len: uint64(p.granted)}, nil)
			signal(p.eagerSig)
		}
		l.mu.Unlock()
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return p.arrivedLocked()
}

// arriveEager matches an eager message from p whose header h has been
// read, and reads its payload: straight into its receive's buffer when one
// is posted, else into link memory.
func (l *Link) arriveEager(p *peer, h msgHeader) error {
	n := int64(h.Len)
	l.mu.Lock()
	if p.rtsOnly {
		l.mu.Unlock()
		return &ProtocolError{What: "eager message", Err: errors.New("from a peer granted credit for requests to send only")}
	}
	if p.held+eagerCost(n) > p.granted {
		l.mu.Unlock()
		return &ProtocolError{What: "eager message", Err: fmt.Errorf("%d bytes (charged %d) beyond the credit granted (%d held of %d)", n, eagerCost(n), p.held, p.granted)}
	}
	p.held += eagerCost(n)
	key := matchKey{p.rank, h.Tag}
	if q := l.posted[key]; q != nil && q.len() > 0 && q.peek().claim == nil && !l.closing && l.broken == nil {
		r := q.pop()
		if q.len() == 0 {
			dropQueue(l.posted, key, q, &l.sparePosted)
		}
		r.loc = locNone
		var err error
		if n > int64(len(r.buf)) {
			l.finishLocked(r, l.tooLong(p.rank, h.Tag, n, r))
			l.mu.Unlock()
			err = p.readEagerPayload(nil, n)
		} else {
			// Abandoning r waits for the read: it is under way, and a
			// byte stream cannot skip it.
			r.state, r.got = stIO, n
			l.mu.Unlock()
			err = p.readEagerPayload(r.buf[:n], n)
			l.finish(r, p.ioErr(err, r))
		}
		l.mu.Lock()
		l.releaseEagerLocked(p, eagerCost(n))
		l.mu.Unlock()
		return err
	}
	m := &inbound{p: p, tag: h.Tag, n: n, kind: kindData, viaEager: true, state: inTemp, data: make([]byte, n)}
	after := nop
	if !l.closing && l.broken == nil {
		if r := l.popPostedLocked(key); r != nil {
			// A relayed message's payload, which its relay loop
			// claimed: it goes on as one from its origin.
			after = l.claimLocked(m, r, false)
		} else {
			l.pushUnexpectedLocked(p.rank, m)
		}
	}
	l.mu.Unlock()
	after()
	err := p.readEagerPayload(m.data, n)
	if err != nil {
		// The charge goes back before the verdict breaks the link
		// (bulkReader), and a receive that claimed m fails with that
		// verdict.
		l.tempRefund(m)
		l.tempDone(m, p.ioErr(err, nil))
		return err
	}
	l.tempDone(m, nil)
	return nil
}

// readEagerPayload reads the payload of an eager message, which its
// sender wrote with its header: one that does not come within the link's
// Timeout holds up the peer's later messages and its credit, and breaks
// the protocol.
func (p *peer) readEagerPayload(dst []byte, n int64) error {
	if n == 0 {
		return nil
	}
	if p.eager.buffered() >= n {
		return p.eager.readPayload(dst, n, 0) // no wait: it is in
	}
	timeout := p.l.cfg.Timeout
	p.eager.c.SetReadDeadline(time.Now().Add(timeout))
	err := stalled(p.eager.readPayload(dst, n, 0), "eager payload", timeout)
	p.eager.c.SetReadDeadline(time.Time{})
	return err
}

// arriveRTS matches a request to send that came on the eager connection.
// It is charged eagerOverhead of the sender's credit until it is cleared
// (inbound.releaseStream), so that requests waiting for their receives
// are bounded as the QUIC path's are by stream credit.
func (l *Link) arriveRTS(p *peer, h msgHeader) (held bool, err error) {
	l.mu.Lock()
	if p.held+eagerOverhead > p.granted {
		l.mu.Unlock()
		return false, &ProtocolError{What: "eager request to send", Err: fmt.Errorf("beyond the credit granted (%d held of %d)", p.held, p.granted)}
	}
	p.held += eagerOverhead
	if p.holdRTSLocked(h) {
		// It follows message streams not yet accepted (tcprts.go).
		l.mu.Unlock()
		return true, nil
	}
	l.mu.Unlock()
	l.arrive(p, h, nil)
	l.mu.Lock()
	p.rtsMatchedLocked()
	l.mu.Unlock()
	return false, nil
}

// releaseEagerLocked returns n bytes of p's eager credit, which have left
// this rank's memory; they go back to p once they make up a quarter of its
// window (or at once, if p's credit may be running out).
func (l *Link) releaseEagerLocked(p *peer, n int64) {
	p.held -= n
	p.owed += n
	if p.owed >= p.granted/4 {
		p.queueEagerLocked(msgHeader{Kind: kindCredit, Len: uint64(p.owed)}, nil)
		p.owed = 0
		signal(p.eagerSig)
	}
}

// clearedLocked handles a clear-to-send for bulk transfer id, from either
// connection: the bulk writer sends it.
func (p *peer) clearedLocked(id uint64) error {
	l := p.l
	r := p.rts[id]
	if r == nil {
		if p.gone != nil || l.broken != nil || l.closing {
			return nil // the send was failed already
		}
		return &ProtocolError{What: "cts", Err: fmt.Errorf("clear to send unknown bulk transfer %d", id)}
	}
	delete(p.rts, id)
	r.loc = locBulkQ
	p.bulkQ.push(r)
	signal(p.bulkSig)
	return nil
}

// arrivedLocked counts a message from p as arrived, now that it is
// matched or queued: a bye that says it was the last must not fail a
// receive it is about to satisfy, and nothing may follow the bye.
func (p *peer) arrivedLocked() error {
	p.accepted++
	if p.byeRecv && p.accepted > p.byeCount {
		return &ProtocolError{What: "message", Err: fmt.Errorf("message %d after bye at %d", p.accepted, p.byeCount)}
	}
	p.checkDrainedLocked()
	return nil
}
