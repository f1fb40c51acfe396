package device

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
)

// This file holds a deliberately dumb reference for ReduceHost: one element
// at a time, decoded byte by byte, floats computed in float64 (f64 exactly,
// with math/big) and rounded to f16 and bf16 by searching for the nearest
// representable value, integers computed exactly (in int64, or with
// math/big for 64-bit types) and wrapped. It shares no code with the
// kernels.

// refF16 decodes binary16 bits from first principles.
func refF16(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+m, e-25)
}

// refBF16 decodes bfloat16 bits: the upper half of a float32.
func refBF16(h uint16) float64 {
	return float64(math.Float32frombits(uint32(h) << 16))
}

// refRound returns the bits of the value of a 16-bit format nearest to x,
// ties to the even bit pattern. val decodes bits; inf is the bit pattern of
// +Inf, and for rounding it stands for the value one unit past the largest
// finite one (twice the largest power of two), as IEEE 754 specifies.
func refRound(x float64, val func(uint16) float64, inf uint16, infValue float64) uint16 {
	if math.IsNaN(x) {
		return inf | 0x7fff // some NaN
	}
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	v := func(b uint16) float64 {
		if b == inf {
			return infValue
		}
		return val(b)
	}
	if x >= infValue {
		return sign | inf
	}
	// Largest b in [0, inf] with v(b) <= x: non-negative bit patterns are
	// ordered like their values.
	lo, hi := uint16(0), inf // v(lo) <= x < v(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if v(mid) <= x {
			lo = mid
		} else {
			hi = mid
		}
	}
	dl, dh := x-v(lo), v(hi)-x
	switch {
	case dl < dh:
		return sign | lo
	case dh < dl:
		return sign | hi
	case lo%2 == 0:
		return sign | lo
	}
	return sign | hi
}

func refToF16(x float64) uint16  { return refRound(x, refF16, 0x7c00, 65536) }
func refToBF16(x float64) uint16 { return refRound(x, refBF16, 0x7f80, math.Ldexp(1, 128)) }

// refFloat applies op to float64 values and rounds the result to float32
// (if single) or float64, to nearest even, subnormals and overflow included.
//
// For float32 results the operation is done in float64 and rounded once
// more: products of float32 values are exact in float64, and for sums the
// double rounding is innocuous because 53 >= 2*24+2 (Figueroa, 1995). For
// float64 results sum and product are computed exactly with math/big and
// rounded once.
func refFloat(a, b float64, op Op, single bool) float64 {
	switch op {
	case Min, Max:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if a == b { // equal, or zeros of either sign: -0 < +0
			neg := math.Signbit(a) && math.Signbit(b)
			if op == Min {
				neg = math.Signbit(a) || math.Signbit(b)
			}
			if neg {
				return math.Copysign(a, -1)
			}
			return math.Copysign(a, 1)
		}
		if (a < b) == (op == Min) {
			return a
		}
		return b
	}
	if single || math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		r := a * b
		if op == Sum {
			r = a + b
		}
		if single {
			return float64(float32(r))
		}
		return r
	}
	x, y := new(big.Float).SetFloat64(a), new(big.Float).SetFloat64(b)
	z := new(big.Float).SetPrec(2200).SetMode(big.ToNearestEven) // holds any exact sum
	if op == Sum {
		z.Add(x, y)
		if z.Sign() == 0 {
			// Exact zero: -0 only if both operands are -0.
			if math.Signbit(a) && math.Signbit(b) {
				return math.Copysign(0, -1)
			}
			return 0
		}
	} else {
		z.Mul(x, y)
	}
	if single {
		r, _ := z.Float32()
		return float64(r)
	}
	r, _ := z.Float64()
	return r
}

// refReduce returns dst op src computed element by element.
func refReduce(dst, src []byte, dt DType, op Op) []byte {
	out := make([]byte, len(dst))
	size := dt.Size()
	le := binary.LittleEndian
	for i := 0; i+size <= len(dst); i += size {
		d, s, o := dst[i:i+size], src[i:i+size], out[i:i+size]
		switch dt {
		case F16, BF16:
			dec, enc := refF16, refToF16
			if dt == BF16 {
				dec, enc = refBF16, refToBF16
			}
			// The float32 result, then rounded to the 16-bit format.
			le.PutUint16(o, enc(refFloat(dec(le.Uint16(d)), dec(le.Uint16(s)), op, true)))
		case F32:
			a := float64(math.Float32frombits(le.Uint32(d)))
			b := float64(math.Float32frombits(le.Uint32(s)))
			le.PutUint32(o, math.Float32bits(float32(refFloat(a, b, op, true))))
		case F64:
			a := math.Float64frombits(le.Uint64(d))
			b := math.Float64frombits(le.Uint64(s))
			le.PutUint64(o, math.Float64bits(refFloat(a, b, op, false)))
		default:
			if size < 8 {
				// Exact in int64: no sum or product of 32-bit values overflows.
				a, b := refInt64(d, dt), refInt64(s, dt)
				var r int64
				switch op {
				case Sum:
					r = a + b
				case Prod:
					r = a * b
				case Min:
					r = min(a, b)
				case Max:
					r = max(a, b)
				}
				for j := range size { // the low bytes of two's complement: wrapping
					o[j] = byte(r >> (8 * j))
				}
				continue
			}
			a, b := refInt(d, dt), refInt(s, dt)
			r := new(big.Int)
			switch op {
			case Sum:
				r.Add(a, b)
			case Prod:
				r.Mul(a, b)
			case Min:
				r.Set(a)
				if b.Cmp(a) < 0 {
					r.Set(b)
				}
			case Max:
				r.Set(a)
				if b.Cmp(a) > 0 {
					r.Set(b)
				}
			}
			// Wrap: the low size*8 bits of the two's complement value.
			r.Mod(r, twoTo[size]) // Euclidean: in [0, 2^(8*size))
			var be [8]byte
			r.FillBytes(be[:size])
			for j := range size {
				o[j] = be[size-1-j]
			}
		}
	}
	return out
}

