package tuner

import (
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// The test vectors of reference/nccl.md §1.9, computed by hand from the
// formulas of ncclTopoTuneModel and ncclTopoGetAlgoTime on assumed graph
// inputs (Hopper, NVLink inside the nodes, the ring and the tree graphs
// alike), each cell "latency us / algorithm bandwidth GB/s" to the
// digits the reference gives. Checked against src/graph/tuning.cc and
// src/enqueue.cc of NCCL 2.30.7.

// hopperGraphs returns graphs of nc channels at bw GB/s, NVLink inside
// nodes, PIX to the NICs, every channel alike.
func hopperGraphs(nc int, bw float64) [NumAlgos]Graph {
	var g [NumAlgos]Graph
	for _, a := range []Algo{Tree, Ring, PAT} {
		g[a] = Graph{Channels: nc, BwIntra: bw, BwInter: bw, TypeIntra: PathNVL, TypeInter: PathPIX, SameChannels: true}
	}
	return g
}

type vectorCell struct {
	a        Algo
	p        Protocol
	lat, bw  float64
	digitsBw int // decimals the reference gives
}

func checkCells(t *testing.T, m *Model, cells []vectorCell) {
	t.Helper()
	for _, c := range cells {
		lat, bw := m.Latency(AllReduce, c.a, c.p), m.Bandwidth(AllReduce, c.a, c.p)
		if got, want := fmt.Sprintf("%.2f", lat), fmt.Sprintf("%.2f", c.lat); got != want {
			t.Errorf("allreduce %s/%s latency %s us, want %s", c.a, c.p, got, want)
		}
		if got, want := fmt.Sprintf("%.*f", c.digitsBw, bw), fmt.Sprintf("%.*f", c.digitsBw, c.bw); got != want {
			t.Errorf("allreduce %s/%s bandwidth %s GB/s, want %s", c.a, c.p, got, want)
		}
	}
}

// Vector A: one node of 8 GPUs, 16 channels of 20 GB/s.
func TestVectorA(t *testing.T) {
	m, err := Tune(System{Ranks: 8, Nodes: 1, MinCompCap: 90, Graphs: hopperGraphs(16, 20), TreePattern: PatternBalancedTree, Channels: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, m, []vectorCell{
		{Ring, nccl.LL, 15.00, 80.57, 2}, {Ring, nccl.LL128, 40.60, 168.23, 2}, {Ring, nccl.Simple, 56.00, 182.86, 2},
		{Tree, nccl.LL, 15.20, 38.74, 2}, {Tree, nccl.LL128, 31.50, 114.49, 2}, {Tree, nccl.Simple, 64.40, 147.20, 2},
	})
	// Picks: Ring/LL up to 1 MiB (28.01 us), Ring/LL128 at 16 MiB
	// (140.33 us), Ring/Simple at 256 MiB (1524.0 us).
	for _, c := range []struct {
		bytes int
		a     Algo
		p     Protocol
		us    string
	}{
		{1 << 20, Ring, nccl.LL, "28.01"},
		{16 << 20, Ring, nccl.LL128, "140.33"},
		{256 << 20, Ring, nccl.Simple, "1524.01"}, // the reference rounds to 1524.0
	} {
		ch, err := m.Choose(Call{Coll: AllReduce, Bytes: c.bytes})
		if err != nil {
			t.Fatal(err)
		}
		if ch.Algo != c.a || ch.Proto != c.p || fmt.Sprintf("%.2f", ch.Time) != c.us {
			t.Errorf("%d bytes: chose %v, want %s/%s at %s us", c.bytes, ch, c.a, c.p, c.us)
		}
	}
}

// Vector B: 4 nodes of 8 GPUs (32 ranks), Intel CPUs, 16 channels of 12
// GB/s between nodes.
func TestVectorB(t *testing.T) {
	m, err := Tune(System{Ranks: 32, Nodes: 4, MinCompCap: 90, CPUArch: X86, CPUVendor: Intel, Graphs: hopperGraphs(16, 12),
		TreePattern: PatternBalancedTree, Channels: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, m, []vectorCell{
		{Ring, nccl.LL, 78.8, 10.53, 2}, {Ring, nccl.LL128, 144.4, 91.17, 2}, {Ring, nccl.Simple, 282.8, 99.10, 2},
		{Tree, nccl.LL, 35.2, 10.20, 2}, {Tree, nccl.LL128, 65.5, 82.80, 2}, {Tree, nccl.Simple, 120.4, 88.32, 2},
	})
	// Picks: Tree/LL up to 64 KiB, Tree/LL128 from 1 MiB to 16 MiB,
	// Ring/LL128 at 256 MiB.
	for _, c := range []struct {
		bytes int
		a     Algo
		p     Protocol
	}{
		{1 << 10, Tree, nccl.LL}, {64 << 10, Tree, nccl.LL},
		{1 << 20, Tree, nccl.LL128}, {16 << 20, Tree, nccl.LL128},
		{256 << 20, Ring, nccl.LL128},
	} {
		ch, err := m.Choose(Call{Coll: AllReduce, Bytes: c.bytes})
		if err != nil {
			t.Fatal(err)
		}
		if ch.Algo != c.a || ch.Proto != c.p {
			t.Errorf("%d bytes: chose %v, want %s/%s", c.bytes, ch, c.a, c.p)
		}
	}
}

// A's choices by hand, cell by cell: at 1 MiB Ring/LL takes 15.0 + 2^20 /
// (1000 x 80.57) = 28.01 us; Tree/LL 15.2 + 2^20/(1000 x 38.74 x .5) (the
// correction for 2^14 units of 64 B is .5) = 69.3 us.
func TestTimeCorrections(t *testing.T) {
	m, err := Tune(System{Ranks: 8, Nodes: 1, MinCompCap: 90, Graphs: hopperGraphs(16, 20), Channels: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.1f", m.Time(AllReduce, Tree, nccl.LL, 1<<20)); got != "69.3" {
		t.Errorf("tree/LL at 1 MiB: %s us, want 69.3", got)
	}
	// Beyond the correction table (2^29 B = 2^23 units) no correction.
	want := 64.4 + float64(1<<29)/(1000*147.2)
	if got := m.Time(AllReduce, Tree, nccl.Simple, 1<<29); fmt.Sprintf("%.0f", got) != fmt.Sprintf("%.0f", want) {
		t.Errorf("tree/simple at 512 MiB: %.1f us, want %.1f", got, want)
	}
	// One node: no ring plateau; across nodes Ring/Simple latency x1.4.
	b, _ := Tune(System{Ranks: 32, Nodes: 4, MinCompCap: 90, Graphs: hopperGraphs(16, 12), Channels: 16})
	small, big := b.Time(AllReduce, Ring, nccl.Simple, 32*16*63), b.Time(AllReduce, Ring, nccl.Simple, 32*16*64)
	if lat := b.Latency(AllReduce, Ring, nccl.Simple); fmt.Sprintf("%.3f", small-float64(32*16*63)/(1000*b.Bandwidth(AllReduce, Ring, nccl.Simple))) != fmt.Sprintf("%.3f", lat) ||
		fmt.Sprintf("%.2f", big-float64(32*16*64)/(1000*b.Bandwidth(AllReduce, Ring, nccl.Simple))) != fmt.Sprintf("%.2f", lat*1.4) {
		t.Errorf("ring plateau: %g us below, %g us from 64 B a channel and rank; latency %g", small, big, lat)
	}
}
