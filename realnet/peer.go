package realnet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/quic-go/quic-go"
)

// Stream priorities (RFC 9218 urgencies, lower first): the control stream
// goes before everything, small messages and bulk requests to send before
// large messages, which share what is left round-robin (quic-go's default,
// urgency 3, incremental). So a barrier or a clear-to-send never waits for
// a large transfer's queued bytes, only for those already in flight.
const (
	urgencyControl int8 = 0
	urgencySmall   int8 = 1
)

// inlineMax is the largest payload the accept loop reads itself rather
// than on a goroutine of its own: small messages arrive with their header,
// so reading them inline saves a goroutine start on the latency path.
const inlineMax = 16 << 10

// peer is the link's connection to one other rank.
type peer struct {
	l    *Link
	rank int
	conn *quic.Conn
	ctrl *quic.Stream
	ctrR *bufio.Reader
	bulk *bulkConn // nil: no bulk path with this peer
	// eager is the eager connection beside bulk (eager.go); nil when
	// there is no bulk path.
	eager *bulkConn

	// Under l.mu.
	openQ    fifo[*request] // sends waiting for a stream, in Isend order
	opening  bool           // the opener holds a send: Isend must queue behind it
	opened   uint64         // message streams opened to the peer
	accepted uint64         // message streams accepted from the peer
	nextID   uint64
	rts      map[uint64]*request // bulk sends waiting for their cts
	bulkQ    fifo[*request]      // bulk sends granted, for the TCP writer
	grants   fifo[*grant]        // bulk receives granted, in cts order, for the TCP reader
	ctrlQ    []byte              // control frames to write, in order
	byeRecv  bool
	byeCount uint64
	gone     error // set when the peer is lost or has closed: operations with it fail with it
	lost     bool  // the connection is down
	// bulkOwed: the bulk connection has a read deadline because the peer
	// owes payloads it was cleared to send (bulkDeadlineLocked).
	bulkOwed bool

	// The eager connection (eager.go), under l.mu.
	credit         int64          // eager bytes the peer lets this rank send
	granted        int64          // eager bytes this rank lets the peer send (0 until it asks)
	rtsOnly        bool           // the peer asked for credit for requests to send only
	held           int64          // bytes of the peer's eager messages in this rank's memory
	owed           int64          // bytes released, not yet returned to the peer as credit
	outQ, outSpare []byte         // frames to write, in order; the buffer of the last write
	creditQ        fifo[*request] // sends waiting for credit, in Isend order
	writing        bool           // a goroutine is writing outQ

	// The rendezvous on TCP (tcprts.go), under l.mu.
	quicOpened uint64        // message streams opened to the peer
	quicMarked uint64        // quicOpened as the last kindAfter frame said
	tcpSent    uint64        // requests to send queued on the eager connection
	quicIn     uint64        // message streams accepted from the peer
	quicNeed   uint64        // streams the peer's next requests to send follow
	tcpIn      uint64        // requests to send from the eager connection matched
	heldQ      fifo[heldRTS] // requests to send waiting for the streams before them

	openSig  chan struct{}
	bulkSig  chan struct{}
	ctrlSig  chan struct{}
	eagerSig chan struct{}
	tcpSig   chan struct{} // a request to send from the eager connection was matched

	// flush is p.flushEager, made once: a method value made per send
	// costs an allocation.
	flush func()

	// Owned by the accept loop: the buffer of a stream's header, and the
	// small payload it is to read next (readInline, made once as flush
	// is), which readLater hands it instead of a closure per message.
	hdr     [msgHeaderLen]byte
	inl     inlineRead
	readInl func()
}

// inlineRead is a payload the accept loop reads itself (readLater).
type inlineRead struct {
	m   *inbound
	dst []byte
	r   *request
}

