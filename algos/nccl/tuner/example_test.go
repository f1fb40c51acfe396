package tuner_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// dgxH100 is the dgx-h100 preset: 8 H100 a node on NVSwitches with NVLink
// SHARP, 8 NICs of 400 Gbit/s, PCIe Gen5, Intel CPUs.
var dgxH100 = tuner.Cluster{CompCap: 90, CPUArch: tuner.X86, CPUVendor: tuner.Intel, GPUsPerNode: 8,
	NVLink: 450e9, NVSwitch: true, NVLS: true, PCIe: 64e9, NICs: 8, NIC: 50e9}

// What NCCL 2.30.7 would run for allreduces on two DGX H100, and the time
// it predicts.
func Example() {
	s, err := dgxH100.System(16)
	if err != nil {
		panic(err)
	}
	m, err := tuner.Tune(s)
	if err != nil {
		panic(err)
	}
	for _, bytes := range []int{1 << 10, 1 << 20, 1 << 30} {
		ch, err := m.Choose(tuner.Call{Coll: tuner.AllReduce, Bytes: bytes})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d B: %s\n", bytes, ch)
	}
	// Output:
	// 1024 B: tree/ll, 1 channels, 25.269 us
	// 1048576 B: tree/ll128, 16 channels, 62.506 us
	// 1073741824 B: nvls_tree/simple, 16 channels, 4428.294 us
}

// "auto" under NCCL's policy runs what the policy names, with its
// channels: the same time as that algorithm run directly.
func TestAutoRunsNCCLChoice(t *testing.T) {
	p, err := tuner.NewPolicy(dgxH100)
	if err != nil {
		t.Fatal(err)
	}
	table := algos.DefaultTuning().WithPolicy(p)
	coll, _ := algos.Lookup("allreduce")
	auto, _ := coll.Algorithm("auto")
	net := sim.AlphaBeta{Latency: 2 * sim.Microsecond, Bandwidth: 50e9}
	run := func(a *algos.Algorithm, params map[string]int, world, bytes int) sim.Time {
		res, err := sim.Run(sim.Config{World: world, Model: net}, func(ctx context.Context, l algos.Link) error {
			return a.Run(ctx, l, algos.Call{Buf: l.Alloc(bytes), DType: device.F32, Op: device.Sum, Tuning: table, Params: params})
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.End
	}
	for _, c := range []struct{ world, bytes int }{{8, 4096}, {16, 1 << 20}} {
		ch, err := table.SelectFor(nil, "allreduce", c.world, c.bytes, c.bytes/4)
		if err != nil {
			t.Fatal(err)
		}
		a, err := coll.Algorithm(ch.Algorithm)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := run(auto, nil, c.world, c.bytes), run(a, ch.Params, c.world, c.bytes); got != want {
			t.Errorf("%d ranks, %d bytes: auto took %v, %s with %v %v", c.world, c.bytes, got, ch.Algorithm, ch.Params, want)
		}
	}
}
