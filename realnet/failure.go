package realnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/quic-go/quic-go"
)

// Failure handling. A peer is lost when its connection ends without a
// bye: it died (its kernel closed its TCP connections, or QUIC's idle
// timeout found it silent), it broke the protocol, or it aborted. Losing a
// peer breaks the link: a collective cannot finish without one of its
// ranks, so every operation fails with a *PeerError naming the lost rank,
// and the link at once closes all its other connections with a code that
// names that rank too. The other ranks, which may not have noticed the
// death yet, or may have been waiting on a rank that waited on the dead
// one, thus fail within a round trip, and blame the rank that died rather
// than the messenger (their error's cause is a *ReportedError). Streams a
// broken link resets carry the same name in their error code, since the
// resets may reach a peer before the connection's close does.

// QUIC application error codes a link closes connections with.
const (
	codeBye      quic.ApplicationErrorCode = 0x100 // graceful close after both sides said bye
	codeProtocol quic.ApplicationErrorCode = 0x101 // the peer broke the wire protocol
	codeAbort    quic.ApplicationErrorCode = 0x102 // Abort on a healthy link
	codeRefused  quic.ApplicationErrorCode = 0x103 // connection not wanted (wrong session, seed absent, ...)
	// codeLost + r: this link broke because it lost rank r.
	codeLost quic.ApplicationErrorCode = 0x10000
)

// Stream error codes.
const (
	codeCancelled quic.StreamErrorCode = 1 // the operation was abandoned
	// codeLostStream + r: the link broke because it lost rank r.
	codeLostStream quic.StreamErrorCode = 0x10000
)

// ReportedError is the cause of a *PeerError learnt from another rank:
// Reporter lost the peer the PeerError names, broke its link, and said so.
type ReportedError struct {
	Reporter int
	Reason   string
}

func (e *ReportedError) Error() string {
	return fmt.Sprintf("reported by rank %d (%s)", e.Reporter, e.Reason)
}

// errPeerAborted is the cause of a *PeerError for a peer whose streams
// were reset by its Abort, before its connection's close arrived.
var errPeerAborted = errors.New("the peer aborted")

// errAbandoned is the cause of a *PeerError for a message its sender or
// receiver gave up on (a timeout, a cancelled context, Close).
var errAbandoned = errors.New("the peer abandoned the message")

// reported returns the rank a lost-code names, if code is one, and the
// rank to blame: the one named, unless that is this rank (then the one
// that said so).
func (l *Link) reported(code uint64, base uint64, reporter int) (int, bool) {
	if code < base || code >= base+maxWorld {
		return 0, false
	}
	r := int(code - base)
	if r == l.rank || r >= l.size {
		r = reporter
	}
	return r, true
}

// watch waits for the connection to end and reports why.
func (p *peer) watch() {
	<-p.conn.Context().Done()
	p.watchDone()
}

// watchDone reports why the connection, which has ended, ended.
func (p *peer) watchDone() { p.ended(context.Cause(p.conn.Context())) }

// ended reports the end of the connection for cause: a peer that said bye
// closed gracefully, one that closed because it lost a rank names that
// rank, anything else is the peer's own loss. The watcher calls it, and so
// does an I/O that meets the connection's end before the watcher has run,
// so that the first to see the end blames the same rank.
func (p *peer) ended(cause error) {
	var ae *quic.ApplicationError
	if errors.As(cause, &ae) && ae.Remote {
		if ae.ErrorCode == codeBye {
			p.down(p.rank, ErrPeerClosed, true)
			return
		}
		if root, ok := p.l.reported(uint64(ae.ErrorCode), uint64(codeLost), p.rank); ok {
			p.down(root, &ReportedError{Reporter: p.rank, Reason: ae.ErrorMessage}, false)
			return
		}
	}
	p.down(p.rank, cause, false)
}

// protocolError closes the connection of a peer that broke the protocol.
func (p *peer) protocolError(what string, err error) {
	p.down(p.rank, &ProtocolError{What: what, Err: err}, false)
}

// lose declares the peer lost for cause.
func (p *peer) lose(cause error) { p.down(p.rank, cause, false) }

// down handles the end of p's connection, blaming rank root for cause. A
// peer that closed after saying bye (graceful) fails only what still
// involves it; otherwise the link breaks.
func (p *peer) down(root int, cause error, graceful bool) {
	l := p.l
	l.mu.Lock()
	if p.lost {
		l.mu.Unlock()
		return
	}
	p.lost = true
	pe := &PeerError{Rank: root, Local: l.rank, Err: cause}
	if p.gone == nil {
		p.gone = pe
	}
	if graceful || l.closing || l.broken != nil {
		var cancels []func()
		for _, r := range l.liveLocked() {
			if r.kind == reqSpawn || r.peer != p.rank {
				continue
			}
			if r.state == stIO {
				cancels = append(cancels, takeCancel(r, l.resetLocked()))
				continue
			}
			err := l.failureLocked(r.peer)
			l.dequeueLocked(r)
			l.finishLocked(r, err)
		}
		// A peer lost while this link leaves (a bulk transfer that
		// Close or Abort gave up on) hears how it leaves: an aborting
		// link must not say bye.
		code, msg := codeBye, "bye"
		if !graceful && l.closing {
			code, msg = l.leave.code, l.leave.msg
		}
		l.wakeLocked()
		l.mu.Unlock()
		for _, c := range cancels {
			c()
		}
		p.conn.CloseWithError(code, msg)
		p.closeTCP()
		return
	}
	// The link breaks in the same critical section that marks p lost: an
	// operation that fails with p.gone returns to its caller at once, and
	// a caller that then aborts must find the link broken, so that its
	// peers are told which rank was lost rather than a bare abort.
	rest := l.breakLocked(pe)
	l.mu.Unlock()
	code, msg := codeLost+quic.ApplicationErrorCode(root), lostReason(pe)
	var perr *ProtocolError
	if errors.As(cause, &perr) {
		code, msg = codeProtocol, perr.Error()
	}
	p.conn.CloseWithError(code, msg)
	p.closeTCP()
	rest()
}

