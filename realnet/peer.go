package realnet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
)

// QUIC application error codes a link closes connections with.
const (
	codeBye      quic.ApplicationErrorCode = 0x100 // graceful close after both sides said bye
	codeProtocol quic.ApplicationErrorCode = 0x101 // the peer broke the wire protocol
	codeAbort    quic.ApplicationErrorCode = 0x102 // Abort, or a peer lost for another reason
	codeRefused  quic.ApplicationErrorCode = 0x103 // connection not wanted (wrong session, seed absent, ...)
)

// Stream error codes.
const (
	codeCancelled quic.StreamErrorCode = 1 // the operation was abandoned
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
	bulk net.Conn // nil: no bulk path with this peer

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

	openSig chan struct{}
	bulkSig chan struct{}
	ctrlSig chan struct{}
}

func newPeer(l *Link, rank int, conn *quic.Conn, ctrl *quic.Stream, ctrR *bufio.Reader, bulk net.Conn) *peer {
	return &peer{
		l: l, rank: rank, conn: conn, ctrl: ctrl, ctrR: ctrR, bulk: bulk,
		rts:     map[uint64]*request{},
		openSig: make(chan struct{}, 1),
		bulkSig: make(chan struct{}, 1),
		ctrlSig: make(chan struct{}, 1),
	}
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
}

// useBulk reports whether a message of n bytes takes the bulk path.
func (p *peer) useBulk(n int) bool {
	t := p.l.cfg.BulkThreshold
	return p.bulk != nil && t >= 0 && n >= t
}

// enqueueSendLocked starts a send: on a stream opened at once when
// possible, else behind the sends already waiting for one, so that
// streams are opened in Isend order and the receiver, which accepts them
// in that order, matches messages of one tag first-in first-out.
func (p *peer) enqueueSendLocked(r *request) {
	if !p.opening && p.openQ.len() == 0 {
		if s, err := p.conn.OpenUniStream(); err == nil {
			p.opened++
			p.startSendLocked(r, s)
			return
		}
	}
	r.loc = locOpenQ
	p.openQ.push(r)
	signal(p.openSig)
}

// startSendLocked writes r on s: the message itself, or for the bulk path
// its request to send.
func (p *peer) startSendLocked(r *request, s *quic.SendStream) {
	l := p.l
	wg := &l.ep.wg
	if p.useBulk(len(r.buf)) {
		p.nextID++
		id := p.nextID
		r.bulkID, r.loc = id, locRTS
		p.rts[id] = r
		h := msgHeader{Kind: kindRTS, Tag: r.tag, Len: uint64(len(r.buf)), ID: id}
		wg.Go(func() {
			if _, err := s.Write(h.append(nil)); err == nil {
				s.Close()
			}
			// A failed write means the connection is down; the watcher
			// fails r with the cause.
		})
		return
	}
	r.state, r.loc = stIO, locNone
	r.cancel = func() { s.CancelWrite(codeCancelled) }
	wg.Go(func() { p.writeData(r, s) })
}

// writeData sends r's message on its own stream.
func (p *peer) writeData(r *request, s *quic.SendStream) {
	h := msgHeader{Kind: kindData, Tag: r.tag, Len: uint64(len(r.buf))}
	var err error
	if len(r.buf) <= inlineMax {
		b := make([]byte, 0, msgHeaderLen+len(r.buf))
		_, err = s.Write(append(h.append(b), r.buf...))
	} else if _, err = s.Write(h.append(nil)); err == nil {
		_, err = s.Write(r.buf)
	}
	if err == nil {
		err = s.Close()
	}
	p.l.finish(r, p.ioErr(err, r))
}

