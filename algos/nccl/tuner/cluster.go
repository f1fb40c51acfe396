package tuner

import (
	"fmt"
	"math"
	"strings"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// Cluster describes a GPU cluster as nexar's GPU presets do (package
// scenario's gpu_cluster keys): what a datasheet says, in SI units. Its
// System method derives from it the figures NCCL's graph search would
// produce, by the model of the search described there.
type Cluster struct {
	// CompCap is the GPUs' compute capability, 90 for 9.0 (CompCap
	// gives it for a generation).
	CompCap int
	// CPUArch and CPUVendor are the hosts' CPUs (0: x86 and Intel; CPUOf
	// reads a vendor's name).
	CPUArch   CPUArch
	CPUVendor CPUVendor
	// GPUsPerNode is the GPUs of one NVLink domain: what NCCL counts as a
	// node (a host; on GB200 NVL72 the whole rack's 72).
	GPUsPerNode int
	// NVLink is a GPU's NVLink bandwidth one way in bytes per second (450e9
	// for an H100 SXM); 0 for GPUs without NVLink.
	NVLink float64
	// NVSwitch is whether the GPUs of a node meet in an NVSwitch (not
	// point-to-point NVLink); NVLS is whether it reduces (NVLink SHARP).
	NVSwitch, NVLS bool
	// PCIe is a GPU's PCIe bandwidth one way to its NIC in bytes per
	// second (64e9 for Gen5 x16); 0 is unlimited.
	PCIe float64
	// NICs is the NICs a node has for the GPUs (0: one per GPU), NIC the
	// bandwidth of each one way in bytes per second.
	NICs int
	NIC  float64
	// CollNet is whether NCCL's CollNet is on (NCCL_COLLNET_ENABLE=1 with
	// a network plugin that reduces in the switches, such as SHARP's; off
	// by default, as in NCCL).
	CollNet bool
	// Channels, if positive, is the communicator's channel count as
	// measured (nccl-tests' "N coll channels"), in place of the model's.
	Channels int
	// Algo and Proto are NCCL_ALGO and NCCL_PROTO as the runs set them
	// ("" unset): see System.
	Algo, Proto string
}

// CompCap returns the compute capability NCCL's tables index a
// generation by: 70, 80, 90, 100.
func CompCap(g nccl.Generation) int {
	switch g {
	case nccl.Ampere:
		return 80
	case nccl.Hopper:
		return 90
	case nccl.Blackwell:
		return 100
	}
	return 70
}

// CPUOf returns the CPU of a vendor's name as the machine keys give it:
// "intel" and "amd" are x86, "arm" Arm; "" is NCCL's default, Intel.
func CPUOf(vendor string) (CPUArch, CPUVendor, error) {
	switch strings.ToLower(vendor) {
	case "", "intel":
		return X86, Intel, nil
	case "amd":
		return X86, AMD, nil
	case "arm":
		return ARM, 0, nil
	}
	return 0, 0, fmt.Errorf("tuner: unknown CPU vendor %q (want intel, amd or arm)", vendor)
}

// NCCL's graph search tries these per-channel bandwidths, in GB/s, from
// the first (src/graph/search.cc): inside one node, and with a network.
var (
	speedsIntra      = []float64{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3}
	speedsInter      = []float64{48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12}
	sm90SpeedsIntra  = []float64{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3}
	sm90SpeedsInter  = []float64{48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12}
	sm100SpeedsIntra = []float64{90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18}
	sm100SpeedsInter = []float64{96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12}
)

func speeds(cc int, inter bool) []float64 {
	switch {
	case cc >= 100 && inter:
		return sm100SpeedsInter
	case cc >= 100:
		return sm100SpeedsIntra
	case cc >= 90 && inter:
		return sm90SpeedsInter
	case cc >= 90:
		return sm90SpeedsIntra
	case inter:
		return speedsInter
	}
	return speedsIntra
}

// nvlinkEfficiency is NCCL's bandwidth of one NVLink (src/graph/topo.h,
// SMxx_NVLINK_BW) over the link's own one-way rate (NVLink 1: 20 GB/s,
// NVLink 2 to 4: 25, NVLink 5: 50), by which NCCL's view of a GPU's
// NVLink bandwidth is the datasheet's: 18 links x 20.6 = 370.8 GB/s for an
// H100's 450.
func nvlinkEfficiency(cc int) float64 {
	switch {
	case cc >= 100:
		return 40.1 / 50
	case cc >= 90:
		return 20.6 / 25
	case cc == 86:
		return 12.0 / 14.0625
	case cc >= 70:
		return 20.0 / 25
	}
	return 18.0 / 20
}

// pciEfficiency is NCCL's PCIe bandwidth (src/graph/topo.cc: lanes x the
// lane's rate / 80, 48 GB/s for Gen5 x16) over the link's one-way rate (64
// GB/s for Gen5 x16).
const pciEfficiency = 0.75

// locBW is NCCL's bandwidth of a path that crosses nothing (LOC_BW).
const locBW = 5000.0

// search models ncclTopoCompute for channels that each take s GB/s of
// capacity(s) channels: from the first speed of the ladder that is at
// most maxBw and leaves room for minCh channels within total, it keeps
// the speed of the most bandwidth (channels x speed, the first on ties),
// stops once a solution reaches total, and tries slower speeds only while
// they exceed .49 of the best; then NCCL's ncclTopoDupChannels doubles
// the channels, halving their speed, when it is 25 GB/s or more (not on
// cc > 80 below 50 GB/s with more than 4 channels, nor above maxCh); and
// rings try faster speeds again with as many channels. It returns 0
// channels if none fit.
func search(ladder []float64, maxBw, total float64, minCh, maxCh, cc int, ring bool, capacity func(s float64) int) (int, float64) {
	i := 0
	for i < len(ladder)-1 && (ladder[i] > maxBw || ladder[i]*float64(minCh) > total) {
		i++
	}
	bestCh, best := 0, 0.0
	for ; i < len(ladder); i++ {
		s := ladder[i]
		if bestCh > 0 && s/best <= .49 {
			break
		}
		nc := min(capacity(s), maxCh)
		if nc >= minCh && float64(nc)*s > float64(bestCh)*best {
			bestCh, best = nc, s
		}
		if float64(bestCh)*best >= total {
			break
		}
	}
	if bestCh == 0 {
		return 0, 0
	}
	if best >= 25 && !(cc > 80 && best < 50 && bestCh > 4) && bestCh < maxCh {
		dup := min(2*bestCh, maxCh)
		div := (dup + bestCh - 1) / bestCh
		bestCh, best = dup, best/float64(div)
	}
	if ring {
		for j := len(ladder) - 1; j >= 0; j-- {
			s := ladder[j]
			if s <= best || s > maxBw {
				continue
			}
			if nc := min(capacity(s), maxCh); nc >= bestCh && float64(nc)*s > float64(bestCh)*best {
				bestCh, best = nc, s
			}
		}
	}
	return bestCh, best
}

// System returns the System of a communicator of ranks ranks on the
// cluster, its ranks filling nodes in order: nodes = ranks / GPUsPerNode,
// rounded up.
func (c Cluster) System(ranks int) (System, error) {
	if c.GPUsPerNode < 1 {
		return System{}, fmt.Errorf("%w: %d GPUs a node", ErrSystem, c.GPUsPerNode)
	}
	return c.SystemNodes(ranks, (ranks+c.GPUsPerNode-1)/c.GPUsPerNode)
}

// SystemNodes returns the System of a communicator of ranks ranks over
// nodes nodes of the cluster, with the graphs NCCL's graph search would
// find there, by this model of src/graph/search.cc:
//
//   - NCCL's view of the links: a GPU's NVLink bandwidth is the
//     datasheet's times NCCL's per-link figure over the link's rate
//     (topo.h: 20.6 of 25 GB/s on Hopper, so an H100's 450 GB/s is 370.8),
//     a PCIe link's 0.75 of its rate (topo.cc: Gen5 x16, 64 GB/s, is 48),
//     a NIC's its rate (400 Gbit/s is 50 GB/s).
//   - Rings: on one node a channel takes its speed of every GPU's NVLink;
//     across nodes it also takes its speed of one NIC (and of that GPU's
//     PCIe), so that a speed s fits min(NICs x floor(NIC/s), floor(NVLink/s))
//     channels, at most 32 (MAXCHANNELS/2). The speeds are search.cc's
//     ladders for the generation, one node's or the network's; the search
//     itself is search (above). The ring graph is NVL/PIX (PHB without
//     NVLink), with the same channels in the same order.
//   - Trees: as many channels as the ring (NCCL asks its tree search for
//     exactly the ring's), at the fastest speed that fits them, its
//     total raised by GPUs/(GPUs-1) as search.cc raises it for non-ring
//     patterns; the pattern is TREE with one GPU a node (search.cc) or on
//     Hopper and later across nodes (where the balanced tree, which
//     halves the NICs' share of its first two GPUs, loses to it),
//     BALANCED_TREE otherwise. PAT reads the tree graph.
//   - NVLS (Hopper and later with NVLS): one channel a GPU (at most 32),
//     at the fastest speed whose channels fit the NVLink total raised as
//     for trees; across nodes its network speed is the fastest a NIC
//     carries with a channel a NIC.
//   - CollNet (where on): CollNetDirect one channel a GPU up to 8 at the
//     ring's speed, CollNetChain the tree's graph.
//
// No network latency is modelled (graph latencyInter 0) and the network
// is not offloaded.
func (c Cluster) SystemNodes(ranks, nodes int) (System, error) {
	cc := c.CompCap
	if cc < 1 {
		return System{}, fmt.Errorf("%w: compute capability %d", ErrSystem, cc)
	}
	if nodes < 1 || ranks < nodes {
		return System{}, fmt.Errorf("%w: %d ranks on %d nodes", ErrSystem, ranks, nodes)
	}
	if nodes > 1 && !(c.NIC > 0) {
		return System{}, fmt.Errorf("%w: %d nodes but no NIC bandwidth", ErrSystem, nodes)
	}
	for _, v := range []float64{c.NVLink, c.PCIe, c.NIC} {
		if math.IsNaN(v) || v < 0 || math.IsInf(v, 0) {
			return System{}, fmt.Errorf("%w: bandwidth %g", ErrSystem, v)
		}
	}
	g := max(1, (ranks+nodes-1)/nodes) // GPUs of the fullest node
	pci := locBW
	if c.PCIe > 0 {
		pci = c.PCIe / 1e9 * pciEfficiency
	}
	nvl := c.NVLink / 1e9 * nvlinkEfficiency(cc)
	typeIntra := PathNVL
	if !(nvl > 0) {
		nvl, typeIntra = pci, PathPHB
	}
	if g == 1 {
		nvl, typeIntra = locBW, PathLOC
	}
	nics := c.NICs
	if nics <= 0 {
		nics = g
	}
	inter := nodes > 1
	net := min(c.NIC/1e9, pci)
	ladder := speeds(cc, inter)
	maxBw, total := nvl, nvl
	capacity := func(s float64) int { return int(math.Floor(nvl/s + 1e-9)) }
	if inter {
		maxBw = net
		capacity = func(s float64) int {
			return min(nics*int(math.Floor(net/s+1e-9)), int(math.Floor(nvl/s+1e-9)))
		}
	}
	ringCh, ringBw := search(ladder, maxBw, total, 1, maxChannels/2, cc, true, capacity)
	if ringCh == 0 {
		return System{}, fmt.Errorf("%w: no ring fits %g GB/s", ErrSystem, maxBw)
	}
	treeTotal := total
	if g > 1 {
		treeTotal *= float64(g) / float64(g-1)
	}
	treeCh, treeBw := search(ladder, maxBw, treeTotal, ringCh, ringCh, cc, false, capacity)
	if treeCh == 0 {
		treeCh, treeBw = ringCh, ringBw
	}
	typeInter := PathPIX
	ring := Graph{Channels: ringCh, BwIntra: ringBw, BwInter: ringBw, TypeIntra: typeIntra, TypeInter: typeInter, SameChannels: true}
	tree := Graph{Channels: treeCh, BwIntra: treeBw, BwInter: treeBw, TypeIntra: typeIntra, TypeInter: typeInter, SameChannels: true}
	pattern := PatternBalancedTree
	if g == 1 || (inter && cc >= 90) {
		pattern = PatternTree
	}
	arch, vendor := c.CPUArch, c.CPUVendor
	if arch == 0 {
		arch, vendor = X86, Intel
	}
	s := System{Ranks: ranks, Nodes: nodes, MinCompCap: cc, MaxCompCap: cc, CPUArch: arch, CPUVendor: vendor,
		TreePattern: pattern, NVSwitch: c.NVSwitch, Channels: c.Channels}
	s.Graphs[Ring], s.Graphs[Tree], s.Graphs[PAT] = ring, tree, tree
	if c.NVLS && c.NVSwitch && cc >= 90 && g > 1 {
		nc := min(maxNVLSArity, g)
		nvlsTotal := nvl * float64(g) / float64(g-1)
		bwIntra := 0.0
		for _, sp := range ladder {
			if sp <= maxBw && float64(nc)*sp <= nvlsTotal {
				bwIntra = sp
				break
			}
		}
		bwInter := bwIntra
		if inter {
			bwInter = 0
			for _, sp := range ladder {
				if sp <= net && nics*int(math.Floor(net/sp+1e-9)) >= nc {
					bwInter = sp
					break
				}
			}
		}
		if bwIntra > 0 && bwInter > 0 {
			s.NVLS = true
			s.Graphs[NVLS] = Graph{Channels: nc, BwIntra: bwIntra, BwInter: bwInter, TypeIntra: PathNVL, TypeInter: typeInter}
			s.Graphs[NVLSTree] = s.Graphs[NVLS]
		}
	}
	s.Algo, s.Proto = c.Algo, c.Proto
	if c.CollNet {
		s.CollNet, s.CollNetChain = true, true
		s.Graphs[CollNetDirect] = Graph{Channels: min(maxDirectArity+1, g), BwIntra: ringBw, BwInter: ringBw, TypeIntra: typeIntra, TypeInter: typeInter, SameChannels: true}
		s.Graphs[CollNetChain] = tree
	}
	return s, nil
}
