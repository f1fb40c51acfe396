package nccl

// Algorithm indices of NCCL's tables (src/include/plugin/nccl_tuner.h).
const (
	AlgoTree = iota
	AlgoRing
	AlgoCollNetDirect
	AlgoCollNetChain
	AlgoNVLS
	AlgoNVLSTree
	AlgoPAT
	numAlgos
)

// Link classes of NCCL's latency table.
const (
	HwNVLink = iota
	HwPCI
	HwNet
	numHw
)

// Protocol is one of NCCL's three protocols, in NCCL's order.
type Protocol int

// Protocols.
const (
	LL Protocol = iota
	LL128
	Simple
	numProtocols
)

var protocolNames = []string{"ll", "ll128", "simple"}

func (p Protocol) String() string {
	if p >= 0 && p < numProtocols {
		return protocolNames[p]
	}
	return "protocol?"
}

// Constants are the tables of NCCL's cost model (ncclTunerConstants):
// latencies in microseconds, bandwidths in GB/s. A tuner plugin may
// replace each of them.
type Constants struct {
	// Release is the NCCL release the tables were read from.
	Release string
	// BaseLat[algo][proto] is each call's fixed latency.
	BaseLat [numAlgos][numProtocols]float64
	// HwLat[link][algo][proto] is the latency of one step over a link of
	// that class.
	HwLat [numHw][numAlgos][numProtocols]float64
	// LLMaxBw[row][scale]: LL's bus bandwidth cap; row is the generation
	// on one node, the CPU vendor (0 Intel, 1 AMD) across nodes; scale is
	// 1 node, 2 nodes, 4 or more (scaleIndex).
	LLMaxBw [4][3]float64
	// Per-channel caps [generation][scale].
	PerChMaxRingLL128Bw [4][3]float64
	PerChMaxTreeLL128Bw [4][3]float64
	PerChMaxTreeBw      [4][3]float64
	PerChMaxNVLSTreeBw  [4][3]float64
	// NVLSEfficiency[generation] scales NVLS's intra-node bandwidth.
	NVLSEfficiency [4]float64
}

// Constants230 are the defaults of NCCL 2.30.7 (ncclTunerConstantsDefaults
// and nvlsEfficiency in src/graph/tuning.cc, commit 5067397).
var Constants230 = Constants{
	Release: "2.30.7",
	BaseLat: [numAlgos][numProtocols]float64{
		AlgoTree: {6.8, 14.0, 8.4}, AlgoRing: {6.6, 14.0, 8.4},
		AlgoPAT: {8.0, 8.0, 8.0},
	},
	HwLat: [numHw][numAlgos][numProtocols]float64{
		HwNVLink: {
			AlgoTree: {0.6, 1.25, 4.0}, AlgoRing: {0.6, 1.9, 3.4},
			AlgoCollNetDirect: {0, 0, 3.7}, AlgoCollNetChain: {0, 0, 2.8},
			AlgoNVLS: {0, 0, 25}, AlgoNVLSTree: {0, 0, 25},
			AlgoPAT: {0, 0, 4.0},
		},
		HwPCI: {
			AlgoTree: {1.0, 1.9, 4.0}, AlgoRing: {1.0, 2.5, 5.7},
			AlgoCollNetDirect: {0, 0, 3.7}, AlgoCollNetChain: {0, 0, 2.8},
			AlgoPAT: {0, 0, 4.0},
		},
		HwNet: {
			AlgoTree: {5.0, 8.5, 14}, AlgoRing: {2.7, 4.0, 14.0},
			AlgoCollNetDirect: {0, 0, 31}, AlgoCollNetChain: {0, 0, 30},
			AlgoNVLS: {0, 0, 18}, AlgoNVLSTree: {0, 0, 20.9},
			AlgoPAT: {0, 0, 14},
		},
	},
	LLMaxBw: [4][3]float64{
		{39.0, 39.0, 20.4},
		{87.7, 22.5, 19.0},
		{141.0, 45.0, 35.0},
		{2 * 141.0, 2 * 45.0, 2 * 35.0},
	},
	PerChMaxRingLL128Bw: [4][3]float64{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}},
	PerChMaxTreeLL128Bw: [4][3]float64{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
	PerChMaxTreeBw:      [4][3]float64{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
	PerChMaxNVLSTreeBw:  [4][3]float64{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}},
	NVLSEfficiency:      [4]float64{0, 0, 0.85, 0.74},
}
