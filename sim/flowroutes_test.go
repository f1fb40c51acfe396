package sim_test

import (
	"reflect"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
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
	run := func(m sim.Model) sim.Result {
		t.Helper()
		res, err := sim.Run(sim.Config{World: 32, Model: m, Replay: true}, hd)
		if err != nil {
			t.Fatal(err)
		}
		return *res
	}
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
	results := make([]sim.Result, 4)
	for i := range results {
		wg.Go(func() { results[i] = run(healthy) })
	}
	wg.Wait()
	for i, r := range results {
		if !reflect.DeepEqual(r, first) {
			t.Errorf("run %d in parallel ended at %v, alone at %v", i, r.End, first.End)
		}
	}
	slowRes := run(sim.Flow{Topology: slow, ReduceBandwidth: 100e9})
	fresh := sim.FlowRoutesUnshared(func() sim.Result { return run(sim.Flow{Topology: slow, ReduceBandwidth: 100e9}) })
	if !reflect.DeepEqual(slowRes, fresh) {
		t.Errorf("the slower tree ended at %v with shared routes, %v without", slowRes.End, fresh.End)
	}
}
