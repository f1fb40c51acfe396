package sim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
)

// Wait is one unfinished request a blocked rank waits for.
type Wait struct {
	// Spawned is set when the rank waits for a process it spawned.
	Spawned bool
	// Signal is set when a process of the rank waits for another to
	// signal it (algos.Signaler: a stream waiting for an event).
	Signal bool
	Send   bool
	Peer   int
	Tag    algos.Tag
	Bytes  int
	// Switch is set when the rank waits for a switch reduction
	// (algos.SwitchReducer) among Group (Peer is then -1); Missing are
	// the ranks of Group that have not posted it.
	Switch         bool
	Group, Missing []int
}

func (w Wait) String() string {
	if w.Spawned {
		return "a spawned operation to return"
	}
	if w.Signal {
		return "a signal from another of its processes (an event of a stream)"
	}
	if w.Switch {
		return switchWait(w)
	}
	if w.Send {
		return fmt.Sprintf("send to rank %d (tag %d, %d bytes)", w.Peer, w.Tag, w.Bytes)
	}
	return fmt.Sprintf("receive from rank %d (tag %d, %d bytes)", w.Peer, w.Tag, w.Bytes)
}

// BlockedRank is a rank that could not finish, with what it waits for.
type BlockedRank struct {
	Rank  int
	Waits []Wait
}

// DeadlockError reports that every unfinished rank was blocked and nothing
// was left to happen: the algorithm can never finish.
type DeadlockError struct {
	// At is the virtual time when the last event ran.
	At      Time
	Blocked []BlockedRank
	// Failed are ranks that returned an error before the deadlock, which
	// is often its cause.
	Failed RankErrors
}

func (d *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sim: deadlock at %v: %d rank(s) blocked with nothing left to happen", d.At, len(d.Blocked))
	for _, r := range d.Blocked {
		waits := make([]string, len(r.Waits))
		for i, w := range r.Waits {
			waits[i] = w.String()
		}
		fmt.Fprintf(&b, "\n  rank %d waits for: %s", r.Rank, strings.Join(waits, "; "))
	}
	for _, f := range d.Failed {
		fmt.Fprintf(&b, "\n  rank %d failed earlier: %v", f.Rank, f.Err)
	}
	return b.String()
}

// RankError is the error one rank's body returned.
type RankError struct {
	Rank int
	Err  error
}

// RankErrors lists the ranks whose body returned an error, in rank order.
type RankErrors []RankError

func (e *RankErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sim: %d rank(s) failed", len(*e))
	for _, r := range *e {
		fmt.Fprintf(&b, "\n  rank %d: %v", r.Rank, r.Err)
	}
	return b.String()
}

// Unwrap returns the ranks' errors, so errors.Is and errors.As see them.
func (e *RankErrors) Unwrap() []error {
	out := make([]error, len(*e))
	for i, r := range *e {
		out[i] = r.Err
	}
	return out
}

// Crashed returns the errors of the ranks that failed by a fault (each a
// *RankFailedError naming the rank itself), in rank order: the root causes
// of the other ranks' errors.
func (e *RankErrors) Crashed() []*RankFailedError {
	var out []*RankFailedError
	for _, r := range *e {
		var f *RankFailedError
		if errors.As(r.Err, &f) && f.Rank == r.Rank {
			out = append(out, f)
		}
	}
	return out
}

// RankFailedError reports that rank Rank failed (crashed) at time At. It is
// the error of the failed rank itself, of every operation that needed it
// (a receive from it that nothing delivered can match, a send to it), and,
// wrapped in a *PeerExitedError, of operations that needed a rank that
// returned because of it: errors.As finds it on every rank the failure
// reached.
type RankFailedError struct {
	Rank int
	At   Time
	// Cause says what made it fail: the fault, as it describes itself.
	Cause string
}

func (e *RankFailedError) Error() string {
	return fmt.Sprintf("sim: rank %d failed at %v (%s)", e.Rank, e.At, e.Cause)
}

// As lets errors.As find e as an *algos.PeerLostError naming Rank (on the
// failed rank itself, the rank names itself).
func (e *RankFailedError) As(target any) bool { return algos.AsPeerLost(target, e.Rank, e) }

// PathCutError reports that the network had no path left from rank Src to
// rank Dst for a message: its send fails with it, and so does the receive
// that would have matched it.
type PathCutError struct {
	Src, Dst int
	// Link is the failed link the message was crossing, if it was under
	// way; empty if it found no route when it started.
	Link string
	At   Time
}

func (e *PathCutError) Error() string {
	if e.Link != "" {
		return fmt.Sprintf("sim: message from rank %d to rank %d lost at %v: link %s failed and no other path is left", e.Src, e.Dst, e.At, e.Link)
	}
	return fmt.Sprintf("sim: no path left from rank %d to rank %d at %v", e.Src, e.Dst, e.At)
}

// PeerExitedError reports that a receive from rank Peer can never complete:
// Peer returned with an error and has nothing left in flight. Err is the
// root cause: Peer's own error, or the root cause of the PeerExitedError it
// returned, so chains stay one level deep while errors.As still finds the
// *RankFailedError or *PathCutError at their origin.
type PeerExitedError struct {
	Peer int
	Err  error
}

func (e *PeerExitedError) Error() string {
	return fmt.Sprintf("sim: rank %d returned with an error, so nothing more will come from it; root cause: %v", e.Peer, e.Err)
}

// Unwrap returns the root cause.
func (e *PeerExitedError) Unwrap() error { return e.Err }

// As lets errors.As find e as an *algos.PeerLostError naming Peer, the
// rank that returned (the rank whose failure started it is in Err).
func (e *PeerExitedError) As(target any) bool { return algos.AsPeerLost(target, e.Peer, e) }

// NoReceiveError reports that a message to rank Dst that waits for its
// receive (a rendezvous) can never start: Dst returned without posting
// that receive. Err is the root cause if Dst returned with an error (as
// PeerExitedError's), nil if it simply returned.
type NoReceiveError struct {
	Dst int
	Err error
}

func (e *NoReceiveError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("sim: rank %d returned without posting the receive this message waits for", e.Dst)
	}
	return fmt.Sprintf("sim: rank %d returned with an error before posting the receive this message waits for; root cause: %v", e.Dst, e.Err)
}

func (e *NoReceiveError) Unwrap() error { return e.Err }

// As lets errors.As find e as an *algos.PeerLostError naming Dst, the
// rank that returned, with or without an error, as realnet reports a peer
// that closed its link while a message still waited for it.
func (e *NoReceiveError) As(target any) bool { return algos.AsPeerLost(target, e.Dst, e) }
