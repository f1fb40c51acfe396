// Package nccl holds NCCL's collective algorithms and protocols, written
// against [algos.Link] like the rest of the catalogue, so that they run in
// the simulator message by message and on real ranks: rings with several
// channels, the double binary tree, PAT, and in-network reduction (NVLS,
// CollNet), each over the protocols LL, LL128 and Simple. Importing the
// package registers them in the catalogue.
//
// Facts (tables, chunk sizes, tree shapes) come from NCCL itself, release
// 2.30.7 (NVIDIA/nccl); the code is this project's.
package nccl
