package synth

import "github.com/nexar-go/nexar-go/sim"

// The topologies of the study (scenarios/synth-trees): a two-tier fat
// tree whose leaves are 2:1 oversubscribed (4 hosts and 2 uplinks of
// 100 Gbit/s each), and a DGX-like network of nodes of 4 GPUs on an
// NVSwitch (150 GB/s each) with one 25 GB/s NIC per GPU on a crossbar.
var (
	FatTree2to1 = sim.FatTree{Tiers: 2, Radix: 6, Oversubscription: 2,
		Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}
	DGXLike = sim.Hierarchical{DevicesPerNode: 4, Intra: sim.LinkParams{Bandwidth: 150e9, Latency: 500 * sim.Nanosecond},
		HostBandwidth: 64e9, HostLatency: 500 * sim.Nanosecond,
		Inter: sim.Crossbar{Bandwidth: 25e9, Latency: 2 * sim.Microsecond}}
)
