package live

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/sim"
)

// TestBlamed reads the lost peer from errors of either transport (both
// are found as an *algos.PeerLostError), and the first peer a realnet
// timeout waited for.
func TestBlamed(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"realnet peer error", fmt.Errorf("allreduce: %w", &realnet.PeerError{Rank: 3, Local: 0, Err: realnet.ErrPeerClosed}), 3},
		{"simulator's failed rank", fmt.Errorf("allreduce: %w", &sim.RankFailedError{Rank: 2, Cause: "rank 2 fails at 1us"}), 2},
		{"simulator's returned rank", &sim.PeerExitedError{Peer: 1, Err: &sim.RankFailedError{Rank: 2}}, 1},
		{"simulator's rank without the receive", &sim.NoReceiveError{Dst: 4}, 4},
		{"peer lost", &algos.PeerLostError{Rank: 5}, 5},
		{"realnet timeout", &realnet.TimeoutError{Pending: []realnet.Pending{{Spawned: true}, {Peer: 6}, {Peer: 7}}}, 6},
		{"no peer", errors.New("wrong data"), -1},
		{"none", nil, -1},
	} {
		if got := Blamed(c.err); got != c.want {
			t.Errorf("%s: Blamed(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
}
