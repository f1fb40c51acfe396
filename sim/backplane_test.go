package sim_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestCrossbarBackplane: k simultaneous messages of m bytes, each between
// its own pair of ports of b, through a backplane of C: each moves at
// min(b, C/k), so all end at max(m/b, k m/C).
func TestCrossbarBackplane(t *testing.T) {
	const m, b, c = 1_000_000, 1e9, 2e9 // 1 ms alone on a port
	for k := 1; k <= 5; k++ {
		top := sim.Crossbar{Bandwidth: b, Backplane: c}
		res := runModel(t, sim.Flow{Topology: top}, 2*k, func(ctx context.Context, l algos.Link) error {
			if r := l.Rank(); r < k {
				return algos.Send(ctx, l, r+k, 0, l.Alloc(m))
			} else {
				return algos.Recv(ctx, l, r-k, 0, l.Alloc(m))
			}
		})
		want := sim.FromSeconds(max(m/b, float64(k)*m/c))
		for r, f := range res.Finish {
			if !near(f, want) {
				t.Errorf("k=%d: rank %d finished at %v, want %v", k, r, f, want)
			}
		}
	}
}

// TestCrossbarBackplaneRingAndTree: where the backplane binds, an
// allreduce costs the bytes it moves in all over C, however they are
// spread: the ring's 2(p-1) steps of n/p on every rank at once take
// 2(p-1)n/C; the binomial tree's reduce and broadcast move (p-1)n each,
// in lg p steps of p/2, p/4, ... messages, each step at min(b, C/k).
func TestCrossbarBackplaneRingAndTree(t *testing.T) {
	const p, n, b, c = 4, 1 << 20, 1e9, 1.5e9
	model := sim.Flow{Topology: sim.Crossbar{Bandwidth: b, Backplane: c}}
	ring := runModel(t, model, p, allreduceBody(t, "ring", n))
	if want := sim.FromSeconds(2 * (p - 1) * n / c); !nearSteps(ring.End, want, 2*(p-1)) {
		t.Errorf("ring: %v, want %v", ring.End, want)
	}
	tree := runModel(t, model, p, allreduceBody(t, "binomial_tree", n))
	// Reduce: 2 messages at C/2 = 0.75 GB/s, then 1 at b; broadcast the same.
	if want := sim.FromSeconds(2 * (n/(c/2) + n/b)); !nearSteps(tree.End, want, 4) {
		t.Errorf("binomial tree: %v, want %v", tree.End, want)
	}
	// Without the backplane the tree's steps run at b and the ring's at b.
	free := sim.Flow{Topology: sim.Crossbar{Bandwidth: b}}
	if got, want := runModel(t, free, p, allreduceBody(t, "ring", n)).End, sim.FromSeconds(2*(p-1)*n/p/b); !nearSteps(got, want, 2*(p-1)) {
		t.Errorf("ring without a backplane: %v, want %v", got, want)
	}
}

// TestCrossbarBackplaneTopology: a backplane adds one shared edge
// switch -> switch_out that faults can name; none keeps the plain
// crossbar; a negative one is refused.
func TestCrossbarBackplaneTopology(t *testing.T) {
	plain, err := sim.Crossbar{Bandwidth: 1e9}.Build(3)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := sim.Crossbar{Bandwidth: 1e9, Backplane: 2e9}.Build(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Edges()) != 6 || len(shared.Edges()) != 7 {
		t.Errorf("edges: %d plain, %d shared; want 6 and 7", len(plain.Edges()), len(shared.Edges()))
	}
	ids, err := shared.FindEdges("switch->switch_out")
	if err != nil || len(ids) != 1 || shared.Edges()[ids[0]].Bandwidth != 2e9 {
		t.Errorf("backplane edge: %v %v", ids, err)
	}
	if _, err := (sim.Crossbar{Bandwidth: 1e9, Backplane: -1}).Build(3); err == nil {
		t.Error("a negative backplane was accepted")
	}
}

// nearSteps is near for a time summed over steps, each rounded to the
// picosecond.
func nearSteps(got, want sim.Time, steps int) bool {
	d := got - want
	return d <= sim.Time(steps) && -d <= sim.Time(steps)
}
