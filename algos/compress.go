package algos

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/nexar-go/nexar-go/device"
)

// Sparsification: which elements a rank of a compressed allreduce sends.
// A rank sends k (index, value) pairs; the indices are those of the k
// elements of largest magnitude (top-k) or k drawn at random, the same on
// every rank (random-k). Both are computed here on host bytes, and both
// leave the indices in increasing order.

// Sparsifier is how a compressed allreduce picks the elements it sends.
type Sparsifier uint8

const (
	// TopK sends the k elements of largest magnitude, ties going to the
	// lower index. A NaN counts as larger than any number.
	TopK Sparsifier = iota
	// RandomK sends k elements drawn uniformly without replacement by a
	// generator seeded with the Compression's Seed and the call's step,
	// so that every rank draws the same indices.
	RandomK
)

func (s Sparsifier) String() string {
	switch s {
	case TopK:
		return "top-k"
	case RandomK:
		return "random-k"
	}
	return fmt.Sprintf("sparsifier(%d)", uint8(s))
}

// Compression says how a compressed allreduce sparsifies what each rank
// sends.
type Compression struct {
	Method Sparsifier
	// Ratio is the share of its elements a rank sends, in (0, 1]: k =
	// ⌈Ratio·count⌉ elements, at least 1 and at most count. Ratio 1 sends
	// everything, and the allreduce is exact.
	Ratio float64
	// Seed seeds RandomK's draws; call t (from 0) of a Compressor draws
	// with the generator PCG(Seed, t).
	Seed uint64
}

// maxCompressedCount is the most elements a compressed allreduce indexes:
// indices travel as 32-bit integers.
const maxCompressedCount = 1 << 32

// indexBytes is the size of an index on the wire.
const indexBytes = 4

// Validate returns an error unless c describes a compression.
func (c Compression) Validate() error {
	if c.Method != TopK && c.Method != RandomK {
		return fmt.Errorf("algos: compression method %v: want TopK or RandomK", c.Method)
	}
	if !(c.Ratio > 0 && c.Ratio <= 1) {
		return fmt.Errorf("algos: compression ratio %v: want a share of the elements in (0, 1]", c.Ratio)
	}
	return nil
}

// K returns the number of elements a rank sends out of count: ⌈Ratio·count⌉
// (a product within rounding of a whole number counts as that number), at
// least 1 and at most count; 0 when count is 0.
func (c Compression) K(count int) int {
	if count <= 0 {
		return 0
	}
	x := c.Ratio * float64(count)
	k := math.Ceil(x)
	// 0.01 * 300 is 3.0000000000000004 in binary floating point: a
	// product that close to a whole number is that number.
	if f := math.Floor(x); x-f <= 1e-9*x {
		k = f
	}
	return min(max(int(k), 1), count)
}

// blockBytes returns the size on the wire of the k pairs of one rank:
// k indices, then k values of dt.
func blockBytes(k int, dt device.DType) int { return k * (indexBytes + dt.Size()) }

// sparsify writes the k indices c picks from data (count elements of dt)
// into idx, in increasing order. step is the call's number, for RandomK.
func (c Compression) sparsify(data []byte, dt device.DType, step uint64, idx []uint32) {
	count := len(data) / dt.Size()
	if c.Method == RandomK {
		RandomKIndices(c.Seed, step, count, idx)
		return
	}
	topK(data, dt, idx)
}

// RandomKIndices writes len(idx) distinct indices in [0, count), drawn
// uniformly without replacement by the generator PCG(seed, step), into idx
// in increasing order: the draw of random-k. It depends only on its
// arguments, so every rank draws the same indices. len(idx) must not
// exceed count.
func RandomKIndices(seed, step uint64, count int, idx []uint32) {
	k := len(idx)
	if k > count {
		panic(fmt.Sprintf("algos: %d random indices out of %d", k, count))
	}
	if k == count {
		for i := range idx {
			idx[i] = uint32(i)
		}
		return
	}
	// Floyd's algorithm: for j = count-k .. count-1, draw t in [0, j] and
	// take t, or j if t was taken. Each k-subset comes out with the same
	// probability, after k draws; a bitmap holds the taken set, which is
	// read back in increasing order.
	taken := make([]uint64, (count+63)/64)
	src := rand.NewPCG(seed, step)
	for j := count - k; j < count; j++ {
		t := boundedDraw(src, uint64(j)+1)
		if taken[t/64]&(1<<(t%64)) != 0 {
			t = uint64(j)
		}
		taken[t/64] |= 1 << (t % 64)
	}
	n := 0
	for w, word := range taken {
		for word != 0 {
			idx[n] = uint32(w*64 + bits.TrailingZeros64(word))
			n++
			word &= word - 1
		}
	}
}

