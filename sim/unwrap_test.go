package sim_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// outside is a decorator of a model defined outside package sim, as a
// scenario's placed flow model is: it implements sim.Unwrapper.
type outside struct{ inner sim.Model }

func (o outside) NewNetwork(e *sim.Engine) sim.Network { return o.inner.NewNetwork(e) }
func (o outside) Unwrap() sim.Model                    { return o.inner }

// opaque is the same decorator without Unwrap: it hides what it wraps.
type opaque struct{ inner sim.Model }

func (o opaque) NewNetwork(e *sim.Engine) sim.Network { return o.inner.NewNetwork(e) }

var _ sim.Unwrapper = outside{}

// TestUnwrapOutside sees a flow model through a decorator defined in
// another package, under and over the package's own decorators: its
// host bandwidth, and the estimate of a run (which counts the flow
// model's per-rank state and its topology's nodes and edges), are the
// flow model's.
func TestUnwrapOutside(t *testing.T) {
	hier := sim.Flow{Topology: sim.Hierarchical{DevicesPerNode: 2, HostBandwidth: 64e9, Inter: sim.Crossbar{Bandwidth: 1e9}}}
	for _, c := range []struct {
		name string
		m    sim.Model
		want float64
	}{
		{"outside", outside{hier}, 64e9},
		{"faulty over outside", sim.WithFaults(outside{hier}, 1), 64e9},
		{"outside over overhead", outside{sim.Overhead{Model: hier, Send: 1}}, 64e9},
		{"opaque", opaque{hier}, 0},
	} {
		got, err := sim.HostBandwidthOf(c.m, 4)
		if err != nil || got != c.want {
			t.Errorf("HostBandwidthOf(%s) = %g, %v; want %g", c.name, got, err, c.want)
		}
	}

	torus := sim.Flow{Topology: sim.Torus{Dims: []int{4, 4}, Link: sim.LinkParams{Bandwidth: 50e9, Latency: 500 * sim.Nanosecond}}}
	c, _ := algos.Lookup("allreduce")
	a, err := c.Algorithm("ring")
	if err != nil {
		t.Fatal(err)
	}
	body := catalogueBody(c, a, 16, 16*64)
	estimate := func(m sim.Model) sim.Estimate {
		t.Helper()
		est, err := sim.EstimateRun(sim.Config{World: 16, Model: m, Replay: true}, body)
		if err != nil {
			t.Fatal(err)
		}
		return est
	}
	want := estimate(torus)
	if got := estimate(outside{torus}); got.Memory != want.Memory || got.Events != want.Events {
		t.Errorf("estimate through a decorator from outside: %d bytes, %d events; the flow model's: %d bytes, %d events", got.Memory, got.Events, want.Memory, want.Events)
	}
	if got := estimate(opaque{torus}); got.Memory == want.Memory {
		t.Errorf("estimate through a decorator without Unwrap: %d bytes, as the flow model's: the test no longer tells them apart", got.Memory)
	}
}

// rebuilt is outside with Rewrap: a decorator from another package that
// the flow model's time estimate can rebuild around a counting flow model.
type rebuilt struct{ outside }

func (r rebuilt) Rewrap(inner sim.Model) sim.Model { return rebuilt{outside{inner}} }

var _ sim.Rewrapper = rebuilt{}

// TestCountFlowWorkThroughDecorators counts the flow model's work under
// each of the package's decorators and one from outside that implements
// Rewrapper: each counts what the bare flow model counts (none of them
// changes the flows on this run); one that only implements Unwrapper
// cannot be counted, and says so rather than counting nothing.
func TestCountFlowWorkThroughDecorators(t *testing.T) {
	flow := sim.Flow{Topology: sim.FatTree{Tiers: 2, Radix: 8, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}}
	body := scaleBody(algos.HalvingDoublingAllreduce, 1<<20)
	count := func(m sim.Model) (int64, error) {
		_, w, err := sim.FlowWork(sim.Config{World: 16, Model: m, Replay: true}, body)
		return w, err
	}
	want, err := count(flow)
	if err != nil || want <= 0 {
		t.Fatalf("bare flow model: work %d, %v", want, err)
	}
	for _, c := range []struct {
		name string
		m    sim.Model
	}{
		{"faulty", sim.WithFaults(flow, 1)},
		{"overhead", sim.Overhead{Model: flow}},
		{"outside, rebuilt", rebuilt{outside{flow}}},
		{"faulty over outside, rebuilt", sim.WithFaults(rebuilt{outside{flow}}, 1)},
	} {
		if got, err := count(c.m); err != nil || got != want {
			t.Errorf("%s: work %d, %v; want %d", c.name, got, err, want)
		}
	}
	if got, err := count(outside{flow}); err == nil {
		t.Errorf("a decorator without Rewrap: counted %d, want an error", got)
	}
}
