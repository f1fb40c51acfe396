package sim

import (
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
)

// Wait is one unfinished request a blocked rank waits for.
type Wait struct {
	// Spawned is set when the rank waits for a process it spawned.
	Spawned bool
	Send    bool
	Peer    int
	Tag     algos.Tag
	Bytes   int
}

func (w Wait) String() string {
	if w.Spawned {
		return "a spawned operation to return"
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
