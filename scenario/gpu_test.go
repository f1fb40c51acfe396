package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl"
	"github.com/nexar-go/nexar-go/sim"
)

func TestGPUClusterNetwork(t *testing.T) {
	for _, c := range []struct {
		name, net string
		want      sim.GPUCluster
	}{
		{"rail", `model = "flow"
topology = "gpu_cluster"
gpus_per_node = 8
nodes = 4
nvlink_bandwidth = "450GB/s"
nvlink_latency = "300ns"
nvls_bandwidth = "450GB/s"
pcie_bandwidth = "64GB/s"
pcie_latency = "500ns"
nic_bandwidth = "400Gbit/s"
nic_latency = "850ns"
inter_radix = 64
inter_link_latency = "200ns"
inter_routing = "dmodk"
sharp_bandwidth = "50GB/s"`, sim.GPUCluster{Nodes: 4, GPUsPerNode: 8,
			NVLink: sim.LinkParams{Bandwidth: 450e9, Latency: 300 * sim.Nanosecond}, NVLS: 450e9,
			PCIe: sim.LinkParams{Bandwidth: 64e9, Latency: 500 * sim.Nanosecond},
			NIC:  sim.LinkParams{Bandwidth: 50e9, Latency: 850 * sim.Nanosecond},
			Fabric: sim.RailFatTree{Rails: 8, Radix: 64, Oversubscription: 1, NIC: sim.LinkParams{Bandwidth: 50e9, Latency: 850 * sim.Nanosecond},
				Link: sim.LinkParams{Latency: 200 * sim.Nanosecond}, Routing: sim.RouteDestMod},
			SHARP: 50e9}},
		{"domains, shared NICs, a fat tree", `model = "flow"
topology = "gpu_cluster"
gpus_per_node = 4
nvlink_domain = 8
nvlink_bandwidth = "900GB/s"
nics_per_node = 2
inter = "fat_tree"
inter_radix = 8
inter_link_bandwidth = "25GB/s"`, sim.GPUCluster{GPUsPerNode: 4, DomainGPUs: 8, NVLink: sim.LinkParams{Bandwidth: 900e9}, NICs: 2,
			Fabric: sim.FatTree{Tiers: 2, Radix: 8, Oversubscription: 1, Link: sim.LinkParams{Bandwidth: 25e9}}}},
	} {
		s, err := Parse("g.toml", []byte(withNetwork(c.net, "")))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := sim.Flow{Topology: c.want, ReduceBandwidth: inf}
		if !reflect.DeepEqual(s.Network.Sim, want) {
			t.Errorf("%s: model\n%#v\nwant\n%#v", c.name, s.Network.Sim, want)
		}
		for _, w := range []int{2, 8} {
			if err := s.Network.Check(w); err != nil {
				t.Errorf("%s: world %d: %v", c.name, w, err)
			}
		}
		// On a topology the machine is described but its nodes are the
		// simulator's to find.
		if m := s.Network.MachineFor(8); m == nil || m.Node != nil || m.GPU != "" {
			t.Errorf("%s: machine %+v, want one with no GPU and no nodes", c.name, m)
		}
	}
}

// presetTOML writes the keys of p as a file's [network] table would.
func presetTOML(p Preset) string {
	var b strings.Builder
	for _, k := range p.Keys {
		switch v := k.Value.(type) {
		case string:
			fmt.Fprintf(&b, "%s = %q\n", k.Key, v)
		default:
			fmt.Fprintf(&b, "%s = %v\n", k.Key, v)
		}
	}
	return b.String()
}

func TestPresets(t *testing.T) {
	names := map[string]bool{}
	for _, p := range Presets() {
		if names[p.Name] {
			t.Errorf("preset %s listed twice", p.Name)
		}
		names[p.Name] = true
		// Every figure has its source, and no key is given twice.
		seen := map[string]bool{}
		for _, k := range p.Keys {
			if k.Source == "" || seen[k.Key] {
				t.Errorf("%s: key %s has no source or is given twice", p.Name, k.Key)
			}
			seen[k.Key] = true
		}
		// The preset is the keys a user writes: naming it and writing its
		// keys out give the same network, and every key is one the
		// network reads (an unread key would be refused as unknown).
		named, err := Parse("p.toml", []byte(withNetwork(fmt.Sprintf("preset = %q", p.Name), "")))
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		written, err := Parse("p.toml", []byte(withNetwork(presetTOML(p), "")))
		if err != nil {
			t.Fatalf("%s written out: %v", p.Name, err)
		}
		if !reflect.DeepEqual(named.Network.Sim, written.Network.Sim) || !reflect.DeepEqual(named.Network.Machine, written.Network.Machine) {
			t.Errorf("%s: named %#v, written out %#v", p.Name, named.Network.Sim, written.Network.Sim)
		}
		n := named.Network
		if n.Preset != p.Name || n.Model != "flow" {
			t.Errorf("%s: network preset %q, model %q", p.Name, n.Preset, n.Model)
		}
		gpu, _ := p.Value("gpu")
		cpu, _ := p.Value("cpu")
		if m := n.MachineFor(8); m == nil || m.GPU != gpu || m.CPU != cpu || m.Node != nil {
			t.Errorf("%s: machine %+v, want GPU %v, CPU %v", p.Name, m, gpu, cpu)
		}
		// It builds for a world of one GPU, one host and 64 hosts.
		g, _ := p.Value("gpus_per_node")
		for _, w := range []int{1, int(g.(int64)), 64 * int(g.(int64))} {
			if err := n.Check(w); err != nil {
				t.Errorf("%s: world %d: %v", p.Name, w, err)
			}
		}
		if !strings.Contains(p.Headline(), fmt.Sprint(g)+" GPUs a node") {
			t.Errorf("%s: headline %q", p.Name, p.Headline())
		}
	}
	for _, want := range []string{"dgx-h100", "dgx-a100", "dgx-2", "hgx-b200", "gb200-nvl72", "aws-p5.48xlarge", "azure-nd-a100-v4", "azure-nd-h100-v5", "gcp-a3-highgpu-8g"} {
		if !names[want] {
			t.Errorf("no preset %s", want)
		}
	}
}