// twoTo[size] is 2^(8*size).
var twoTo = [9]*big.Int{1: big.NewInt(1 << 8), 2: big.NewInt(1 << 16), 4: big.NewInt(1 << 32),
	8: new(big.Int).Lsh(big.NewInt(1), 64)}

// refInt decodes a little-endian integer of type dt.
func refInt(b []byte, dt DType) *big.Int {
	var u uint64
	for j := len(b) - 1; j >= 0; j-- {
		u = u<<8 | uint64(b[j])
	}
	r := new(big.Int).SetUint64(u)
	signedType := dt == I8 || dt == I16 || dt == I32 || dt == I64
	if signedType && b[len(b)-1]&0x80 != 0 {
		r.Sub(r, twoTo[len(b)])
	}
	return r
}

func putF32(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }

// refInt64 decodes a little-endian integer of type dt of at most 4 bytes.
func refInt64(b []byte, dt DType) int64 {
	var u uint64
	for j := len(b) - 1; j >= 0; j-- {
		u = u<<8 | uint64(b[j])
	}
	if (dt == I8 || dt == I16 || dt == I32) && b[len(b)-1]&0x80 != 0 {
		return int64(u) - 1<<(8*len(b))
	}
	return int64(u)
}

// isNaNBits reports whether the element in b is a NaN of type dt.
func isNaNBits(b []byte, dt DType) bool {
	le := binary.LittleEndian
	switch dt {
	case F16:
		return le.Uint16(b)&0x7fff > 0x7c00
	case BF16:
		return le.Uint16(b)&0x7fff > 0x7f80
	case F32:
		return le.Uint32(b)&0x7fffffff > 0x7f800000
	case F64:
		return le.Uint64(b)&(1<<63-1) > 0x7ff0000000000000
	}
	return false
}

// specials are bit patterns worth mixing into random data, per element size:
// zeros, ones, extremes, infinities, NaNs, subnormals, ties.
var specials = map[DType][]uint64{
	F16:  {0, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c01, 0x1400},
	BF16: {0, 0x8000, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f81, 0x3b80},
	F32:  {0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 1, 0x80000001, 0x007fffff, 0x00800000, 0x33800000, 0x4b800000},
	F64: {0, 1 << 63, 0x3ff0000000000000, 0xbff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000,
		0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 1, 0x000fffffffffffff, 0x3ca0000000000000, 0x4340000000000000},
}

var intSpecials = []uint64{0, 1, 2, 0xff, 0x7f, 0x80, 0xffff, 0x7fff, 0x8000, 0xffffffff, 0x7fffffff, 0x80000000,
	math.MaxUint64, math.MaxInt64, 1 << 63}

// randomElems returns n random elements of dt: random bits, with one in
// eight replaced by a special value or a small integer-valued number.
func randomElems(rng *rand.Rand, dt DType, n int) []byte {
	size := dt.Size()
	b := make([]byte, n*size)
	for i := range n {
		v := rng.Uint64()
		switch r := rng.IntN(16); {
		case r == 0:
			sp := specials[dt]
			if sp == nil {
				sp = intSpecials
			}
			v = sp[rng.IntN(len(sp))]
		case r == 1: // a small whole number, so sums and products stay in range
			k := float32(rng.IntN(64) - 32)
			switch dt {
			case F16:
				v = uint64(refToF16(float64(k)))
			case BF16:
				v = uint64(refToBF16(float64(k)))
			case F32:
				v = uint64(math.Float32bits(k))
			case F64:
				v = math.Float64bits(float64(k))
			default:
				v = uint64(int64(k))
			}
		}
		for j := range size {
			b[i*size+j] = byte(v >> (8 * j))
		}
	}
	return b
}
