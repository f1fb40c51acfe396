package tuner

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// Coll is a collective as NCCL's tables index them (ncclFunc_t).
type Coll int

// NCCL's collectives, in the order of its tables.
const (
	Broadcast Coll = iota
	Reduce
	AllGather
	ReduceScatter
	AllReduce
	NumColls
)

// collNames are the names the example tuner plugin's file uses;
// collPrinted those NCCL's TUNING lines print (ncclFuncStr); collCatalogue
// the catalogue's.
var (
	collNames     = [NumColls]string{"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}
	collPrinted   = [NumColls]string{"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}
	collCatalogue = [NumColls]string{"broadcast", "reduce", "allgather", "reduce_scatter", "allreduce"}
)

// String returns the name the example tuner plugin reads: "allreduce".
func (c Coll) String() string {
	if c >= 0 && c < NumColls {
		return collNames[c]
	}
	return fmt.Sprintf("coll(%d)", int(c))
}

// Catalogue returns the collective's name in nexar's catalogue:
// "reduce_scatter".
func (c Coll) Catalogue() string {
	if c >= 0 && c < NumColls {
		return collCatalogue[c]
	}
	return c.String()
}

// CollOf returns the NCCL collective of a catalogue collective, and false
// for those NCCL's tuner does not choose for (alltoall, gather, scatter,
// barrier and the others NCCL runs as point-to-point or not at all).
func CollOf(catalogue string) (Coll, bool) {
	for c, n := range collCatalogue {
		if n == catalogue {
			return Coll(c), true
		}
	}
	return 0, false
}

// Algo is one of NCCL's algorithms (NCCL_ALGO_*).
type Algo int

// NCCL's algorithms, in the order of its tables (nccl_tuner.h).
const (
	Tree          Algo = nccl.AlgoTree
	Ring          Algo = nccl.AlgoRing
	CollNetDirect Algo = nccl.AlgoCollNetDirect
	CollNetChain  Algo = nccl.AlgoCollNetChain
	NVLS          Algo = nccl.AlgoNVLS
	NVLSTree      Algo = nccl.AlgoNVLSTree
	PAT           Algo = nccl.AlgoPAT
	NumAlgos      Algo = PAT + 1
)

var (
	algoNames   = [NumAlgos]string{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
	algoPrinted = [NumAlgos]string{"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}
)

// String returns the name the example tuner plugin reads: "nvls_tree".
func (a Algo) String() string {
	if a >= 0 && a < NumAlgos {
		return algoNames[a]
	}
	return fmt.Sprintf("algo(%d)", int(a))
}

// Protocol is one of NCCL's protocols: nccl.LL, nccl.LL128, nccl.Simple.
type Protocol = nccl.Protocol

// NumProtocols is the number of NCCL's protocols.
const NumProtocols = 3

var protoPrinted = [NumProtocols]string{"LL", "LL128", "Simple"}

// Path is the type of a path between two devices (PATH_* in NCCL's
// graph.h), from the closest to the farthest: what graph search reports
// as typeIntra and typeInter.
type Path int

// Path types.
const (
	PathLOC Path = iota // the same device
	PathNVL             // NVLink, possibly through an NVSwitch
	PathNVB             // NVLink through another GPU
	PathC2C             // chip-to-chip (Grace)
	PathPIX             // one PCIe switch
	PathPXB             // several PCIe switches, not the CPU
	PathP2C             // a GPU to its NIC through C2C and the CPU
	PathPXN             // through another GPU's NIC (PCI x NVLink)
	PathPHB             // through the CPU's PCIe host bridge
	PathSYS             // across CPUs (QPI, UPI, xGMI)
	PathNET             // through the network
	PathDIS             // disconnected
)

var pathNames = []string{"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"}

func (p Path) String() string {
	if p >= 0 && int(p) < len(pathNames) {
		return pathNames[p]
	}
	return fmt.Sprintf("path(%d)", int(p))
}

// ParsePath parses a path type's name as NCCL prints it: "NVL", "PIX".
func ParsePath(s string) (Path, error) {
	for i, n := range pathNames {
		if strings.EqualFold(s, n) {
			return Path(i), nil
		}
	}
	return 0, fmt.Errorf("unknown path type %q (want one of %s)", s, strings.Join(pathNames, ", "))
}

// Tree patterns of graph search (NCCL_TOPO_PATTERN_*): how a node's NIC
// traffic meets its GPUs.
const (
	PatternBalancedTree = 1 // spread between two GPUs
	PatternSplitTree    = 2 // parent on one GPU, children on another
	PatternTree         = 3 // all on one GPU
)

// CPUArch and CPUVendor are the host CPU as NCCL's topology reads it
// (NCCL_TOPO_CPU_ARCH_*, NCCL_TOPO_CPU_VENDOR_*).
type (
	CPUArch   int
	CPUVendor int
)

// CPU architectures and vendors.
const (
	X86 CPUArch = iota + 1
	Power
	ARM
	MixedArch
)

// CPU vendors.
const (
	Intel CPUVendor = iota + 1
	AMD
	Zhaoxin
	MixedVendor
)

// Graph is what NCCL's graph search (src/graph/search.cc,
// ncclTopoCompute) found for one pattern, as its INFO line "Pattern 4,
// crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX,
// sameChannels 1" prints it.
type Graph struct {
	// Channels is nChannels.
	Channels int
	// BwIntra and BwInter are the bandwidth of one channel inside a node
	// and between nodes, in GB/s.
	BwIntra, BwInter float64
	// TypeIntra and TypeInter are the farthest path type the channels
	// take inside a node and to the network.
	TypeIntra, TypeInter Path
	// LatencyInter is the network's extra latency in microseconds (0
	// unless a network plugin reports one).
	LatencyInter float64
	// SameChannels is whether every channel takes the same GPUs in the
	// same order.
	SameChannels bool
}

// System is everything NCCL's cost model reads of a communicator: the
// inputs of ncclTopoTuneModel and topoGetAlgoInfo.
type System struct {
	// Ranks and Nodes are the communicator's ranks and nodes (NVLink
	// domains: the ranks that share one), Nodes at most Ranks.
	Ranks, Nodes int
	// MinCompCap and MaxCompCap are the lowest and highest compute
	// capability of the GPUs, as 90 for 9.0 (MaxCompCap 0: MinCompCap).
	MinCompCap, MaxCompCap int
	// CPUArch and CPUVendor are the hosts' CPUs (0: x86 and Intel).
	CPUArch   CPUArch
	CPUVendor CPUVendor
	// Graphs are the graphs of each algorithm, indexed by Algo, as NCCL
	// passes them to its model: Tree, Ring, CollNetDirect, CollNetChain,
	// NVLS (NVLS and NVLSTree share NCCL's NVLS graph), PAT (NCCL's
	// tree graph). A Graph of no channels is a pattern graph search did
	// not find or was not asked for.
	Graphs [NumAlgos]Graph
	// TreePattern is the tree graph's pattern (the largest over the
	// nodes: comm->maxTreePattern): PatternTree costs trees 15 %.
	TreePattern int
	// Channels is the communicator's channel count (comm->nChannels),
	// which a call's channels are cut down from: twice the ring and tree
	// graphs' (ncclTopoPostset doubles them), more on Hopper across nodes;
	// 0 computes it so (see DefaultChannels).
	Channels int
	// NVLSChannels is comm->nvlsChannels; 0 is NCCL's default for the
	// generation (16 on Hopper, 24 on one Blackwell node, 32 on several).
	NVLSChannels int
	// NVLS is whether NVLink SHARP is usable (comm->nvlsSupport): an
	// NVSwitch with multicast, a Hopper or later GPU, and an NVLS graph.
	NVLS bool
	// NVSwitch is whether the nodes have an NVSwitch (CollNetDirect
	// needs one).
	NVSwitch bool
	// CollNet is whether CollNet is enabled and works
	// (NCCL_COLLNET_ENABLE=1 with a network plugin that reduces, such as
	// SHARP's): off by default, as in NCCL. CollNetChain is whether the
	// plugin supports the chain.
	CollNet, CollNetChain bool
	// CollNetAllGather and CollNetReduceScatter are whether the CollNet
	// plugin has iallgather and ireducescatter, which NVLS and
	// CollNetDirect need for those collectives across nodes.
	CollNetAllGather, CollNetReduceScatter bool
	// NetOverhead is the cost of posting a network operation in
	// microseconds (NCCL_NET_OVERHEAD, in ns there); negative or 0 is
	// NCCL's default for the CPU (1, or 2 on AMD x86).
	NetOverhead float64
	// PAT is NCCL_PAT_ENABLE: PATDefault, on only with one GPU a node and
	// no network offload, or PATOn, PATOff.
	PAT PATMode
	// NetOffload is whether the network device offloads (a device
	// network, not NCCL_NET_DEVICE_HOST), which keeps PAT off by default.
	NetOffload bool
	// Constants are the model's tables; nil is nccl.Constants230.
	Constants *nccl.Constants
	// Algo and Proto are NCCL_ALGO and NCCL_PROTO as the run sets them
	// ("Ring,Tree", "^LL128", "allreduce:tree;allgather:ring"; "" unset),
	// which limit the pairs the model may choose as NCCL's do (see
	// parseEnables).
	Algo, Proto string
}

// PATMode is NCCL_PAT_ENABLE.
type PATMode int

// PAT modes.
const (
	PATDefault PATMode = iota // NCCL_PAT_ENABLE unset (2): NCCL decides
	PATOn                     // 1
	PATOff                    // 0
)

// NCCL's fixed figures, src/include/device.h, comm.h, topo.h.
const (
	maxChannels       = 64  // MAXCHANNELS
	maxNVLSArity      = 32  // NCCL_MAX_NVLS_ARITY
	maxDirectArity    = 7   // NCCL_MAX_DIRECT_ARITY
	warpSize          = 32  // WARP_SIZE
	maxNThreads       = 640 // NCCL_MAX_NTHREADS
	simpleMaxNThreads = 512 // NCCL_SIMPLE_MAX_NTHREADS
	llMaxNThreads     = 512 // NCCL_LL_MAX_NTHREADS
	ll128MaxNThreads  = 640 // NCCL_LL128_MAX_NTHREADS
	pciBW             = 12  // PCI_BW, GB/s
	llThreshold       = 8   // NCCL_LL_THREAD_THRESHOLD
	ll128Threshold    = 8   // NCCL_LL128_THREAD_THRESHOLD
	simpleThreshold   = 64  // NCCL_SIMPLE_THREAD_THRESHOLD
	collNetThreshold  = 512 // threadThresholds of CollNet Simple
)

// Model is NCCL's cost model of one communicator: the bandwidth and
// latency of every collective, algorithm and protocol that
// ncclTopoTuneModel computes, from which ncclTopoGetAlgoTime predicts a
// call's time and topoGetAlgoInfo chooses. It is computed in float32
// where NCCL computes in float, so that its figures round as NCCL's do.
type Model struct {
	sys System
	c   nccl.Constants
	// bw is in GB/s (0: disabled), lat in microseconds.
	bw, lat    [NumColls][NumAlgos][NumProtocols]float32
	maxThreads [NumAlgos][NumProtocols]int
	thresholds [NumAlgos][NumProtocols]int
	channels   int
	nvlsCh     int
}

// ErrSystem is wrapped by the errors of Tune for a System it cannot model.
var ErrSystem = errors.New("tuner: bad system")

func (s System) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSystem, fmt.Sprintf(format, args...))
	}
	switch {
	case s.Ranks < 1:
		return bad("%d ranks", s.Ranks)
	case s.Nodes < 1 || s.Nodes > s.Ranks:
		return bad("%d nodes for %d ranks", s.Nodes, s.Ranks)
	case s.MinCompCap < 1 || (s.MaxCompCap != 0 && s.MaxCompCap < s.MinCompCap):
		return bad("compute capability %d..%d", s.MinCompCap, s.MaxCompCap)
	case s.Channels < 0 || s.Channels > maxChannels || s.NVLSChannels < 0 || s.NVLSChannels > maxChannels:
		return bad("%d channels, %d NVLS channels: want 0 to %d", s.Channels, s.NVLSChannels, maxChannels)
	}
	if _, err := parseEnables(s.Algo, s.Proto); err != nil {
		return bad("%v", err)
	}
	for a, g := range s.Graphs {
		if g.Channels < 0 || g.Channels > maxChannels || !(g.BwIntra >= 0) || !(g.BwInter >= 0) || !(g.LatencyInter >= 0) ||
			math.IsInf(g.BwIntra, 0) || math.IsInf(g.BwInter, 0) || math.IsInf(g.LatencyInter, 0) {
			return bad("%s graph: %d channels of %g/%g GB/s, latency %g us", Algo(a), g.Channels, g.BwIntra, g.BwInter, g.LatencyInter)
		}
	}
	return nil
}

// compCapIndex is NCCL's index of a compute capability in its tables.
func compCapIndex(cc int) int {
	switch {
	case cc >= 100:
		return 3
	case cc >= 90:
		return 2
	case cc >= 80:
		return 1
	}
	return 0
}

// scaleIndex is NCCL's index2: one node, two, more.
func scaleIndex(nodes int) int {
	if nodes <= 2 {
		return nodes - 1
	}
	return 2
}

// log2i is NCCL's log2i: floor(log2 n), -1 for 0.
func log2i(n int) int {
	if n <= 0 {
		return -1
	}
	k := -1
	for ; n > 0; n >>= 1 {
		k++
	}
	return k
}

// DefaultChannels returns the communicator channel count NCCL runs with
// on s, where s.Channels is 0: twice the smaller of the ring and tree
// graphs' channels (ncclTopoPostset duplicates every channel), doubled
// again on Hopper and later across nodes when the ring's intra-node
// bandwidth exceeds 45 GB/s and there are fewer than 16
// (src/graph/connect.cc), at most MAXCHANNELS.
func DefaultChannels(s System) int {
	nc := min(s.Graphs[Ring].Channels, s.Graphs[Tree].Channels)
	nc = min(maxChannels, 2*nc)
	if s.MinCompCap >= 90 && s.Nodes > 1 && s.Graphs[Ring].BwIntra > 45 && nc < 16 {
		nc = min(maxChannels, 2*nc)
	}
	return max(nc, 1)
}

// defaultNVLSChannels is ncclNvlsTuning's default (src/transport/nvls.cc).
func defaultNVLSChannels(s System) int {
	if s.MinCompCap >= 100 {
		if s.Nodes > 1 {
			return 32
		}
		return 24
	}
	return 16
}

// netOverhead is getNetOverhead, in microseconds.
func (s System) netOverhead() float32 {
	if s.NetOverhead > 0 {
		return float32(s.NetOverhead)
	}
	if s.cpuArch() == X86 && s.cpuVendor() == AMD {
		return 2
	}
	return 1
}

func (s System) cpuArch() CPUArch {
	if s.CPUArch == 0 {
		return X86
	}
	return s.CPUArch
}

func (s System) cpuVendor() CPUVendor {
	if s.CPUVendor == 0 && s.cpuArch() == X86 {
		return Intel
	}
	return s.CPUVendor
}

func (s System) patEnable() bool {
	if s.MinCompCap < 60 {
		return false
	}
	switch s.PAT {
	case PATOn:
		return true
	case PATOff:
		return false
	}
	return s.Nodes == s.Ranks && !s.NetOffload
}

// System returns the system the model was computed for.
func (m *Model) System() System { return m.sys }

// Channels returns the communicator's channel count (comm->nChannels)
// and NVLS channel count (comm->nvlsChannels).
func (m *Model) Channels() (channels, nvls int) { return m.channels, m.nvlsCh }

// Tune computes NCCL's cost model for s, as ncclTopoTuneModel
// (src/graph/tuning.cc) does, with NCCL_PROTO, NCCL_ALGO and the other
// environment variables at their defaults.
func Tune(s System) (*Model, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.MaxCompCap == 0 {
		s.MaxCompCap = s.MinCompCap
	}
	m := newModel(s)
	if s.Ranks <= 1 {
		return m, nil
	}
	if s.cpuArch() == Power {
		// As NCCL does: on POWER a tree's Simple step over PCIe costs
		// what a ring's does.
		m.c.HwLat[nccl.HwPCI][Tree][nccl.Simple] = m.c.HwLat[nccl.HwPCI][Ring][nccl.Simple]
	}
	in := m.tuneInputs()
	for coll := range NumColls {
		nsteps := ringSteps(coll, s.Ranks)
		for a := range NumAlgos {
			for p := range Protocol(NumProtocols) {
				if !in.modelled(coll, a, p) {
					continue
				}
				m.bw[coll][a][p] = in.bandwidth(coll, a, p, nsteps)
				m.lat[coll][a][p] = in.latency(coll, a, p, nsteps)
			}
		}
	}
	m.disableUnsupported()
	return m, nil
}

// newModel is the model of s before its tables are filled: its constants,
// its channel counts, and the threads and thresholds of each algorithm
// and protocol, all a system of one rank gets.
func newModel(s System) *Model {
	m := &Model{sys: s, c: nccl.Constants230}
	if s.Constants != nil {
		m.c = *s.Constants
	}
	m.channels = s.Channels
	if m.channels == 0 {
		m.channels = DefaultChannels(s)
	}
	m.nvlsCh = s.NVLSChannels
	if m.nvlsCh == 0 {
		m.nvlsCh = defaultNVLSChannels(s)
	}
	if !s.NVLS {
		m.nvlsCh = 0
	}
	m.setThreads()
	return m
}

// setThreads fills the threads a channel of each algorithm and protocol
// runs at most (rings run fewer Simple threads when their graph's
// bandwidth fits in PCIe's) and the thread thresholds that choose cuts
// channels and threads by.
func (m *Model) setThreads() {
	g := &m.sys.Graphs
	ringSimple := simpleMaxNThreads
	if float32(g[Ring].BwIntra)*float32(g[Ring].Channels) <= pciBW {
		ringSimple = 256
	}
	m.maxThreads[Ring][nccl.Simple] = ringSimple
	m.maxThreads[Tree][nccl.Simple] = simpleMaxNThreads
	for _, a := range []Algo{CollNetDirect, CollNetChain, NVLS, NVLSTree} {
		m.maxThreads[a][nccl.Simple] = maxNThreads
	}
	m.maxThreads[Ring][nccl.LL], m.maxThreads[Tree][nccl.LL] = llMaxNThreads, llMaxNThreads
	m.maxThreads[Ring][nccl.LL128], m.maxThreads[Tree][nccl.LL128] = ll128MaxNThreads, ll128MaxNThreads

	for a := range NumAlgos {
		m.thresholds[a] = [NumProtocols]int{llThreshold, ll128Threshold, simpleThreshold}
	}
	m.thresholds[Ring][nccl.LL] *= m.sys.Ranks
	m.thresholds[CollNetDirect][nccl.Simple] = collNetThreshold
	m.thresholds[CollNetChain][nccl.Simple] = collNetThreshold
}

// ringSteps is the steps of a ring's coll on nRanks ranks: 2(n-1) for
// allreduce, n-1 for allgather and reduce-scatter, n for the others.
func ringSteps(coll Coll, nRanks int) int {
	switch coll {
	case AllReduce:
		return 2 * (nRanks - 1)
	case ReduceScatter, AllGather:
		return nRanks - 1
	}
	return nRanks
}

// tuneInputs are the figures of a system that ncclTopoTuneModel reads
// for every collective, algorithm and protocol: its graphs and constants,
// the caps its generation and scale select, and the link class each
// algorithm's steps cross. Computing them once keeps the loop over the
// tables to the per-entry rules.
type tuneInputs struct {
	s              *System
	g              *[NumAlgos]Graph
	c              *nccl.Constants
	nNodes, nRanks int
	// ppn is the ranks a node; nvlsEff scales NVLS's intra-node
	// bandwidth.
	ppn, nvlsEff float32
	// The caps of LL's bus bandwidth and of a channel's bandwidth, in
	// GB/s.
	llMaxBw, perChMaxTreeBw, perChMaxRingLL128Bw, perChMaxTreeLL128Bw, perChMaxNVLSTreeBw float64
	// intraHw is the link class of a step inside a node, hw of a step
	// of the algorithm (the network's across nodes).
	intraHw, hw [NumAlgos]int
}

// tuneInputs reads m's system and constants into the figures Tune's
// loop uses.
func (m *Model) tuneInputs() *tuneInputs {
	s, c := &m.sys, &m.c
	in := &tuneInputs{s: s, g: &s.Graphs, c: c, nNodes: s.Nodes, nRanks: s.Ranks}
	cci := compCapIndex(s.MinCompCap)
	i2 := scaleIndex(in.nNodes)
	// LL's cap is by generation on one node, by CPU vendor across nodes.
	i1 := cci
	if in.nNodes > 1 {
		i1 = 0
		if v := s.cpuVendor(); v == AMD || v == MixedVendor {
			i1 = 1
		}
	}
	in.llMaxBw = c.LLMaxBw[i1][i2]
	in.perChMaxTreeBw = c.PerChMaxTreeBw[cci][i2]
	in.perChMaxRingLL128Bw = c.PerChMaxRingLL128Bw[cci][i2]
	in.perChMaxTreeLL128Bw = c.PerChMaxTreeLL128Bw[cci][i2]
	in.perChMaxNVLSTreeBw = c.PerChMaxNVLSTreeBw[cci][i2]
	in.ppn = float32(in.nRanks) / float32(in.nNodes)
	in.nvlsEff = float32(c.NVLSEfficiency[cci])
	for a := range NumAlgos {
		in.intraHw[a] = nccl.HwPCI
		if in.g[a].TypeIntra == PathNVL {
			in.intraHw[a] = nccl.HwNVLink
		}
		in.hw[a] = nccl.HwNet
		if in.nNodes == 1 {
			in.hw[a] = in.intraHw[a]
		}
	}
	return in
}

// modelled is whether ncclTopoTuneModel computes coll with a and p; the
// others keep bandwidth 0, disabled. Broadcast and reduce run only on
// rings; allgather and reduce-scatter on rings, PAT (Simple, where PAT is
// enabled), NVLS and CollNetDirect; allreduce on all but PAT. NVLS and
// NVLSTree run only Simple, and only on a graph of two channels or more.
func (in *tuneInputs) modelled(coll Coll, a Algo, p Protocol) bool {
	switch {
	case (coll == Broadcast || coll == Reduce) && a != Ring:
		return false
	case (coll == ReduceScatter || coll == AllGather) && a != PAT && a != Ring && a != NVLS && a != CollNetDirect:
		return false
	case coll == AllReduce && a == PAT:
		return false
	case (a == NVLS || a == NVLSTree) && p != nccl.Simple:
		return false
	case (coll == ReduceScatter || coll == AllGather) && a == PAT && (p != nccl.Simple || !in.s.patEnable()):
		return false
	case (a == NVLS || a == NVLSTree) && in.g[a].Channels < 2:
		return false
	}
	return true
}

// bandwidth is the algorithm bandwidth of coll with a and p in GB/s (0:
// disabled): the graph's channels at a channel's bandwidth, capped by
// protocol, corrected for CollNet, then scaled from bus bandwidth to the
// algorithm's.
func (in *tuneInputs) bandwidth(coll Coll, a Algo, p Protocol, nsteps int) float32 {
	busBw := float32(in.g[a].Channels) * in.channelBw(coll, a)
	busBw = in.capByProtocol(coll, a, p, busBw)
	busBw = in.collNetBw(coll, a, p, busBw)
	return in.algoBw(coll, a, nsteps, busBw)
}

// channelBw is the bandwidth of one channel of a's graph in GB/s: its
// intra-node bandwidth on up to two nodes and for CollNet, its
// inter-node bandwidth otherwise; for NVLS and NVLSTree the lesser of
// NVLink SHARP's bandwidth inside a node and the network's.
func (in *tuneInputs) channelBw(coll Coll, a Algo) float32 {
	g := &in.g[a]
	collnet := a == CollNetDirect || a == CollNetChain
	bw := float32(g.BwInter)
	if in.nNodes <= 2 || collnet {
		bw = float32(g.BwIntra)
	}
	if a == NVLS || a == NVLSTree {
		intraBw := float32(g.BwIntra) * in.nvlsEff * float32(g.Channels-1) / float32(g.Channels)
		if coll == AllReduce {
			intraBw *= 2
		} else {
			intraBw *= (in.ppn - 1) / in.ppn
		}
		interBw := float32(g.BwInter)
		if in.nNodes <= 2 && a == NVLSTree {
			interBw *= 2
		}
		bw = min(intraBw, interBw)
		if a == NVLSTree {
			bw = min(bw, float32(in.perChMaxNVLSTreeBw))
		}
	}
	return bw
}

// capByProtocol applies to busBw the caps and efficiencies of LL and
// LL128 on rings and trees, of trees' allreduce and pattern, and of PAT.
func (in *tuneInputs) capByProtocol(coll Coll, a Algo, p Protocol, busBw float32) float32 {
	nch := float64(in.g[a].Channels)
	if a == Ring && p == nccl.LL {
		busBw = float32(min(in.llMaxBw, float64(busBw)*.5))
	}
	if a == Ring && p == nccl.LL128 {
		busBw = float32(min(float64(busBw)*0.92, nch*in.perChMaxRingLL128Bw))
	}
	if a == Tree && coll == AllReduce {
		busBw = float32(min(float64(busBw)*.92, nch*in.perChMaxTreeBw))
	}
	if a == Tree && p == nccl.LL {
		busBw = float32(min(float64(busBw)*1.0/3.8, in.llMaxBw))
	}
	if a == Tree && p == nccl.LL128 {
		f := 120.0 / 128.0
		if in.nNodes == 1 {
			f = 7.0 / 9.0
		}
		busBw = float32(min(float64(busBw)*f, nch*in.perChMaxTreeLL128Bw))
	}
	if a == Tree && in.s.TreePattern == PatternTree {
		busBw = float32(float64(busBw) * .85)
	}
	if a == PAT {
		busBw = float32(float64(busBw) * .75)
	}
	return busBw
}

// collNetBw applies to busBw what CollNet changes: CollNet runs only
// Simple; CollNetDirect's bandwidth is its heads' (by ranks a node for
// allgather and reduce-scatter); and NVLS and CollNetDirect run
// allgather and reduce-scatter across nodes only where the CollNet
// plugin has them and every node's ranks fit its heads.
func (in *tuneInputs) collNetBw(coll Coll, a Algo, p Protocol, busBw float32) float32 {
	g, s, ppn := in.g, in.s, in.ppn
	nch := float64(g[a].Channels)
	if (a == CollNetDirect || a == CollNetChain) && p != nccl.Simple {
		busBw = 0
	}
	if a == CollNetDirect && p == nccl.Simple {
		if coll == AllGather || coll == ReduceScatter {
			busBw = ppn * min(float32(g[a].BwIntra), float32(g[a].BwInter)*0.9)
		} else {
			factor := float32(float64(ppn) / (1.0 * nch))
			factor -= (factor - 1) / 2
			busBw /= factor
			if s.MinCompCap >= 90 {
				busBw = float32(float64(busBw) * .85)
			}
		}
	}
	if (a == NVLS || a == CollNetDirect) && p == nccl.Simple && (coll == AllGather || coll == ReduceScatter) && in.nNodes > 1 {
		if coll == AllGather && !(s.CollNet && s.CollNetAllGather) {
			busBw = 0
		}
		if coll == ReduceScatter && !(s.CollNet && s.CollNetReduceScatter) {
			busBw = 0
		}
		// and every node's local ranks at most the CollNet heads
		if heads := g[CollNetDirect].Channels; busBw > 0 && (in.nRanks+in.nNodes-1)/in.nNodes > heads {
			busBw = 0
		}
	}
	return busBw
}

// algoBw turns bus bandwidth into the algorithm bandwidth NCCL's table
// holds: rings, NVLS and NVLSTree by ranks over steps, the others by
// half; allgather and reduce-scatter on other algorithms than rings
// keep their bus bandwidth.
func (in *tuneInputs) algoBw(coll Coll, a Algo, nsteps int, busBw float32) float32 {
	if !(a != Ring && (coll == AllGather || coll == ReduceScatter)) {
		ratio := float32(1)
		if a == Ring || a == NVLS || a == NVLSTree {
			ratio = float32(float64(ratio) * (1.0 * float64(in.nRanks)) / float64(nsteps))
		} else {
			ratio = float32(float64(ratio) * .5)
		}
		busBw *= ratio
	}
	return busBw
}

// latency is the latency of coll with a and p in microseconds: the
// algorithm's base latency and what its steps cost inside and between
// nodes.
func (in *tuneInputs) latency(coll Coll, a Algo, p Protocol, nsteps int) float32 {
	c, nNodes := in.c, in.nNodes
	lat := float32(c.BaseLat[a][p])
	intraLat := float32(c.HwLat[in.intraHw[a]][a][p])
	interLat := float32(c.HwLat[nccl.HwNet][a][p])
	if in.ppn == 1 {
		interLat = float32(c.HwLat[nccl.HwNet][Tree][p])
	}
	interLat += float32(in.g[a].LatencyInter)
	if p == nccl.Simple {
		interLat += float32(in.g[a].LatencyInter)
	}
	ppnInt := in.nRanks / nNodes
	switch a {
	case Ring:
		lat += in.ringStepsLatency(coll, p, nsteps, intraLat, interLat)
	case Tree:
		if coll == AllReduce {
			lat += 2 * (float32(ppnInt-1)*intraLat + float32(log2i(nNodes))*interLat)
		}
	case CollNetDirect:
		lat = float32(float64(lat) + 2*(float64(float32(min(1, ppnInt-1))*intraLat)+float64(ppnInt-1)*0.4) + float64(interLat))
	case CollNetChain:
		lat += 2*float32(ppnInt-1)*intraLat + interLat
	case NVLS:
		lat = intraLat
		if nNodes > 1 {
			lat += interLat
		}
	case NVLSTree:
		lat += intraLat + 2*float32(log2i(nNodes))*interLat
	case PAT:
		if coll == AllGather || coll == ReduceScatter {
			lat = float32(float64(lat) + float64(log2i(nNodes))*(float64(interLat)/3.5) + float64(in.nRanks)*2.8)
		}
	}
	return lat
}

// ringStepsLatency is what a ring's nsteps steps add to its base
// latency. Broadcast and reduce pipeline along the ring: one hop's
// latency where every channel takes the same GPUs, every step's
// otherwise. The other collectives pay each step inside a node at least
// the network's posting overhead (three times for Simple) when there
// are several nodes, and each step between nodes the network's latency.
func (in *tuneInputs) ringStepsLatency(coll Coll, p Protocol, nsteps int, intraLat, interLat float32) float32 {
	hwLat := float32(in.c.HwLat[in.hw[Ring]][Ring][p])
	if coll == Reduce || coll == Broadcast {
		if in.g[Ring].SameChannels {
			return hwLat
		}
		if p == nccl.Simple {
			hwLat = float32(in.c.HwLat[in.hw[Ring]][Tree][p])
		}
		return float32(nsteps) * hwLat
	}
	var overhead float32
	if in.nNodes > 1 {
		overhead = in.s.netOverhead()
		if p == nccl.Simple {
			overhead *= 3
		}
	}
	intraLat = max(intraLat, overhead)
	nInter := 0
	if in.nNodes > 1 {
		nInter = in.nNodes - 1
		if coll == AllReduce {
			nInter = 2 * (in.nNodes - 1)
		}
	}
	return float32(nsteps-nInter)*intraLat + float32(nInter)*interLat
}

// disableUnsupported applies NCCL's enable rules: NCCL_PROTO and
// NCCL_ALGO (System.Proto, System.Algo), then what the system lacks: it
// zeroes the bandwidth of the pairs they leave out, of NVLSTree on one
// node, of CollNet (and NVLS across nodes) without CollNet, of
// CollNetChain without the plugin's chain, of CollNetDirect without an
// NVSwitch, and of LL128 where the system cannot run it, unless
// NCCL_PROTO names it.
func (m *Model) disableUnsupported() {
	s := &m.sys
	en, _ := parseEnables(s.Algo, s.Proto) // checked by System.check
	for coll := range NumColls {
		for a := range NumAlgos {
			disable := en.algo[coll][a] == 0 || (s.Nodes == 1 && a == NVLSTree) ||
				(!s.CollNet && (a == CollNetDirect || a == CollNetChain || (a == NVLS && s.Nodes > 1))) ||
				(s.CollNet && a == CollNetChain && !s.CollNetChain) ||
				(!s.NVSwitch && a == CollNetDirect)
			for p := range Protocol(NumProtocols) {
				enable := en.proto[coll][p] != 0
				if en.proto[coll][p] == 2 { // LL128 by default
					enable = s.ll128Enabled(a)
				}
				if !enable || disable {
					m.bw[coll][a][p] = 0
				}
			}
		}
	}
}

// ll128Enabled is whether a's graph can run LL128: its paths no farther
// than PXN (PXB before Hopper) to the network and NVB inside a node, GPUs
// of one generation (or Hopper and later), Volta or later.
func (s System) ll128Enabled(a Algo) bool {
	g := &s.Graphs
	var enable bool
	if s.MinCompCap >= 90 { // NCCL_LL128_C2C at its default, 1
		enable = g[a].TypeInter <= PathPXN
	} else {
		enable = g[a].TypeInter <= PathPXB
	}
	enable = enable && g[a].TypeIntra <= PathNVB
	enable = enable && (s.MinCompCap == s.MaxCompCap || s.MinCompCap >= 90)
	enable = enable && s.MinCompCap >= 70
	return enable
}

// Bandwidth and Latency return the model's algorithm bandwidth in GB/s
// (0: the pair is disabled) and latency in microseconds, as NCCL's TUNING
// table prints them.
func (m *Model) Bandwidth(c Coll, a Algo, p Protocol) float64 { return float64(m.bw[c][a][p]) }

// Latency: see Bandwidth.
func (m *Model) Latency(c Coll, a Algo, p Protocol) float64 { return float64(m.lat[c][a][p]) }

// MaxThreads returns the threads a channel of a and p runs at most
// (comm->maxThreads, the table's "Max NThreads").
func (m *Model) MaxThreads(a Algo, p Protocol) int { return m.maxThreads[a][p] }

// treeCorrection are NCCL's corrections of tree bandwidth for medium sizes,
// by protocol and log2 of the size in 64-byte units (tuning.cc).
var treeCorrection = [NumProtocols][24]float32{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}

// Time returns NCCL's predicted time in microseconds of a call of c moving
// nBytes (NCCL's count: the buffer for allreduce, broadcast and reduce,
// all ranks' blocks for allgather and reduce-scatter) with a and p, one
// operation in flight, as ncclTopoGetAlgoTime computes it; -1 if the pair
// is disabled.
func (m *Model) Time(c Coll, a Algo, p Protocol, nBytes int) float64 {
	return float64(m.time(c, a, p, nBytes, 1))
}

// time is ncclTopoGetAlgoTime with numPipeOps operations in flight (only
// rings multiply their latency by it: the others batch up to
// NCCL_MAX_DEV_WORK_BATCH_COLLS operations, which numPipeOps stays below
// here).
func (m *Model) time(c Coll, a Algo, p Protocol, nBytes, pipeOps int) float32 {
	bw, lat := m.bw[c][a][p], m.lat[c][a][p]
	if bw == 0 {
		return -1
	}
	logSize := log2i(nBytes >> 6)
	if a == Tree && c == AllReduce && logSize >= 0 && logSize < 23 {
		bw *= treeCorrection[p][logSize]
	}
	if a == NVLSTree && c == AllReduce && logSize >= 0 && logSize < 24 && m.sys.MinCompCap >= 100 && m.sys.cpuArch() == X86 {
		bw *= treeCorrection[p][logSize]
	}
	if a == Ring && p == nccl.Simple && m.sys.Nodes > 1 && c == AllReduce && nBytes/(m.channels*m.sys.Ranks) >= 64 {
		f := 1.4
		if m.sys.MinCompCap < 80 {
			f = 1.9
		}
		lat = float32(float64(lat) * f)
	}
	latCount := 1
	if a == Ring {
		latCount = pipeOps
	}
	return lat*float32(latCount) + float32(nBytes)/(1000*bw)
}

// Call is one collective call as NCCL's selection sees it.
type Call struct {
	Coll Coll
	// Bytes is NCCL's nBytes: the buffer for allreduce, broadcast and
	// reduce, all ranks' blocks (nccl-tests' size) for allgather and
	// reduce-scatter.
	Bytes int
	// PipeOps is the number of operations aggregated in one group
	// (numPipeOps); 0 is 1.
	PipeOps int
	// FP8 is whether the elements are 8-bit floats: NCCL then keeps
	// rings of more than 8 ranks for last (they lose precision).
	FP8 bool
	// ScaledOp is whether the reduction scales (ncclAvg, a
	// premultiplied sum), which PAT's reduce-scatter does not support.
	ScaledOp bool
	// NoCollNet and NoNVLS are whether the call's type and operation
	// rule out CollNet and NVLS (their support matrices).
	NoCollNet, NoNVLS bool
}

// Choice is what NCCL chooses for a call.
type Choice struct {
	Algo  Algo
	Proto Protocol
	// Channels is the channels the call runs on at most (nMaxChannels),
	// Threads a channel's threads.
	Channels, Threads int
	// Time is the predicted time in microseconds.
	Time float64
}

func (ch Choice) String() string {
	return fmt.Sprintf("%s/%s, %d channels, %.3f us", ch.Algo, ch.Proto, ch.Channels, ch.Time)
}

// ignore is NCCL_ALGO_PROTO_IGNORE: a pair the call cannot use.
const ignore = -1.0

// Costs returns the cost table NCCL fills for call before it chooses
// (updateCollCostTable): each pair's time in microseconds, -1 for a pair
// the call cannot use or that is disabled. A tuner plugin edits this
// table.
func (m *Model) Costs(call Call) [NumAlgos][NumProtocols]float64 {
	t := m.costs(call)
	var out [NumAlgos][NumProtocols]float64
	for a := range t {
		for p := range t[a] {
			out[a][p] = float64(t[a][p])
		}
	}
	return out
}

func (m *Model) costs(call Call) [NumAlgos][NumProtocols]float32 {
	var t [NumAlgos][NumProtocols]float32
	for a := range t {
		for p := range t[a] {
			t[a][p] = ignore
		}
	}
	s := m.sys
	if s.Ranks == 1 {
		t[Ring][nccl.Simple] = 0
		return t
	}
	pipeOps := max(call.PipeOps, 1)
	collNet := s.CollNet && !call.NoCollNet
	nvls := s.NVLS && !call.NoNVLS
	localRanks := (s.Ranks + s.Nodes - 1) / s.Nodes
	for a := range NumAlgos {
		switch {
		case (a == CollNetDirect || a == CollNetChain) && (!collNet || localRanks > maxDirectArity+1):
			continue
		case (a == NVLS || a == NVLSTree) && (!nvls || (call.Coll != AllReduce && localRanks > maxNVLSArity)):
			continue
		case a == NVLS && !collNet && s.Nodes > 1:
			continue
		case a == PAT && call.Coll == ReduceScatter && call.ScaledOp:
			continue
		}
		for p := range Protocol(NumProtocols) {
			t[a][p] = m.time(call.Coll, a, p, call.Bytes, pipeOps)
			if call.FP8 && a == Ring && s.Ranks > 8 {
				t[a][p] *= 1024
			}
		}
	}
	return t
}

// ErrNoAlgorithm is returned by Choose when no pair can run the call.
var ErrNoAlgorithm = errors.New("tuner: no algorithm/protocol available")

// Choose returns what NCCL picks for call (topoGetAlgoInfo): the pair of
// least predicted time, first in NCCL's order on ties, and its channels
// and threads.
func (m *Model) Choose(call Call) (Choice, error) {
	if call.Coll < 0 || call.Coll >= NumColls {
		return Choice{}, fmt.Errorf("tuner: collective %d out of range", int(call.Coll))
	}
	if call.Bytes < 0 {
		return Choice{}, fmt.Errorf("tuner: %d bytes", call.Bytes)
	}
	return m.choose(call, m.costs(call))
}

func (m *Model) choose(call Call, t [NumAlgos][NumProtocols]float32) (Choice, error) {
	best := float32(math.MaxFloat32)
	a, p := Algo(-1), Protocol(-1)
	for i := range NumAlgos {
		for j := range Protocol(NumProtocols) {
			if t[i][j] == ignore {
				continue
			}
			if t[i][j] >= 0 && t[i][j] < best {
				a, p, best = i, j, t[i][j]
			}
		}
	}
	if a < 0 {
		return Choice{}, fmt.Errorf("%w for %s of %d bytes on %d ranks", ErrNoAlgorithm, call.Coll, call.Bytes, m.sys.Ranks)
	}
	nBytes := call.Bytes
	nc := m.channels
	nt := m.maxThreads[a][p]
	thr := m.thresholds[a][p]
	switch a {
	case CollNetDirect:
		heads := max(m.sys.Graphs[CollNetDirect].Channels, 1)
		ncSwitch := 16
		flag := true
		for ncSwitch >= 1 && flag {
			for {
				flag = nBytes < nc*nt*heads*thr
				if !flag || nc <= ncSwitch {
					break
				}
				if nc == ncSwitch+ncSwitch/2 {
					thr /= 2
				}
				nc--
			}
			ncSwitch /= 2
		}
	case NVLS, NVLSTree:
		nc = m.nvlsCh
		if m.sys.Nodes > 1 && a == NVLS {
			nc = min(m.nvlsCh, m.channels)
		}
	default:
		for nBytes < nc*nt*thr && nc >= 2 {
			nc--
		}
	}
	if a != NVLS && a != NVLSTree && a != CollNetDirect {
		for nBytes < nc*nt*thr && nt%128 == 0 && nt > 0 {
			nt /= 2
		}
	}
	if p == nccl.Simple {
		if a == Ring {
			nt += warpSize
		}
		if a == Tree {
			nt += 4 * warpSize
		}
	}
	if nt/warpSize < 3 {
		nt = 3 * warpSize
	}
	if a == Tree || a == PAT {
		nt = maxNThreads
	}
	return Choice{Algo: a, Proto: p, Channels: nc, Threads: nt, Time: float64(best)}, nil
}
