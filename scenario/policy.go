package scenario

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl"
	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/sim"
)

// The policy key, at the top level for every sweep or in a [[sweep]] for
// its own, names how "auto" selects: by its tuning table alone ("table",
// the default), or by a model of the hardware first ("nccl": what NCCL
// would pick on the network's GPU cluster), the table deciding the calls
// the policy leaves (collectives NCCL does not choose for):
//
//	[[sweep]]
//	collective = "allreduce"
//	algorithms = ["auto", "nccl_ring_simple", "nccl_tree_ll"]
//	policy = "nccl"         # auto runs what NCCL 2.30.7 would
//
// The nccl policy needs a network that describes GPUs: a GPU preset or
// topology = "gpu_cluster" (its NVLink domains are NCCL's nodes, its
// NVLink, PCIe and NIC bandwidths what NCCL's graph search reads, its
// nvls_bandwidth NVLink SHARP), or another model with gpu and
// ranks_per_node, whose link bandwidth is then both NVLink's and the
// network's.

// PolicyInfo describes a policy a scenario's policy key may name.
type PolicyInfo struct {
	Name, Summary string
}

var policies = []PolicyInfo{
	{"table", "the tuning table alone (the default): its crossovers, then its rules"},
	{tuner.PolicyName, "NCCL 2.30.7's own choice (package algos/nccl/tuner): the nccl_<algorithm>_<protocol> NCCL's cost model picks on the network's GPU cluster, with NCCL's channels, for the collectives NCCL chooses for (broadcast, reduce, allgather, reduce_scatter, allreduce) that have an \"auto\"; other collectives by the table"},
}

// Policies lists the policies a scenario's policy key may name.
func Policies() []PolicyInfo { return append([]PolicyInfo(nil), policies...) }

// PolicyKeys describes the policy key, at the top level and in a
// [[sweep]], for listings and help.
func PolicyKeys() []KeyInfo {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = fmt.Sprintf("%q", p.Name)
	}
	return []KeyInfo{{"policy", false, `how "auto" selects: ` + strings.Join(names, " or ") + ` (default "table"; at the top level for every sweep, in a [[sweep]] for its own)`}}
}

// policyKey reads the policy key of t: "" for none or "table".
func (c *checker) policyKey(t *table) (string, bool) {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = p.Name
	}
	name, ok := t.str("policy", false, "", `a policy's name: "nccl"`)
	if !ok {
		return "", false
	}
	switch name {
	case "", "table":
		return "", true
	case tuner.PolicyName:
		return name, true
	}
	t.errorf(joinPath(t.path, "policy"), "unknown policy %q (want one of %s)", name, strings.Join(names, ", "))
	return "", false
}

// buildPolicy builds the policy called name for the scenario's network,
// once, and reports why it cannot at key.
func (c *checker) buildPolicy(name, key string) bool {
	if p, ok := c.policies[name]; ok {
		return p != nil
	}
	if !c.networkOK || c.net == nil {
		return false // the network's own errors say why
	}
	if c.policies == nil {
		c.policies = map[string]algos.Policy{}
	}
	cl, err := c.net.NCCLCluster()
	var p *tuner.Policy
	if err == nil {
		p, err = tuner.NewPolicy(cl)
	}
	if err != nil {
		c.errorf(key, "policy %q: %v", name, err)
		c.policies[name] = nil
		return false
	}
	c.policies[name] = p
	return true
}

// sweepPolicy reads the sweep's own policy key and gives its tuning
// table the sweep's policy (its own, else the file's).
func (c *checker) sweepPolicy(t *table, sw *Sweep) {
	name, ok := c.policyKey(t)
	if !ok {
		return
	}
	_, own := t.m["policy"]
	if !own {
		name = c.defaultPolicy
	}
	sw.Policy = name
	if name == "" {
		return
	}
	if own {
		if !c.buildPolicy(name, joinPath(t.path, "policy")) {
			return
		}
		hasAuto := false
		for _, a := range sw.Algorithms {
			hasAuto = hasAuto || a.Name == "auto"
		}
		if !hasAuto && sw.Collective != nil {
			t.errorf(joinPath(t.path, "policy"), "policy %q selects for \"auto\", which this sweep does not run (add \"auto\" to algorithms)", name)
			return
		}
	} else if !c.defaultPolicyOK {
		return
	}
	sw.Tuning = sw.Tuning.WithPolicy(c.policies[name])
}

// errNoGPU says the network describes no GPUs to NCCL's tuner.
var errNoGPU = errors.New(`the network describes no GPUs: set gpu (and cpu) in [network], or use a GPU preset`)

// NCCLCluster returns the GPU cluster the network describes to NCCL's
// tuner: on topology = "gpu_cluster" its NVLink domains (NCCL's nodes),
// NVLink (through NVSwitches; NVLink SHARP with nvls_bandwidth), PCIe and
// NIC bandwidths; on other models ranks_per_node GPUs a node (all ranks
// on one without it) whose link bandwidth is both their NVLink's and
// their NIC's, one NIC a GPU. The GPU generation and the CPU vendor are
// the machine keys'.
func (n *Network) NCCLCluster() (tuner.Cluster, error) {
	m := n.Machine
	if m == nil || m.GPU == "" {
		return tuner.Cluster{}, errNoGPU
	}
	gen, err := nccl.ParseGeneration(m.GPU)
	if err != nil {
		return tuner.Cluster{}, err
	}
	arch, vendor, err := tuner.CPUOf(m.CPU)
	if err != nil {
		return tuner.Cluster{}, err
	}
	c := tuner.Cluster{CompCap: tuner.CompCap(gen), CPUArch: arch, CPUVendor: vendor, Channels: m.Channels, NVSwitch: true,
		Algo: m.NCCLAlgo, Proto: m.NCCLProto}
	switch topo := n.Topology.(type) {
	case sim.GPUCluster:
		dom := topo.DomainGPUs
		if dom == 0 {
			dom = topo.GPUsPerNode
		}
		c.GPUsPerNode = dom
		c.NVLink, c.NVLS, c.PCIe = topo.NVLink.Bandwidth, topo.NVLS > 0, topo.PCIe.Bandwidth
		if topo.NICs > 0 {
			c.NICs = topo.NICs * (dom / max(topo.GPUsPerNode, 1))
		}
		c.NIC = topo.NIC.Bandwidth
		if !(c.NIC > 0) {
			return tuner.Cluster{}, fmt.Errorf("the gpu_cluster gives no nic_bandwidth, which NCCL's model reads between nodes")
		}
	case nil:
		if !(n.LinkBandwidth > 0) {
			return tuner.Cluster{}, fmt.Errorf("model %q has no single link bandwidth for NCCL's model to read", n.Model)
		}
		c.GPUsPerNode = n.RanksPerNode
		if c.GPUsPerNode == 0 {
			c.GPUsPerNode = MaxWorld
		}
		c.NVLink, c.NIC = n.LinkBandwidth, n.LinkBandwidth
	default:
		return tuner.Cluster{}, fmt.Errorf("NCCL's model reads a GPU cluster (topology = \"gpu_cluster\" or a GPU preset), not a %T", topo)
	}
	return c, nil
}
