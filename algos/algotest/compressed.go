package algotest

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// CompressedReduced returns what a compressed allreduce with c leaves on
// every rank after one call from a zero residual (the catalogue's
// compressed algorithms, whose every call is such a first step) over
// every rank's Input: each rank's sparse contribution, the elements c
// picks from its input plus the zero residual and zeros elsewhere, reduced with op in rank
// order (with Sum, only the elements a rank sent are added). It is what
// checks of lossy algorithms compare with (see algos.Algorithm.Lossy).
//
// Top-k is computed here the slow way, independently of the algorithm: a
// sort of every index by decreasing magnitude (a float's absolute value,
// NaN above all; an integer's absolute value as unsigned), ties to the
// lower index. Random-k's indices are its generator's
// (algos.RandomKIndices with step 0), which define it.
func CompressedReduced(c algos.Compression, count int, dt device.DType, op device.Op, world int, seed uint64) []byte {
	inputs := make([][]byte, world)
	for r := range inputs {
		inputs[r] = Input(count, dt, op, r, world, seed)
	}
	return CompressedReducedOf(c, inputs, dt, op)
}

// CompressedReducedOf is CompressedReduced over the given inputs, one per
// rank.
func CompressedReducedOf(c algos.Compression, inputs [][]byte, dt device.DType, op device.Op) []byte {
	accs := make([][]byte, len(inputs))
	for r, in := range inputs {
		// The input plus the zero residual: -0 becomes +0, as in the
		// algorithm's error-feedback add.
		accs[r] = make([]byte, len(in))
		device.ReduceHost(accs[r], in, dt, device.Sum)
	}
	return SparseReduced(c, accs, dt, op, 0)
}

// SparseReduced returns what a compressed allreduce with c leaves on every
// rank when rank r's input plus residual is accs[r], at call step (which
// seeds random-k): see CompressedReduced.
func SparseReduced(c algos.Compression, accs [][]byte, dt device.DType, op device.Op, step uint64) []byte {
	e := dt.Size()
	out := make([]byte, len(accs[0]))
	dense := make([]byte, len(out))
	for r, acc := range accs {
		idx := SparseIndices(c, acc, dt, step)
		if r == 0 || op != device.Sum {
			clear(dense)
			for _, i := range idx {
				copy(dense[i*e:(i+1)*e], acc[i*e:])
			}
			if r == 0 {
				copy(out, dense)
			} else {
				device.ReduceHost(out, dense, dt, op)
			}
			continue
		}
		for _, i := range idx {
			device.ReduceHost(out[i*e:(i+1)*e], acc[i*e:(i+1)*e], dt, op)
		}
	}
	return out
}

// SparseIndices returns the indices c picks from data at call step, in
// increasing order.
func SparseIndices(c algos.Compression, data []byte, dt device.DType, step uint64) []int {
	e := dt.Size()
	count := len(data) / e
	k := c.K(count)
	if c.Method == algos.RandomK {
		idx := make([]uint32, k)
		algos.RandomKIndices(c.Seed, step, count, idx)
		out := make([]int, k)
		for j, i := range idx {
			out[j] = int(i)
		}
		return out
	}
	// Every index with its magnitude as an ordering key (a float's
	// absolute value's bits, which order as the values do, NaN above
	// all), sorted by decreasing key, then increasing index.
	type keyed struct {
		key uint64
		i   int
	}
	order := make([]keyed, count)
	for i := range order {
		f, u := magnitude(data[i*e:(i+1)*e], dt)
		switch {
		case !dt.IsFloat():
			order[i].key = u
		case math.IsNaN(f):
			order[i].key = math.MaxUint64
		default:
			order[i].key = math.Float64bits(f)
		}
		order[i].i = i
	}
	slices.SortFunc(order, func(a, b keyed) int {
		if c := cmp.Compare(b.key, a.key); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]int, k)
	for j := range out {
		out[j] = order[j].i
	}
	slices.Sort(out)
	return out
}

// magnitude returns the absolute value of the element in b: as a float64
// for floats, as an unsigned integer for integers.
func magnitude(b []byte, dt device.DType) (float64, uint64) {
	switch dt {
	case device.F16:
		return math.Abs(float64(device.F16ToF32(binary.LittleEndian.Uint16(b)))), 0
	case device.BF16:
		return math.Abs(float64(device.BF16ToF32(binary.LittleEndian.Uint16(b)))), 0
	case device.F32:
		return math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))), 0
	case device.F64:
		return math.Abs(math.Float64frombits(binary.LittleEndian.Uint64(b))), 0
	case device.I8:
		return 0, absInt(int64(int8(b[0])))
	case device.I16:
		return 0, absInt(int64(int16(binary.LittleEndian.Uint16(b))))
	case device.I32:
		return 0, absInt(int64(int32(binary.LittleEndian.Uint32(b))))
	case device.I64:
		return 0, absInt(int64(binary.LittleEndian.Uint64(b)))
	case device.U8:
		return 0, uint64(b[0])
	case device.U16:
		return 0, uint64(binary.LittleEndian.Uint16(b))
	case device.U32:
		return 0, uint64(binary.LittleEndian.Uint32(b))
	}
	return 0, binary.LittleEndian.Uint64(b)
}

// absInt returns |v| as an unsigned integer, exact for the most negative.
func absInt(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

// AllreduceExpected returns, for the allreduce algorithm a run with params, what every rank of an allreduce over count elements of Input
// must hold: CompressedReduced for a lossy algorithm, Reduced for any
// other. A lossy algorithm whose params it cannot read gets Reduced (its
// run fails on them anyway).
func AllreduceExpected(a *algos.Algorithm, params map[string]int, count int, dt device.DType, op device.Op, world int, seed uint64) []byte {
	if a != nil && a.Lossy() {
		if c, err := a.Compression(params); err == nil {
			return CompressedReduced(c, count, dt, op, world, seed)
		}
	}
	return Reduced(count, dt, op, world, seed)
}
