package sim_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// TestEstimateFlowWork checks the flow model's time estimate against what
// its runs do, in the terms it counts: the work of the max-min passes per
// message, extrapolated from runs of at most a quarter of the world, is
// within 1.5x of the run's own; the estimate is the same on every call
// (it times nothing); a failed spine link that leaves every GPU reachable
// costs about what the healthy run costs (the reroutes add events, not
// work), and halving-doubling's flows, which cross the spines together,
// cost more each than a ring's.
func TestEstimateFlowWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs of 512 to 2048 ranks on the flow model")
	}
	tree := sim.Flow{Topology: sim.FatTree{Tiers: 3, Radix: 26, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}, ReduceBandwidth: 100e9}
	gpus := sim.Flow{Topology: dgx(64), ReduceBandwidth: 1e12}
	failed := sim.WithFaults(gpus, 0, sim.LinkFailure{Link: "inter.rail7.leaf0<->inter.spine11"})
	ring, hd := scaleBody(algos.RingAllreduce, 64<<20), scaleBody(algos.HalvingDoublingAllreduce, 64<<20)
	per := map[string]float64{}
	secs := map[string]float64{}
	for _, c := range []struct {
		name  string
		world int
		model sim.Model
		body  sim.Body
	}{
		{"ring/dgx", 512, gpus, ring},
		{"ring/dgx/failed-link", 512, failed, ring},
		{"halving-doubling/dgx", 512, gpus, hd},
		{"halving-doubling/fat-tree", 2048, tree, hd},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := sim.Config{World: c.world, Model: c.model, Replay: true}
			est, ok := sim.FlowWorkPerMessage(cfg, c.body)
			if !ok {
				t.Fatal("no estimate")
			}
			res, work, err := sim.FlowWork(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Replayed {
				t.Fatal("the run was not replayed")
			}
			got := float64(work) / float64(res.Messages)
			t.Logf("work per message: estimated %.1f, run %.1f (x%.2f)", est, got, est/got)
			if r := est / got; r > 1.5 || r < 1/1.5 {
				t.Errorf("estimated %.1f units of work a message, the run did %.1f", est, got)
			}
			e1, err := sim.EstimateRun(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			e2, err := sim.EstimateRun(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if e1.Seconds != e2.Seconds || e1.Seconds <= 0 {
				t.Errorf("estimates of %g s and %g s", e1.Seconds, e2.Seconds)
			}
			per[c.name], secs[c.name] = got, e1.Seconds/float64(res.Messages)
		})
	}
	if h, f := secs["ring/dgx"], secs["ring/dgx/failed-link"]; f > 1.1*h || f < h/1.1 {
		t.Errorf("a message of the ring with a failed link estimated at %g s, without %g s", f, h)
	}
	if secs["halving-doubling/dgx"] <= secs["ring/dgx"] || per["halving-doubling/dgx"] <= per["ring/dgx"] {
		t.Errorf("halving-doubling's messages (%g s, %.1f units) not dearer than the ring's (%g s, %.1f units)",
			secs["halving-doubling/dgx"], per["halving-doubling/dgx"], secs["ring/dgx"], per["ring/dgx"])
	}
}

// TestFlowSearchesPerRank counts the route searches of a binomial tree on
// the DGX cluster: one per switch that leads to a destination (a leaf of
// each rail, once there is more than one leaf a rail), so the same
// number per rank at every world from 256 GPUs, which is what the
// estimate takes to the world.
func TestFlowSearchesPerRank(t *testing.T) {
	tree := scaleBody(algos.BinomialTreeAllreduce, 1<<30)
	var per []float64
	for _, w := range []int{256, 512, 1024} {
		res, _, searches, err := sim.FlowCounted(sim.Config{World: w, Model: sim.Flow{Topology: dgx(w / 8), ReduceBandwidth: 1e12}, Replay: true}, tree)
		if err != nil {
			t.Fatal(err)
		}
		if searches <= 0 || res.Messages <= 0 {
			t.Fatalf("%d ranks: %d searches, %d messages", w, searches, res.Messages)
		}
		per = append(per, float64(searches)/float64(w))
	}
	for _, p := range per[1:] {
		if p != per[0] {
			t.Errorf("searches per rank %v, want the same at every world", per)
		}
	}
}

// buildCounter is a topology spec that counts its builds.
type buildCounter struct {
	spec   sim.TopologySpec
	builds *int
}

func (b buildCounter) Build(world int) (*sim.Topology, error) {
	*b.builds++
	return b.spec.Build(world)
}

// TestEstimateBuildsFixedTopologyOnce checks that the flow model's
// estimate builds a topology of fixed size once for its calibration
// runs and sizes, not once a run (ten builds of a 16k-GPU preset took
// longer than the run), and that its calibration finds the same as when
// every run builds its own.
func TestEstimateBuildsFixedTopologyOnce(t *testing.T) {
	body := scaleBody(algos.RingAllreduce, 64<<20)
	builds := 0
	cfg := sim.Config{World: 512, Model: sim.Flow{Topology: buildCounter{dgx(64), &builds}, ReduceBandwidth: 1e12}, Replay: true}
	once, err := sim.EstimateRun(cfg, body)
	if err != nil {
		t.Fatal(err)
	}
	// The probe's build serves every run and the size.
	if builds != 1 {
		t.Errorf("%d builds of a topology of fixed size, want 1", builds)
	}
	if once.Seconds <= 0 {
		t.Fatalf("estimated %g s", once.Seconds)
	}
	// The calibration finds the same on the topology built once as
	// when each of its runs builds its own.
	for _, spec := range []sim.TopologySpec{dgx(64), sim.Torus{Dims: []int{8, 8, 8}, Link: sim.LinkParams{Bandwidth: 50e9, Latency: 500 * sim.Nanosecond}}} {
		cfg.Model = sim.Flow{Topology: spec, ReduceBandwidth: 1e12}
		per1, search1, ok1 := sim.FlowCalibrate(cfg, body, true)
		per, search, ok := sim.FlowCalibrate(cfg, body, false)
		if !ok || !ok1 || per1 != per || search1 != search {
			t.Errorf("%T: built once: %g units a message, %g searches a rank (%v); per run: %g, %g (%v)", spec, per1, search1, ok1, per, search, ok)
		}
	}
}
