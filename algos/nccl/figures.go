package nccl

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
)

// FigureKind says what unit a hardware figure is in.
type FigureKind uint8

// Kinds of figure.
const (
	// Bandwidth is in bytes per second; 0 or +Inf means no cap.
	Bandwidth FigureKind = iota
	// Duration is in seconds.
	Duration
)

func (k FigureKind) String() string {
	if k == Duration {
		return "duration"
	}
	return "bandwidth"
}

// Figure is one figure of a GPU's hardware that NCCL's algorithms read
// from an [algos.Machine]: a per-protocol bandwidth cap that NCCL's own
// model carries as a measured constant, or the per-step cost of a
// protocol beyond the link's latency. A scenario sets one by its Name in
// its [network.nccl] table; a Machine carries it in Figures, in SI units.
type Figure struct {
	Name string
	Kind FigureKind
	// Doc says what the figure is and where its default comes from.
	Doc string
}

// The names of the figures.
const (
	FigLLBandwidth      = "ll_bandwidth"
	FigLL128Channel     = "ll128_channel_bandwidth"
	FigTreeLL128Channel = "tree_ll128_channel_bandwidth"
	FigTreeChannel      = "tree_channel_bandwidth"
	FigNVLSTreeChannel  = "nvls_tree_channel_bandwidth"
	FigLLStep           = "ll_step"
	FigLL128Step        = "ll128_step"
	FigSimpleStep       = "simple_step"
	FigLLNetStep        = "ll_net_step"
	FigLL128NetStep     = "ll128_net_step"
	FigSimpleNetStep    = "simple_net_step"
	FigNetOverhead      = "net_overhead"
	FigLLBase           = "ll_base"
	FigLL128Base        = "ll128_base"
	FigSimpleBase       = "simple_base"
)

var figures = []Figure{
	{FigLLBandwidth, Bandwidth, "LL's bus bandwidth per GPU, all channels together: what a GPU's threads sustain polling LL's flags (llMaxBws: by generation on one node; by CPU vendor across nodes, for 2 and for 4 or more nodes)"},
	{FigLL128Channel, Bandwidth, "LL128's bus bandwidth per channel of a ring (perChMaxRingLL128Bws, by generation)"},
	{FigTreeLL128Channel, Bandwidth, "LL128's bus bandwidth per channel of a tree (perChMaxTreeLL128Bws, by generation and node count)"},
	{FigTreeChannel, Bandwidth, "a tree allreduce's bus bandwidth per channel, any protocol (perChMaxTreeBws, by generation and node count)"},
	{FigNVLSTreeChannel, Bandwidth, "NVLS-tree's bus bandwidth per channel (perChMaxNVLSTreeBws, by generation and node count)"},
	{FigLLStep, Duration, "what LL's step on an intra-node hop holds its channel for beyond the link's latency (hwLatencies NVLINK less a ring's LL step, 0.6 us, the link itself: 0 for rings and trees); setting it sets it for every algorithm"},
	{FigLL128Step, Duration, "what LL128's step on an intra-node hop holds its channel for beyond the link's latency (hwLatencies NVLINK less 0.6 us: ring 1.3 us, tree 0.65 us)"},
	{FigSimpleStep, Duration, "what Simple's step on an intra-node hop holds its channel for beyond the link's latency and its flag's: the fence (hwLatencies NVLINK less 0.6 us less the flag's 0.6 us: ring 2.2 us, tree 2.8 us, PAT 2.8 us)"},
	{FigNetOverhead, Duration, "what posting a step to the network holds a channel for, three times that under Simple: NCCL's netOverhead (getNetOverhead: 1 us on Intel CPUs, 2 us on AMD), which paces every step of a ring that crosses nodes"},
	{FigLLNetStep, Duration, "LL's latency per step on an inter-node hop beyond the link's (a ring's LL step, 2.7 us, the presets' inter-node hop) and the proxy's posting (hwLatencies NET less those: ring 0, tree 1.3 us with Intel CPUs); setting it sets it for every algorithm"},
	{FigLL128NetStep, Duration, "LL128's latency per step on an inter-node hop beyond the link's and the proxy's posting (hwLatencies NET less 2.7 us less net_overhead: ring 0.3 us, tree 4.8 us with Intel CPUs)"},
	{FigSimpleNetStep, Duration, "Simple's latency per step on an inter-node hop beyond the link's and the proxy's posting, three net_overheads (hwLatencies NET less 2.7 us less 3 net_overhead: 8.3 us for rings and trees with Intel CPUs): the receiving proxy's flush and flag; across nodes the GPU does not wait for its data to land, data and flag leave together"},
	{FigLLBase, Duration, "a call's fixed cost under LL, before its first step: the kernel's launch and set-up (baseLatencies: ring 6.6 us, tree 6.8 us, PAT 8 us, in-network 0); setting it sets it for every algorithm"},
	{FigLL128Base, Duration, "a call's fixed cost under LL128 (baseLatencies: ring and tree 14 us)"},
	{FigSimpleBase, Duration, "a call's fixed cost under Simple (baseLatencies: ring and tree 8.4 us, PAT 8 us, in-network 0)"},
}

