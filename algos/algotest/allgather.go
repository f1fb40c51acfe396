package algotest

import (
	"math/rand/v2"

	"github.com/nexar-go/nexar-go/device"
)

// Tagged returns count elements of dt that rank src means for rank dst,
// from a generator seeded by (seed, src, dst). Data-movement collectives
// (allgather, alltoall, gather, scatter) never look at their values, so
// these are random bytes, not necessarily valid numbers of dt: a block
// delivered to the wrong place or from the wrong rank differs from the
// one expected in all but 2^-(8 x block bytes) of cases. dst = -1 stands
// for "every rank" (allgather's input).
func Tagged(count int, dt device.DType, src, dst int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(src)<<32|uint64(uint32(dst))))
	b := make([]byte, count*dt.Size())
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := i; j < min(i+8, len(b)); j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
	return b
}

// AllgatherInput is rank's block of count elements for an allgather.
func AllgatherInput(count int, dt device.DType, rank int, seed uint64) []byte {
	return Tagged(count, dt, rank, -1, seed)
}

// Allgathered is what every rank holds after an allgather of
// AllgatherInput blocks over world ranks: rank i's block at block i.
func Allgathered(count int, dt device.DType, world int, seed uint64) []byte {
	out := make([]byte, 0, world*count*dt.Size())
	for r := range world {
		out = append(out, AllgatherInput(count, dt, r, seed)...)
	}
	return out
}
