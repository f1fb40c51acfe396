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

// TestNetworkWithThresholds: a realnet model takes other thresholds under
// its relays, faults and wrappers, seeded as before, and leaves the
// original alone; other models have none to take.
func TestNetworkWithThresholds(t *testing.T) {
	s, err := scenario.Parse("t.toml", []byte(`name = "t"
seed = 3
[network]
model = "realnet"
bulk_threshold = "64KiB"
mesh = "hypercube"

[network.transport]
quic_latency = "30us"
quic_bandwidth = "1.65Gbit/s"
bulk_latency = "10us"
bulk_bandwidth = "1.09GB/s"

[[fault]]
kind = "jitter"
dist = "lognormal"
mean = "2us"
stddev = "1us"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [4]
bytes = [8]
`))
	if err != nil {
		t.Fatal(err)
	}
	paths := func(m sim.Model) sim.TwoPaths {
		t.Helper()
		f, ok := m.(sim.Faulty)
		if !ok {
			t.Fatalf("%T is not the faults", m)
		}
		r, ok := f.Model.(sim.Relayed)
		if !ok {
			t.Fatalf("%T under the faults is not the relays", f.Model)
		}
		tp, ok := r.Model.(sim.TwoPaths)
		if !ok {
			t.Fatalf("%T under the relays is not realnet's paths", r.Model)
		}
		return tp
	}
	four := algos.Thresholds{Bulk: 4 << 10, Eager: 1 << 10}
	if !s.Network.HasThresholds() {
		t.Fatal("a realnet model has no thresholds")
	}
	n := s.Network.WithThresholds(four)
	if got := paths(n.Sim).Thresholds; got != four {
		t.Errorf("Sim's thresholds %v, want %v", got, four)
	}
	if f := n.Sim.(sim.Faulty); f.Seed != 3 {
		t.Errorf("Sim seeded %d, want the scenario's 3", f.Seed)
	}
	if got := paths(n.Seeded(9)).Thresholds; got != four || n.Seeded(9).(sim.Faulty).Seed != 9 {
		t.Errorf("Seeded(9): thresholds %v, seed %d", got, n.Seeded(9).(sim.Faulty).Seed)
	}
	if got := paths(s.Network.Sim).Thresholds; got != (algos.Thresholds{Bulk: 64 << 10}) {
		t.Errorf("the original's thresholds became %v", got)
	}
	// A wrapped network takes them under its wrapper.
	w := s.Network.Wrapped(func(m sim.Model) sim.Model { return sim.Overhead{Model: m, Send: 7} }).WithThresholds(four)
	if o, ok := w.Sim.(sim.Overhead); !ok || paths(o.Model).Thresholds != four {
		t.Errorf("wrapped, then other thresholds: %#v", w.Sim)
	}

	ab, err := scenario.Parse("a.toml", []byte(`name = "a"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "10GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [8]
`))
	if err != nil {
		t.Fatal(err)
	}
	if ab.Network.HasThresholds() || ab.Network.WithThresholds(four) != &ab.Network {
		t.Error("an alpha-beta model has thresholds to replace")
	}
}
