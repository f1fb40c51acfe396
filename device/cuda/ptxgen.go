package cuda

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/nexar-go/nexar-go/device"
)

// The reduction kernels, dst[i] = dst[i] op src[i], one per element type
// and operator, are PTX generated from ptxTemplate: every kernel has the same
// skeleton (parameters, index arithmetic, a vector grid-stride loop, a
// scalar grid-stride loop) and differs only in the code that combines one
// 32- or 64-bit word of dst with the matching word of src. kernels.ptx holds
// the generated text (go generate, or TestPTXUpToDate -update, rewrites it)
// and is embedded in the binary; the driver compiles it for the GPU at run
// time (cuModuleLoadDataEx).
//
// Kernel parameters, all .u64:
//
//	dst, src  device addresses of element 0
//	head      elements before the 16-byte aligned bulk (0 if dst and src
//	          are not equally aligned, when everything is scalar)
//	nvec      16-byte vectors in the bulk
//	n         elements in all
//
// Elements [head, head+nvec*lanes) are processed 16 bytes at a time
// (ld.global.v4.u32 or ld.global.v2.u64), the others one at a time. Thread t
// of the grid takes vectors t, t+T, t+2T, ... (T threads in all) and then
// the scalar elements the same way; the grid is sized to fill the GPU (see
// launchShape).
//
// Register conventions (fixed, so the register declarations are the same
// for every kernel):
//
//	%rd1..%rd20   addresses and indices (%rd11 vector index, %rd17 scalar index)
//	%r1..%r4      special registers (ctaid, ntid, tid, nctaid)
//	%r10..%r13    dst words, %r14..%r17 src words (32-bit element classes)
//	%rd21,%rd22   dst words, %rd23,%rd24 src words (64-bit element classes)
//	%r20..%r29    lane temporaries, %r30..%r32 min/max temporaries,
//	%r33..%r35    bf16 rounding temporaries; %rd25..%rd27 64-bit temporaries
//	%h1..%h6, %f1..%f5, %fd1..%fd5  half and float temporaries
//	%p1..%p3      loop predicates, %p4..%p7 operator predicates
//
// Semantics match device.ReduceHost bit for bit (up to which NaN a NaN
// result is): integers wrap; f32 and f64 use one IEEE operation rounded to
// nearest even (add.rn, mul.rn: the .rn forbids contraction into FMA); f16
// and bf16 are widened to f32 exactly, combined in f32, and rounded back to
// nearest even (cvt.rn.f16.f32 for f16; for bf16 the same integer rounding
// as device.F32ToBF16, because cvt.rn.bf16.f32 needs sm_80 and these
// kernels target sm_70); min and max return a NaN if either operand is one
// and order -0 below +0 (IEEE 754-2019 minimum and maximum), which PTX's
// min.f32 does not, so they are composed from comparisons.

//go:generate go test -run TestPTXUpToDate -update

// ptxVersion and ptxTarget are the PTX ISA version and the oldest GPU
// architecture of the kernels: PTX 7.0 (CUDA 11.0 drivers and later), sm_70
// (Volta and later); the driver JIT-compiles them for the GPU at hand.
const (
	ptxVersion = "7.0"
	ptxTarget  = "sm_70"
)

// kernelName is the entry name of the kernel for dt and op.
func kernelName(dt device.DType, op device.Op) string {
	return fmt.Sprintf("nexar_reduce_%s_%s", dt, op)
}

// kernelParams are the parameter names of every kernel, in order.
var kernelParams = []string{"dst", "src", "head", "nvec", "n"}

// class is how a kernel treats the bits of its elements.
type class int

const (
	classInt8  class = iota // 8-bit integers, four lanes of a 32-bit word
	classInt16              // 16-bit integers, two lanes of a word
	classInt32
	classInt64
	classF16
	classBF16
	classF32
	classF64
)

func classOf(dt device.DType) class {
	switch dt {
	case device.I8, device.U8:
		return classInt8
	case device.I16, device.U16:
		return classInt16
	case device.I32, device.U32:
		return classInt32
	case device.I64, device.U64:
		return classInt64
	case device.F16:
		return classF16
	case device.BF16:
		return classBF16
	case device.F32:
		return classF32
	case device.F64:
		return classF64
	}
	panic(fmt.Sprintf("cuda: no kernel class for %v", dt))
}

