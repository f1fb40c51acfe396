package algotest

import "github.com/nexar-go/nexar-go/device"

// MaxDistinctWorld is the largest world for which Distinct gives every
// rank different data at every index.
const MaxDistinctWorld = 256

// Distinct returns count elements of dt that identify rank: element i is
// b_i + rank, where b_i comes from a generator seeded by seed and is the
// same on every rank. For floats the value is taken modulo 256 and shifted
// to [-128, 128), which every float type holds exactly; integers wrap. So
// for worlds of at most MaxDistinctWorld ranks two ranks' data differ at
// every index, and a block delivered to the wrong rank, or to the wrong
// place, is caught element by element.
func Distinct(count int, dt device.DType, rank int, seed uint64) []byte {
	sz := dt.Size()
	b := make([]byte, count*sz)
	// A 64-bit LCG (Knuth's MMIX constants), whose high bits are good
	// enough to tell positions apart and which is several times faster
	// than a PCG; the data tests generate gigabytes.
	x := seed*0x9e3779b97f4a7c15 + 1
	for off := 0; off < len(b); off += sz {
		x = x*6364136223846793005 + 1442695040888963407
		v := x>>32 + uint64(rank)
		if dt.IsFloat() {
			putFloat(b[off:], dt, float64(int(v%256)-128))
		} else {
			putInt(b[off:], dt, v)
		}
	}
	return b
}

// Garbage returns a buffer as long as want that differs from it in every
// byte (every bit inverted): what an output buffer holds before a
// collective, so that an element the collective fails to write is caught.
func Garbage(want []byte) []byte {
	g := make([]byte, len(want))
	for i, c := range want {
		g[i] = ^c
	}
	return g
}

// Gathered returns what the root holds after a gather of block elements
// per rank over world ranks whose inputs are Distinct: every rank's data,
// in rank order. It is also the root's input of a scatter.
func Gathered(block int, dt device.DType, world int, seed uint64) []byte {
	out := make([]byte, 0, world*block*dt.Size())
	for r := 0; r < world; r++ {
		out = append(out, Distinct(block, dt, r, seed)...)
	}
	return out
}