// ioErr turns the error of an I/O on this peer into what the request
// fails with: the link's or the peer's failure when there is one, so that
// the error names the rank to blame.
func (p *peer) ioErr(err error, r *request) error {
	if err == nil {
		return nil
	}
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.failureLocked(p.rank); f != nil {
		return f
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote {
		verb := "send"
		if r != nil && r.kind == reqRecv {
			verb = "receive"
		}
		return fmt.Errorf("realnet: rank %d: rank %d abandoned the message (tag %#x) this %s was for", l.rank, p.rank, uint64(tagOf(r)), verb)
	}
	return &PeerError{Rank: p.rank, Local: l.rank, Err: err}
}

func tagOf(r *request) algos.Tag {
	if r == nil {
		return 0
	}
	return r.tag
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
			if r.state == stDone || l.closing {
				s.CancelWrite(codeCancelled)
				l.finishLocked(r, ErrClosed)
			} else {
				p.startSendLocked(r, s)
			}
			l.mu.Unlock()
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
		t, body, err := readFrame(p.ctrR, frameCTS, frameBye)
		if err != nil {
			if p.conn.Context().Err() == nil && l.ctx.Err() == nil {
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
			r := p.rts[v]
			if r == nil {
				gone := p.gone != nil || l.broken != nil || l.closing
				l.mu.Unlock()
				if !gone {
					p.protocolError("cts", fmt.Errorf("clear to send unknown bulk transfer %d", v))
					return
				}
				continue // the send was failed already
			}
			delete(p.rts, v)
			r.loc = locBulkQ
			p.bulkQ.push(r)
			signal(p.bulkSig)
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

// acceptLoop takes the peer's message streams in the order it opened
// them, reads each header and hands the message to the matching.
func (p *peer) acceptLoop() {
	l := p.l
	for {
		s, err := p.conn.AcceptUniStream(l.ctx)
		if err != nil {
			return
		}
		var hb [msgHeaderLen]byte
		s.SetReadDeadline(time.Now().Add(l.cfg.Timeout))
		_, err = io.ReadFull(s, hb[:])
		s.SetReadDeadline(time.Time{})
		l.mu.Lock()
		p.accepted++
		if p.byeRecv && p.accepted > p.byeCount {
			l.mu.Unlock()
			p.protocolError("message stream", fmt.Errorf("stream %d after bye at %d", p.accepted, p.byeCount))
			return
		}
		l.mu.Unlock()
		if err != nil {
			var se *quic.StreamError
			switch {
			case errors.As(err, &se):
				// The sender abandoned the message before its header
				// went out.
			case p.conn.Context().Err() != nil || l.ctx.Err() != nil:
				return
			default:
				p.protocolError("message header", err)
				return
			}
		} else {
			h, err := decodeMsgHeader(hb[:], uint64(l.cfg.MaxMessage))
			if err != nil {
				s.CancelRead(codeCancelled)
				p.protocolError("message header", err)
				return
			}
			l.arrive(p, h, s)
		}
		l.mu.Lock()
		p.checkDrainedLocked()
		l.mu.Unlock()
	}
}

// watch waits for the connection to end and reports why.
func (p *peer) watch() {
	<-p.conn.Context().Done()
	p.watchDone()
}

// watchDone reports why the connection, which has ended, ended.
func (p *peer) watchDone() {
	cause := context.Cause(p.conn.Context())
	var ae *quic.ApplicationError
	graceful := errors.As(cause, &ae) && ae.Remote && ae.ErrorCode == codeBye
	if graceful {
		cause = ErrPeerClosed
	}
	p.down(cause, graceful)
}

// protocolError closes the connection of a peer that broke the protocol.
func (p *peer) protocolError(what string, err error) {
	p.down(&ProtocolError{What: what, Err: err}, false)
}

// lose declares the peer lost for cause.
func (p *peer) lose(cause error) { p.down(cause, false) }

// down handles the end of the connection. A peer lost unexpectedly breaks
// the link: every operation fails with a *PeerError naming it, since a
// collective cannot finish without one of its ranks. A peer that closed
// after saying bye fails only what still involves it.
func (p *peer) down(cause error, graceful bool) {
	l := p.l
	l.mu.Lock()
	if p.lost {
		l.mu.Unlock()
		return
	}
	p.lost = true
	pe := &PeerError{Rank: p.rank, Local: l.rank, Err: cause}
	if p.gone == nil {
		p.gone = pe
	}
	if !graceful && !l.closing && l.broken == nil {
		l.broken = pe
	}
	var cancels []func()
	for _, r := range l.liveLocked() {
		if r.kind == reqSpawn {
			continue
		}
		if l.broken == nil && r.peer != p.rank {
			continue
		}
		if r.state == stIO {
			if r.cancel != nil {
				cancels = append(cancels, r.cancel)
				r.cancel = nil
			}
			continue
		}
		err := l.failureLocked(r.peer)
		if err == nil {
			err = p.gone
		}
		l.dequeueLocked(r)
		l.finishLocked(r, err)
	}
	// Unexpected messages whose bytes were still to come from the peer
	// will not come.
	for key, q := range l.unexpected {
		if key.peer != p.rank {
			continue
		}
		for i := q.head; i < len(q.items); i++ {
			if m := q.items[i]; m.state == inParked {
				m.state, m.err = inFailed, p.gone
			}
		}
	}
	l.wakeLocked()
	l.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	code, msg := codeAbort, "peer lost"
	var pe2 *ProtocolError
	switch {
	case graceful || l.ctx.Err() != nil:
		code, msg = codeBye, "bye"
	case errors.As(cause, &pe2):
		code, msg = codeProtocol, pe2.Error()
	}
	p.conn.CloseWithError(code, msg)
	if p.bulk != nil {
		p.bulk.Close()
	}
}
