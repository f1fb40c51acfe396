package device

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// testLengths are element counts: empty, shorter than, equal to and just
// past one unrolled step, several steps with a tail, and a large odd count
// that spans many blocks and ends in a partial block.
var testLengths = []int{0, 1, 7, 8, 9, 63, 1000003}

// checkReduce runs ReduceHost on copies of dst and src and compares every
// element with the reference: bit for bit, except that where the reference
// is a NaN any NaN will do.
func checkReduce(t testing.TB, dst, src []byte, dt DType, op Op) {
	t.Helper()
	checkReduceWith(t, &kernels, dst, src, dt, op)
}

// checkReduceWith is checkReduce with the kernels of table k.
func checkReduceWith(t testing.TB, k *kernelTable, dst, src []byte, dt DType, op Op) {
	t.Helper()
	want := refReduce(dst, src, dt, op)
	got := append([]byte(nil), dst...)
	srcCopy := append([]byte(nil), src...)
	reduceWith(k, got, srcCopy, dt, op)
	if !bytes.Equal(srcCopy, src) {
		t.Fatalf("%v %v: ReduceHost modified src", dt, op)
	}
	compareElements(t, dst, src, got, want, dt, op, "want")
}

// compareElements reports the elements of got that differ from want, bit
// for bit except that where want is a NaN any NaN will do, with the
// operands dst and src they came from; it stops the test after a few.
// wantName names want in the messages.
func compareElements(t testing.TB, dst, src, got, want []byte, dt DType, op Op, wantName string) {
	t.Helper()
	size := dt.Size()
	bad := 0
	for i := 0; i < len(dst); i += size {
		g, w := got[i:i+size], want[i:i+size]
		if bytes.Equal(g, w) || isNaNBits(w, dt) && isNaNBits(g, dt) {
			continue
		}
		t.Errorf("%v %v: element %d of %d: %x op %x = %x, %s %x",
			dt, op, i/size, len(dst)/size, dst[i:i+size], src[i:i+size], g, wantName, w)
		if bad++; bad > 5 {
			t.FailNow()
		}
	}
}

func TestReduceHostMatchesReference(t *testing.T) {
	for _, dt := range DTypes() {
		for _, op := range Ops() {
			t.Run(fmt.Sprintf("%v/%v", dt, op), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(uint64(dt), uint64(op)))
				for _, n := range testLengths {
					if testing.Short() && n > 10000 {
						n = 10007
					}
					checkReduce(t, randomElems(rng, dt, n), randomElems(rng, dt, n), dt, op)
				}
			})
		}
	}
}

// TestPortableKernelsMatchReference checks the portable kernels, which
// assembly ones replace in ReduceHost where the CPU has them (see
// kernels_amd64.go), on lengths that cover their unrolled loops and a few
// blocks.
func TestPortableKernelsMatchReference(t *testing.T) {
	for _, dt := range DTypes() {
		for _, op := range Ops() {
			rng := rand.New(rand.NewPCG(uint64(dt), uint64(op)+100))
			for _, n := range []int{1, 7, 9, 63, 10007} {
				checkReduceWith(t, &portableKernels, randomElems(rng, dt, n), randomElems(rng, dt, n), dt, op)
			}
		}
	}
}

// TestReduceHostMisaligned covers the staged path (operands not aligned for
// their element type) and the packed integer sums with dst and src
// misaligned by the same or by different amounts.
func TestReduceHostMisaligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range DTypes() {
		for _, op := range Ops() {
			for _, off := range [][2]int{{1, 1}, {3, 5}, {0, 2}, {6, 6}, {4, 0}} {
				for _, n := range []int{1, 9, 63, 5000} {
					d := make([]byte, n*dt.Size()+8)
					s := make([]byte, n*dt.Size()+8)
					dst := d[off[0] : off[0]+n*dt.Size()]
					src := s[off[1] : off[1]+n*dt.Size()]
					copy(dst, randomElems(rng, dt, n))
					copy(src, randomElems(rng, dt, n))
					checkReduce(t, dst, src, dt, op)
				}
			}
		}
	}
}

// TestReduceHostAliased reduces a buffer into itself.
func TestReduceHostAliased(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range DTypes() {
		for _, op := range Ops() {
			b := randomElems(rng, dt, 3001)
			want := refReduce(b, b, dt, op)
			ReduceHost(b, b, dt, op)
			for i := 0; i < len(b); i += dt.Size() {
				g, w := b[i:i+dt.Size()], want[i:i+dt.Size()]
				if !bytes.Equal(g, w) && !(isNaNBits(w, dt) && isNaNBits(g, dt)) {
					t.Fatalf("%v %v: x op x at %d = %x, want %x", dt, op, i/dt.Size(), g, w)
				}
			}
		}
	}
}

// TestReduceHostKnown spot-checks values worked out by hand.
func TestReduceHostKnown(t *testing.T) {
	le16 := func(v ...uint16) []byte {
		var b []byte
		for _, x := range v {
			b = append(b, byte(x), byte(x>>8))
		}
		return b
	}
	tests := []struct {
		dt            DType
		op            Op
		dst, src, out []byte
	}{
		{I8, Sum, []byte{127, 0x80, 0xff}, []byte{1, 0xff, 1}, []byte{0x80, 0x7f, 0}},
		{U8, Prod, []byte{16, 255}, []byte{16, 255}, []byte{0, 1}},
		{I8, Min, []byte{0x80, 5}, []byte{0x7f, 0xfb}, []byte{0x80, 0xfb}},
		{U8, Min, []byte{0x80, 5}, []byte{0x7f, 0xfb}, []byte{0x7f, 5}},
		{I16, Max, le16(0x8000, 1), le16(0x7fff, 0xffff), le16(0x7fff, 1)},
		// 1 + 2^-11 is a tie in f16: it rounds to 1 (even); 1 + 3*2^-11 to 1 + 2^-9.
		{F16, Sum, le16(0x3c00, 0x3c00), le16(0x1000, 0x1600), le16(0x3c00, 0x3c02)},
		// 65504 + 16 = 65520 is halfway to the next binade: Inf.
		{F16, Sum, le16(0x7bff), le16(0x4c00), le16(0x7c00)},
		// -0 < +0 for min and max, whichever side they are on.
		{F16, Min, le16(0x0000, 0x8000), le16(0x8000, 0x0000), le16(0x8000, 0x8000)},
		{F16, Max, le16(0x0000, 0x8000), le16(0x8000, 0x0000), le16(0x0000, 0x0000)},
		// bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1.
		{BF16, Sum, le16(0x3f80), le16(0x3b80), le16(0x3f80)},
	}
	for _, tt := range tests {
		got := append([]byte(nil), tt.dst...)
		ReduceHost(got, tt.src, tt.dt, tt.op)
		if !bytes.Equal(got, tt.out) {
			t.Errorf("%v %v: %x op %x = %x, want %x", tt.dt, tt.op, tt.dst, tt.src, got, tt.out)
		}
		checkReduce(t, tt.dst, tt.src, tt.dt, tt.op)
	}
}

func TestReduceHostNaN(t *testing.T) {
	nans := map[DType]uint64{F16: 0x7e00, BF16: 0xffc1, F32: 0x7f800001, F64: 0x7ff8000000000000}
	for dt, nan := range nans {
		size := dt.Size()
		zero := make([]byte, size)
		nanB := make([]byte, size)
		for j := range size {
			nanB[j] = byte(nan >> (8 * j))
		}
		for _, op := range Ops() {
			for _, pair := range [][2][]byte{{nanB, zero}, {zero, nanB}, {nanB, nanB}} {
				got := append([]byte(nil), pair[0]...)
				ReduceHost(got, pair[1], dt, op)
				if !isNaNBits(got, dt) {
					t.Errorf("%v %v of %x and %x = %x, want a NaN", dt, op, pair[0], pair[1], got)
				}
			}
		}
	}
}

func TestReduceHostPanics(t *testing.T) {
	tests := []struct {
		name     string
		dst, src int
		dt       DType
		op       Op
	}{
		{"length mismatch", 8, 4, F32, Sum},
		{"partial element", 6, 6, F32, Sum},
		{"bad dtype", 4, 4, numDTypes, Sum},
		{"bad op", 4, 4, F32, numOps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "device: ") {
					t.Fatalf("panic %v, want a string starting with \"device: \"", r)
				}
			}()
			ReduceHost(make([]byte, tt.dst), make([]byte, tt.src), tt.dt, tt.op)
		})
	}
}

// TestRefReduce checks the reference itself on cases with known answers,
// so that a wrong reference cannot hide a wrong kernel.
func TestRefReduce(t *testing.T) {
	f32 := func(v float32) []byte { b := make([]byte, 4); putF32(b, v); return b }
	if got := refReduce(f32(1), f32(0x1p-24), F32, Sum); !bytes.Equal(got, f32(1)) {
		t.Errorf("ref f32 1 + 2^-24 = %x, want 1 (tie to even)", got)
	}
	if got := refReduce(f32(1), f32(0x1.8p-24), F32, Sum); !bytes.Equal(got, f32(1+0x1p-23)) {
		t.Errorf("ref f32 1 + 1.5*2^-24 = %x, want 1+2^-23", got)
	}
	// The float64 shortcut for f32 results agrees with exact arithmetic.
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		a := float64(math.Float32frombits(rng.Uint32()))
		b := float64(math.Float32frombits(rng.Uint32()))
		if rng.IntN(2) == 0 { // nearby magnitudes, where rounding is subtle
			b = float64(math.Float32frombits(math.Float32bits(float32(a)) ^ rng.Uint32()&0x80ffffff))
		}
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			continue
		}
		for _, op := range []Op{Sum, Prod} {
			x, y := new(big.Float).SetFloat64(a), new(big.Float).SetFloat64(b)
			z := new(big.Float).SetPrec(400)
			if op == Sum {
				z.Add(x, y)
			} else {
				z.Mul(x, y)
			}
			want, _ := z.Float32()
			if want == 0 && op == Sum { // exact zero: sign by IEEE rules, not math/big's
				continue
			}
			if got := refFloat(a, b, op, true); math.Float64bits(got) != math.Float64bits(float64(want)) {
				t.Fatalf("ref f32 %v %v %v = %v, exact rounding gives %v", a, op, b, got, want)
			}
		}
	}
	if got := refReduce([]byte{200}, []byte{100}, U8, Sum); got[0] != 44 {
		t.Errorf("ref u8 200+100 = %d, want 44", got[0])
	}
	if got := refReduce([]byte{0xff}, []byte{0x01}, I8, Min); got[0] != 0xff {
		t.Errorf("ref i8 min(-1, 1) = %d, want -1", int8(got[0]))
	}
}
