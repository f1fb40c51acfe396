package sim_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

// TestRunGrow: ranks join a world at a boundary; the members agree on the
// new membership, rebuild, and the ring allreduce runs on the grown world
// with every rank's sum checked, each time as alpha-beta's closed forms
// say.
func TestRunGrow(t *testing.T) {
	ab := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e9} // no reduction cost
	alpha := 5 * sim.Microsecond
	beta := func(n int) sim.Time { return sim.TransferTime(n, 1e9) }
	const count = 3600 // 14400 bytes: whole blocks at 4 and 6 ranks
	for _, c := range []struct {
		world, joined int
		// agree is the recursive-doubling allreduce of world+joined
		// bytes on the old world; rounds the barrier's ⌈lg q⌉.
		agree  sim.Time
		rounds int
	}{
		// 3 members: fold, exchange, unfold: 3(α + 4β).
		{3, 1, 3 * (alpha + beta(4)), 2},
		// 4 members: two exchanges of 6 bytes: 2(α + 6β).
		{4, 2, 2 * (alpha + beta(6)), 3},
		// 1 member agrees with itself at once.
		{1, 1, 0, 1},
	} {
		rebuild := 7 * sim.Millisecond
		g, err := sim.RunGrow(sim.Config{World: c.world, Model: ab, HostData: true}, c.joined, rebuild, ringSum(count))
		if err != nil {
			t.Fatalf("%d+%d: %v", c.world, c.joined, err)
		}
		q := c.world + c.joined
		if g.World != c.world || g.Joined != c.joined || len(g.Result.Finish) != q {
			t.Fatalf("%d+%d: world %d joined %d, ran on %d ranks", c.world, c.joined, g.World, g.Joined, len(g.Result.Finish))
		}
		if g.Agreed != c.agree {
			t.Errorf("%d+%d: agreed at %v, want %v", c.world, c.joined, g.Agreed, c.agree)
		}
		if want := g.Agreed + sim.Time(c.rounds)*alpha + rebuild; g.Rebuilt != want {
			t.Errorf("%d+%d: rebuilt at %v, want agreement + %dα + rebuild = %v", c.world, c.joined, g.Rebuilt, c.rounds, want)
		}
		ring := sim.Time(2*(q-1)) * (alpha + beta(4*count/q))
		if g.Result.End != ring || g.End != g.Rebuilt+ring {
			t.Errorf("%d+%d: the run took %v (ends at %v), want 2(q-1)(α+(n/q)β) = %v", c.world, c.joined, g.Result.End, g.End, ring)
		}
	}
}

// TestRunGrowErrors checks the arguments RunGrow refuses.
func TestRunGrowErrors(t *testing.T) {
	ab := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}
	for _, c := range []struct {
		world, joined int
		rebuild       sim.Time
	}{{0, 1, 0}, {2, 0, 0}, {2, 1, -1}} {
		if _, err := sim.RunGrow(sim.Config{World: c.world, Model: ab}, c.joined, c.rebuild, ringSum(4)); err == nil {
			t.Errorf("world %d, %d joining, rebuild %v: no error", c.world, c.joined, c.rebuild)
		}
	}
}
