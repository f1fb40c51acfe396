package realnet

import (
	"time"

	"github.com/quic-go/quic-go"
)

// Close leaves the world gracefully. Operations still pending fail with
// ErrClosed. Close tells every peer it is leaving (a bye frame carrying
// the number of messages it sent that peer), then waits until every peer
// has said bye too, or is lost, or the link's Timeout passes: a rank's
// last sends complete when QUIC or TCP has taken their bytes, not when the
// peer has them, so the connections must outlive them until the peer is
// done. Then it closes the connections, the endpoint, and waits for every
// goroutine of the link to end.
func (l *Link) Close() error {
	if l.relay != nil {
		l.relayFarewell(time.Now().Add(l.cfg.Timeout)) // relay.go
	}
	if !l.beginClose(false) {
		<-l.ep.done
		return nil
	}
	deadline := time.Now().Add(l.cfg.Timeout)
	// Streams still being opened, and eager frames still being written,
	// count in the bye: wait for the openers and the writers.
	l.waitAll(deadline, func(p *peer) bool { return !p.opening && p.eagerIdleLocked() })
	l.mu.Lock()
	for _, p := range l.peers {
		if p != nil && !p.lost {
			p.queueCtrlLocked(frameBye, u64Body(p.opened))
		}
	}
	l.mu.Unlock()
	l.waitAll(deadline, func(p *peer) bool { return p.byeRecv })
	return l.teardown(l.leave.code, l.leave.msg)
}

// Abort leaves the world at once: every connection is closed without a
// farewell, so every peer sees this rank as lost (a *PeerError naming it)
// in all its pending and later operations. It is what a rank that must
// give up does so that the others learn it now rather than at their
// timeout.
func (l *Link) Abort() error {
	if !l.beginClose(true) {
		<-l.ep.done
		return nil
	}
	return l.teardown(l.leave.code, l.leave.msg)
}

// leaving is how a closing link tells its peers why (beginClose): the
// code its connections close with, and the one that resets its streams.
type leaving struct {
	code  quic.ApplicationErrorCode
	msg   string
	reset quic.StreamErrorCode
}

// leavingLocked is how the link leaves: with a bye (Close), or aborting.
// An abort names the rank lost, in its close and in its resets: this
// one, unless the link broke first. A peer that reads such a reset breaks
// its link at once, naming that rank (ioErr), as the close will make it
// do; were the reset a bare cancel, an operation of the peer's could fail
// first with its link still whole, and the peer, aborting on it, would be
// blamed.
func (l *Link) leavingLocked(abort bool) leaving {
	if !abort {
		return leaving{codeBye, "bye", codeCancelled}
	}
	if pe, ok := l.broken.(*PeerError); ok {
		return leaving{codeLost + quic.ApplicationErrorCode(pe.Rank), lostReason(pe), codeLostStream + quic.StreamErrorCode(pe.Rank)}
	}
	return leaving{codeAbort, "abort", codeLostStream + quic.StreamErrorCode(l.rank)}
}

// resetLocked is the code that resets a stream of an operation that
// cannot go on: a plain cancel on an open link, or how the link leaves.
func (l *Link) resetLocked() quic.StreamErrorCode {
	if l.closing {
		return l.leave.reset
	}
	if pe, ok := l.broken.(*PeerError); ok {
		return codeLostStream + quic.StreamErrorCode(pe.Rank)
	}
	return codeCancelled
}

// beginClose marks the link closing (aborting, or with a bye) and fails
// its pending operations, resetting the streams under way. It returns
// false if the link was closing already.
func (l *Link) beginClose(abort bool) bool {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return false
	}
	l.closing = true
	l.leave = l.leavingLocked(abort)
	var cancels []func()
	for _, r := range l.liveLocked() {
		switch {
		case r.kind == reqSpawn:
		case r.state == stIO:
			cancels = append(cancels, takeCancel(r, l.leave.reset))
		case r.loc == locOpening:
			l.finishLocked(r, ErrClosed)
		default:
			l.dequeueLocked(r)
			l.finishLocked(r, ErrClosed)
		}
	}
	l.wakeLocked()
	l.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	return true
}

// waitAll waits until ok holds for every peer not lost, or deadline.
func (l *Link) waitAll(deadline time.Time, ok func(*peer) bool) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		l.mu.Lock()
		done := true
		for _, p := range l.peers {
			if p != nil && !p.lost && !ok(p) {
				done = false
			}
		}
		wake := l.wake
		l.mu.Unlock()
		if done {
			return
		}
		select {
		case <-wake:
		case <-t.C:
			return
		}
	}
}

func (l *Link) teardown(code quic.ApplicationErrorCode, msg string) error {
	for _, p := range l.peers {
		if p != nil {
			p.conn.CloseWithError(code, msg)
			p.closeTCP()
		}
	}
	l.cancel()
	err := l.ep.shutdown()
	l.scratch.drop()
	return err
}
