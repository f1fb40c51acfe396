package scenario_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// TestNetworkWrapped checks that a wrapped network wraps the model of every
// seed, keeping the draws seeded, and leaves the original alone.
func TestNetworkWrapped(t *testing.T) {
	s, err := scenario.Parse("w.toml", []byte(`name = "w"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "10GB/s"

[[fault]]
kind = "jitter"
dist = "lognormal"
mean = "2us"
stddev = "1us"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [8]
`))
	if err != nil {
		t.Fatal(err)
	}
	w := s.Network.Wrapped(func(m sim.Model) sim.Model { return sim.Overhead{Model: m, Send: 7} })
	for _, seed := range []uint64{1, 9} {
		o, ok := w.Seeded(seed).(sim.Overhead)
		if !ok || o.Send != 7 {
			t.Fatalf("seed %d: %#v is not the wrapped model", seed, w.Seeded(seed))
		}
		if f, ok := o.Model.(sim.Faulty); !ok || f.Seed != seed {
			t.Errorf("seed %d: inner model %#v is not the scenario's, seeded %d", seed, o.Model, seed)
		}
	}
	if _, ok := w.Sim.(sim.Overhead); !ok || !w.Random {
		t.Errorf("Sim %T, Random %v: want the wrapped model, random", w.Sim, w.Random)
	}
	if _, ok := s.Network.Seeded(1).(sim.Faulty); !ok {
		t.Error("wrapping changed the original network")
	}
}

// TestPlacedSeenThrough checks that the flow model a scenario places for
// each world is seen through as the simulator's own decorators are
// (sim.Unwrapper): HostBandwidthOf finds its topology's host bandwidth,
// and a run's estimate counts the flow network, as with the linear
// placement.
func TestPlacedSeenThrough(t *testing.T) {
	const net = `name = "p"
[network]
model = "flow"
topology = "hierarchical"
devices_per_node = 4
nodes = 4
host_bandwidth = "64GB/s"
intra_bandwidth = "100GB/s"
inter = "crossbar"
inter_bandwidth = "10GB/s"
inter_latency = "2us"
`
	const sweep = `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [16]
bytes = [1024]
`
	c, _ := algos.Lookup("allreduce")
	ring, err := c.Algorithm("ring")
	if err != nil {
		t.Fatal(err)
	}
	body := func(ctx context.Context, l algos.Link) error {
		return ring.Run(ctx, l, algos.Call{Buf: l.Alloc(16 * 64 * 4), DType: device.F32, Op: device.Sum})
	}
	estimate := func(placement string) sim.Estimate {
		t.Helper()
		s, err := scenario.Parse("p.toml", []byte(net+placement+sweep))
		if err != nil {
			t.Fatal(err)
		}
		if h, err := sim.HostBandwidthOf(s.Network.Sim, 16); err != nil || h != 64e9 {
			t.Errorf("%q: host bandwidth %g, %v; want 64e9", placement, h, err)
		}
		est, err := sim.EstimateRun(sim.Config{World: 16, Model: s.Network.Sim, Replay: true}, body)
		if err != nil {
			t.Fatal(err)
		}
		return est
	}
	linear := estimate(`placement = "linear"`)
	for _, p := range []string{`placement = "random"`, `placement = "round_robin"` + "\nplacement_group = 4"} {
		if got := estimate(p); got.Memory != linear.Memory {
			t.Errorf("%q: estimated %d bytes; the linear placement's %d", p, got.Memory, linear.Memory)
		}
	}
}
