package realnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
)

// PeerError reports an operation that failed because of a peer: it died,
// disconnected, broke the protocol, or closed its link. Every operation
// that fails on account of a lost peer returns one, on every surviving
// rank, so errors.As finds the rank to blame.
type PeerError struct {
	// Rank is the peer's rank.
	Rank int
	// Local is the rank that reports the error.
	Local int
	// Err is the cause: ErrPeerClosed, a *ProtocolError, or a QUIC or
	// TCP connection error (an idle timeout when the peer is killed).
	Err error
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("realnet: rank %d: peer rank %d lost: %v", e.Local, e.Rank, e.Err)
}

func (e *PeerError) Unwrap() error { return e.Err }

// As lets errors.As find e as an *algos.PeerLostError naming Rank, the
// error for a lost peer that the simulator reports too.
func (e *PeerError) As(target any) bool { return algos.AsPeerLost(target, e.Rank, e) }

// ErrPeerClosed is the cause of a PeerError for a peer that closed its
// link while an operation still needed it.
var ErrPeerClosed = errors.New("peer closed its link")

// ErrClosed is returned by operations on a link after Close or Abort.
var ErrClosed = errors.New("realnet: link closed")

// ProtocolError reports bytes from a peer that do not follow the wire
// protocol: a garbled or oversized frame. The connection it came on is
// closed.
type ProtocolError struct {
	// What names the frame.
	What string
	Err  error
}

func (e *ProtocolError) Error() string { return fmt.Sprintf("protocol error: %s: %v", e.What, e.Err) }
func (e *ProtocolError) Unwrap() error { return e.Err }

// TooLongError reports a message longer than the receive buffer posted for
// it. The receive fails; the message is discarded, not allocated.
type TooLongError struct {
	Local, Peer int
	Tag         algos.Tag
	Len, Buf    int64
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("realnet: rank %d: message of %d bytes from rank %d (tag %#x) is longer than its receive buffer of %d bytes",
		e.Local, e.Len, e.Peer, uint64(e.Tag), e.Buf)
}

// Pending describes one operation a Wait gave up on.
type Pending struct {
	Send  bool
	Peer  int
	Tag   algos.Tag
	Bytes int
	// Spawned is set for a request returned by Spawn.
	Spawned bool
}

func (p Pending) String() string {
	switch {
	case p.Spawned:
		return "a spawned operation"
	case p.Send:
		return fmt.Sprintf("send to rank %d (tag %#x, %d bytes)", p.Peer, uint64(p.Tag), p.Bytes)
	}
	return fmt.Sprintf("receive from rank %d (tag %#x, %d bytes)", p.Peer, uint64(p.Tag), p.Bytes)
}

// TimeoutError reports a Wait that ran past the link's timeout. It
// matches context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	Local   int
	Timeout time.Duration
	// Pending lists the operations that had not completed.
	Pending []Pending
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "realnet: rank %d: wait timed out after %v on", e.Local, e.Timeout)
	for i, p := range e.Pending {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteByte(' ')
		b.WriteString(p.String())
	}
	return b.String()
}

// Peers lists the ranks of the pending operations, without repeats.
func (e *TimeoutError) Peers() []int {
	var out []int
	seen := map[int]bool{}
	for _, p := range e.Pending {
		if !p.Spawned && !seen[p.Peer] {
			seen[p.Peer] = true
			out = append(out, p.Peer)
		}
	}
	return out
}

func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }
