//go:build !purego

package device

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// The assembly kernels against the portable ones: the same bits for every
// element, except that where one gives a NaN the other must give a NaN too
// (which NaN comes out is not specified). The reference tests in
// reduce_test.go check both against exact arithmetic; these tests cover far
// more operand pairs, because the kernels are fast.

// asmCases are the dtypes and ops with assembly kernels.
var asmCases = func() (c []struct {
	dt DType
	op Op
}) {
	for _, dt := range []DType{F16, BF16, F32} {
		for _, op := range Ops() {
			c = append(c, struct {
				dt DType
				op Op
			}{dt, op})
		}
	}
	return c
}()

func skipWithoutAsm(t testing.TB) {
	t.Helper()
	if asmKernels(&portableKernels) == nil {
		t.Skip("the CPU lacks AVX2 or F16C: ReduceHost runs the portable kernels only")
	}
}

// compareAsm reduces copies of dst and src with the assembly and the
// portable kernel of dt and op and reports the first elements that differ
// (any NaN for a NaN).
func compareAsm(t testing.TB, asm *kernelTable, dst, src []byte, dt DType, op Op) {
	t.Helper()
	got := append([]byte(nil), dst...)
	want := append([]byte(nil), dst...)
	asm[dt][op](got, src)
	portableKernels[dt][op](want, src)
	compareElements(t, dst, src, got, want, dt, op, "portable")
}

// TestAsmMatchesPortable runs every 16-bit pattern against 64 others (16
// with -short; the specials of ref_test.go among them) for f16 and bf16,
// and a million random elements with specials mixed in, plus every pair of
// specials, for f32.
func TestAsmMatchesPortable(t *testing.T) {
	skipWithoutAsm(t)
	asm := asmKernels(&portableKernels)
	for _, c := range asmCases {
		t.Run(fmt.Sprintf("%v/%v", c.dt, c.op), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.dt), uint64(c.op)))
			if c.dt == F32 {
				compareAsm(t, asm, randomElems(rng, c.dt, 1<<20+13), randomElems(rng, c.dt, 1<<20+13), c.dt, c.op)
				sp := specials[F32]
				var d, s []byte
				for _, a := range sp {
					for _, b := range sp {
						d = binary.LittleEndian.AppendUint32(d, uint32(a))
						s = binary.LittleEndian.AppendUint32(s, uint32(b))
					}
				}
				compareAsm(t, asm, d, s, c.dt, c.op)
				return
			}
			rounds := 64
			if testing.Short() {
				rounds = 16
			}
			d := make([]byte, 2<<16)
			for h := range 1 << 16 {
				binary.LittleEndian.PutUint16(d[2*h:], uint16(h))
			}
			s := make([]byte, len(d))
			for r := range rounds {
				for h := range 1 << 16 {
					v := uint16(rng.Uint32())
					if sp := specials[c.dt]; r < len(sp) {
						v = uint16(sp[r])
					}
					binary.LittleEndian.PutUint16(s[2*h:], v)
				}
				compareAsm(t, asm, d, s, c.dt, c.op)
			}
		})
	}
}

// TestAsmExhaustive compares the 16-bit assembly kernels with the portable
// ones on all 2^32 operand pairs. It takes minutes, so it runs only with
// NEXAR_EXHAUSTIVE=1.
func TestAsmExhaustive(t *testing.T) {
	if os.Getenv("NEXAR_EXHAUSTIVE") == "" {
		t.Skip("set NEXAR_EXHAUSTIVE=1 to run")
	}
	skipWithoutAsm(t)
	asm := asmKernels(&portableKernels)
	for _, c := range asmCases {
		if c.dt == F32 {
			continue
		}
		t.Run(fmt.Sprintf("%v/%v", c.dt, c.op), func(t *testing.T) {
			t.Parallel()
			d := make([]byte, 2<<16)
			s := make([]byte, 2<<16)
			for h := range 1 << 16 {
				binary.LittleEndian.PutUint16(s[2*h:], uint16(h))
			}
			for a := range 1 << 16 {
				for h := range 1 << 16 {
					binary.LittleEndian.PutUint16(d[2*h:], uint16(a))
				}
				compareAsm(t, asm, d, s, c.dt, c.op)
			}
		})
	}
}

// FuzzAsmMatchesPortable compares the assembly and portable kernels on
// fuzzer-chosen elements: the first half of data is dst and the second src,
// each repeated to three assembly chunks and a tail, so that the assembly
// loop runs and every element also passes through the portable tail.
func FuzzAsmMatchesPortable(f *testing.F) {
	f.Add([]byte{0x00, 0x7c, 0x01, 0x7c, 0xff, 0x7b, 0x00, 0x4c}, uint8(F16), uint8(Sum))
	f.Add([]byte{0x80, 0x3f, 0x80, 0x3b, 0xc1, 0xff, 0x00, 0x80}, uint8(BF16), uint8(Max))
	f.Add([]byte{0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x80, 0x7f}, uint8(F32), uint8(Min))
	f.Fuzz(func(t *testing.T, data []byte, dt, op uint8) {
		skipWithoutAsm(t)
		c := asmCases[int(dt)%3*len(Ops())+int(op)%len(Ops())]
		size := c.dt.Size()
		half := len(data) / 2 / size * size
		if half == 0 {
			return
		}
		n := (3*asmChunk + 5) * size
		dst, src := make([]byte, n), make([]byte, n)
		for i := 0; i < n; i += half {
			copy(dst[i:], data[:half])
			copy(src[i:], data[half:2*half])
		}
		compareAsm(t, asmKernels(&portableKernels), dst, src, c.dt, c.op)
	})
}
