package realnet

import (
	"errors"
	"fmt"
	"time"

	"github.com/quic-go/quic-go"
)

// The bulk path. QUIC in user space is CPU-bound well below what the
// kernel's TCP moves, so payloads from Config.Thresholds.Bulk on travel on a
// TCP connection beside the QUIC connection of each pair of ranks (TLS
// unless the network is trusted). The sender announces the message (an rts
// header carrying a transfer id) on the eager connection (tcprts.go; on a
// QUIC stream of its own where there is none), the receiver answers with a
// cts frame once it has somewhere to put the payload (a posted receive, or
// budget for an unexpected message), and only then does the payload go on
// TCP. So one TCP byte stream per pair never carries a payload nobody is
// ready for, and a message that waits for its receive never blocks one
// behind it.

// bulkWriter writes granted bulk sends to the TCP connection in the order
// of their grants.
func (p *peer) bulkWriter() {
	l := p.l
	for {
		select {
		case <-p.bulkSig:
		case <-l.ctx.Done():
			return
		}
		for {
			l.mu.Lock()
			if p.bulkQ.len() == 0 {
				l.mu.Unlock()
				break
			}
			r := p.bulkQ.pop()
			r.state, r.loc = stIO, locNone
			r.cancel = func(quic.StreamErrorCode) { p.lose(errors.New("bulk transfer abandoned")) }
			l.mu.Unlock()

			err := p.bulk.writeMessage(bulkHeader{ID: r.bulkID, Len: uint64(len(r.buf))}, r.buf)
			if err != nil {
				p.bulkLost(err)
				l.finish(r, p.ioErr(err, r))
				return
			}
			l.finish(r, nil)
		}
	}
}

// bulkReader reads bulk payloads into the buffers their grants name.
// While a transfer is cleared to be sent, its bytes must keep coming: the
// sender writes granted payloads in order and at once, so no byte for the
// link's Timeout (before the header, or half-way through the payload)
// means the peer stalled it, which breaks the protocol; the message's
// charge goes back, and the transfers behind it are not held up for
// ever.
func (p *peer) bulkReader() {
	l := p.l
	timeout := l.cfg.Timeout
	for {
		h, err := p.bulk.readHeader(uint64(l.cfg.MaxMessage))
		if err != nil {
			p.bulkReadErr(stalled(err, "bulk payload", timeout))
			return
		}
		l.mu.Lock()
		if p.grants.len() == 0 {
			l.mu.Unlock()
			p.protocolError("bulk header", errors.New("payload nobody cleared to send"))
			return
		}
		g := p.grants.pop()
		if g.id != h.ID || uint64(g.n) != h.Len {
			l.mu.Unlock()
			p.protocolError("bulk header", errors.New("payload does not match the transfer cleared to send"))
			return
		}
		g.started = true
		r, dst := g.r, g.dst
		if r != nil {
			r.state, r.loc, r.grant = stIO, locNone, nil
			r.cancel = func(quic.StreamErrorCode) { p.lose(errors.New("bulk transfer abandoned")) }
		}
		l.mu.Unlock()

		if g.m != nil {
			r, err = p.readUnexpected(g, timeout)
		} else {
			err = p.bulk.readPayload(dst, g.n, timeout)
		}
		if err != nil {
			err = stalled(err, "bulk payload", timeout)
			if r == nil && g.m != nil {
				// An unexpected message's charge goes back before the
				// link breaks (ioErr judges the peer), so that nobody
				// who sees the failure still finds it charged.
				l.tempRefund(g.m)
				l.tempDone(g.m, p.ioErr(err, nil))
			}
			p.bulkReadErr(err)
			if r != nil {
				l.finish(r, p.ioErr(err, r))
			}
			return
		}
		switch {
		case r != nil:
			l.finish(r, nil)
		case g.m != nil:
			l.tempDone(g.m, nil)
		}
		l.mu.Lock()
		p.bulkDeadlineLocked()
		l.mu.Unlock()
	}
}

// unexpectedPiece is how much of a payload granted into link memory the
// bulk reader reads before it looks again for a receive to hand the rest
// to: four records.
const unexpectedPiece = 4 * bulkChunk

// readUnexpected reads the payload of g, granted into link memory (g.m),
// a piece at a time: a receive matched to the message meanwhile takes it
// over before the next piece (Link.takeOverLocked), what came so far is
// copied into its buffer and the rest read straight there, so that a
// receive posted late copies only what had arrived. It returns that
// receive, nil if none took over (the message is then in link memory).
func (p *peer) readUnexpected(g *grant, timeout time.Duration) (*request, error) {
	l, m, dst := p.l, g.m, g.dst
	for off := int64(0); off < g.n; {
		l.mu.Lock()
		r, after := l.takeOverLocked(m)
		l.mu.Unlock()
		if r != nil {
			after()
			copy(r.buf, dst[:off])
			l.recycle(m, dst)
			return r, p.bulk.readPayload(r.buf[off:g.n], g.n-off, timeout)
		}
		k := min(g.n-off, unexpectedPiece)
		if err := p.bulk.readPayload(dst[off:off+k], k, timeout); err != nil {
			return nil, err
		}
		off += k
	}
	return nil, nil
}

// bulkDeadlineLocked sets the read deadline of the bulk connection from
// the grants outstanding: Timeout from now while the peer has a payload
// to send, none while it has not (nothing is owed then, however long the
// connection stays idle).
func (p *peer) bulkDeadlineLocked() {
	if p.bulk == nil {
		return
	}
	p.bulkOwed = p.grants.len() > 0
	if p.bulkOwed {
		p.bulk.c.SetReadDeadline(time.Now().Add(p.l.cfg.Timeout))
	} else {
		p.bulk.c.SetReadDeadline(time.Time{})
	}
}

// quicVerdictWait is how long a failed bulk connection waits for the QUIC
// connection beside it to end too: when a peer closes on purpose (a
// protocol error, an abort) both go down at once, and the QUIC close
// carries the reason, which is what the error should report.
const quicVerdictWait = 200 * time.Millisecond

// bulkReadErr handles a failed read of the bulk connection.
func (p *peer) bulkReadErr(err error) {
	var pe *ProtocolError
	switch {
	case p.l.ctx.Err() != nil:
	case errors.As(err, &pe):
		p.protocolError(pe.What, pe.Err)
	default:
		p.bulkLost(err)
	}
}

// bulkLost declares the peer lost because its bulk connection failed,
// unless the QUIC connection reports why first.
func (p *peer) bulkLost(err error) { p.judge(fmt.Errorf("bulk connection: %w", err)) }

// judge declares the peer lost for cause, unless the QUIC connection
// reports why first (within quicVerdictWait).
func (p *peer) judge(cause error) {
	t := time.NewTimer(quicVerdictWait)
	defer t.Stop()
	select {
	case <-p.conn.Context().Done():
		p.watchDone() // the watcher's verdict stands
	case <-t.C:
		p.lose(cause)
	}
}
