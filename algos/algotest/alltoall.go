package algotest

import "github.com/nexar-go/nexar-go/device"

// AlltoallInput is rank's send buffer for an alltoall of count elements
// per peer over world ranks: block j, meant for rank j, is
// Tagged(count, dt, rank, j, seed), different for every pair.
func AlltoallInput(count int, dt device.DType, rank, world int, seed uint64) []byte {
	out := make([]byte, 0, world*count*dt.Size())
	for j := range world {
		out = append(out, Tagged(count, dt, rank, j, seed)...)
	}
	return out
}

// AlltoallOutput is what rank's receive buffer holds after that alltoall:
// block j is what rank j meant for rank.
func AlltoallOutput(count int, dt device.DType, rank, world int, seed uint64) []byte {
	out := make([]byte, 0, world*count*dt.Size())
	for j := range world {
		out = append(out, Tagged(count, dt, j, rank, seed)...)
	}
	return out
}