func signed(dt device.DType) bool {
	switch dt {
	case device.I8, device.I16, device.I32, device.I64:
		return true
	}
	return false
}

// wide reports whether the class works on 64-bit words.
func (c class) wide() bool { return c == classInt64 || c == classF64 }

// kernel is what ptxTemplate needs to write one kernel.
type kernel struct {
	Name, Comment       string
	Params              []string
	LogSize, LogLanes   int
	VecBody, ScalarBody string
}

func log2(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}

// newKernel builds the kernel for dt and op.
func newKernel(dt device.DType, op device.Op) kernel {
	size := dt.Size()
	k := kernel{
		Name:     kernelName(dt, op),
		Comment:  fmt.Sprintf("dst = dst %s src over %s elements", op, dt),
		LogSize:  log2(size),
		LogLanes: log2(16 / size),
	}
	for _, p := range kernelParams {
		k.Params = append(k.Params, k.Name+"_"+p)
	}
	c := classOf(dt)
	var vec, sc strings.Builder
	if c.wide() {
		vec.WriteString("\tld.global.v2.u64 \t{%rd21, %rd22}, [%rd13];\n")
		vec.WriteString("\tld.global.v2.u64 \t{%rd23, %rd24}, [%rd14];\n")
		vec.WriteString(wordOp(c, dt, op, "%rd21", "%rd23"))
		vec.WriteString(wordOp(c, dt, op, "%rd22", "%rd24"))
		vec.WriteString("\tst.global.v2.u64 \t[%rd13], {%rd21, %rd22};\n")
		sc.WriteString("\tld.global.u64 \t%rd21, [%rd19];\n")
		sc.WriteString("\tld.global.u64 \t%rd23, [%rd20];\n")
		sc.WriteString(wordOp(c, dt, op, "%rd21", "%rd23"))
		sc.WriteString("\tst.global.u64 \t[%rd19], %rd21;\n")
	} else {
		vec.WriteString("\tld.global.v4.u32 \t{%r10, %r11, %r12, %r13}, [%rd13];\n")
		vec.WriteString("\tld.global.v4.u32 \t{%r14, %r15, %r16, %r17}, [%rd14];\n")
		for w := range 4 {
			vec.WriteString(wordOp(c, dt, op, fmt.Sprintf("%%r%d", 10+w), fmt.Sprintf("%%r%d", 14+w)))
		}
		vec.WriteString("\tst.global.v4.u32 \t[%rd13], {%r10, %r11, %r12, %r13};\n")
		// A scalar element is loaded zero-extended into the low lane of
		// a word; the word operation then combines it (and zeros in the
		// other lanes, harmlessly), and the low lane is stored.
		ld := map[int]string{1: "u8", 2: "u16", 4: "u32"}[size]
		fmt.Fprintf(&sc, "\tld.global.%s \t%%r10, [%%rd19];\n", ld)
		fmt.Fprintf(&sc, "\tld.global.%s \t%%r14, [%%rd20];\n", ld)
		sc.WriteString(wordOp(c, dt, op, "%r10", "%r14"))
		if size == 4 {
			sc.WriteString("\tst.global.u32 \t[%rd19], %r10;\n")
		} else {
			sc.WriteString("\tcvt.u16.u32 \t%h1, %r10;\n")
			fmt.Fprintf(&sc, "\tst.global.%s \t[%%rd19], %%h1;\n", ld)
		}
	}
	k.VecBody = strings.TrimSuffix(vec.String(), "\n")
	k.ScalarBody = strings.TrimSuffix(sc.String(), "\n")
	return k
}