// Figures lists the hardware figures NCCL's algorithms read, by name.
func Figures() []Figure { return append([]Figure(nil), figures...) }

// FigureByName returns the figure called name.
func FigureByName(name string) (Figure, error) {
	for _, f := range figures {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(figures))
	for i, f := range figures {
		names[i] = f.Name
	}
	sort.Strings(names)
	return Figure{}, fmt.Errorf("unknown NCCL figure %q (want one of %s)", name, strings.Join(names, ", "))
}

// Generation is a GPU generation, as NCCL's tables index them by compute
// capability.
type Generation int

// Generations, in NCCL's order.
const (
	Volta     Generation = iota // compute capability below 8.0 (V100)
	Ampere                      // 8.x (A100)
	Hopper                      // 9.x (H100, H200)
	Blackwell                   // 10.x and above (B200, GB200)
)

var generationNames = []string{"volta", "ampere", "hopper", "blackwell"}

func (g Generation) String() string {
	if g >= 0 && int(g) < len(generationNames) {
		return generationNames[g]
	}
	return fmt.Sprintf("generation(%d)", int(g))
}

// ParseGeneration parses a generation's name: "volta", "ampere", "hopper"
// or "blackwell".
func ParseGeneration(s string) (Generation, error) {
	for i, n := range generationNames {
		if strings.EqualFold(s, n) {
			return Generation(i), nil
		}
	}
	return 0, fmt.Errorf("unknown GPU generation %q (want %s)", s, strings.Join(generationNames, ", "))
}

// CPUVendor is the vendor of a host's CPUs, which NCCL's LL figures across
// nodes depend on.
type CPUVendor int

// CPU vendors.
const (
	Intel CPUVendor = iota
	AMD
	ARM
)

var cpuNames = []string{"intel", "amd", "arm"}

func (v CPUVendor) String() string {
	if v >= 0 && int(v) < len(cpuNames) {
		return cpuNames[v]
	}
	return fmt.Sprintf("cpu(%d)", int(v))
}

// ParseCPU parses a CPU vendor's name: "intel", "amd" or "arm" ("" is
// intel, NCCL's default row).
func ParseCPU(s string) (CPUVendor, error) {
	if s == "" {
		return Intel, nil
	}
	for i, n := range cpuNames {
		if strings.EqualFold(s, n) {
			return CPUVendor(i), nil
		}
	}
	return 0, fmt.Errorf("unknown CPU vendor %q (want %s)", s, strings.Join(cpuNames, ", "))
}

