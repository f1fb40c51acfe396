package algos_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
)

// lostErr is a transport's error for a lost peer, as the simulator's and
// realnet's are: its own type and message, found as an
// *algos.PeerLostError through its As method.
type lostErr struct{ peer int }

func (e *lostErr) Error() string      { return fmt.Sprintf("transport: lost rank %d", e.peer) }
func (e *lostErr) As(target any) bool { return algos.AsPeerLost(target, e.peer, e) }

func TestPeerLostError(t *testing.T) {
	te := &lostErr{peer: 3}
	var pl *algos.PeerLostError
	if !errors.As(fmt.Errorf("allreduce: %w", te), &pl) || pl.Rank != 3 || pl.Err != error(te) {
		t.Fatalf("found %+v, want rank 3 of the transport's error", pl)
	}
	if pl.Error() != te.Error() {
		t.Errorf("message %q, want the transport's %q", pl.Error(), te.Error())
	}
	var back *lostErr
	if !errors.As(pl, &back) || back != te {
		t.Errorf("the transport's error is not found through the PeerLostError")
	}
	if got := (&algos.PeerLostError{Rank: 4}).Error(); got != "algos: peer rank 4 lost" {
		t.Errorf("message without the transport's error: %q", got)
	}
	var other *algos.StreamError
	if algos.AsPeerLost(&other, 3, te) || other != nil {
		t.Errorf("AsPeerLost set a target of another type: %v", other)
	}
}