// wordOp returns the code that sets word a = a op b, lane by lane.
func wordOp(c class, dt device.DType, op device.Op, a, b string) string {
	var s strings.Builder
	switch c {
	case classInt8, classInt16:
		bits := 8 * dt.Size()
		ext := "u32"
		if signed(dt) {
			ext = "s32" // sign-extend the lanes: min and max compare them signed
		}
		for pos := 0; pos < 32; pos += bits {
			fmt.Fprintf(&s, "\tbfe.%s \t%%r20, %s, %d, %d;\n", ext, a, pos, bits)
			fmt.Fprintf(&s, "\tbfe.%s \t%%r21, %s, %d, %d;\n", ext, b, pos, bits)
			s.WriteString(intOp(op, signed(dt), 32, "%r22", "%r20", "%r21"))
			fmt.Fprintf(&s, "\tbfi.b32 \t%s, %%r22, %s, %d, %d;\n", a, a, pos, bits)
		}
	case classInt32:
		s.WriteString(intOp(op, signed(dt), 32, a, a, b))
	case classInt64:
		s.WriteString(intOp(op, signed(dt), 64, a, a, b))
	case classF32:
		fmt.Fprintf(&s, "\tmov.b32 \t%%f1, %s;\n", a)
		fmt.Fprintf(&s, "\tmov.b32 \t%%f2, %s;\n", b)
		s.WriteString(floatOp(op, 32, "%f3", "%f1", "%f2"))
		fmt.Fprintf(&s, "\tmov.b32 \t%s, %%f3;\n", a)
	case classF64:
		fmt.Fprintf(&s, "\tmov.b64 \t%%fd1, %s;\n", a)
		fmt.Fprintf(&s, "\tmov.b64 \t%%fd2, %s;\n", b)
		s.WriteString(floatOp(op, 64, "%fd3", "%fd1", "%fd2"))
		fmt.Fprintf(&s, "\tmov.b64 \t%s, %%fd3;\n", a)
	case classF16:
		// Unpack: the first register of the pair gets the low 16 bits.
		fmt.Fprintf(&s, "\tmov.b32 \t{%%h1, %%h2}, %s;\n", a)
		fmt.Fprintf(&s, "\tmov.b32 \t{%%h3, %%h4}, %s;\n", b)
		for _, hs := range [][3]string{{"%h1", "%h3", "%h5"}, {"%h2", "%h4", "%h6"}} {
			fmt.Fprintf(&s, "\tcvt.f32.f16 \t%%f1, %s;\n", hs[0])
			fmt.Fprintf(&s, "\tcvt.f32.f16 \t%%f2, %s;\n", hs[1])
			s.WriteString(floatOp(op, 32, "%f3", "%f1", "%f2"))
			fmt.Fprintf(&s, "\tcvt.rn.f16.f32 \t%s, %%f3;\n", hs[2])
		}
		fmt.Fprintf(&s, "\tmov.b32 \t%s, {%%h5, %%h6};\n", a)
	case classBF16:
		// Widening a bf16 is exact: its bits are the high half of the f32.
		fmt.Fprintf(&s, "\tshl.b32 \t%%r20, %s, 16;\n", a)
		fmt.Fprintf(&s, "\tand.b32 \t%%r21, %s, -65536;\n", a)
		fmt.Fprintf(&s, "\tshl.b32 \t%%r22, %s, 16;\n", b)
		fmt.Fprintf(&s, "\tand.b32 \t%%r23, %s, -65536;\n", b)
		for _, lane := range [][3]string{{"%r20", "%r22", "%r26"}, {"%r21", "%r23", "%r27"}} {
			fmt.Fprintf(&s, "\tmov.b32 \t%%f1, %s;\n", lane[0])
			fmt.Fprintf(&s, "\tmov.b32 \t%%f2, %s;\n", lane[1])
			s.WriteString(floatOp(op, 32, "%f3", "%f1", "%f2"))
			s.WriteString("\tmov.b32 \t%r24, %f3;\n")
			s.WriteString(roundBF16(lane[2], "%r24"))
		}
		s.WriteString("\tshl.b32 \t%r27, %r27, 16;\n")
		fmt.Fprintf(&s, "\tor.b32 \t%s, %%r26, %%r27;\n", a)
	}
	return s.String()
}

