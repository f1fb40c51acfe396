package sim_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// benchTree is a non-blocking 3-tier fat tree of radix 16: 1024 hosts,
// 100 Gbit/s links with 500 ns per hop.
var benchTree = sim.FatTree{Tiers: 3, Radix: 16, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}

// benchModels are alpha-beta with the tree's end-to-end figures beside the
// flow model on the tree, so one run gives both speeds.
var benchModels = []struct {
	name  string
	model sim.Model
}{
	{"alpha-beta", sim.AlphaBeta{Latency: 3 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 100e9}},
	{"flow", sim.Flow{Topology: benchTree, ReduceBandwidth: 100e9}},
}

func benchMessages(b *testing.B, model sim.Model, p int, body sim.Body) {
	benchConfig(b, sim.Config{World: p, Model: model}, body)
}

func benchConfig(b *testing.B, cfg sim.Config, body sim.Body) {
	var msgs int64
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := sim.Run(cfg, body)
		if err != nil {
			b.Fatal(err)
		}
		msgs += res.Messages
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(msgs), "ns/msg")
	// CPU time per message, which a loaded machine moves less than wall
	// time: compare flow and alpha-beta by it there.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(msgs), "cpu-ns/msg")
}

// BenchmarkFlowRingAllreduce is simulated messages (flows) per second of
// wall time for a ring allreduce of 64 MiB on 1024 ranks of a fat tree,
// beside alpha-beta on the same run:
//
//	go test ./sim -run '^$' -bench 'Flow(Ring|Alltoall)' -benchtime 3x
func BenchmarkFlowRingAllreduce(b *testing.B) {
	const p = 1024
	for _, m := range benchModels {
		b.Run(m.name+"/p=1024", func(b *testing.B) {
			benchMessages(b, m.model, p, func(ctx context.Context, l algos.Link) error {
				return algos.RingAllreduce(ctx, l, l.Alloc(64<<20), device.F32, device.Sum)
			})
		})
	}
}

// BenchmarkFlowAlltoallPairwise is the same for a pairwise alltoall of
// 64 KiB blocks on 256 ranks (four pods of the tree).
func BenchmarkFlowAlltoallPairwise(b *testing.B) {
	const p, block = 256, 64 << 10
	for _, m := range benchModels {
		b.Run(m.name+"/p=256", func(b *testing.B) {
			benchMessages(b, m.model, p, func(ctx context.Context, l algos.Link) error {
				return algos.AlltoallPairwise(ctx, l, l.Alloc(p*block), l.Alloc(p*block), device.F32)
			})
		})
	}
}

// BenchmarkFlowHalvingDoubling is the same for BenchmarkScaleFlow's
// replayed halving-doubling allreduce of 64 MiB on 4096 ranks of a fat
// tree, without its floor and estimate: the simulator's own instructions
// are then the same from run to run, for cachegrind, whose counts a
// loaded machine does not move (the collector's vary):
//
//	go test ./sim -c -o sim.test
//	scripts/sim-instructions/count.sh ./sim.test 'FlowHalvingDoubling/flow'
func BenchmarkFlowHalvingDoubling(b *testing.B) {
	const p = 4096
	for _, m := range []struct {
		name  string
		model sim.Model
	}{{"alpha-beta", scaleTreeAB}, {"flow", sim.Flow{Topology: scaleTree, ReduceBandwidth: 100e9}}} {
		b.Run(m.name+"/p=4096", func(b *testing.B) {
			benchConfig(b, sim.Config{World: p, Model: m.model, Replay: true}, scaleBody(algos.HalvingDoublingAllreduce, 64<<20))
		})
	}
}

// BenchmarkFlowDGXRing is the flow model's rate on a GPU cluster: a ring
// allreduce of 1 GiB on 2048 GPUs (256 nodes) of the DGX H100 layout
// (NVSwitch in each node, eight rails of a fat tree between them),
// replayed, beside alpha-beta with the NICs' figures. There the flows
// within a node and between nodes end apart, unlike on a fat tree of
// hosts:
//
//	go test ./sim -run '^$' -bench FlowDGXRing -benchtime 1x
func BenchmarkFlowDGXRing(b *testing.B) {
	const nodes = 256
	for _, m := range []struct {
		name  string
		model sim.Model
	}{
		{"alpha-beta", sim.AlphaBeta{Latency: 3 * sim.Microsecond, Bandwidth: 50e9, ReduceBandwidth: 1e12}},
		{"flow", sim.Flow{Topology: dgx(nodes), ReduceBandwidth: 1e12}},
	} {
		b.Run(m.name+"/gpus=2048", func(b *testing.B) {
			benchConfig(b, sim.Config{World: 8 * nodes, Model: m.model, Replay: true}, scaleBody(algos.RingAllreduce, 1<<30))
		})
	}
}
