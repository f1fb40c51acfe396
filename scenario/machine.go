package scenario

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl"
	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
)

// The machine keys of [network], any model, and its [network.nccl]
// table describe the hardware to algorithms that adapt to it (NCCL's, in
// package algos/nccl): the GPUs' generation, the hosts' CPU vendor, the
// figures that override the defaults for them, and, for models without a
// topology, which ranks share a node. They become the Network's
// algos.Machine, which every run gets (sim.Config.Machine):
//
//	[network]
//	model = "alpha-beta"
//	latency = "2.7us"
//	bandwidth = "50GB/s"
//	gpu = "hopper"          # volta, ampere, hopper, blackwell
//	cpu = "intel"           # intel, amd, arm
//	channels = 32           # NCCL's channels on this machine
//	flops = "989TFLOP/s"    # one GPU's compute rate, for [workload]
//	ranks_per_node = 8      # rank r on node r / 8
//
//	[network.nccl]          # nccl.Figures() by name
//	ll128_channel_bandwidth = "30GB/s"
//	simple_step = "2us"
var machineKeys = []KeyInfo{
	{"gpu", false, `the GPUs' generation, for algorithms that model a GPU's costs (NCCL's): "volta", "ampere", "hopper" or "blackwell" (default: none, no such cost)`},
	{"cpu", false, `the hosts' CPU vendor, which some of NCCL's figures depend on across nodes: "intel", "amd" or "arm" (default: unknown, read as intel)`},
	{"channels", false, `the channel count NCCL builds on this machine (what its graph search finds: nccl-tests' INFO line "N coll channels"), which NCCL's algorithms use where a sweep sets no "channels" parameter (default: 1)`},
	{"flops", false, `the rate of one GPU's compute for training steps ([workload]) given in FLOPs, such as "989TFLOP/s" (H100 SXM's dense BF16 peak; [workload] mfu takes a share of it); the presets give their GPU's peak`},
	{"nccl_algo", false, `NCCL_ALGO as the runs set it, such as "Tree", "^NVLS" or "allreduce:ring;allgather:ring" (NCCL's syntax): what policy = "nccl" may choose (default: unset, every algorithm)`},
	{"nccl_proto", false, `NCCL_PROTO as the runs set it, such as "Simple" or "^LL128" (NCCL's syntax): what policy = "nccl" may choose (default: unset)`},
	{"ranks_per_node", false, `for models without a topology (alpha-beta, loggp, realnet): rank r is on node r / ranks_per_node, for algorithms that build their rings and trees over nodes (default: one node); on the flow model a rank's node is its device's NVLink domain`},
}

// MachineKeys describes the keys of [network] that describe the machine
// to algorithms, for listings and help.
func MachineKeys() []KeyInfo { return machineKeys }

// NCCLKeys describes the keys of the optional [network.nccl] table: the
// hardware figures of package algos/nccl (nccl.Figures), by name.
func NCCLKeys() []KeyInfo {
	var keys []KeyInfo
	for _, f := range nccl.Figures() {
		example := `"2us"`
		if f.Kind == nccl.Bandwidth {
			example = `"20GB/s" ("inf": no cap)`
		}
		keys = append(keys, KeyInfo{f.Name, false, fmt.Sprintf("%s, a %s: %s", f.Doc, f.Kind, example)})
	}
	return keys
}

