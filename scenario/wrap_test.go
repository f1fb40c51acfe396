package scenario_test

import (
	"testing"

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
