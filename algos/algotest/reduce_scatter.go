package algotest

import "github.com/nexar-go/nexar-go/device"

// ReduceScatterInput is rank's send buffer for a reduce-scatter with op
// over world ranks whose result blocks hold block elements each: world x
// block elements from Input, so every order of reduction is exact.
func ReduceScatterInput(block int, dt device.DType, op device.Op, rank, world int, seed uint64) []byte {
	return Input(world*block, dt, op, rank, world, seed)
}

// ReduceScattered returns, for every rank, what it holds after that
// reduce-scatter: its block of the reduction of every rank's
// ReduceScatterInput, computed the dumb way (the whole reduction, then
// cut into blocks).
func ReduceScattered(block int, dt device.DType, op device.Op, world int, seed uint64) [][]byte {
	all := Reduced(world*block, dt, op, world, seed)
	sz := block * dt.Size()
	out := make([][]byte, world)
	for r := range out {
		out[r] = all[r*sz : (r+1)*sz : (r+1)*sz]
	}
	return out
}
