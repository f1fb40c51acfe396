package device

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/x448/float16"
)

func isNaN16(h uint16, inf uint16) bool { return h&0x7fff > inf }

func TestF16ToF32AllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		got := F16ToF32(h)
		want := refF16(h)
		lib := float16.Frombits(h).Float32()
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != (h&0x8000 != 0) {
				t.Fatalf("F16ToF32(%#04x) = %v, want a NaN with the same sign", h, got)
			}
			// The payload is kept as it is (x448/float16 quiets it).
			if want := uint32(h&0x8000)<<16 | 0x7f800000 | uint32(h&0x3ff)<<13; math.Float32bits(got) != want {
				t.Fatalf("F16ToF32(%#04x) = %#08x, want %#08x", h, math.Float32bits(got), want)
			}
			if !math.IsNaN(float64(lib)) {
				t.Fatalf("x448/float16 widens NaN %#04x to %v", h, lib)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Fatalf("F16ToF32(%#04x) = %v, want %v", h, got, want)
		}
		if math.Float32bits(got) != math.Float32bits(lib) {
			t.Fatalf("F16ToF32(%#04x) = %v, x448/float16 gives %v", h, got, lib)
		}
		// Narrowing an f16 value gives it back.
		if back := F32ToF16(got); back != h {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

func TestBF16ToF32AllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		got := BF16ToF32(h)
		want := refBF16(h)
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) || !isNaN16(F32ToBF16(got), 0x7f80) {
				t.Fatalf("BF16ToF32(%#04x) = %v, want a NaN that narrows to a NaN", h, got)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Fatalf("BF16ToF32(%#04x) = %v, want %v", h, got, want)
		}
		if back := F32ToBF16(got); back != h {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

// narrowCases returns float32 values around every rounding boundary of a
// 16-bit format: for each pair of neighbouring values, the midpoint (a tie)
// and the float32 values just below and above it, plus each value and its
// float32 neighbours.
func narrowCases(widen func(uint16) float32, inf uint16) []float32 {
	var out []float32
	for h := uint16(0); h < inf; h++ {
		lo, hi := float64(widen(h)), 0.0
		if h+1 == inf {
			hi = 2*float64(widen(h)) - float64(widen(h-1)) // the next value, were the range unbounded
		} else {
			hi = float64(widen(h + 1))
		}
		mid := float32((lo + hi) / 2) // exact: midpoints of f16 and bf16 values fit in float32
		v := float32(lo)
		for _, x := range []float32{v, math.Nextafter32(v, 0), math.Nextafter32(v, float32(math.Inf(1))),
			mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1)))} {
			out = append(out, x, -x)
		}
	}
	return out
}

func TestF32ToF16Boundaries(t *testing.T) {
	for _, x := range narrowCases(F16ToF32, 0x7c00) {
		got := F32ToF16(x)
		if want := refToF16(float64(x)); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, want %#04x", x, math.Float32bits(x), got, want)
		}
		if lib := float16.Fromfloat32(x).Bits(); got != lib {
			t.Fatalf("F32ToF16(%g) = %#04x, x448/float16 gives %#04x", x, got, lib)
		}
	}
}

func TestF32ToBF16Boundaries(t *testing.T) {
	for _, x := range narrowCases(BF16ToF32, 0x7f80) {
		if got, want := F32ToBF16(x), refToBF16(float64(x)); got != want {
			t.Fatalf("F32ToBF16(%g [%#08x]) = %#04x, want %#04x", x, math.Float32bits(x), got, want)
		}
	}
}

func TestNarrowRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1 << 20 {
		u := rng.Uint32()
		x := math.Float32frombits(u)
		if math.IsNaN(float64(x)) {
			if !isNaN16(F32ToF16(x), 0x7c00) || !isNaN16(F32ToBF16(x), 0x7f80) {
				t.Fatalf("NaN %#08x narrowed to a non-NaN", u)
			}
			continue
		}
		if got, want := F32ToF16(x), refToF16(float64(x)); got != want {
			t.Fatalf("F32ToF16(%#08x) = %#04x, want %#04x", u, got, want)
		}
		if got, want := F32ToBF16(x), refToBF16(float64(x)); got != want {
			t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", u, got, want)
		}
	}
}

