package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestPeerLost checks that errors.As finds an *algos.PeerLostError, naming
// the peer each rank lost, in the simulator's errors for a failed rank
// (RankFailedError), a rank that returned with an error (PeerExitedError)
// and one that returned without posting a receive a rendezvous waits for
// (NoReceiveError), and that its message is the simulator's own.
func TestPeerLost(t *testing.T) {
	// Rank 2 fails; rank 1, receiving from it, fails with rank 2's
	// error; rank 0, receiving from rank 1, with rank 1's.
	_, err := sim.Run(sim.Config{World: 3, Model: sim.WithFaults(worked, 1, sim.RankFailure{Rank: 2, At: sim.Microsecond})},
		func(ctx context.Context, l algos.Link) error {
			switch l.Rank() {
			case 0:
				return algos.Recv(ctx, l, 1, 1, l.Alloc(8))
			case 1:
				return algos.Recv(ctx, l, 2, 1, l.Alloc(8))
			}
			return algos.Delay(ctx, l, time.Second)
		})
	var re *sim.RankErrors
	if !errors.As(err, &re) || len(*re) != 3 {
		t.Fatalf("got %v, want every rank to fail", err)
	}
	var pe *sim.PeerExitedError
	var rf *sim.RankFailedError
	if !errors.As((*re)[0].Err, &pe) || !errors.As((*re)[1].Err, &rf) {
		t.Fatalf("ranks 0 and 1: %v; %v: want a *sim.PeerExitedError and a *sim.RankFailedError", (*re)[0].Err, (*re)[1].Err)
	}
	checkPeerLost(t, (*re)[0].Err, 0, 1)
	checkPeerLost(t, (*re)[1].Err, 1, 2)

	// Every message by rendezvous: rank 0's send waits for a receive
	// that rank 1 returns without posting.
	_, err = sim.Run(sim.Config{World: 2, Model: sim.Protocol{Model: worked, EagerLimit: 0}},
		func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 0 {
				return algos.Send(ctx, l, 1, 1, l.Alloc(1000))
			}
			return nil
		})
	var nr *sim.NoReceiveError
	if !errors.As(err, &re) || len(*re) != 1 || !errors.As((*re)[0].Err, &nr) {
		t.Fatalf("got %v, want rank 0 to fail with a *sim.NoReceiveError", err)
	}
	checkPeerLost(t, (*re)[0].Err, 0, 1)
}

// checkPeerLost checks that err, rank's error, is found as an
// *algos.PeerLostError naming lost, with the simulator's message.
func checkPeerLost(t *testing.T, err error, rank, lost int) {
	t.Helper()
	var pl *algos.PeerLostError
	switch {
	case !errors.As(err, &pl):
		t.Errorf("rank %d: %v: no *algos.PeerLostError", rank, err)
	case pl.Rank != lost:
		t.Errorf("rank %d: %v: peer lost %d, want %d", rank, err, pl.Rank, lost)
	case pl.Error() != err.Error():
		t.Errorf("rank %d: PeerLostError says %q, the simulator %q", rank, pl.Error(), err.Error())
	}
}
