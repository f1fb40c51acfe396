//go:build !purego

#include "textflag.h"

// AVX2 kernels for the floats: dst[i] = dst[i] op src[i] for i < n, where n
// is a positive multiple of 32 (the Go wrappers in kernels_amd64.go run the
// tail). Each takes (d, s unsafe.Pointer, n int) and ends with VZEROUPPER,
// because the Go code after it is compiled to legacy SSE.
//
// Every kernel works in float32 lanes, as the portable kernels do: f16 is
// widened with VCVTPH2PS and narrowed with VCVTPS2PH (immediate 0: round to
// nearest even whatever MXCSR says; Go leaves MXCSR at its default, so
// subnormals are neither flushed nor treated as zero); bf16 is widened by
// putting its bits in the upper half of a zero dword and narrowed by the
// same integer rounding as F32ToBF16 (min and max, whose results need no
// rounding, keep the upper half).

// The operators, each a = a op b on float32 lanes; t and u are scratch.
//
// VMINPS and VMAXPS return their second source if either operand is a NaN or
// both are zeros, so min and max run them both ways round. For min, OR-ing the
// two results gives the NaN if there is one (a NaN OR anything keeps an all-ones
// exponent and a non-zero mantissa) and -0 if either zero is negative. For max,
// AND-ing gives +0 if either zero is positive, and OR-ing in the unordered mask
// (VCMPPS predicate 3; all ones, which is a NaN) restores NaNs. Both are IEEE
// 754-2019 minimum and maximum, as Go's built-in min and max.
#define OPSUM(a, b, t, u) VADDPS b, a, a
#define OPPROD(a, b, t, u) VMULPS b, a, a
#define OPMIN(a, b, t, u) \
	VMINPS b, a, t; \
	VMINPS a, b, u; \
	VORPS  t, u, a
#define OPMAX(a, b, t, u) \
	VMAXPS b, a, t; \
	VMAXPS a, b, u; \
	VANDPS t, u, u; \
	VCMPPS $3, b, a, t; \
	VORPS  t, u, a

// PROLOGUE loads the arguments: DI = d, SI = s, CX = n/32 iterations.
#define PROLOGUE \
	MOVQ d+0(FP), DI; \
	MOVQ s+8(FP), SI; \
	MOVQ n+16(FP), CX; \
	SHRQ $5, CX

// f32: four vectors of 8 from each operand.
#define F32BODY(OP) \
	VMOVUPS 0(DI), Y0; \
	VMOVUPS 32(DI), Y1; \
	VMOVUPS 64(DI), Y2; \
	VMOVUPS 96(DI), Y3; \
	VMOVUPS 0(SI), Y4; \
	VMOVUPS 32(SI), Y5; \
	VMOVUPS 64(SI), Y6; \
	VMOVUPS 96(SI), Y7; \
	OP(Y0, Y4, Y8, Y9); \
	OP(Y1, Y5, Y10, Y11); \
	OP(Y2, Y6, Y12, Y13); \
	OP(Y3, Y7, Y14, Y15); \
	VMOVUPS Y0, 0(DI); \
	VMOVUPS Y1, 32(DI); \
	VMOVUPS Y2, 64(DI); \
	VMOVUPS Y3, 96(DI); \
	ADDQ    $128, DI; \
	ADDQ    $128, SI

// f16: four vectors of 8, widened from 16 bytes each.
#define F16BODY(OP) \
	VCVTPH2PS 0(DI), Y0; \
	VCVTPH2PS 16(DI), Y1; \
	VCVTPH2PS 32(DI), Y2; \
	VCVTPH2PS 48(DI), Y3; \
	VCVTPH2PS 0(SI), Y4; \
	VCVTPH2PS 16(SI), Y5; \
	VCVTPH2PS 32(SI), Y6; \
	VCVTPH2PS 48(SI), Y7; \
	OP(Y0, Y4, Y8, Y9); \
	OP(Y1, Y5, Y10, Y11); \
	OP(Y2, Y6, Y12, Y13); \
	OP(Y3, Y7, Y14, Y15); \
	VCVTPS2PH $0, Y0, 0(DI); \
	VCVTPS2PH $0, Y1, 16(DI); \
	VCVTPS2PH $0, Y2, 32(DI); \
	VCVTPS2PH $0, Y3, 48(DI); \
	ADDQ      $64, DI; \
	ADDQ      $64, SI

// BF16NARROW rounds the float32 lanes of x to bfloat16 in the low half of
// each dword, as F32ToBF16 does: add 0x7fff plus the lowest kept bit, keep
// the upper half; a NaN keeps its upper half with the quiet bit set, so that
// it cannot round to an infinity (m, from VCMPPS predicate 3 of x with
// itself, marks the NaNs). Constants: Y13 = 1, Y14 = 0x7fff, Y15 =
// 0x40 in every dword.
#define BF16NARROW(x, m, t, u) \
	VCMPPS    $3, x, x, m; \
	VPSRLD    $16, x, t; \
	VPAND     Y13, t, u; \
	VPADDD    u, x, x; \
	VPADDD    Y14, x, x; \
	VPSRLD    $16, x, x; \
	VPOR      Y15, t, t; \
	VBLENDVPS m, t, x, x