// machine reads the machine keys of the [network] table t and its
// [network.nccl] table. topology says whether the model is built on a
// topology, which then gives each rank its node. It returns the Machine
// (nil when the model has no topology and the file describes nothing),
// ranks_per_node (0 if absent), and whether every key was good.
func (c *checker) machine(t *table, topology bool) (*algos.Machine, int, bool) {
	m := &algos.Machine{}
	described := false
	good := true
	if s, ok := t.str("gpu", false, "", `a GPU generation such as "hopper"`); !ok {
		good = false
	} else if s != "" {
		g, err := nccl.ParseGeneration(s)
		if err != nil {
			t.errorf(joinPath(t.path, "gpu"), "%v", err)
			good = false
		}
		m.GPU, described = g.String(), true
	}
	if s, ok := t.str("cpu", false, "", `a CPU vendor such as "intel"`); !ok {
		good = false
	} else if s != "" {
		v, err := nccl.ParseCPU(s)
		if err != nil {
			t.errorf(joinPath(t.path, "cpu"), "%v", err)
			good = false
		}
		m.CPU, described = v.String(), true
	}
	if ch, ok := t.integer("channels", 0, 1, nccl.MaxChannels); !ok {
		good = false
	} else if _, set := t.m["channels"]; set {
		m.Channels, described = int(ch), true
	}
	if fs, ok := t.str("flops", false, "", `a FLOP rate such as "989TFLOP/s"`); !ok {
		good = false
	} else if fs != "" {
		f, err := ParseFLOPS(fs)
		if err != nil {
			t.errorf(joinPath(t.path, "flops"), "%v", err)
			good = false
		}
		m.FLOPS, described = f, true
	}
	if !c.ncclEnv(t, m, &described) {
		good = false
	}
	rpn, ok := t.integer("ranks_per_node", 0, 1, MaxWorld)
	good = good && ok
	if _, set := t.m["ranks_per_node"]; set && ok {
		if topology {
			t.errorf(joinPath(t.path, "ranks_per_node"), "ranks_per_node is for models without a topology; on the flow model a rank's node is its device's NVLink domain (topology = \"gpu_cluster\" or \"hierarchical\")")
			good = false
		}
		described = true
	}
	if nt := t.subtable("nccl", false, "[network.nccl]", "a table of NCCL's hardware figures by name: [network.nccl] with ll128_channel_bandwidth = \"30GB/s\""); nt != nil {
		m.Figures = map[string]float64{}
		for _, f := range nccl.Figures() {
			if _, set := nt.m[f.Name]; !set {
				nt.known = append(nt.known, f.Name)
				continue
			}
			switch f.Kind {
			case nccl.Bandwidth:
				bw, ok := nt.bandwidth(f.Name, false, 0)
				if ok {
					m.Figures[f.Name] = bw
				}
				good = good && ok
			default:
				d, ok := nt.duration(f.Name, false)
				if ok {
					m.Figures[f.Name] = d.Seconds()
				}
				good = good && ok
			}
		}
		nt.finish()
		good = good && len(nt.m) == len(m.Figures)
		described = true
	}
	if !described && !topology {
		return nil, 0, good
	}
	return m, int(rpn), good
}

// MachineFor returns the machine a run of world ranks on the network
// describes to its algorithms (sim.Config.Machine): the GPU, CPU and
// figures of the file, and, with ranks_per_node, each rank's node; on a
// model built on a topology Node is nil, and the simulator takes each
// rank's node from the NVLink domain of its device. nil when there is
// nothing to describe. The Machine must not be modified.
func (n *Network) MachineFor(world int) *algos.Machine {
	if n == nil || n.Machine == nil {
		return nil
	}
	if n.RanksPerNode == 0 {
		return n.Machine
	}
	m := *n.Machine
	m.Node = make([]int, world)
	for r := range m.Node {
		m.Node[r] = r / n.RanksPerNode
	}
	return &m
}

// ncclEnv reads nccl_algo and nccl_proto into m, checked as NCCL reads
// them, and reports whether they were good.
func (c *checker) ncclEnv(t *table, m *algos.Machine, described *bool) bool {
	algo, okA := t.str("nccl_algo", false, "", `NCCL_ALGO's value, such as "Tree"`)
	proto, okP := t.str("nccl_proto", false, "", `NCCL_PROTO's value, such as "Simple"`)
	if !okA || !okP {
		return false
	}
	if err := tuner.CheckEnv(algo, ""); err != nil {
		t.errorf(joinPath(t.path, "nccl_algo"), "%v", err)
		return false
	}
	if err := tuner.CheckEnv("", proto); err != nil {
		t.errorf(joinPath(t.path, "nccl_proto"), "%v", err)
		return false
	}
	m.NCCLAlgo, m.NCCLProto = algo, proto
	if algo != "" || proto != "" {
		*described = true
	}
	return true
}