func newPeer(l *Link, rank int, conn *quic.Conn, ctrl *quic.Stream, ctrR *bufio.Reader, bulk, eager *bulkConn) *peer {
	p := &peer{
		l: l, rank: rank, conn: conn, ctrl: ctrl, ctrR: ctrR, bulk: bulk, eager: eager,
		rts:      map[uint64]*request{},
		openSig:  make(chan struct{}, 1),
		bulkSig:  make(chan struct{}, 1),
		ctrlSig:  make(chan struct{}, 1),
		eagerSig: make(chan struct{}, 1),
		tcpSig:   make(chan struct{}, 1),
	}
	p.flush = p.flushEager
	p.readInl = p.readInline
	return p
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// start launches the peer's goroutines.
func (p *peer) start() {
	wg := &p.l.ep.wg
	wg.Go(p.watch)
	wg.Go(p.opener)
	wg.Go(p.ctrlWriter)
	wg.Go(p.ctrlReader)
	wg.Go(p.acceptLoop)
	if p.bulk != nil {
		wg.Go(p.bulkWriter)
		wg.Go(p.bulkReader)
	}
	if p.eager != nil {
		p.startEager()
	}
}

// closeTCP closes the bulk and eager connections, if any.
func (p *peer) closeTCP() {
	if p.bulk != nil {
		p.bulk.Close()
	}
	if p.eager != nil {
		p.eager.Close()
	}
}

// useBulk reports whether a message of n bytes takes the bulk path.
func (p *peer) useBulk(n int) bool {
	t := p.l.cfg.Thresholds.Bulk
	return p.bulk != nil && t >= 0 && n >= t
}

// enqueueSendLocked starts a send: on a stream opened at once when
// possible, else behind the sends already waiting for one, so that
// streams are opened in Isend order and the receiver, which accepts them
// in that order, matches messages of one tag first-in first-out. It
// returns what to do once l.mu is released.
func (p *peer) enqueueSendLocked(r *request) sendStep {
	if p.useEager() {
		return sendStep{fn: p.eagerSendLocked(r)}
	}
	if !p.opening && p.openQ.len() == 0 {
		if p.tcpRTS(r) {
			if p.startTCPRTSLocked(r) {
				return sendStep{fn: p.flush}
			}
		} else if s, err := p.conn.OpenUniStream(); err == nil {
			p.opened++
			p.quicOpened++
			return p.startSendLocked(r, s)
		}
	}
	r.loc = locOpenQ
	p.openQ.push(r)
	signal(p.openSig)
	return sendStep{}
}

// sendStep is what a send does once l.mu is released: fn, or the write of
// small message r on stream s (a value, not a closure: a closure made per
// message costs an allocation on the latency path).
type sendStep struct {
	fn    func()
	p     *peer
	r     *request
	s     *quic.SendStream
	after uint64 // the small message's header ID
}

func (st sendStep) run() {
	switch {
	case st.r != nil:
		st.p.writeSmall(st.r, st.s, st.after)
	case st.fn != nil:
		st.fn()
	}
}

// startSendLocked starts writing r on s: the message itself, or for the
// bulk path its request to send. It returns the write, to run once l.mu
// is released: a small message is handed to quic-go there and then, on
// the calling goroutine (quic-go copies it and sends it from its own), so
// that the send costs no goroutine of its own and is complete when Isend
// returns; a large one is written by a goroutine of its own.
func (p *peer) startSendLocked(r *request, s *quic.SendStream) sendStep {
	l := p.l
	if p.useBulk(len(r.buf)) {
		p.nextID++
		id := p.nextID
		r.bulkID, r.loc = id, locRTS
		p.rts[id] = r
		h := msgHeader{Kind: kindRTS, Tag: r.tag, Len: uint64(len(r.buf)), ID: id}
		s.SetPriority(urgencySmall, false)
		return sendStep{fn: func() {
			var hb [msgHeaderLen]byte
			p.sendSmall(s, h.append(hb[:0]), func(err error) {
				if err == nil {
					s.Close()
				}
				// A failed write means the connection is down; the
				// watcher fails r with the cause.
			})
		}}
	}
	r.state, r.loc = stIO, locNone
	r.sendS = s // cancelling r cancels the stream's write (takeCancel)
	// The requests to send queued on TCP before it, which it follows.
	after := p.tcpSent
	if len(r.buf) > inlineMax {
		return sendStep{fn: func() { l.ep.wg.Go(func() { p.writeData(r, s, after) }) }}
	}
	s.SetPriority(urgencySmall, false)
	return sendStep{p: p, r: r, s: s, after: after}
}

// writeSmall writes small message r, header and payload, on s and ends
// the stream, as sendSmall would, without the closures it takes.
func (p *peer) writeSmall(r *request, s *quic.SendStream, after uint64) {
	h := msgHeader{Kind: kindData, Tag: r.tag, Len: uint64(len(r.buf)), ID: after}
	var small [msgHeaderLen + 64]byte
	b := append(h.append(small[:0]), r.buf...)
	err := s.TryWriteAll(b)
	if err != quic.ErrWouldBlock {
		p.closeData(r, s, err)
		return
	}
	c := slices.Clone(b) // small is this frame's
	p.l.ep.wg.Go(func() {
		_, err := s.Write(c)
		p.closeData(r, s, err)
	})
}

// sendSmall hands b to quic-go and calls done with the outcome: at once
// when quic-go takes it whole (TryWriteAll copies it, to send it from its
// own goroutines), else from a goroutine of its own that waits for flow
// control, so that the caller never waits.
func (p *peer) sendSmall(s *quic.SendStream, b []byte, done func(error)) {
	err := s.TryWriteAll(b)
	if err != quic.ErrWouldBlock {
		done(err)
		return
	}
	c := slices.Clone(b) // the caller may reuse its buffer
	p.l.ep.wg.Go(func() {
		_, err := s.Write(c)
		done(err)
	})
}

// writeData sends a large message on its own stream.
func (p *peer) writeData(r *request, s *quic.SendStream, after uint64) {
	h := msgHeader{Kind: kindData, Tag: r.tag, Len: uint64(len(r.buf)), ID: after}
	_, err := s.Write(h.append(nil))
	if err == nil {
		_, err = s.Write(r.buf)
	}
	p.closeData(r, s, err)
}

// closeData ends the stream of r's message and completes r.
func (p *peer) closeData(r *request, s *quic.SendStream, err error) {
	if err == nil {
		err = s.Close()
		// Close on a stream reset already (abandoned here, or stopped
		// by the peer) fails with a bare error; the reset's own error,
		// a *quic.StreamError, says who reset it.
		var se *quic.StreamError
		if err != nil && errors.As(context.Cause(s.Context()), &se) {
			err = se
		}
	}
	p.l.finish(r, p.ioErr(err, r))
}

// opener opens streams for the sends that could not get one at once,
// in order.
func (p *peer) opener() {
	l := p.l
	for {
		select {
		case <-p.openSig:
		case <-l.ctx.Done():
			return
		}
		for {
			l.mu.Lock()
			if p.openQ.len() == 0 {
				p.opening = false
				l.wakeLocked()
				l.mu.Unlock()
				break
			}
			r := p.openQ.pop()
			r.loc, p.opening = locOpening, true
			l.mu.Unlock()

			if p.tcpRTS(r) {
				if !p.openTCPRTS(r) {
					return
				}
				continue
			}
			s, err := p.conn.OpenUniStreamSync(l.ctx)
			l.mu.Lock()
			if err != nil {
				p.opening = false
				l.wakeLocked()
				l.mu.Unlock()
				l.finish(r, p.ioErr(err, r))
				// The connection is gone or the link is shutting down;
				// the watcher fails what is left.
				return
			}
			p.opened++
			p.quicOpened++
			var after sendStep
			if r.state == stDone || l.closing {
				s.CancelWrite(l.resetLocked())
				l.finishLocked(r, ErrClosed)
			} else {
				after = p.startSendLocked(r, s)
			}
			l.mu.Unlock()
			after.run()
		}
	}
}

// queueCtrlLocked queues a control frame; frames go out in queue order.
func (p *peer) queueCtrlLocked(t byte, body []byte) {
	p.ctrlQ = appendFrame(p.ctrlQ, t, body)
	signal(p.ctrlSig)
}

func (p *peer) ctrlWriter() {
	l := p.l
	for {
		select {
		case <-p.ctrlSig:
		case <-l.ctx.Done():
			return
		}
		l.mu.Lock()
		b := p.ctrlQ
		p.ctrlQ = nil
		l.mu.Unlock()
		if len(b) == 0 {
			continue
		}
		if _, err := p.ctrl.Write(b); err != nil {
			return // the connection is down; the watcher reports it
		}
	}
}

func (p *peer) ctrlReader() {
	l := p.l
	for {
		t, body, err := p.readCtrlFrame()
		if err != nil {
			var pe *ProtocolError
			switch {
			case isConnErr(err) || p.conn.Context().Err() != nil || l.ctx.Err() != nil:
			case errors.As(err, &pe):
				p.protocolError(pe.What, pe.Err)
			default:
				p.protocolError("control frame", err)
			}
			return
		}
		v, err := decodeU64(body)
		if err != nil {
			p.protocolError("control frame", err)
			return
		}
		l.mu.Lock()
		switch t {
		case frameCTS:
			if err := p.clearedLocked(v); err != nil {
				l.mu.Unlock()
				var pe *ProtocolError
				errors.As(err, &pe)
				p.protocolError(pe.What, pe.Err)
				return
			}
		case frameBye:
			if p.byeRecv || v < p.accepted {
				l.mu.Unlock()
				p.protocolError("bye", fmt.Errorf("bye after %d streams, %d accepted already", v, p.accepted))
				return
			}
			p.byeRecv, p.byeCount = true, v
			p.checkDrainedLocked()
			l.wakeLocked()
		}
		l.mu.Unlock()
	}
}

// readCtrlFrame reads the next control frame. The stream may stay idle
// for as long as the peer has nothing to say, but once a frame has begun
// the rest of it must come within the link's Timeout, or the peer breaks
// the protocol.
func (p *peer) readCtrlFrame() (byte, []byte, error) {
	if _, err := p.ctrR.Peek(1); err != nil {
		return 0, nil, err
	}
	const longest = 1 + 1 + 8 // type, length, and a cts or bye's body
	if p.ctrR.Buffered() < longest {
		p.ctrl.SetReadDeadline(time.Now().Add(p.l.cfg.Timeout))
		defer p.ctrl.SetReadDeadline(time.Time{})
	}
	t, body, err := readFrame(p.ctrR, frameCTS, frameBye)
	return t, body, stalled(err, "control frame", p.l.cfg.Timeout)
}

// checkDrainedLocked marks the peer gone once it has said bye and every
// message it sent has arrived: from then on nothing more can come from
// it, so receives from it fail, as do sends to it that have not started.
func (p *peer) checkDrainedLocked() {
	if !p.byeRecv || p.accepted != p.byeCount || p.gone != nil {
		return
	}
	l := p.l
	p.gone = &PeerError{Rank: p.rank, Local: l.rank, Err: ErrPeerClosed}
	for _, r := range l.liveLocked() {
		if r.peer != p.rank || r.state != stQueued || (r.kind == reqRecv && r.loc != locPosted) {
			continue
		}
		l.dequeueLocked(r)
		l.finishLocked(r, p.gone)
	}
}

// readRTSEnd reads the end of a request to send's stream. It returns an
// error when the accept loop must stop: the connection is down, or the
// peer broke the protocol (a stream longer than its header, or one whose
// end did not come within the deadline), which it reports.
func (p *peer) readRTSEnd(s *quic.ReceiveStream) error {
	err := readEnd(s)
	s.SetReadDeadline(time.Time{})
	var se *quic.StreamError
	switch {
	case err == nil, errors.As(err, &se):
		return nil // ended, or reset by a sender that gave up
	case errors.Is(err, os.ErrDeadlineExceeded):
		p.protocolError("request to send", fmt.Errorf("stream not ended within %v of its header", p.l.cfg.Timeout))
	case isConnErr(err) || p.conn.Context().Err() != nil || p.l.ctx.Err() != nil:
	default:
		var pe *ProtocolError
		if errors.As(err, &pe) {
			p.protocolError("request to send", pe.Err)
		} else {
			p.protocolError("request to send", err)
		}
	}
	return err
}

// acceptLoop takes the peer's message streams in the order it opened
// them, reads each header and hands the message to the matching.
func (p *peer) acceptLoop() {
	l := p.l
	for {
		s, err := p.conn.AcceptUniStream(l.ctx)
		if err != nil {
			return
		}
		hb := p.hdr[:]
		s.SetReadDeadline(time.Now().Add(l.cfg.Timeout))
		_, err = io.ReadFull(s, hb)
		if err != nil {
			var se *quic.StreamError
			switch {
			case errors.As(err, &se):
				// The sender abandoned the message before its header
				// went out.
				s.ReleaseStreamCredit()
			case isConnErr(err) || p.conn.Context().Err() != nil || l.ctx.Err() != nil:
				return
			default:
				p.protocolError("message header", err)
				return
			}
		} else {
			h, err := decodeMsgHeader(hb, uint64(l.cfg.MaxMessage))
			if err != nil {
				s.CancelRead(codeCancelled)
				p.protocolError("message header", err)
				return
			}
			if h.Kind == kindData {
				s.SetReadDeadline(time.Time{}) // the payload's read sets its own
				if p.awaitRTS(h.ID) != nil {
					l.mu.Lock()
					reset := l.resetLocked()
					l.mu.Unlock()
					s.CancelRead(reset)
					return
				}
			}
			l.arrive(p, h, s)
			if h.Kind == kindRTS {
				// Nothing follows a request to send: its stream is read
				// to its end, under the header's deadline, or quic-go
				// never counts it finished (when the FIN comes in a
				// later packet than the header) and, after
				// maxStreams of them, the peer can open no stream.
				if err := p.readRTSEnd(s); err != nil {
					return
				}
			}
		}
		l.mu.Lock()
		err = p.arrivedLocked()
		l.mu.Unlock()
		if err == nil {
			err = p.streamAccepted()
		}
		if err != nil {
			var pe *ProtocolError
			errors.As(err, &pe)
			p.protocolError(pe.What, pe.Err)
			return
		}
	}
}
