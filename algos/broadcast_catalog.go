package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// broadcastAlgorithm adapts a broadcast that takes no parameters to the
// catalogue.
func broadcastAlgorithm(name, summary string, fn func(ctx context.Context, l Link, buf device.Buffer, dt device.DType, root int) error, smpi string) *Algorithm {
	return &Algorithm{Name: name, Summary: summary, SMPI: smpi,
		Run: func(ctx context.Context, l Link, c Call) error { return fn(ctx, l, c.Buf, c.DType, c.Root) }}
}

// The broadcast collective. Call.Buf is the buffer, root's input and
// every other rank's output; n (bytes) is its size, as in nccl-tests, and
// the bus factor is 1: every rank receives n.
func init() {
	Register(&Collective{
		Name:      "broadcast",
		BusFactor: func(int) float64 { return 1 },
		Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
		Rooted:    true,
		Algorithms: []*Algorithm{
			broadcastAlgorithm("binomial_tree", "binomial tree, farthest subtree first (MPICH's); ceil(lg p)(α+nβ)", BinomialBroadcast, "binomial_tree"),
			broadcastAlgorithm("binomial_tree_nearest", "binomial tree, nearest subtree first; ceil(lg p)(α+nβ)", BinomialNearestBroadcast, ""),
			{Name: "pipelined_chain", Summary: "segments passed down a chain of ranks; (p+k-2)(α+sβ) for k segments of s bytes",
				Params: map[string]int{"segment": DefaultChainSegment},
				Run: func(ctx context.Context, l Link, c Call) error {
					return PipelinedChainBroadcast(ctx, l, c.Buf, c.DType, c.Root, c.Param("segment", DefaultChainSegment))
				}},
			broadcastAlgorithm("scatter_allgather", "van de Geijn: binomial scatter then ring allgather; (ceil(lg p)+p-1)α + 2((p-1)/p)nβ", ScatterAllgatherBroadcast, "scatter_LR_allgather"),
			broadcastAlgorithm("flat", "nexar's: the root sends to every rank in turn; (p-1)(α+nβ)", FlatBroadcast, ""),
			broadcastAlgorithm("binary_tree", "nexar's: rank v sends to 2v+1 then 2v+2; 2(k-1)(α+nβ) at p = 2^k-1", BinaryTreeBroadcast, ""),
			broadcastAlgorithm("nexar", "nexar's choice: flat below 4 ranks, binary_tree from 4 on", NexarBroadcast, ""),
			AutoAlgorithm("broadcast", wholeSize),
		},
	})
}
