package scenario

import (
	"fmt"
	"strings"
)

// Preset is a machine that a scenario's [network] table may name (key
// "preset"): the keys of a network on the flow model with topology =
// "gpu_cluster", and the machine keys (gpu, cpu), each as a user would
// write it and with its source. A preset is a starting point: every key
// the table itself sets overrides the preset's, and keys of the preset
// that the model does not read (its topology's keys, with model =
// "alpha-beta") are left unread without complaint.
//
//	[network]
//	preset = "dgx-h100"
//	nodes = 16                       # the user's keys override the preset's
//	nic_bandwidth = "200Gbit/s"
//
// docs/gpu-presets.md tables every preset's figures with their sources,
// and explains the latencies chosen where vendors publish none.
type Preset struct {
	Name string
	// Summary names the machine and what it is made of.
	Summary string
	// Keys are the preset's keys, in the order a file would list them.
	Keys []PresetKey
}

// PresetKey is one key of a preset.
type PresetKey struct {
	Key string
	// Value is the value as TOML decodes it: a string or an int64.
	Value any
	// Source says where the figure comes from: a vendor's document, or
	// why it was chosen where none publishes it.
	Source string
}

// Value returns the value of key in p and whether p sets it.
func (p Preset) Value(key string) (any, bool) {
	for _, k := range p.Keys {
		if k.Key == key {
			return k.Value, true
		}
	}
	return nil, false
}

