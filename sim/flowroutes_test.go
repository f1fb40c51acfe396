package sim_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestSharedRoutes checks that the runs of one process sharing their
// routes (flowroutes.go) give what a run of its own gives: a run whose
// spine link fails midway, between two healthy ones, leaves them equal
// (its routes around the link are its own); runs in parallel on one
// topology agree; and a topology that differs only in a link's latency
// does not take the other's routes.
func TestSharedRoutes(t *testing.T) {
	tree := sim.FatTree{Tiers: 2, Radix: 8, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}
	slow := tree
	slow.Link.Latency *= 3
	hd := scaleBody(algos.HalvingDoublingAllreduce, 1<<20)
	run := func(m sim.Model) sim.Result { return replay32(t, m, hd) }
	healthy := sim.Flow{Topology: tree, ReduceBandwidth: 100e9}
	first := run(healthy)
	failed := run(sim.WithFaults(healthy, 0, sim.LinkFailure{Link: "leaf0<->spine0", At: first.End / 2}))
	if failed.End <= first.End {
		t.Fatalf("the run with a failed spine link took %v, the healthy one %v: the link carried nothing", failed.End, first.End)
	}
	if again := run(healthy); !reflect.DeepEqual(again, first) {
		t.Errorf("after a run with a failed link, the healthy run gave %v, %v before", again.End, first.End)
	}
	var wg sync.WaitGroup
	results := make([]*sim.Result, 4)
	errs := make([]error, len(results))
	for i := range results { // t.Fatal belongs to the test's goroutine
		wg.Go(func() { results[i], errs[i] = sim.Run(sim.Config{World: 32, Model: healthy, Replay: true}, hd) })
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil {
			t.Errorf("run %d in parallel: %v", i, errs[i])
		} else if !reflect.DeepEqual(*r, first) {
			t.Errorf("run %d in parallel ended at %v, alone at %v", i, r.End, first.End)
		}
	}
	slowRes := run(sim.Flow{Topology: slow, ReduceBandwidth: 100e9})
	fresh := sim.FlowRoutesUnshared(func() sim.Result { return run(sim.Flow{Topology: slow, ReduceBandwidth: 100e9}) })
	if !reflect.DeepEqual(slowRes, fresh) {
		t.Errorf("the slower tree ended at %v beside the faster one's routes, %v with the routes emptied", slowRes.End, fresh.End)
	}
}

// TestSparseRoutes checks that the route cache of large worlds (each
// sender's near list, then the shared routes or the run's map) gives
// what the rows of small worlds give, a failed link midway included:
// the same run with rows and without is the same, whether the shared
// routes hold the pairs already, start empty, or fill after five.
func TestSparseRoutes(t *testing.T) {
	tree := sim.FatTree{Tiers: 2, Radix: 8, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}
	flow := sim.Flow{Topology: tree, ReduceBandwidth: 100e9}
	bodies := map[string]sim.Body{
		"halving-doubling": scaleBody(algos.HalvingDoublingAllreduce, 1<<20),
		"pairwise-alltoall": func(ctx context.Context, l algos.Link) error { // 31 peers a rank: past the near list
			return algos.AlltoallPairwise(ctx, l, l.Alloc(32<<10), l.Alloc(32<<10), device.F32)
		},
	}
	for name, body := range bodies {
		run := func(m sim.Model) sim.Result { return replay32(t, m, body) }
		healthy := run(flow)
		failed := sim.WithFaults(flow, 0, sim.LinkFailure{Link: "leaf0<->spine0", At: healthy.End / 2})
		want := []sim.Result{healthy, run(failed)}
		restore := sim.SetDenseRoutes(0)
		filled := []sim.Result{run(flow), run(failed)}
		empty := sim.FlowRoutesUnshared(func() []sim.Result { return []sim.Result{run(flow), run(failed)} })
		few := sim.SetSharedRoutesEach(5)
		full := sim.FlowRoutesUnshared(func() []sim.Result { return []sim.Result{run(flow), run(failed)} })
		few()
		restore()
		for i, got := range [][]sim.Result{filled, empty, full} {
			for j := range want {
				if !reflect.DeepEqual(got[j], want[j]) {
					t.Errorf("%s, %s, %s: ended at %v, with rows at %v", name, []string{"healthy", "failed link"}[j], []string{"shared routes filled", "shared routes empty", "shared routes full"}[i], got[j].End, want[j].End)
				}
			}
		}
	}
}

// replay32 is body's replayed run on 32 ranks under m.
func replay32(t *testing.T, m sim.Model, body sim.Body) sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{World: 32, Model: m, Replay: true}, body)
	if err != nil {
		t.Fatal(err)
	}
	return *res
}
