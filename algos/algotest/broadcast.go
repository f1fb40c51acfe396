package algotest

import "github.com/nexar-go/nexar-go/device"

// BroadcastInput returns rank's buffer before a broadcast of count
// elements from root: the root's data on the root, Garbage elsewhere, so
// that an element the broadcast fails to deliver is caught.
func BroadcastInput(count int, dt device.DType, rank, root int, seed uint64) []byte {
	want := Broadcasted(count, dt, root, seed)
	if rank == root {
		return want
	}
	return Garbage(want)
}

// Broadcasted returns what every rank must hold after a broadcast of
// BroadcastInput from root.
func Broadcasted(count int, dt device.DType, root int, seed uint64) []byte {
	return Distinct(count, dt, root, seed)
}