// BF16EXACT narrows the result of min or max, which is the value of an
// operand (a bfloat16 value: nothing to round) or, from OPMINNAN and OPMAX,
// a NaN of all ones (0xffff, a quiet NaN): it keeps the upper half.
#define BF16EXACT(x, m, t, u) VPSRLD $16, x, x

// OPMINNAN is OPMIN with its NaNs made all ones, as OPMAX makes them, so
// that BF16EXACT narrows them to quiet NaNs.
#define OPMINNAN(a, b, t, u) \
	VMINPS b, a, t; \
	VMINPS a, b, u; \
	VORPS  t, u, t; \
	VCMPPS $3, b, a, u; \
	VORPS  t, u, a

// bf16: 16 elements of each operand at a time, twice, narrowed by NARROW.
// VPUNPCKLWD and VPUNPCKHWD with the zero Y12 widen the low and high four
// words of each 128-bit lane; VPACKUSDW of the two halves puts the words
// back in their places (its values are below 0x10000, so it never
// saturates).
#define BF16HALF(OP, NARROW, off) \
	VMOVDQU    off(DI), Y0; \
	VMOVDQU    off(SI), Y1; \
	VPUNPCKLWD Y0, Y12, Y2; \
	VPUNPCKHWD Y0, Y12, Y3; \
	VPUNPCKLWD Y1, Y12, Y4; \
	VPUNPCKHWD Y1, Y12, Y5; \
	OP(Y2, Y4, Y6, Y7); \
	OP(Y3, Y5, Y8, Y9); \
	NARROW(Y2, Y6, Y7, Y10); \
	NARROW(Y3, Y8, Y9, Y11); \
	VPACKUSDW  Y3, Y2, Y0; \
	VMOVDQU    Y0, off(DI)

#define BF16BODY(OP, NARROW) \
	BF16HALF(OP, NARROW, 0); \
	BF16HALF(OP, NARROW, 32); \
	ADDQ $64, DI; \
	ADDQ $64, SI

// The bodies of sum and product (rounded), and of min and max (exact).
#define BF16ROUNDED(OP) BF16BODY(OP, BF16NARROW)
#define BF16SELECTED(OP) BF16BODY(OP, BF16EXACT)

#define BF16CONSTANTS \
	VPXOR        Y12, Y12, Y12; \
	VPBROADCASTD bf16One<>(SB), Y13; \
	VPBROADCASTD bf16Bias<>(SB), Y14; \
	VPBROADCASTD bf16Quiet<>(SB), Y15

DATA bf16One<>+0(SB)/4, $1
GLOBL bf16One<>(SB), RODATA|NOPTR, $4
DATA bf16Bias<>+0(SB)/4, $0x7fff
GLOBL bf16Bias<>(SB), RODATA|NOPTR, $4
DATA bf16Quiet<>+0(SB)/4, $0x40
GLOBL bf16Quiet<>(SB), RODATA|NOPTR, $4

// KERNEL defines func name(d, s unsafe.Pointer, n int): SETUP, then BODY
// with the operator OP over 32 elements at a time.
#define KERNEL(name, SETUP, BODY, OP) \
TEXT name(SB), NOSPLIT, $0-24; \
	PROLOGUE; \
	SETUP; \
loop: \
	BODY(OP); \
	DECQ CX; \
	JNZ  loop; \
	VZEROUPPER; \
	RET

#define NOSETUP

KERNEL(·sumF32AVX2, NOSETUP, F32BODY, OPSUM)
KERNEL(·prodF32AVX2, NOSETUP, F32BODY, OPPROD)
KERNEL(·minF32AVX2, NOSETUP, F32BODY, OPMIN)
KERNEL(·maxF32AVX2, NOSETUP, F32BODY, OPMAX)

KERNEL(·sumF16AVX2, NOSETUP, F16BODY, OPSUM)
KERNEL(·prodF16AVX2, NOSETUP, F16BODY, OPPROD)
KERNEL(·minF16AVX2, NOSETUP, F16BODY, OPMIN)
KERNEL(·maxF16AVX2, NOSETUP, F16BODY, OPMAX)

KERNEL(·sumBF16AVX2, BF16CONSTANTS, BF16ROUNDED, OPSUM)
KERNEL(·prodBF16AVX2, BF16CONSTANTS, BF16ROUNDED, OPPROD)
KERNEL(·minBF16AVX2, BF16CONSTANTS, BF16SELECTED, OPMINNAN)
KERNEL(·maxBF16AVX2, BF16CONSTANTS, BF16SELECTED, OPMAX)
