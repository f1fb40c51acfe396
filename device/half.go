package device

import (
	"math"
	"sync"
)

// Conversions between float32 and the two 16-bit float formats.
//
// Widening (f16 or bf16 to float32) is exact. Narrowing rounds to nearest,
// ties to even, as IEEE 754 requires; values too large for the format become
// infinities, and a NaN stays a NaN (quieted, keeping its sign and the top bits
// of its payload). The f16 routines are the branch-light bit tricks of Fabian
// Giesen's half_to_float and float_to_half_fast3_rtne. github.com/x448/float16
// rounds correctly too (the tests check it, and use it as an oracle), but in
// the f16 sum kernel on random data its narrowing was 20-25% slower, and its
// widening loops over subnormals; the kernels widen f16 through a table.

// F16ToF32 returns the float32 value of the IEEE 754 binary16 number with
// bits h. The conversion is exact; NaN payloads are kept as they are.
func F16ToF32(h uint16) float32 {
	o := uint32(h&0x7fff) << 13       // exponent and mantissa, in float32 position
	exp := o & 0x0f800000             // the 5-bit f16 exponent, shifted
	o += (127 - 15) << 23             // rebias the exponent
	if exp-0x00800000 >= 0x0f000000 { // not a normal number: exponent 0 or 31
		if exp == 0 { // zero or subnormal: renormalize with one float subtraction
			o = math.Float32bits(math.Float32frombits(o+1<<23) - 0x1p-14)
		} else { // Inf or NaN: make the exponent all ones
			o += (128 - 16) << 23
		}
	}
	return math.Float32frombits(o | uint32(h&0x8000)<<16)
}

// f16Table returns the float32 value of every f16 bit pattern, built on
// first use (256 KiB). A lookup is cheaper than F16ToF32 on mixed data.
func f16Table() *[1 << 16]float32 {
	f16TableOnce.Do(func() {
		t := new([1 << 16]float32)
		for h := range t {
			t[h] = F16ToF32(uint16(h))
		}
		f16TableVal = t
	})
	return f16TableVal
}

var (
	f16TableOnce sync.Once
	f16TableVal  *[1 << 16]float32
)

// F32ToF16 returns the bits of the IEEE 754 binary16 number nearest to f,
// ties to even. Finite values of magnitude 65520 or more become infinities.
func F32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	u &^= 0x80000000
	var o uint32
	switch {
	case u-113<<23 < 30<<23: // in [2^-14, 2^16): a normal f16, or rounds up to Inf
		odd := (u >> 13) & 1
		u -= (127 - 15) << 23 // rebias the exponent
		u += 0xfff + odd      // round half to even on the 13 dropped bits
		o = u >> 13           // a carry out of the mantissa goes to the next binade, or to Inf
	case u < 113<<23: // below 2^-14: the result is subnormal or zero
		// Adding 0.5 shifts the 10 mantissa bits to the bottom of the float;
		// the float addition itself rounds to nearest even.
		const magic = ((127 - 15) + (23 - 10) + 1) << 23 // 0.5
		o = math.Float32bits(math.Float32frombits(u)+math.Float32frombits(magic)) - magic
	default: // at least 2^16: Inf, or NaN
		o = 0x7c00
		if u > 0x7f800000 {
			o |= 0x200 | (u>>13)&0x3ff // quiet NaN, payload kept where it fits
		}
	}
	return uint16(o) | sign
}

// BF16ToF32 returns the float32 value of the bfloat16 number with bits h.
// The conversion is exact: bfloat16 is the upper half of a float32.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 returns the bits of the bfloat16 number nearest to f, ties to even.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40 // NaN: set the quiet bit so it cannot become Inf
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// The half kernels widen both operands to float32, apply the operator in
// float32, and round the result back to nearest even. Sum and product are
// therefore exactly round(f32(a) op f32(b)); min and max return one of the
// operands unchanged (or a NaN).

func sumF16(d, s []uint16) {
	t := f16Table()
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToF16(t[d[i]] + t[s[i]])
	}
}

func prodF16(d, s []uint16) {
	t := f16Table()
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToF16(t[d[i]] * t[s[i]])
	}
}

func minF16(d, s []uint16) {
	t := f16Table()
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToF16(min(t[d[i]], t[s[i]]))
	}
}

func maxF16(d, s []uint16) {
	t := f16Table()
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToF16(max(t[d[i]], t[s[i]]))
	}
}

func sumBF16(d, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(BF16ToF32(d[i]) + BF16ToF32(s[i]))
	}
}

func prodBF16(d, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(BF16ToF32(d[i]) * BF16ToF32(s[i]))
	}
}

func minBF16(d, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(min(BF16ToF32(d[i]), BF16ToF32(s[i])))
	}
}

func maxBF16(d, s []uint16) {
	s = s[:len(d)]
	for i := range d {
		d[i] = F32ToBF16(max(BF16ToF32(d[i]), BF16ToF32(s[i])))
	}
}