// boundedDraw returns a uniform draw in [0, n) from src (Lemire's
// multiply-and-reject), written here so that the draws depend only on
// PCG's output, which is specified, and not on a library's method.
func boundedDraw(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// topK writes the indices of the len(idx) elements of data (elements of
// dt) of largest magnitude into idx, in increasing order, ties going to
// the lower index.
//
// Magnitudes are compared as unsigned keys: a float's bits without its
// sign (IEEE 754 orders non-negative floats as their bits, and NaNs above
// the infinities), an integer's absolute value. The keys are computed once,
// then a radix select finds the k-th largest key a byte at a time from the
// top, counting only the keys that share the bytes chosen so far; a last
// pass takes every key above it and, in index order, as many equal to it
// as are needed. Time O(n · key bytes), no comparison sort.
func topK(data []byte, dt device.DType, idx []uint32) {
	switch dt.Size() {
	case 1:
		keys := make([]uint8, len(data))
		for i, b := range data {
			keys[i] = b
			if dt == device.I8 && b >= 0x80 {
				keys[i] = -b
			}
		}
		selectTop(keys, idx)
	case 2:
		keys := make([]uint16, len(data)/2)
		for i := range keys {
			v := binary.LittleEndian.Uint16(data[2*i:])
			switch {
			case dt.IsFloat():
				v &= 0x7fff
			case dt == device.I16 && v >= 0x8000:
				v = -v
			}
			keys[i] = v
		}
		selectTop(keys, idx)
	case 4:
		keys := make([]uint32, len(data)/4)
		for i := range keys {
			v := binary.LittleEndian.Uint32(data[4*i:])
			switch {
			case dt.IsFloat():
				v &= 0x7fffffff
			case dt == device.I32 && v >= 0x80000000:
				v = -v
			}
			keys[i] = v
		}
		selectTop(keys, idx)
	default:
		keys := make([]uint64, len(data)/8)
		for i := range keys {
			v := binary.LittleEndian.Uint64(data[8*i:])
			switch {
			case dt.IsFloat():
				v &= 0x7fffffffffffffff
			case dt == device.I64 && v >= 1<<63:
				v = -v
			}
			keys[i] = v
		}
		selectTop(keys, idx)
	}
}

// selectTop writes the indices of the len(idx) largest keys into idx, in
// increasing order, ties going to the lower index (see topK).
func selectTop[K uint8 | uint16 | uint32 | uint64](keys []K, idx []uint32) {
	k := len(idx)
	if k == 0 {
		return
	}
	width := 8 * keyBytes[K]()
	// After the passes, the keys whose top (width - shift) bits exceed
	// prefix are all taken, and need of those equal to it, in index order.
	var prefix uint64
	shift, need := width, k
	for shift > 0 {
		shift -= 8
		// Go shifts a key by its whole width to 0, which the empty
		// prefix of the first pass matches.
		var hist [256]int
		for _, x := range keys {
			if uint64(x>>(shift+8)) == prefix {
				hist[byte(x>>shift)]++
			}
		}
		b := 255
		for ; hist[b] < need; b-- {
			need -= hist[b]
		}
		prefix = prefix<<8 | uint64(b)
		if hist[b] == need {
			break // every key in this bucket is taken: no need to look deeper
		}
	}
	n := 0
	for i, x := range keys {
		if v := uint64(x >> shift); v > prefix || (v == prefix && need > 0) {
			if v == prefix {
				need--
			}
			idx[n] = uint32(i)
			n++
			if n == k {
				return
			}
		}
	}
}

// keyBytes returns the size of K in bytes.
func keyBytes[K uint8 | uint16 | uint32 | uint64]() int {
	var z K
	return bits.Len64(uint64(^z)) / 8
}