func TestHalfKnownValues(t *testing.T) {
	f16 := []struct {
		x    float32
		bits uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},          // largest finite
		{65519.996, 0x7bff},      // just below the halfway point to Inf
		{65520, 0x7c00},          // halfway to the next binade: rounds to even, which is Inf
		{1e6, 0x7c00},            // overflow
		{0x1p-14, 0x0400},        // smallest normal
		{0x1p-24, 0x0001},        // smallest subnormal
		{0x1p-25, 0x0000},        // tie between 0 and the smallest subnormal: even is 0
		{0x1.000002p-25, 0x0001}, // just above the tie
		{0x1.8p-24, 0x0002},      // tie between 1 and 2 subnormal units: even is 2
		{0x1.ffcp-15, 0x0400},    // largest subnormal plus half a unit: a tie, rounds up to the even smallest normal
		{1 + 0x1p-11, 0x3c00},    // tie: even is 1
		{1 + 0x3p-11, 0x3c02},    // tie: even is 1+2^-9
		{float32(math.Copysign(0, -1)), 0x8000},
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-149, 0x0000}, // float32 subnormal: underflows to 0
		{-0x1p-149, 0x8000},
	}
	for _, c := range f16 {
		if got := F32ToF16(c.x); got != c.bits {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", c.x, got, c.bits)
		}
	}
	bf16 := []struct {
		bits32 uint32
		bits   uint16
	}{
		{0x3f800000, 0x3f80},
		{0x3f808000, 0x3f80}, // tie: even
		{0x3f818000, 0x3f82}, // tie: even, upward
		{0x3f808001, 0x3f81},
		{0x7f7f7fff, 0x7f7f}, // just below halfway past the largest finite
		{0x7f7f8000, 0x7f80}, // halfway: even is Inf
		{0x7f800000, 0x7f80},
		{0x7f800001, 0x7fc0}, // NaN whose payload is all in the dropped bits stays NaN
		{0xff800001, 0xffc0},
		{0x00000001, 0x0000},
		{0x00008000, 0x0000}, // tie between 0 and the smallest bf16 subnormal
		{0x00018000, 0x0002},
	}
	for _, c := range bf16 {
		if got := F32ToBF16(math.Float32frombits(c.bits32)); got != c.bits {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.bits32, got, c.bits)
		}
	}
}

// TestNarrowExhaustive compares the narrowing conversions with the
// references on all 2^32 float32 values. It takes minutes, so it runs only
// with NEXAR_EXHAUSTIVE=1.
func TestNarrowExhaustive(t *testing.T) {
	if os.Getenv("NEXAR_EXHAUSTIVE") == "" {
		t.Skip("set NEXAR_EXHAUSTIVE=1 to run")
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := uint64(w); u < 1<<32; u += uint64(workers) {
				x := math.Float32frombits(uint32(u))
				ok := true
				if math.IsNaN(float64(x)) {
					ok = isNaN16(F32ToF16(x), 0x7c00) && isNaN16(F32ToBF16(x), 0x7f80)
				} else {
					ok = F32ToF16(x) == float16.Fromfloat32(x).Bits() && F32ToBF16(x) == bf16Simple(uint32(u))
				}
				if !ok {
					mu.Lock()
					t.Errorf("narrowing %#08x: f16 %#04x (x448 %#04x), bf16 %#04x (want %#04x)", u,
						F32ToF16(x), float16.Fromfloat32(x).Bits(), F32ToBF16(x), bf16Simple(uint32(u)))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
}

// bf16Simple rounds the finite float32 with bits u to bfloat16 by comparing
// the dropped half with one half unit.
func bf16Simple(u uint32) uint16 {
	hi, lo := uint16(u>>16), u&0xffff
	if lo > 0x8000 || lo == 0x8000 && hi&1 == 1 {
		hi++ // carries into the exponent, and into Inf, as it should
	}
	return hi
}