func TestPresetFigures(t *testing.T) {
	// Spot checks against the vendors' figures (docs/gpu-presets.md).
	for _, c := range []struct {
		preset string
		check  func(sim.GPUCluster) bool
	}{
		// H100: 900 GB/s NVLink both ways; 8 x 400 Gb/s NDR; NVLS
		{"dgx-h100", func(g sim.GPUCluster) bool {
			return g.GPUsPerNode == 8 && g.NVLink.Bandwidth == 450e9 && g.NIC.Bandwidth == 50e9 && g.NICs == 8 && g.NVLS > 0
		}},
		// V100: 300 GB/s NVLink both ways; 16 GPUs, 8 x 100 Gb/s EDR, no NVLS
		{"dgx-2", func(g sim.GPUCluster) bool {
			return g.GPUsPerNode == 16 && g.NVLink.Bandwidth == 150e9 && g.NIC.Bandwidth == 12.5e9 && g.NICs == 8 && g.NVLS == 0
		}},
		// 72 GPUs in one NVLink domain of 18 trays of 4, 1.8 TB/s a GPU
		{"gb200-nvl72", func(g sim.GPUCluster) bool {
			return g.GPUsPerNode == 4 && g.DomainGPUs == 72 && g.NVLink.Bandwidth == 900e9 && g.NICs == 4
		}},
		// a3-highgpu-8g: 4 GPU NICs of 200 Gbps for 8 GPUs
		{"gcp-a3-highgpu-8g", func(g sim.GPUCluster) bool { return g.NICs == 4 && g.NIC.Bandwidth == 25e9 && g.SHARP == 0 }},
		// p5.48xlarge: 3200 Gbps over 8 GPUs
		{"aws-p5.48xlarge", func(g sim.GPUCluster) bool { return g.NICs == 8 && g.NIC.Bandwidth == 50e9 }},
	} {
		s, err := Parse("p.toml", []byte(withNetwork(fmt.Sprintf("preset = %q", c.preset), "")))
		if err != nil {
			t.Fatal(err)
		}
		if g := s.Network.Sim.(sim.Flow).Topology.(sim.GPUCluster); !c.check(g) {
			t.Errorf("%s: %+v", c.preset, g)
		}
	}
}

func TestPresetOverridden(t *testing.T) {
	// The file's keys override the preset's, the machine keys too.
	s, err := Parse("o.toml", []byte(withNetwork(`preset = "dgx-h100"
nodes = 2
nic_bandwidth = "200Gbit/s"
cpu = "amd"
send_slots = -1`, "")))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Network.Sim.(sim.Flow)
	g := f.Topology.(sim.GPUCluster)
	if g.Nodes != 2 || g.NIC.Bandwidth != 25e9 || g.Fabric.(sim.RailFatTree).NIC.Bandwidth != 25e9 || g.NVLink.Bandwidth != 450e9 || f.SendSlots != -1 {
		t.Errorf("overridden preset: %+v", f)
	}
	if m := s.Network.Machine; m.CPU != "amd" || m.GPU != "hopper" {
		t.Errorf("machine %+v, want hopper, amd", m)
	}
	if !strings.HasPrefix(s.Network.Summary, "flow: preset dgx-h100, nodes 2, nic_bandwidth 200Gbit/s") {
		t.Errorf("summary %q", s.Network.Summary)
	}
	// A model without a topology reads only the preset's machine keys.
	ab, err := Parse("o.toml", []byte(withNetwork(`preset = "gb200-nvl72"
model = "alpha-beta"
latency = "2.7us"
bandwidth = "50GB/s"
ranks_per_node = 4`, "")))
	if err != nil {
		t.Fatal(err)
	}
	if ab.Network.Sim != (sim.AlphaBeta{Latency: 2700 * sim.Nanosecond, Bandwidth: 50e9, ReduceBandwidth: inf}) {
		t.Errorf("alpha-beta with a preset: %#v", ab.Network.Sim)
	}
	m := ab.Network.MachineFor(10)
	if m.GPU != "blackwell" || m.CPU != "arm" || !slices.Equal(m.Node, []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}) {
		t.Errorf("machine %+v", m)
	}
}