// breakLink fails every operation of the link with pe, and closes every
// connection, telling each peer which rank was lost.
func (l *Link) breakLink(pe *PeerError) {
	l.mu.Lock()
	rest := l.breakLocked(pe)
	l.mu.Unlock()
	rest()
}

// breakLocked marks the link broken by pe and fails its queued
// operations; it returns what must run after l.mu is released: the
// cancels of operations under way, and the close of every connection.
func (l *Link) breakLocked(pe *PeerError) (rest func()) {
	if l.broken != nil || l.closing {
		return func() {}
	}
	l.broken = pe
	var cancels []func()
	for _, r := range l.liveLocked() {
		switch {
		case r.kind == reqSpawn:
		case r.state == stIO:
			cancels = append(cancels, takeCancel(r, codeLostStream+quic.StreamErrorCode(pe.Rank)))
		default:
			l.dequeueLocked(r)
			l.finishLocked(r, pe)
		}
	}
	// Unexpected messages whose bytes were still to come will not come.
	for _, q := range l.unexpected {
		for i := q.head; i < len(q.items); i++ {
			if m := q.items[i]; m.state == inParked {
				m.state, m.err = inFailed, pe
			}
		}
	}
	var close []*peer
	for _, p := range l.peers {
		if p != nil && !p.lost {
			p.lost = true
			if p.gone == nil {
				p.gone = pe
			}
			close = append(close, p)
		}
	}
	l.wakeLocked()
	return func() {
		for _, c := range cancels {
			c()
		}
		code, msg := codeLost+quic.ApplicationErrorCode(pe.Rank), lostReason(pe)
		for _, p := range close {
			p.conn.CloseWithError(code, msg)
			p.closeTCP()
		}
	}
}

// ioErr turns the error of an I/O on this peer into what the request
// fails with: the link's failure when there is one, so that the error
// names the rank to blame.
func (p *peer) ioErr(err error, r *request) error {
	if err == nil {
		return nil
	}
	l := p.l
	if f := l.failure(p.rank); f != nil {
		return f
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote {
		if root, ok := l.reported(uint64(se.ErrorCode), uint64(codeLostStream), p.rank); ok {
			// The peer broke its link, or aborted: so does this one.
			var cause error = &ReportedError{Reporter: p.rank, Reason: "stream reset"}
			if root == p.rank {
				cause = errPeerAborted
			}
			l.breakLink(&PeerError{Rank: root, Local: l.rank, Err: cause})
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.broken
		}
		return &PeerError{Rank: p.rank, Local: l.rank, Err: errAbandoned}
	}
	var ae *quic.ApplicationError
	if errors.As(err, &ae) && ae.Remote {
		// The peer closed the connection; the watcher may not have seen
		// it yet, and its code may name another rank.
		p.ended(err)
		if f := l.failure(p.rank); f != nil {
			return f
		}
	}
	if brokenConn(err) {
		// The connection failed under the operation (a byte stream's
		// read or write, or QUIC's connection) before the peer was
		// judged lost: judge it now, as the bulk reader does, so that the
		// operation fails with the link's verdict. Failing it first with
		// this peer's name would blame a peer that closed because it lost
		// another rank, and a caller that aborted on that error would
		// spread the wrong name. A peer that broke the protocol is
		// judged at once, as the readers judge it.
		var perr *ProtocolError
		if errors.As(err, &perr) {
			p.protocolError(perr.What, perr.Err)
		} else {
			p.judge(err)
		}
		if f := l.failure(p.rank); f != nil {
			return f
		}
	}
	// A local stream error (the operation was abandoned here), or one
	// that says nothing of the connection: this operation fails alone.
	return &PeerError{Rank: p.rank, Local: l.rank, Err: err}
}

// brokenConn reports whether err, from an I/O on a peer, says that the
// connection under it failed: QUIC's connection ended, or a byte stream
// (bulk, eager) ended or was reset. Only then is the peer judged (ioErr);
// an error of one stream or one call fails that operation alone.
func brokenConn(err error) bool {
	var pe *ProtocolError
	var op *net.OpError
	return isConnErr(err) || errors.As(err, &pe) || errors.As(err, &op) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// isConnErr reports whether err is the end of the whole connection, which
// the watcher reports, rather than something the peer sent.
func isConnErr(err error) bool {
	var (
		ae *quic.ApplicationError
		te *quic.TransportError
		it *quic.IdleTimeoutError
		ht *quic.HandshakeTimeoutError
		sr *quic.StatelessResetError
	)
	return errors.As(err, &ae) || errors.As(err, &te) || errors.As(err, &it) ||
		errors.As(err, &ht) || errors.As(err, &sr) || errors.Is(err, net.ErrClosed)
}

// lostReason is what a broken link tells its peers about the rank it
// lost: the first witness's account, passed on unchanged.
func lostReason(pe *PeerError) string {
	var re *ReportedError
	if errors.As(pe.Err, &re) {
		return re.Reason
	}
	return fmt.Sprintf("rank %d lost rank %d: %v", pe.Local, pe.Rank, pe.Err)
}
