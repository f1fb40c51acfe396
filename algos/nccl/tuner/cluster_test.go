package tuner

import (
	"errors"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// dgxH100 is scenario's dgx-h100 preset as a Cluster: 8 H100 SXM (450
// GB/s of NVLink one way) on NVSwitches with NVLink SHARP, PCIe Gen5, 8
// NICs of 400 Gbit/s, Intel CPUs.
var dgxH100 = Cluster{CompCap: 90, CPUArch: X86, CPUVendor: Intel, GPUsPerNode: 8, NVLink: 450e9, NVSwitch: true, NVLS: true,
	PCIe: 64e9, NICs: 8, NIC: 50e9}

func TestClusterGraphs(t *testing.T) {
	for _, c := range []struct {
		name      string
		cl        Cluster
		ranks     int
		ring      Graph
		channels  int // the communicator's
		pattern   int
		nvls      bool
		nvlsGraph Graph
	}{
		// One DGX H100: NCCL sees 18 x 20.6 = 370.8 GB/s of NVLink; 6
		// channels of 60 (360) is the first best, duplicated to 12 of 30
		// (NVIDIA/nccl#1197 prints "nChannels 12, bw 30/30" for a ring on
		// H100), run on 24. NVLS: 8 heads at 50 (8 x 50 <= 370.8 x 8/7).
		{"dgx-h100", dgxH100, 8, Graph{Channels: 12, BwIntra: 30, BwInter: 30}, 24, PatternBalancedTree, true,
			Graph{Channels: 8, BwIntra: 50, BwInter: 50}},
		// Across nodes the NICs bound a channel at 48 (PCIe Gen5's 48 GB/s
		// in NCCL's units): 8 at 45 is the best (360), not duplicated on
		// Hopper (45 < 50, more than 4 channels), run on 16 (NVIDIA/nccl#1453:
		// "Channel 05/16" on 3 nodes of 8 H100).
		{"dgx-h100 x2", dgxH100, 16, Graph{Channels: 8, BwIntra: 45, BwInter: 45}, 16, PatternTree, true,
			Graph{Channels: 8, BwIntra: 48, BwInter: 48}},
		// One DGX A100: 12 x 20 = 240 GB/s; 6 of 40 fill it, duplicated to
		// 12 of 20 ("nChannels 12, bw 20.0/20.0" is the common A100 line;
		// NVIDIA/nccl#1781: 24 coll channels).
		{"dgx-a100", Cluster{CompCap: 80, CPUArch: X86, CPUVendor: AMD, GPUsPerNode: 8, NVLink: 300e9, NVSwitch: true, PCIe: 32e9, NIC: 25e9},
			8, Graph{Channels: 12, BwIntra: 20, BwInter: 20}, 24, PatternBalancedTree, false, Graph{}},
		// DGX-2: 6 links x 20 = 120 GB/s a V100; 3 of 40, duplicated to 6 of
		// 20, run on 12.
		{"dgx-2", Cluster{CompCap: 70, GPUsPerNode: 16, NVLink: 150e9, NVSwitch: true, PCIe: 16e9, NICs: 8, NIC: 12.5e9},
			16, Graph{Channels: 6, BwIntra: 20, BwInter: 20}, 12, PatternBalancedTree, false, Graph{}},
		// HGX B200: 18 x 40.1 = 721.8 GB/s; 8 of 90, duplicated to 16 of 45,
		// run on 32.
		{"hgx-b200", Cluster{CompCap: 100, GPUsPerNode: 8, NVLink: 900e9, NVSwitch: true, NVLS: true, PCIe: 64e9, NIC: 50e9},
			8, Graph{Channels: 16, BwIntra: 45, BwInter: 45}, 32, PatternBalancedTree, true, Graph{Channels: 8, BwIntra: 90, BwInter: 90}},
	} {
		s, err := c.cl.System(c.ranks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := s.Graphs[Ring]
		if r.Channels != c.ring.Channels || r.BwIntra != c.ring.BwIntra || r.BwInter != c.ring.BwInter {
			t.Errorf("%s: ring %d x %g/%g, want %d x %g/%g", c.name, r.Channels, r.BwIntra, r.BwInter, c.ring.Channels, c.ring.BwIntra, c.ring.BwInter)
		}
		if tr := s.Graphs[Tree]; tr.Channels != r.Channels {
			t.Errorf("%s: tree of %d channels, ring of %d", c.name, tr.Channels, r.Channels)
		}
		if got := DefaultChannels(s); got != c.channels {
			t.Errorf("%s: %d channels, want %d", c.name, got, c.channels)
		}
		if s.TreePattern != c.pattern {
			t.Errorf("%s: tree pattern %d, want %d", c.name, s.TreePattern, c.pattern)
		}
		if s.NVLS != c.nvls {
			t.Errorf("%s: NVLS %t, want %t", c.name, s.NVLS, c.nvls)
		}
		if n := s.Graphs[NVLS]; c.nvls && (n.Channels != c.nvlsGraph.Channels || n.BwIntra != c.nvlsGraph.BwIntra || n.BwInter != c.nvlsGraph.BwInter) {
			t.Errorf("%s: NVLS %d x %g/%g, want %d x %g/%g", c.name, n.Channels, n.BwIntra, n.BwInter, c.nvlsGraph.Channels, c.nvlsGraph.BwIntra, c.nvlsGraph.BwInter)
		}
		if _, err := Tune(s); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// What NCCL picks on a DGX H100, by the model: one node, LL up to a few
// hundred KiB then NVLS for large allreduces; two nodes and more, trees
// for small allreduces and NVLS tree for large ones; PAT never with 8
// GPUs a node.
func TestClusterChoices(t *testing.T) {
	for _, c := range []struct {
		nodes int
		coll  Coll
		bytes int
		a     Algo
		p     Protocol
	}{
		{1, AllReduce, 1 << 10, Ring, nccl.LL},
		{1, AllReduce, 1 << 30, NVLS, nccl.Simple},
		{1, AllGather, 1 << 30, Ring, nccl.Simple},
		{2, AllReduce, 1 << 10, Tree, nccl.LL},
		{2, AllReduce, 1 << 30, NVLSTree, nccl.Simple},
		{4, AllReduce, 1 << 30, NVLSTree, nccl.Simple},
		{4, Broadcast, 1 << 30, Ring, nccl.Simple},
		{8, ReduceScatter, 1 << 12, Ring, nccl.LL},
	} {
		s, err := dgxH100.SystemNodes(8*c.nodes, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Tune(s)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := m.Choose(Call{Coll: c.coll, Bytes: c.bytes})
		if err != nil {
			t.Fatal(err)
		}
		if ch.Algo != c.a || ch.Proto != c.p {
			t.Errorf("%d nodes, %s of %d bytes: %v, want %s/%s", c.nodes, c.coll, c.bytes, ch, c.a, c.p)
		}
		if ch.Channels < 1 || ch.Channels > 64 {
			t.Errorf("%d nodes, %s of %d bytes: %d channels", c.nodes, c.coll, c.bytes, ch.Channels)
		}
	}
}

func TestEnableRules(t *testing.T) {
	// One GPU a node: PAT for allgather and reduce-scatter, Simple only.
	s, err := Cluster{CompCap: 90, GPUsPerNode: 1, PCIe: 64e9, NIC: 50e9}.System(16)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := Tune(s)
	if m.Bandwidth(AllGather, PAT, nccl.Simple) == 0 || m.Bandwidth(AllGather, PAT, nccl.LL) != 0 || m.Bandwidth(AllReduce, PAT, nccl.Simple) != 0 {
		t.Errorf("PAT with one GPU a node: allgather simple %g, LL %g, allreduce %g", m.Bandwidth(AllGather, PAT, nccl.Simple),
			m.Bandwidth(AllGather, PAT, nccl.LL), m.Bandwidth(AllReduce, PAT, nccl.Simple))
	}
	if ch, _ := m.Choose(Call{Coll: ReduceScatter, Bytes: 1 << 20, ScaledOp: true}); ch.Algo == PAT {
		t.Errorf("PAT reduce-scatter of a scaled op: %v", ch)
	}
	s.PAT = PATOff
	if m, _ := Tune(s); m.Bandwidth(AllGather, PAT, nccl.Simple) != 0 {
		t.Error("PAT off still on")
	}
	// Eight GPUs a node: no PAT unless forced.
	h, _ := dgxH100.System(16)
	if m, _ := Tune(h); m.Bandwidth(AllGather, PAT, nccl.Simple) != 0 {
		t.Error("PAT on with 8 GPUs a node")
	}
	h.PAT = PATOn
	if m, _ := Tune(h); m.Bandwidth(AllGather, PAT, nccl.Simple) == 0 {
		t.Error("PAT forced on is off")
	}
	// NVLS tree off on one node; NVLS across nodes needs CollNet.
	one, _ := dgxH100.System(8)
	m1, _ := Tune(one)
	if m1.Bandwidth(AllReduce, NVLSTree, nccl.Simple) != 0 || m1.Bandwidth(AllReduce, NVLS, nccl.Simple) == 0 {
		t.Error("one node: NVLS tree on, or NVLS off")
	}
	two, _ := dgxH100.System(16)
	m2, _ := Tune(two)
	if m2.Bandwidth(AllReduce, NVLS, nccl.Simple) != 0 || m2.Bandwidth(AllReduce, NVLSTree, nccl.Simple) == 0 {
		t.Error("two nodes without CollNet: NVLS on, or NVLS tree off")
	}
	// LL128 off beyond PXN on Hopper, beyond PXB before it, and without
	// NVLink inside.
	for _, c := range []struct {
		cc        int
		intra, to Path
		on        bool
	}{
		{90, PathNVL, PathPXN, true}, {90, PathNVL, PathPHB, false}, {80, PathNVL, PathPXB, true},
		{80, PathNVL, PathPXN, false}, {90, PathPHB, PathPIX, false}, {60, PathNVL, PathPIX, false},
	} {
		g := hopperGraphs(8, 20)
		for a := range g {
			g[a].TypeIntra, g[a].TypeInter = c.intra, c.to
		}
		m, _ := Tune(System{Ranks: 16, Nodes: 2, MinCompCap: c.cc, Graphs: g})
		if on := m.Bandwidth(AllReduce, Ring, nccl.LL128) > 0; on != c.on {
			t.Errorf("cc %d, %s/%s: LL128 %t, want %t", c.cc, c.intra, c.to, on, c.on)
		}
	}
	// fp8 on a ring of more than 8 ranks comes last.
	if ch, _ := m2.Choose(Call{Coll: AllReduce, Bytes: 1 << 12, FP8: true}); ch.Algo == Ring {
		t.Errorf("fp8 on 16 ranks chose %v", ch)
	}
	// One rank: Ring/Simple, free.
	single, _ := Tune(System{Ranks: 1, Nodes: 1, MinCompCap: 90, Graphs: hopperGraphs(1, 20)})
	if ch, err := single.Choose(Call{Coll: AllReduce, Bytes: 1 << 20}); err != nil || ch.Algo != Ring || ch.Proto != nccl.Simple || ch.Time != 0 {
		t.Errorf("one rank: %v, %v", ch, err)
	}
}

func TestChannelsCut(t *testing.T) {
	m, _ := Tune(System{Ranks: 8, Nodes: 1, MinCompCap: 90, Graphs: hopperGraphs(16, 20), Channels: 32})
	// Ring/LL: 8 x 8 ranks = 64 B a thread, 512 threads: a channel per 32
	// KiB.
	for _, c := range []struct{ bytes, channels int }{{1024, 1}, {64 << 10, 2}, {1 << 20, 32}} {
		ch, _ := m.Choose(Call{Coll: AllReduce, Bytes: c.bytes})
		if ch.Algo != Ring || ch.Proto != nccl.LL {
			t.Errorf("%d bytes: %v, want ring/LL", c.bytes, ch)
		}
		if ch.Channels != c.channels {
			t.Errorf("%d bytes: %d channels, want %d", c.bytes, ch.Channels, c.channels)
		}
	}
}

func TestBadSystems(t *testing.T) {
	for _, s := range []System{{}, {Ranks: 2, Nodes: 3, MinCompCap: 90}, {Ranks: 2, Nodes: 1}, {Ranks: 2, Nodes: 1, MinCompCap: 90, Channels: 65}} {
		if _, err := Tune(s); !errors.Is(err, ErrSystem) {
			t.Errorf("%+v: %v", s, err)
		}
	}
	if _, err := (Cluster{CompCap: 90, GPUsPerNode: 8, NVLink: 450e9}).System(16); !errors.Is(err, ErrSystem) {
		t.Errorf("two nodes without NICs: %v", err)
	}
}