// Headline gives the preset's headline figures in one line, for
// listings: "8 GPUs a node (hopper), NVLink 450GB/s a GPU each way, NVLS,
// 8 NICs of 400Gbit/s, SHARP, intel CPUs".
func (p Preset) Headline() string {
	get := func(k string) string {
		v, _ := p.Value(k)
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	s := fmt.Sprintf("%s GPUs a node (%s)", get("gpus_per_node"), get("gpu"))
	if d := get("nvlink_domain"); d != "" {
		s += fmt.Sprintf(" in NVLink domains of %s", d)
	}
	s += fmt.Sprintf(", NVLink %s a GPU each way", get("nvlink_bandwidth"))
	if get("nvls_bandwidth") != "" {
		s += ", NVLS"
	}
	s += fmt.Sprintf(", PCIe %s, %s NICs of %s", get("pcie_bandwidth"), get("nics_per_node"), get("nic_bandwidth"))
	if get("sharp_bandwidth") != "" {
		s += ", SHARP"
	}
	return s + ", " + get("cpu") + " CPUs"
}

// Sources of the figures, named once. Where a vendor publishes no figure
// (the latency of a hop, the rate of an in-switch reduction) the source
// says what was chosen and why.
const (
	srcLatNVLink         = "chosen: NCCL 2.30's hwLatencies put a GPU-to-GPU step on NVLink at 0.6 us (NVLINK, Ring, LL); a hop crosses the GPU's link into the NVSwitch and out of it, 2 x 300 ns"
	srcLatPCIe           = "chosen: NCCL's hwLatencies put a GPU-to-GPU step over PCIe at 1.0 us (PCI, Ring, LL), two PCIe crossings, 2 x 500 ns"
	srcLatNIC            = "chosen: NCCL's hwLatencies put a step between nodes at 2.7 us (NET, Ring, LL); a hop on one rail crosses PCIe, the NIC's port into its leaf and the leaf's port out, and PCIe again: 2 x 500 ns + 2 x 850 ns"
	srcLatSpine          = "chosen: a message that changes rail or leaf crosses a spine, one more switch and two cables, 2 x 200 ns; NCCL's model has no such term, as its rings stay on one rail"
	srcNVLS              = "chosen: the NVSwitch has NVLink SHARP (multicast and in-switch reduction; NVIDIA, \"Upgrading Multi-GPU Interconnectivity with the Third-Generation NVIDIA NVSwitch\", developer.nvidia.com/blog/upgrading-multi-gpu-interconnectivity-with-the-third-generation-nvidia-nvswitch) but no reduction rate is published: the GPU's NVLink rate, so the switch reduces at line rate"
	srcSHARP             = "chosen: NVIDIA Quantum InfiniBand switches reduce in the network (SHARP, NCCL's CollNet; NVIDIA Scalable Hierarchical Aggregation and Reduction Protocol documentation, docs.nvidia.com/networking/display/sharpv3) but publish no reduction rate: the port's rate, line rate"
	srcRail              = "DGX SuperPOD reference architecture, compute fabric: rail-optimised, NIC j of every system on the leaves of rail j, leaves joined by spines, non-blocking (docs.nvidia.com/dgx-superpod)"
	srcQM9700            = "NVIDIA Quantum-2 QM9700 switch: 64 ports of 400 Gb/s NDR InfiniBand (nvidia.com/en-us/networking/infiniband/qm9700)"
	srcQM8700            = "NVIDIA Quantum QM8700 switch: 40 ports of 200 Gb/s HDR InfiniBand (nvidia.com/en-us/networking/infiniband/qm8700)"
	srcSB7800            = "Mellanox SB7800 Switch-IB 2: 36 ports of 100 Gb/s EDR InfiniBand (Mellanox SB7800 product brief)"
	srcCloudNet          = "chosen: the provider does not publish its fabric; a non-blocking rail-optimised tree, one leaf a rail for all hosts"
	srcPCIe5             = "PCIe Gen5 x16, 64 GB/s each way (128 GB/s both ways in the H100 datasheet, nvidia.com/en-us/data-center/h100)"
	srcPCIe4             = "PCIe Gen4 x16, 32 GB/s each way (64 GB/s both ways in the A100 datasheet, nvidia.com/en-us/data-center/a100)"
	srcPCIe3             = "PCIe Gen3 x16, 16 GB/s each way (32 GB/s both ways in the Tesla V100 datasheet, nvidia.com/en-us/data-center/v100)"
	srcCX7PCIe           = "the ConnectX-7's host interface, PCIe Gen5 x16: 64 GB/s each way (NVIDIA ConnectX-7 datasheet)"
	srcH100NVL           = "NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100): H100 SXM, NVLink 900 GB/s, both ways: 450 GB/s each way"
	srcA100NVL           = "NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): A100 SXM, NVLink 600 GB/s, both ways: 300 GB/s each way"
	srcB200NVL           = "NVIDIA DGX B200 datasheet (nvidia.com/en-us/data-center/dgx-b200): 8 Blackwell GPUs, fifth-generation NVLink 1.8 TB/s per GPU, both ways: 900 GB/s each way"
	srcGB200NVL          = "NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72): 72 Blackwell GPUs in one NVLink domain, 1.8 TB/s per GPU both ways (130 TB/s in all): 900 GB/s each way"
	srcChannelsHopper    = "NCCL's channels on nodes of 8 H100 across nodes: 16 (NVIDIA/nccl#1453, an H100 cluster's INFO lines 'Channel 05/16 : 0 7 6 13 ...'); inside one node NCCL builds more (24 by package algos/nccl/tuner's model of its graph search)"
	srcChannelsAmpere    = "NCCL's channels on 8 A100 with NVSwitch: an INFO line '24 coll channels' (NVIDIA/nccl#1781); not published by NVIDIA, a typical figure"
	srcChannelsVolta     = "assumed: 6 NVLinks a V100, 6 graph channels doubled; NCCL publishes no figure"
	srcChannelsBlackwell = "assumed as for Hopper (32 of NCCL's 64 MAXCHANNELS); NCCL publishes no figure"
	srcFLOPSH100         = "NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100): H100 SXM, BF16 Tensor Core 1,979 teraFLOPS with sparsity: 989 TFLOP/s dense, the peak a training step's GEMMs aim at"
	srcFLOPSA100         = "NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): BF16 Tensor Core 312 teraFLOPS dense (624 with sparsity)"
	srcFLOPSV100         = "NVIDIA Tesla V100 datasheet (nvidia.com/en-us/data-center/v100): V100 SXM2/3, 125 teraFLOPS of Tensor Core (FP16) performance"
	srcFLOPSB200         = "NVIDIA HGX B200 (nvidia.com/en-us/data-center/hgx): FP16/BF16 Tensor Core 36 petaFLOPS with sparsity for 8 GPUs: 2.25 PFLOP/s dense a GPU"
	srcFLOPSGB200        = "NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72): FP16/BF16 Tensor Core 360 petaFLOPS with sparsity for 72 GPUs: 2.5 PFLOP/s dense a GPU"
	srcBasePOD           = "NVIDIA DGX BasePOD reference architecture, Core Components (docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html)"
)

// The model and topology every preset sets.
func clusterKeys() []PresetKey {
	return []PresetKey{
		{"model", "flow", "the flow model, on which the GPU cluster is a topology"},
		{"topology", "gpu_cluster", "hosts of GPUs in NVLink domains, NICs on a fabric"},
		{"send_slots", int64(-1), "unlimited: a GPU's channels and a NIC's queue pairs carry many messages at once, which share the links max-min"},
		{"recv_slots", int64(-1), "unlimited, as send_slots"},
	}
}

// Latency keys every preset shares: NCCL's hwLatencies are the anchor.
func latencyKeys() []PresetKey {
	return []PresetKey{
		{"nvlink_latency", "300ns", srcLatNVLink},
		{"pcie_latency", "500ns", srcLatPCIe},
		{"nic_latency", "850ns", srcLatNIC},
		{"inter", "rail", srcRail},
		{"inter_link_latency", "200ns", srcLatSpine},
	}
}

func preset(name, summary string, keys ...PresetKey) Preset {
	all := append(clusterKeys(), keys...)
	return Preset{Name: name, Summary: summary, Keys: append(all, latencyKeys()...)}
}

// presets are the machines a scenario may name, in the order of the
// listing.
var presets = []Preset{
	preset("dgx-h100", "NVIDIA DGX H100: 8 H100 SXM5 on four third-generation NVSwitches (NVLink SHARP), 8 ConnectX-7 400 Gb/s NDR InfiniBand, two Intel Xeon Platinum 8480C",
		PresetKey{"gpus_per_node", int64(8), srcBasePOD + ": eight NVIDIA Hopper GPUs, four NVSwitch chips"},
		PresetKey{"nvlink_bandwidth", "450GB/s", srcH100NVL},
		PresetKey{"nvls_bandwidth", "450GB/s", srcNVLS},
		PresetKey{"pcie_bandwidth", "64GB/s", srcPCIe5},
		PresetKey{"nics_per_node", int64(8), srcBasePOD + ": four OSFP ports serving eight single-port ConnectX-7 for the compute fabric"},
		PresetKey{"nic_bandwidth", "400Gbit/s", srcBasePOD + ": ConnectX-7, up to 400 Gb/s InfiniBand"},
		PresetKey{"inter_radix", int64(64), srcQM9700},
		PresetKey{"sharp_bandwidth", "400Gbit/s", srcSHARP},
		PresetKey{"channels", int64(16), srcChannelsHopper},
		PresetKey{"gpu", "hopper", "H100: compute capability 9.0"},
		PresetKey{"flops", "989TFLOP/s", srcFLOPSH100},
		PresetKey{"cpu", "intel", srcBasePOD + ": dual Intel Xeon Platinum 8480C"},
	),
	preset("dgx-a100", "NVIDIA DGX A100: 8 A100 SXM4 on six second-generation NVSwitches, 8 ConnectX-6 200 Gb/s HDR InfiniBand, two AMD EPYC 7742",
		PresetKey{"gpus_per_node", int64(8), "NVIDIA DGX A100 datasheet (nvidia.com/en-us/data-center/dgx-a100): 8 A100 GPUs, 6 NVSwitches"},
		PresetKey{"nvlink_bandwidth", "300GB/s", srcA100NVL},
		PresetKey{"pcie_bandwidth", "32GB/s", srcPCIe4},
		PresetKey{"nics_per_node", int64(8), "NVIDIA DGX A100 datasheet: 8 single-port ConnectX-6 VPI for the compute fabric"},
		PresetKey{"nic_bandwidth", "200Gbit/s", "NVIDIA DGX A100 datasheet: ConnectX-6 VPI, 200 Gb/s HDR InfiniBand"},
		PresetKey{"inter_radix", int64(40), srcQM8700},
		PresetKey{"sharp_bandwidth", "200Gbit/s", srcSHARP},
		PresetKey{"channels", int64(24), srcChannelsAmpere},
		PresetKey{"gpu", "ampere", "A100: compute capability 8.0"},
		PresetKey{"flops", "312TFLOP/s", srcFLOPSA100},
		PresetKey{"cpu", "amd", "NVIDIA DGX A100 datasheet: dual AMD EPYC 7742"},
	),
	preset("dgx-2", "NVIDIA DGX-2: 16 Tesla V100 SXM3 on twelve first-generation NVSwitches, 8 100 Gb/s EDR InfiniBand NICs (one per two GPUs), two Intel Xeon Platinum 8168",
		PresetKey{"gpus_per_node", int64(16), "NVIDIA DGX-2 datasheet (nvidia.com/en-us/data-center/dgx-2): 16 Tesla V100, 12 NVSwitches"},
		PresetKey{"nvlink_bandwidth", "150GB/s", "NVIDIA Tesla V100 datasheet (nvidia.com/en-us/data-center/v100): V100 SXM2/3, NVLink 300 GB/s both ways: 150 GB/s each way"},
		PresetKey{"pcie_bandwidth", "16GB/s", srcPCIe3},
		PresetKey{"nics_per_node", int64(8), "NVIDIA DGX-2 datasheet: 8 x 100 Gb/s InfiniBand/100 GbE, each shared by two GPUs behind a PCIe switch"},
		PresetKey{"nic_bandwidth", "100Gbit/s", "NVIDIA DGX-2 datasheet: 100 Gb/s EDR InfiniBand"},
		PresetKey{"inter_radix", int64(36), srcSB7800},
		PresetKey{"channels", int64(12), srcChannelsVolta},
		PresetKey{"gpu", "volta", "V100: compute capability 7.0"},
		PresetKey{"flops", "125TFLOP/s", srcFLOPSV100},
		PresetKey{"cpu", "intel", "NVIDIA DGX-2 datasheet: dual Intel Xeon Platinum 8168"},
	),
	preset("hgx-b200", "NVIDIA HGX B200 8-GPU, as in DGX B200: 8 B200 on two NVLink 5 switch chips (NVLink SHARP), 8 ConnectX-7 400 Gb/s, two Intel Xeon Platinum 8570",
		PresetKey{"gpus_per_node", int64(8), srcBasePOD + ": DGX B200, built with eight NVIDIA B200"},
		PresetKey{"nvlink_bandwidth", "900GB/s", srcB200NVL},
		PresetKey{"nvls_bandwidth", "900GB/s", srcNVLS},
		PresetKey{"pcie_bandwidth", "64GB/s", srcCX7PCIe},
		PresetKey{"nics_per_node", int64(8), srcBasePOD + ": DGX B200, 4 OSFP ports serving 8 single-port ConnectX-7 VPI for the compute fabric"},
		PresetKey{"nic_bandwidth", "400Gbit/s", srcBasePOD + ": DGX B200, up to 400 Gb/s InfiniBand/Ethernet"},
		PresetKey{"inter_radix", int64(64), srcQM9700},
		PresetKey{"sharp_bandwidth", "400Gbit/s", srcSHARP},
		PresetKey{"channels", int64(32), srcChannelsBlackwell},
		PresetKey{"gpu", "blackwell", "B200: compute capability 10.0"},
		PresetKey{"flops", "2.25PFLOP/s", srcFLOPSB200},
		PresetKey{"cpu", "intel", srcBasePOD + ": DGX B200, dual 5th generation Intel Xeon Scalable (Platinum 8570 in the DGX B200 datasheet)"},
	),
	preset("gb200-nvl72", "NVIDIA GB200 NVL72: 18 compute trays of 2 GB200 superchips (4 B200, 2 Grace) in one NVLink domain of 72 GPUs (NVLink switch trays with NVLink SHARP), a ConnectX-7 400 Gb/s per GPU",
		PresetKey{"gpus_per_node", int64(4), "NVIDIA GB200 NVL72: 36 GB200 superchips (a Grace and two B200 each) in 18 compute trays: 4 GPUs a tray"},
		PresetKey{"nvlink_domain", int64(72), srcGB200NVL},
		PresetKey{"nvlink_bandwidth", "900GB/s", srcGB200NVL},
		PresetKey{"nvls_bandwidth", "900GB/s", srcNVLS},
		PresetKey{"pcie_bandwidth", "64GB/s", srcCX7PCIe},
		PresetKey{"nics_per_node", int64(4), "DGX SuperPOD with DGX GB200 reference architecture, components (docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-gb200): four ConnectX-7 for the compute fabric a tray, one per GPU"},
		PresetKey{"nic_bandwidth", "400Gbit/s", "DGX SuperPOD with DGX GB200 reference architecture: ConnectX-7, 400 Gb/s NDR InfiniBand"},
		PresetKey{"inter_radix", int64(64), srcQM9700},
		PresetKey{"sharp_bandwidth", "400Gbit/s", srcSHARP},
		PresetKey{"channels", int64(32), srcChannelsBlackwell},
		PresetKey{"gpu", "blackwell", "B200: compute capability 10.0"},
		PresetKey{"flops", "2.5PFLOP/s", srcFLOPSGB200},
		PresetKey{"cpu", "arm", "NVIDIA Grace, Arm Neoverse V2 cores (nvidia.com/en-us/data-center/grace-cpu)"},
	),
	preset("aws-p5.48xlarge", "AWS EC2 p5.48xlarge: 8 H100 SXM on NVSwitch (NVLink SHARP), 3200 Gbps of EFA as 32 x 100 Gbps, modelled as 8 NICs of 400 Gbit/s, 3rd generation AMD EPYC",
		PresetKey{"gpus_per_node", int64(8), "Amazon EC2 P5 instances (aws.amazon.com/ec2/instance-types/p5): p5.48xlarge, 8 NVIDIA H100"},
		PresetKey{"nvlink_bandwidth", "450GB/s", "Amazon EC2 P5 instances: 900 GB/s NVSwitch GPU interconnect, both ways: 450 GB/s each way"},
		PresetKey{"nvls_bandwidth", "450GB/s", srcNVLS + "; the HGX H100 board of P5 has the third-generation NVSwitch"},
		PresetKey{"pcie_bandwidth", "64GB/s", srcPCIe5},
		PresetKey{"nics_per_node", int64(8), "Amazon EC2 P5 instances: 3200 Gbps of EFA networking, 32 EFA network cards; modelled as one NIC a GPU of four EFA devices, which NCCL's aws-ofi-nccl plugin stripes across"},
		PresetKey{"nic_bandwidth", "400Gbit/s", "Amazon EC2 P5 instances: 3200 Gbps over 8 GPUs, 400 Gbit/s a GPU"},
		PresetKey{"channels", int64(16), srcChannelsHopper},
		PresetKey{"gpu", "hopper", "H100: compute capability 9.0"},
		PresetKey{"flops", "989TFLOP/s", srcFLOPSH100},
		PresetKey{"cpu", "amd", "Amazon EC2 P5 instances: 3rd Gen AMD EPYC processors (AMD EPYC 7R13)"},
		PresetKey{"inter_link_bandwidth", "400Gbit/s", srcCloudNet},
	),
	preset("azure-nd-a100-v4", "Azure ND96asr A100 v4: 8 A100 40GB SXM4 on NVSwitch, a 200 Gb/s HDR InfiniBand link per GPU, AMD EPYC 7V12 (Rome)",
		PresetKey{"gpus_per_node", int64(8), "Microsoft Azure, ND A100 v4 series (learn.microsoft.com/azure/virtual-machines/nda100-v4-series): eight NVIDIA A100 40GB"},
		PresetKey{"nvlink_bandwidth", "300GB/s", srcA100NVL + "; ND A100 v4: NVLink 3.0 within the VM"},
		PresetKey{"pcie_bandwidth", "32GB/s", srcPCIe4},
		PresetKey{"nics_per_node", int64(8), "ND A100 v4 series: each GPU has its own dedicated, topology-agnostic HDR InfiniBand connection"},
		PresetKey{"nic_bandwidth", "200Gbit/s", "ND A100 v4 series: 200 Gb/s HDR InfiniBand per GPU, 1.6 Tb/s per VM"},
		PresetKey{"channels", int64(24), srcChannelsAmpere},
		PresetKey{"gpu", "ampere", "A100: compute capability 8.0"},
		PresetKey{"flops", "312TFLOP/s", srcFLOPSA100},
		PresetKey{"cpu", "amd", "ND A100 v4 series: 96 second-generation AMD EPYC 7V12 (Rome) cores"},
		PresetKey{"inter_link_bandwidth", "200Gbit/s", srcCloudNet},
	),
	preset("azure-nd-h100-v5", "Azure ND96isr H100 v5: 8 H100 SXM on NVSwitch (NVLink SHARP), a 400 Gb/s NDR InfiniBand link per GPU, 4th generation Intel Xeon (Sapphire Rapids)",
		PresetKey{"gpus_per_node", int64(8), "Microsoft Azure, ND H100 v5 series (learn.microsoft.com/azure/virtual-machines/nd-h100-v5-series): eight NVIDIA H100"},
		PresetKey{"nvlink_bandwidth", "450GB/s", srcH100NVL + "; ND H100 v5: NVLink 4.0, 3.6 TB/s bisection within the VM"},
		PresetKey{"nvls_bandwidth", "450GB/s", srcNVLS + "; the HGX H100 board has the third-generation NVSwitch"},
		PresetKey{"pcie_bandwidth", "64GB/s", "ND H100 v5 series: PCIe Gen5 host-to-GPU, 64 GB/s per GPU"},
		PresetKey{"nics_per_node", int64(8), "ND H100 v5 series: one dedicated InfiniBand link per GPU"},
		PresetKey{"nic_bandwidth", "400Gbit/s", "ND H100 v5 series: 400 Gb/s NDR InfiniBand per GPU, 3.2 Tb/s per VM"},
		PresetKey{"channels", int64(16), srcChannelsHopper},
		PresetKey{"gpu", "hopper", "H100: compute capability 9.0"},
		PresetKey{"flops", "989TFLOP/s", srcFLOPSH100},
		PresetKey{"cpu", "intel", "ND H100 v5 series: 4th generation Intel Xeon Scalable (Sapphire Rapids)"},
		PresetKey{"inter_link_bandwidth", "400Gbit/s", srcCloudNet},
	),
	preset("gcp-a3-highgpu-8g", "Google Cloud A3 High, a3-highgpu-8g: 8 H100 80GB on NVSwitch (NVLink SHARP), 4 GPU NICs of 200 Gbps (GPUDirect-TCPX), each shared by two GPUs, 4th generation Intel Xeon (Sapphire Rapids)",
		PresetKey{"gpus_per_node", int64(8), "Google Cloud, GPU machine types (cloud.google.com/compute/docs/gpus): a3-highgpu-8g, 8 NVIDIA H100 80GB"},
		PresetKey{"nvlink_bandwidth", "450GB/s", srcH100NVL},
		PresetKey{"nvls_bandwidth", "450GB/s", srcNVLS + "; the HGX H100 board has the third-generation NVSwitch"},
		PresetKey{"pcie_bandwidth", "64GB/s", srcPCIe5},
		PresetKey{"nics_per_node", int64(4), "Google Cloud, Networking and GPU machines (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth): A3 High has four NICs for GPU traffic (GPUDirect-TCPX) besides the host's, one per two GPUs; 1,000 Gbps in all with the host's"},
		PresetKey{"nic_bandwidth", "200Gbit/s", "Networking and GPU machines: each A3 High NIC 200 Gbps"},
		PresetKey{"channels", int64(16), srcChannelsHopper},
		PresetKey{"gpu", "hopper", "H100: compute capability 9.0"},
		PresetKey{"flops", "989TFLOP/s", srcFLOPSH100},
		PresetKey{"cpu", "intel", "Google Cloud, accelerator-optimized machine family (cloud.google.com/compute/docs/accelerator-optimized-machines): A3, 4th generation Intel Xeon Scalable (Sapphire Rapids)"},
		PresetKey{"inter_link_bandwidth", "200Gbit/s", srcCloudNet},
	),
}

// Presets lists the machines a scenario's [network] may name with its
// preset key.
func Presets() []Preset {
	out := make([]Preset, len(presets))
	for i, p := range presets {
		out[i] = p
		out[i].Keys = append([]PresetKey(nil), p.Keys...)
	}
	return out
}

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return Preset{}, fmt.Errorf("unknown preset %q (want one of %s)", name, strings.Join(names, ", "))
}

