package synth_test

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/schedule/synth"
	"github.com/nexar-go/nexar-go/sim"
)

// Pack spanning trees on a 4x4 torus of 25 GB/s links: four trees from
// rank 0, at the max-flow bound of its four links; then register them as
// algorithms and time a 64 MiB broadcast on the flow model (671 us at
// the bound, plus the pipeline's fill down trees up to 8 hops deep).
func Example() {
	torus := sim.Torus{Dims: []int{4, 4}, Link: sim.LinkParams{Bandwidth: 25e9, Latency: sim.Microsecond}}
	topo, err := torus.Build(16)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := synth.FromTopology(topo, 16)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := g.Pack(0, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d trees, %.0f GB/s of a %.0f GB/s bound\n", len(p.Trees), p.Rate/1e9, p.Bound/1e9)

	if err := synth.Register("synth_tree_example", torus); err != nil {
		fmt.Println(err)
		return
	}
	coll, _ := algos.Lookup("broadcast")
	a, _ := coll.Algorithm("synth_tree_example")
	model := sim.Flow{Topology: torus, SendSlots: -1, RecvSlots: -1}
	res, err := sim.Run(sim.Config{World: 16, Model: model}, func(ctx context.Context, l algos.Link) error {
		return a.Run(ctx, l, algos.Call{Buf: l.Alloc(64 << 20), DType: device.F32})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("broadcast of 64 MiB: %.0f us\n", res.End.Seconds()*1e6)
	// Output:
	// 4 trees, 100 GB/s of a 100 GB/s bound
	// broadcast of 64 MiB: 896 us
}

// A synthesizer of a torus with link r1.0-r2.0 failed: the allreduce its
// trees make, packed for 16 ranks (what a scenario's "synth_tree" does
// with the scenario's topology and its links that fail at 0).
func ExampleWithFailed() {
	torus := sim.Torus{Dims: []int{4, 4}, Link: sim.LinkParams{Bandwidth: 25e9, Latency: sim.Microsecond}}
	s := synth.NewSynth(synth.WithFailed(torus, "r1.0<->r2.0"))
	a, err := s.Algorithm("allreduce", "synth_tree")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Prepare("allreduce", 16); err != nil {
		fmt.Println(err)
		return
	}
	_, err = s.Algorithm("alltoall", "synth_tree")
	fmt.Printf("%s (%s)\n%v\n", a.Name, a.Family, err)
	// Output:
	// synth_tree (synth)
	// no synthesized alltoall: the trees make broadcast, allgather, allreduce, reduce, reduce_scatter
}
