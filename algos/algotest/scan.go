package algotest

import "github.com/nexar-go/nexar-go/device"

// Scanned returns, for every rank, what its buffer of count elements holds
// after a scan with op over world ranks of Input buffers: the reduction of
// the inputs of ranks 0..rank, or of ranks 0..rank-1 if exclusive. Rank 0
// of an exclusive scan keeps its input (nexar-go's definition; MPI leaves
// it undefined). It reduces rank by rank, in order.
func Scanned(count int, dt device.DType, op device.Op, world int, seed uint64, exclusive bool) [][]byte {
	incl := make([][]byte, world)
	acc := Input(count, dt, op, 0, world, seed)
	incl[0] = append([]byte(nil), acc...)
	for r := 1; r < world; r++ {
		device.ReduceHost(acc, Input(count, dt, op, r, world, seed), dt, op)
		incl[r] = append([]byte(nil), acc...)
	}
	if !exclusive {
		return incl
	}
	// Rank r gets rank r-1's inclusive result; rank 0 keeps its input.
	return append([][]byte{Input(count, dt, op, 0, world, seed)}, incl[:world-1]...)
}