func TestMachineKeys(t *testing.T) {
	s, err := Parse("m.toml", []byte(withNetwork(`model = "loggp"
latency = "2us"
bandwidth = "10GB/s"
gpu = "Ampere"
cpu = "intel"
ranks_per_node = 3
[network.nccl]
ll128_channel_bandwidth = "30GB/s"
ll_bandwidth = "inf"
simple_step = "2us"
ll128_net_step = "1.5us"`, "")))
	if err != nil {
		t.Fatal(err)
	}
	want := &algos.Machine{GPU: "ampere", CPU: "intel", Node: []int{0, 0, 0, 1, 1}, Figures: map[string]float64{
		nccl.FigLL128Channel: 30e9, nccl.FigLLBandwidth: inf, nccl.FigSimpleStep: 2e-6, nccl.FigLL128NetStep: 1.5e-6}}
	if got := s.Network.MachineFor(5); !reflect.DeepEqual(got, want) {
		t.Errorf("machine %+v, want %+v", got, want)
	}
	// Nothing described, no topology: no machine.
	plain, err := Parse("m.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if m := plain.Network.MachineFor(8); m != nil {
		t.Errorf("machine %+v of a network that describes none", m)
	}
	// Every figure of package nccl is a key of [network.nccl].
	keys := NCCLKeys()
	for i, f := range nccl.Figures() {
		if keys[i].Name != f.Name {
			t.Errorf("key %d is %s, want %s", i, keys[i].Name, f.Name)
		}
	}
}

func TestBadGPUNetworks(t *testing.T) {
	for _, c := range []struct {
		net  string
		want []string
	}{
		{`preset = "dgx-h200"
nodes = 2`, []string{`g.toml:5: network.preset: unknown preset "dgx-h200" (want one of dgx-h100, dgx-a100,`}},
		{`preset = 3`, []string{`g.toml:5: network.preset: want a preset's name`}},
		{`preset = "dgx-h100"
gpu = "pascal"
cpu = "sparc"`, []string{`g.toml:6: network.gpu: unknown GPU generation "pascal"`, `g.toml:7: network.cpu: unknown CPU vendor "sparc"`}},
		{`preset = "dgx-h100"
ranks_per_node = 8`, []string{`g.toml:6: network.ranks_per_node: ranks_per_node is for models without a topology`}},
		{`preset = "dgx-h100"
[network.nccl]
ll_stepp = "1us"
simple_step = "fast"
ll_bandwidth = 3`, []string{`g.toml:7: network.nccl.ll_stepp: unknown key in [network.nccl]; did you mean "ll_step"?`,
			`g.toml:8: network.nccl.simple_step: "fast" is not a duration`, `g.toml:9: network.nccl.ll_bandwidth: want a bandwidth string`}},
		{`preset = "dgx-h100"
nccl = 3`, []string{`g.toml:6: network.nccl: want a table of NCCL's hardware figures`}},
		// the preset's value, wrong with the file's, is on the preset's line
		{`preset = "gb200-nvl72"
gpus_per_node = 5`, []string{`g.toml:5: network.nvlink_domain: an NVLink domain of 72 GPUs is not a whole number of hosts of 5 GPUs`}},
		{`preset = "dgx-h100"
nics_per_node = 9
nvlink_bandwidth = "fast"`, []string{`g.toml:6: network.nics_per_node: 9 NICs per node for 8 GPUs per node`, `g.toml:7: network.nvlink_bandwidth: "fast" is not a bandwidth`}},
		{`model = "flow"
topology = "gpu_cluster"
gpus_per_node = 8`, []string{`network.nvlink_bandwidth: missing required key`, `network.nic_bandwidth: missing required key`}},
		{`preset = "dgx-h100"
inter = "hierarchical"`, []string{`g.toml:6: network.inter: unknown inter-node topology "hierarchical" (want one of rail, crossbar,`}},
		{`preset = "dgx-h100"
inter_radix = 9`, []string{`g.toml:6: network.inter_radix: a leaf of radix 9 cannot be split into host ports and uplinks in the ratio 1:1`}},
		{`preset = "dgx-h100"
inter_radixx = 9`, []string{`g.toml:6: network.inter_radixx: unknown key in [network] of model flow; did you mean "inter_radix"?`}},
	} {
		_, err := Parse("g.toml", []byte(withNetwork(c.net, "")))
		var errs Errors
		if !errors.As(err, &errs) {
			t.Errorf("%s: error %v, want Errors", c.net, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%v\ndoes not say %q", c.net, err, w)
			}
		}
	}
}
