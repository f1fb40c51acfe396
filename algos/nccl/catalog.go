package nccl

import (
	"context"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
)

// DefaultChannels is what the "channels" parameter defaults to: 0, the
// machine's channel count (algos.Machine.Channels), or 1 where it has
// none.
const DefaultChannels = 0

// protocols are NCCL's protocols in the order of its tables.
var protocols = []Protocol{LL, LL128, Simple}

func register(coll, name, summary string, run func(ctx context.Context, l algos.Link, c algos.Call) error) {
	algos.MustRegisterAlgorithm(coll, &algos.Algorithm{
		Name: name, Summary: summary, Family: "nccl",
		InNetwork: strings.Contains(name, "nvls") || strings.Contains(name, "collnet"),
		Params:    map[string]int{"channels": DefaultChannels},
		Run:       run,
	})
}

func init() {
	type ringAlgo func(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error
	rings := []struct {
		coll, what string
		run        ringAlgo
	}{
		{"allreduce", "reduce-scatter then allgather around each channel's ring", RingAllreduce},
		{"allgather", "blocks around each channel's ring", RingAllgather},
		{"reduce_scatter", "partial sums around each channel's ring", RingReduceScatter},
		{"broadcast", "the root's chunks pipelined along each channel's ring", RingBroadcast},
		{"reduce", "partial sums pipelined along each channel's ring to the root", RingReduce},
	}
	for _, r := range rings {
		for _, proto := range protocols {
			register(r.coll, "nccl_ring_"+proto.String(),
				"NCCL's ring over "+proto.String()+": "+r.what+", in NCCL's chunks and slices",
				func(ctx context.Context, l algos.Link, c algos.Call) error { return r.run(ctx, l, c, proto) })
		}
	}
}

func init() {
	trees := []struct {
		coll, what string
		run        func(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error
	}{
		{"allreduce", "NCCL's double binary tree over nodes, chains inside them; chunks reduced up and broadcast down at once, half the channels on each tree", TreeAllreduce},
		{"broadcast", "down NCCL's double binary tree rooted at the root (NCCL's TreeDown pattern)", TreeBroadcast},
		{"reduce", "up NCCL's double binary tree rooted at the root (NCCL's TreeUp pattern)", TreeReduce},
	}
	for _, t := range trees {
		for _, proto := range protocols {
			register(t.coll, "nccl_tree_"+proto.String(), t.what+", over "+proto.String(),
				func(ctx context.Context, l algos.Link, c algos.Call) error { return t.run(ctx, l, c, proto) })
		}
	}
}

func init() {
	register("allgather", "nccl_pat", "NCCL's PAT over Simple: Bruck's allgather with its dimensions reversed (far first), blocks aggregated per step up to a buffer; lg p steps for small blocks",
		PatAllgather)
	register("reduce_scatter", "nccl_pat", "NCCL's PAT over Simple: Bruck's reduce-scatter, near and large first, partial sums aggregated per step up to a buffer; lg p steps for small blocks",
		PatReduceScatter)
}

func init() {
	register("allreduce", "nccl_nvls", "NCCL's NVLS: the NVSwitch reduces (multimem.ld_reduce) and multicasts (multimem.st) inside each NVLink domain, SHARP across domains; Simple",
		NVLSAllreduce)
	register("allreduce", "nccl_nvls_tree", "NCCL's NVLS tree: NVLS inside each NVLink domain, the double binary tree across domains; Simple",
		NVLSTreeAllreduce)
	register("allreduce", "nccl_collnet_direct", "NCCL's CollNet direct: a direct reduce-scatter and allgather over NVLink inside each node, InfiniBand SHARP across nodes; Simple",
		CollNetDirectAllreduce)
	register("allgather", "nccl_nvls", "NCCL's NVLS allgather inside one NVLink domain: each rank's block multicast by the NVSwitch; Simple",
		NVLSAllgather)
	register("reduce_scatter", "nccl_nvls", "NCCL's NVLS reduce-scatter inside one NVLink domain: each rank's block reduced by the NVSwitch as it loads it; Simple",
		NVLSReduceScatter)
}