// PresetKeys describes the preset key of [network], any model, for
// listings and help.
func PresetKeys() []KeyInfo {
	return []KeyInfo{{"preset", false, `a machine whose keys the table starts from, every key of the table overriding the preset's: "dgx-h100" (see the presets)`}}
}

// preset expands the preset the [network] table t names, if any: each of
// its keys that t does not set is set, as if the file had it on the
// preset key's line, and is not reported if the model does not read it.
// It returns the preset's name ("" if none) and whether it was good.
func (c *checker) preset(t *table) (string, bool) {
	name, ok := t.str("preset", false, "", `a preset's name such as "dgx-h100"`)
	if !ok || name == "" {
		return "", ok
	}
	p, err := LookupPreset(name)
	if err != nil {
		t.errorf(joinPath(t.path, "preset"), "%v", err)
		return "", false
	}
	line := lineOf(c.lines, joinPath(t.path, "preset"))
	m := make(map[string]any, len(t.m)+len(p.Keys))
	for k, v := range t.m {
		m[k] = v
	}
	t.m = m
	if t.preset == nil {
		t.preset = map[string]bool{}
	}
	for _, k := range p.Keys {
		if _, set := t.m[k.Key]; set {
			continue
		}
		t.m[k.Key] = k.Value
		t.preset[k.Key] = true
		c.lines[joinPath(t.path, k.Key)] = line
	}
	return name, true
}
