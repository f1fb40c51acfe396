package algos

import "context"

func init() {
	Register(&Collective{
		Name:      "allreduce",
		BusFactor: func(p int) float64 { return 2 * float64(p-1) / float64(p) },
		Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
		Reduces:   true,
		Algorithms: []*Algorithm{
			{Name: "ring", SMPI: "lr", Summary: "reduce-scatter then allgather around a ring; bandwidth-optimal",
				Run: func(ctx context.Context, l Link, c Call) error {
					return RingAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "pipelined_ring", Summary: "ring with blocks cut into segments, reduction overlapping transfer (nexar's large-message choice)",
				Params: map[string]int{"segment": DefaultPipelineSegment},
				Run: func(ctx context.Context, l Link, c Call) error {
					return PipelinedRingAllreduce(ctx, l, c.Buf, c.DType, c.Op, c.Param("segment", DefaultPipelineSegment))
				}},
			{Name: "halving_doubling", Summary: "Rabenseifner: recursive-halving reduce-scatter (farthest rank first), recursive-doubling allgather; folds non-powers of two",
				Run: func(ctx context.Context, l Link, c Call) error {
					return HalvingDoublingAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "halving_doubling_nearest", SMPI: "rab_rdb", Summary: "MPICH's Rabenseifner: halving_doubling with the largest halves exchanged with the nearest rank first",
				Run: func(ctx context.Context, l Link, c Call) error {
					return HalvingDoublingNearestAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "recursive_doubling", Summary: "whole-buffer exchanges at doubling distances, farthest first; fewest rounds, for small messages",
				Run: func(ctx context.Context, l Link, c Call) error {
					return RecursiveDoublingAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "recursive_doubling_nearest", SMPI: "rdb", Summary: "MPICH's recursive doubling: recursive_doubling with the nearest partner first",
				Run: func(ctx context.Context, l Link, c Call) error {
					return RecursiveDoublingNearestAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "binomial_tree", Summary: "binomial-tree reduce to rank 0, farthest subtree first, then MPICH's binomial-tree broadcast, farthest first",
				Run: func(ctx context.Context, l Link, c Call) error {
					return BinomialTreeAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "binomial_tree_nearest", Summary: "MPICH's reduce then broadcast: binomial reduce nearest subtree first, binomial broadcast farthest first",
				Run: func(ctx context.Context, l Link, c Call) error {
					return BinomialTreeNearestAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "rs_ag", Summary: "ring reduce-scatter then ring allgather, as two composed collectives",
				Run: func(ctx context.Context, l Link, c Call) error {
					return RSAGAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "direct", Summary: "one shot: every rank sends its buffer to every other; for tiny messages",
				Run: func(ctx context.Context, l Link, c Call) error {
					return DirectAllreduce(ctx, l, c.Buf, c.DType, c.Op)
				}},
			{Name: "bucketed", Summary: "many tensors fused into one ring allreduce and scattered back (nexar's bucketed allreduce)",
				Params: map[string]int{"tensors": DefaultBucketTensors},
				Run: func(ctx context.Context, l Link, c Call) error {
					t := c.Param("tensors", DefaultBucketTensors)
					if err := checkPositive("bucketed", "tensors", t); err != nil {
						return err
					}
					if err := checkBuffer(c.Buf, c.DType); err != nil {
						return err
					}
					return BucketedAllreduce(ctx, l, SplitTensors(c.Buf, c.DType, t), c.DType, c.Op, RingAllreduce)
				}},
			{Name: "hierarchical", Summary: "reduce-scatter in groups, allreduce across groups, allgather in groups",
				Params: map[string]int{"group": DefaultHierarchicalGroup},
				Run: func(ctx context.Context, l Link, c Call) error {
					return HierarchicalAllreduce(ctx, l, c.Buf, c.DType, c.Op, c.Param("group", DefaultHierarchicalGroup))
				}},
			compressedAlgorithm("compressed_topk", TopK,
				"lossy: each rank's top-k elements by magnitude (ppm parts per million) allgathered as (index, value) pairs and summed; nexar's all_reduce_compressed",
				map[string]int{"ppm": DefaultCompressionPPM}),
			compressedAlgorithm("compressed_randomk", RandomK,
				"lossy: k elements drawn at random, the same on every rank (ppm parts per million, seed), allgathered as (index, value) pairs and summed",
				map[string]int{"ppm": DefaultCompressionPPM, "seed": 0}),
			AutoAlgorithm("allreduce", allreduceSize),
		},
	})
}
