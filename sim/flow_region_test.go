package sim_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestFlowRegionExact checks the flow model's region refills (a recompute
// fills only the flows reached through binding edges and checks the
// boundary; see recompute in flow.go) against the refill of the whole
// component, bit for bit, on many random cases: fat trees with and
// without oversubscription, a torus and a dragonfly, random rounds of
// permutation traffic of random sizes that overlap, random slots, both
// sharings, and links slowed or failed mid-run. It runs them with one
// region tried before the whole component and with the default, and
// checks that every path (a first region kept, a later one, the whole
// component) was taken.
func TestFlowRegionExact(t *testing.T) {
	for _, tries := range []int{1, 0} {
		name := "default tries"
		if tries > 0 {
			name = fmt.Sprintf("%d tries", tries)
		}
		t.Run(name, func(t *testing.T) {
			if tries > 0 {
				defer sim.SetFlowRegionTries(tries)()
			}
			regions, retries, wholes := flowRegionCases(t)
			if regions == 0 || (tries == 1 && (wholes == 0 || retries > 0)) || (tries == 0 && retries == 0) {
				t.Errorf("%d first regions kept, %d later ones, %d whole refills", regions, retries, wholes)
			}
		})
	}
}

// flowRegionCases runs TestFlowRegionExact's cases, checking every
// recompute, and counts the paths recompute took.
func flowRegionCases(t *testing.T) (regions, retries, wholes int) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	link := sim.LinkParams{Bandwidth: 10e9, Latency: 300 * sim.Nanosecond}
	tops := []sim.TopologySpec{
		sim.FatTree{Tiers: 3, Radix: 8, Link: link},
		sim.FatTree{Tiers: 3, Radix: 6, Oversubscription: 2, Link: link},
		sim.FatTree{Radix: 8, Oversubscription: 3, Link: link},
		sim.Torus{Dims: []int{4, 4}, Link: link, NIC: sim.LinkParams{Bandwidth: 20e9}},
		sim.Dragonfly{Groups: 4, Routers: 3, Hosts: 2, GlobalLinks: 1, Local: link, Global: link},
	}
	done := sim.CheckFlowRates()
	count := sim.CountFlowRegions()
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 33))
		spec := tops[rng.IntN(len(tops))]
		top, err := spec.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		world := min(len(top.Devices()), 16+rng.IntN(112))
		slots := []int{1, 2, -1}
		model := sim.Flow{Topology: spec, SendSlots: slots[rng.IntN(3)], RecvSlots: slots[rng.IntN(3)], Sharing: sim.Sharing(rng.IntN(2))}
		var faults []sim.Fault
		for range rng.IntN(4) {
			e := top.Edges()[rng.IntN(len(top.Edges()))]
			at := sim.Time(rng.IntN(400)) * sim.Microsecond
			if rng.IntN(3) == 0 || math.IsInf(e.Bandwidth, 1) {
				faults = append(faults, sim.LinkFailure{Link: e.Name, At: at})
			} else {
				faults = append(faults, sim.SlowLink{Link: e.Name, Factor: 0.1 + rng.Float64(), At: at})
			}
		}
		rounds := 2 + rng.IntN(6)
		perms := make([][]int, rounds)
		sizes := make([]int, rounds)
		for i := range perms {
			perms[i], sizes[i] = rng.Perm(world), 1+rng.IntN(1<<20)
		}
		body := func(ctx context.Context, l algos.Link) error {
			r := l.Rank()
			var reqs []algos.Request
			for i, p := range perms {
				src := slices.Index(p, r)
				reqs = append(reqs, l.Irecv(src, algos.Tag(i), l.Alloc(sizes[i])), l.Isend(p[r], algos.Tag(i), l.Alloc(sizes[i])))
				if i%2 == 1 { // rounds overlap in pairs
					if err := l.Wait(ctx, reqs...); err != nil {
						return err
					}
					reqs = reqs[:0]
				}
			}
			return l.Wait(ctx, reqs...)
		}
		m := sim.WithFaults(model, seed, faults...)
		// Failed links may cut a rank off: only the rates are checked.
		_, _ = sim.Run(sim.Config{World: world, Model: m}, body)
	}
	regions, retries, wholes = count()
	checked, errs := done()
	if len(errs) > 0 || checked == 0 {
		t.Fatalf("%d recomputes checked, rates differ:\n%v", checked, errs)
	}
	t.Logf("%d recomputes checked: %d first regions kept, %d later ones, %d whole refills", checked, regions, retries, wholes)
	return regions, retries, wholes
}

// TestFlowUnshared checks the benchmarks' ablation (SetFlowUnshared): on
// an oversubscribed fat tree, where halving-doubling's flows share links,
// the true run recomputes rates and the unshared one never does, moving
// the same messages sooner, every flow at its lone rate.
func TestFlowUnshared(t *testing.T) {
	cfg := sim.Config{World: 32, Model: sim.Flow{Topology: sim.FatTree{Radix: 8, Oversubscription: 3,
		Link: sim.LinkParams{Bandwidth: 10e9, Latency: 300 * sim.Nanosecond}}}}
	body := func(ctx context.Context, l algos.Link) error {
		return algos.HalvingDoublingAllreduce(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
	}
	run := func(unshared bool) (*sim.Result, int) {
		defer sim.SetFlowUnshared(unshared)()
		done := sim.CheckFlowRates()
		count := sim.CountFlowRegions()
		res, err := sim.Run(cfg, body)
		if err != nil {
			t.Fatal(err)
		}
		regions, retries, wholes := count()
		done()
		return res, regions + retries + wholes
	}
	shared, recomputes := run(false)
	alone, none := run(true)
	t.Logf("shared: %d recomputes, end %v; unshared: %d, end %v", recomputes, shared.End, none, alone.End)
	if recomputes == 0 || none != 0 {
		t.Errorf("recomputes: %d shared, %d unshared; want some, then none", recomputes, none)
	}
	if alone.Messages != shared.Messages || !(alone.End < shared.End) {
		t.Errorf("unshared run: %d messages by %v; shared: %d by %v", alone.Messages, alone.End, shared.Messages, shared.End)
	}
}