// hardware is what the algorithms read of a Machine for one call: the
// figures resolved for its GPU, CPU and number of nodes, with the
// Machine's overrides applied. Zero caps mean none; a machine without a
// GPU has no caps and no step costs.
type hardware struct {
	llBus, ll128Ch, treeLL128Ch, treeCh, nvlsTreeCh float64 // B/s
	// step is, by algorithm and protocol, what a step inside a node holds
	// its channel for beyond the link's latency [0], and a step's latency
	// across nodes beyond the link's and the proxy's [1].
	step [numAlgos][numProtocols][2]time.Duration
	// base is a call's fixed cost by algorithm (NCCL's index) and
	// protocol.
	base [numAlgos][numProtocols]time.Duration
	// netOverhead is what posting a step to the network holds a channel
	// for (three times that under Simple).
	netOverhead time.Duration
	// generation is the GPUs' (-1: no GPU described).
	generation Generation
}

// setStep sets step k of proto for every algorithm.
func (h *hardware) setStep(proto Protocol, k int, d time.Duration) {
	for a := range numAlgos {
		h.step[a][proto][k] = d
	}
}

// simpleTimes is how many times the proxy's overhead a step costs: NCCL
// counts it three times under Simple.
func simpleTimes(p Protocol) int {
	if p == Simple {
		return 3
	}
	return 1
}

// netHold is what posting a step to the network holds a channel for under
// proto.
func (h *hardware) netHold(proto Protocol) time.Duration {
	return h.netOverhead * time.Duration(simpleTimes(proto))
}

// resolveHardware resolves m for a world of p ranks spread over nodes
// nodes.
func resolveHardware(m *algos.Machine, nodes, p int) (hardware, error) {
	h := hardware{generation: -1}
	if m == nil {
		return h, nil
	}
	if m.GPU != "" {
		g, err := ParseGeneration(m.GPU)
		if err != nil {
			return h, err
		}
		cpu, err := ParseCPU(m.CPU)
		if err != nil {
			return h, err
		}
		c := Constants230
		h.generation = g
		h.setCaps(&c, g, cpu, nodes)
		h.setBase(&c, nodes, p)
		// The proxy's time to post a step to the network (getNetOverhead
		// in tuning.cc).
		h.netOverhead = microseconds(1.0)
		if cpu == AMD {
			h.netOverhead = microseconds(2.0)
		}
		h.setSteps(&c)
	}
	for name, v := range m.Figures {
		if err := h.setFigure(name, v); err != nil {
			return h, err
		}
	}
	return h, nil
}

// microseconds is x microseconds, NCCL's unit of latency, to the
// nanosecond.
func microseconds(x float64) time.Duration { return time.Duration(math.Round(x * 1e3)) }

// setCaps sets the bandwidth caps of NCCL's tables for GPUs of
// generation g on nodes nodes: LL's by generation on one node and by CPU
// vendor across nodes, the channels' by generation.
func (h *hardware) setCaps(c *Constants, g Generation, cpu CPUVendor, nodes int) {
	i2 := scaleIndex(nodes)
	row := int(g)
	if nodes > 1 {
		row = 0
		if cpu == AMD {
			row = 1
		}
	}
	gb := 1e9
	h.llBus = c.LLMaxBw[row][i2] * gb
	h.ll128Ch = c.PerChMaxRingLL128Bw[g][i2] * gb
	h.treeLL128Ch = c.PerChMaxTreeLL128Bw[g][i2] * gb
	h.treeCh = c.PerChMaxTreeBw[g][i2] * gb
	h.nvlsTreeCh = c.PerChMaxNVLSTreeBw[g][i2] * gb
}