// intOp returns d = a op b on bits-wide integers. Sum and product are the
// same for signed and unsigned operands (two's complement wraps).
func intOp(op device.Op, signed bool, bits int, d, a, b string) string {
	sign := "u"
	if signed {
		sign = "s"
	}
	switch op {
	case device.Sum:
		return fmt.Sprintf("\tadd.u%d \t%s, %s, %s;\n", bits, d, a, b)
	case device.Prod:
		return fmt.Sprintf("\tmul.lo.u%d \t%s, %s, %s;\n", bits, d, a, b)
	case device.Min:
		return fmt.Sprintf("\tmin.%s%d \t%s, %s, %s;\n", sign, bits, d, a, b)
	case device.Max:
		return fmt.Sprintf("\tmax.%s%d \t%s, %s, %s;\n", sign, bits, d, a, b)
	}
	panic(fmt.Sprintf("cuda: no kernel for op %v", op))
}

// floatOp returns d = a op b on f32 (bits 32, %f registers) or f64 (bits
// 64, %fd registers). d must differ from a and b.
func floatOp(op device.Op, bits int, d, a, b string) string {
	t := fmt.Sprintf("f%d", bits)
	switch op {
	case device.Sum:
		return fmt.Sprintf("\tadd.rn.%s \t%s, %s, %s;\n", t, d, a, b)
	case device.Prod:
		return fmt.Sprintf("\tmul.rn.%s \t%s, %s, %s;\n", t, d, a, b)
	}
	// min and max: if b is strictly before a in the operator's order take
	// b, else a; if a == b (which includes -0 == +0) take the OR (min) or
	// AND (max) of their bits, which is -0 (min) or +0 (max) for a pair of
	// zeros and the value itself otherwise; if either is a NaN, a NaN.
	cmp, logic := "lt", "or"
	if op == device.Max {
		cmp, logic = "gt", "and"
	}
	fr, br, ir := "%f", "b32", []string{"%r30", "%r31", "%r32"}
	if bits == 64 {
		fr, br, ir = "%fd", "b64", []string{"%rd25", "%rd26", "%rd27"}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\tsetp.%s.%s \t%%p4, %s, %s;\n", cmp, t, b, a)
	fmt.Fprintf(&s, "\tselp.%s \t%s, %s, %s, %%p4;\n", t, d, b, a)
	fmt.Fprintf(&s, "\tsetp.eq.%s \t%%p5, %s, %s;\n", t, a, b)
	fmt.Fprintf(&s, "\tmov.%s \t%s, %s;\n", br, ir[0], a)
	fmt.Fprintf(&s, "\tmov.%s \t%s, %s;\n", br, ir[1], b)
	fmt.Fprintf(&s, "\t%s.%s \t%s, %s, %s;\n", logic, br, ir[2], ir[0], ir[1])
	fmt.Fprintf(&s, "\tmov.%s \t%s4, %s;\n", br, fr, ir[2])
	fmt.Fprintf(&s, "\tselp.%s \t%s, %s4, %s, %%p5;\n", t, d, fr, d)
	fmt.Fprintf(&s, "\tsetp.nan.%s \t%%p6, %s, %s;\n", t, a, b)
	fmt.Fprintf(&s, "\tadd.rn.%s \t%s5, %s, %s;\n", t, fr, a, b)
	fmt.Fprintf(&s, "\tselp.%s \t%s, %s5, %s, %%p6;\n", t, d, fr, d)
	return s.String()
}

// roundBF16 returns code setting d to the bf16 bits (in its low 16 bits)
// nearest to the f32 bits in u, ties to even; a NaN stays a NaN with its
// quiet bit set. It is device.F32ToBF16 in PTX.
func roundBF16(d, u string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "\tand.b32 \t%%r33, %s, 2147483647;\n", u)
	s.WriteString("\tsetp.gt.u32 \t%p7, %r33, 2139095040;\n") // |u| > +Inf: a NaN
	fmt.Fprintf(&s, "\tshr.u32 \t%%r34, %s, 16;\n", u)
	s.WriteString("\tand.b32 \t%r35, %r34, 1;\n")
	s.WriteString("\tadd.u32 \t%r35, %r35, 32767;\n")
	fmt.Fprintf(&s, "\tadd.u32 \t%%r35, %s, %%r35;\n", u)
	s.WriteString("\tshr.u32 \t%r35, %r35, 16;\n")
	s.WriteString("\tor.b32 \t%r34, %r34, 64;\n")
	fmt.Fprintf(&s, "\tselp.b32 \t%s, %%r34, %%r35, %%p7;\n", d)
	return s.String()
}

