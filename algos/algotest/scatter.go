package algotest

import "github.com/nexar-go/nexar-go/device"

// ScatterInput returns rank's send buffer for a scatter of block elements
// per rank from root over world ranks: Gathered on the root, so that rank
// r's block is Distinct(block, dt, r, seed), and nil elsewhere (a scatter
// reads the send buffer only on its root).
func ScatterInput(block int, dt device.DType, rank, root, world int, seed uint64) []byte {
	if rank != root {
		return nil
	}
	return Gathered(block, dt, world, seed)
}

// Scattered returns what rank must hold after a scatter of ScatterInput:
// its own block of the root's buffer.
func Scattered(block int, dt device.DType, rank int, seed uint64) []byte {
	return Distinct(block, dt, rank, seed)
}
