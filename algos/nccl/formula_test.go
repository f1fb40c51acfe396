package nccl_test

import (
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/simtest"
)

// TestNCCLLatencyOneNode: on one DGX H100 (the preset: NVLink hops of
// 0.6 µs, NCCL 2.30's Hopper figures), an 8 B allreduce of the ring and
// the tree takes what NCCL's own latency model gives (ncclTopoTuneModel,
// src/graph/tuning.cc): baseLat + 2(p-1) hwLat[NVLINK] for the ring,
// baseLat + 2(p-1) hwLat[NVLINK] for the tree's chain inside one node,
// by protocol. The simulator gets there message by message: LL's step
// is the link's latency, LL128's and Simple's add the per-step costs the
// package derives from the same table, and a call starts with its base
// latency.
func TestNCCLLatencyOneNode(t *testing.T) {
	net := simtest.MustParseNetwork(`
[network]
preset = "dgx-h100"
nodes = 1
`)
	const p = 8
	steps := 2.0 * (p - 1)
	want := map[string]float64{ // µs, NCCL 2.30.7's tables
		"nccl_ring_ll":     6.6 + steps*0.6,
		"nccl_ring_ll128":  14 + steps*1.9,
		"nccl_ring_simple": 8.4 + steps*3.4,
		"nccl_tree_ll":     6.8 + steps*0.6,
		"nccl_tree_ll128":  14 + steps*1.25,
		"nccl_tree_simple": 8.4 + steps*4.0,
	}
	for algo, w := range want {
		got, err := net.Simulate(simtest.Case{Collective: "allreduce", Algorithm: algo, World: p, Bytes: 8})
		if err != nil {
			t.Fatal(err)
		}
		us := got.Seconds() * 1e6
		if math.Abs(us/w-1) > 0.001 {
			t.Errorf("%s: %.3f µs, NCCL's model %.2f µs", algo, us, w)
		}
	}
}

// TestProtocolRatios: at large sizes the ring's protocols on one DGX H100
// come out in the ratio NCCL's bandwidth model gives them (LL capped at
// llMaxBw, 141 GB/s; LL128 at 0.92 of the bus; Simple at the bus), here
// with the bus the model's NVLink, 450 GB/s a GPU each way: 0.313 : 0.92
// : 1 by the formula, 0.329 : 0.894 : 1 simulated at 512 MiB on the
// preset's 16 channels (0.328 : 0.902 : 1 at 8 GiB).
func TestProtocolRatios(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 512 MiB allreduces")
	}
	net := simtest.MustParseNetwork(`
[network]
preset = "dgx-h100"
nodes = 1
`)
	busbw := map[string]float64{}
	for _, algo := range []string{"nccl_ring_ll", "nccl_ring_ll128", "nccl_ring_simple"} {
		const p, n = 8, 512 << 20
		got, err := net.Simulate(simtest.Case{Collective: "allreduce", Algorithm: algo, World: p, Bytes: n})
		if err != nil {
			t.Fatal(err)
		}
		busbw[algo] = float64(n) / got.Seconds() * 2 * (p - 1) / p
	}
	const bus, llMax = 450e9, 141e9
	want := map[string]float64{"nccl_ring_ll": llMax / bus, "nccl_ring_ll128": 0.92}
	for algo, w := range want {
		r := busbw[algo] / busbw["nccl_ring_simple"]
		t.Logf("%s / simple: %.3f, NCCL's formula %.3f", algo, r, w)
		if math.Abs(r/w-1) > 0.05 {
			t.Errorf("%s / simple = %.3f, NCCL's formula %.3f", algo, r, w)
		}
	}
	if s := busbw["nccl_ring_simple"] / bus; s < 0.9 || s > 1 {
		t.Errorf("Simple's bus bandwidth %.0f GB/s, %.2f of NVLink's", busbw["nccl_ring_simple"]/1e9, s)
	}
}