// setBase sets a call's fixed cost by algorithm and protocol: NCCL's base
// latency, and for the in-network algorithms the latency of their whole
// table entry on ranks ranks over nodes nodes.
func (h *hardware) setBase(c *Constants, nodes, ranks int) {
	for a := range numAlgos {
		for p := range numProtocols {
			h.base[a][p] = microseconds(c.BaseLat[a][p])
		}
	}
	// NCCL's table gives the in-network algorithms' latency as a
	// whole (their base latency is 0): charged as their fixed cost,
	// all but what the simulation plays out itself (NVLS tree's
	// tree between nodes).
	nvls := c.HwLat[HwNVLink][AlgoNVLS][Simple]
	if nodes > 1 {
		nvls += c.HwLat[HwNet][AlgoNVLS][Simple]
	}
	h.base[AlgoNVLS][Simple] = microseconds(nvls)
	h.base[AlgoNVLSTree][Simple] = microseconds(c.HwLat[HwNVLink][AlgoNVLSTree][Simple])
	ppn := float64(ranks) / float64(max(nodes, 1))
	h.base[AlgoCollNetDirect][Simple] = microseconds(2*(min(1, ppn-1)*c.HwLat[HwNVLink][AlgoCollNetDirect][Simple]+(ppn-1)*0.4) +
		c.HwLat[HwNet][AlgoCollNetDirect][Simple])
}

// setSteps sets what a step costs by algorithm and protocol, inside a
// node and across nodes, from NCCL's hardware latencies; h.netOverhead
// must be set.
func (h *hardware) setSteps(c *Constants) {
	for a := range numAlgos {
		for p := range numProtocols {
			// Inside a node: what a step costs beyond the link's
			// latency, which a ring's LL step is (its flags ride in
			// its lines), and beyond Simple's flag, a message of its
			// own. Algorithms whose table has no entry for a
			// protocol take the ring's.
			intra, net := c.HwLat[HwNVLink][a][p], c.HwLat[HwNet][a][p]
			if intra == 0 || net == 0 {
				intra, net = c.HwLat[HwNVLink][AlgoRing][p], c.HwLat[HwNet][AlgoRing][p]
			}
			ll := c.HwLat[HwNVLink][AlgoRing][LL]
			extra := intra - ll
			if Protocol(p) == Simple {
				extra -= ll
			}
			h.step[a][p][0] = microseconds(max(extra, 0))
			// Across nodes: what a step's latency is beyond the
			// link's (a ring's LL step, the presets' inter-node hop)
			// and the proxy's posting of it, which holds the channel.
			lag := net - c.HwLat[HwNet][AlgoRing][LL] - h.netOverhead.Seconds()*1e6*float64(simpleTimes(Protocol(p)))
			h.step[a][p][1] = microseconds(max(lag, 0))
		}
	}
}

// setFigure sets the NCCL figure name (see Figures) to v, in SI units,
// over what the GPU's generation gave.
func (h *hardware) setFigure(name string, v float64) error {
	f, err := FigureByName(name)
	if err != nil {
		return err
	}
	if math.IsNaN(v) || v < 0 {
		return fmt.Errorf("NCCL figure %s = %g: want a value of at least 0", name, v)
	}
	d := time.Duration(math.Round(v * 1e9))
	switch f.Name {
	case FigLLBandwidth:
		h.llBus = v
	case FigLL128Channel:
		h.ll128Ch = v
	case FigTreeLL128Channel:
		h.treeLL128Ch = v
	case FigTreeChannel:
		h.treeCh = v
	case FigNVLSTreeChannel:
		h.nvlsTreeCh = v
	case FigLLStep:
		h.setStep(LL, 0, d)
	case FigLL128Step:
		h.setStep(LL128, 0, d)
	case FigSimpleStep:
		h.setStep(Simple, 0, d)
	case FigLLNetStep:
		h.setStep(LL, 1, d)
	case FigLL128NetStep:
		h.setStep(LL128, 1, d)
	case FigSimpleNetStep:
		h.setStep(Simple, 1, d)
	case FigNetOverhead:
		h.netOverhead = d
	case FigLLBase, FigLL128Base, FigSimpleBase:
		p := map[string]Protocol{FigLLBase: LL, FigLL128Base: LL128, FigSimpleBase: Simple}[f.Name]
		for a := range numAlgos {
			h.base[a][p] = d
		}
	}
	return nil
}

// scaleIndex is NCCL's index2: 0 for one node, 1 for two, 2 for more.
func scaleIndex(nodes int) int {
	if nodes <= 2 {
		return max(nodes-1, 0)
	}
	return 2
}