var ptxTemplate = template.Must(template.New("ptx").Parse(`//
// nexar-go reduction kernels: dst[i] = dst[i] op src[i].
// Generated by ptxgen.go (package github.com/nexar-go/nexar-go/device/cuda); DO NOT EDIT.
//

.version {{.Version}}
.target {{.Target}}
.address_size 64
{{range .Kernels}}
// {{.Comment}}
.visible .entry {{.Name}}(
{{- range $i, $p := .Params}}{{if $i}},{{end}}
	.param .u64 {{$p}}{{end}}
)
{
	.reg .pred 	%p<8>;
	.reg .b16 	%h<7>;
	.reg .b32 	%r<36>;
	.reg .b64 	%rd<28>;
	.reg .f32 	%f<6>;
	.reg .f64 	%fd<6>;

	ld.param.u64 	%rd1, [{{index .Params 0}}];
	ld.param.u64 	%rd2, [{{index .Params 1}}];
	ld.param.u64 	%rd3, [{{index .Params 2}}];
	ld.param.u64 	%rd4, [{{index .Params 3}}];
	ld.param.u64 	%rd5, [{{index .Params 4}}];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %nctaid.x;
	cvt.u64.u32 	%rd6, %r3;
	mad.wide.u32 	%rd6, %r1, %r2, %rd6;
	mul.wide.u32 	%rd7, %r4, %r2;
	shl.b64 	%rd8, %rd3, {{.LogSize}};
	add.s64 	%rd9, %rd1, %rd8;
	add.s64 	%rd10, %rd2, %rd8;
	mov.u64 	%rd11, %rd6;
	setp.ge.u64 	%p1, %rd11, %rd4;
	@%p1 bra 	{{.Name}}_vec_done;
{{.Name}}_vec_loop:
	shl.b64 	%rd12, %rd11, 4;
	add.s64 	%rd13, %rd9, %rd12;
	add.s64 	%rd14, %rd10, %rd12;
{{.VecBody}}
	add.s64 	%rd11, %rd11, %rd7;
	setp.lt.u64 	%p1, %rd11, %rd4;
	@%p1 bra 	{{.Name}}_vec_loop;
{{.Name}}_vec_done:
	shl.b64 	%rd15, %rd4, {{.LogLanes}};
	sub.s64 	%rd16, %rd5, %rd15;
	mov.u64 	%rd17, %rd6;
	setp.ge.u64 	%p2, %rd17, %rd16;
	@%p2 bra 	{{.Name}}_done;
{{.Name}}_scalar_loop:
	setp.lt.u64 	%p3, %rd17, %rd3;
	add.s64 	%rd18, %rd17, %rd15;
	selp.b64 	%rd18, %rd17, %rd18, %p3;
	shl.b64 	%rd18, %rd18, {{.LogSize}};
	add.s64 	%rd19, %rd1, %rd18;
	add.s64 	%rd20, %rd2, %rd18;
{{.ScalarBody}}
	add.s64 	%rd17, %rd17, %rd7;
	setp.lt.u64 	%p2, %rd17, %rd16;
	@%p2 bra 	{{.Name}}_scalar_loop;
{{.Name}}_done:
	ret;
}
{{end}}`))

// generatePTX returns the PTX module of every kernel.
func generatePTX() string {
	var ks []kernel
	for _, dt := range device.DTypes() {
		for _, op := range device.Ops() {
			ks = append(ks, newKernel(dt, op))
		}
	}
	var b strings.Builder
	err := ptxTemplate.Execute(&b, struct {
		Version, Target string
		Kernels         []kernel
	}{ptxVersion, ptxTarget, ks})
	if err != nil {
		panic(err)
	}
	return b.String()
}
