package cuda

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/device"
)

var update = flag.Bool("update", false, "rewrite kernels.ptx from ptxgen.go")

// TestPTXUpToDate checks that the embedded kernels.ptx is what ptxgen.go
// generates; with -update it rewrites the file.
func TestPTXUpToDate(t *testing.T) {
	want := generatePTX()
	if *update {
		if err := os.WriteFile("kernels.ptx", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if kernelsPTX != want {
		t.Fatal("kernels.ptx is stale: run go generate ./device/cuda/ (go test -run TestPTXUpToDate -update)")
	}
}

// TestPTXStructure parses the module and checks it: header, one entry per
// dtype and op with the five .u64 parameters, balanced braces, declared
// registers within their declared ranges, defined labels, operand types;
// and that every path through a kernel ends in ret.
func TestPTXStructure(t *testing.T) {
	m, err := parsePTX(kernelsPTX)
	if err != nil {
		t.Fatal(err)
	}
	if m.version != ptxVersion || m.target != ptxTarget || m.addressSize != 64 {
		t.Errorf("header: .version %s .target %s .address_size %d", m.version, m.target, m.addressSize)
	}
	byName := map[string]*ptxEntry{}
	labels := map[string]string{}
	for _, e := range m.entries {
		if byName[e.name] != nil {
			t.Errorf("entry %s defined twice", e.name)
		}
		byName[e.name] = e
		for l := range e.labels {
			if other, dup := labels[l]; dup {
				t.Errorf("label %s in %s and %s", l, other, e.name)
			}
			labels[l] = e.name
		}
	}
	if want := len(device.DTypes()) * len(device.Ops()); len(m.entries) != want {
		t.Errorf("%d entries, want %d", len(m.entries), want)
	}
	for _, dt := range device.DTypes() {
		for _, op := range device.Ops() {
			name := kernelName(dt, op)
			e := byName[name]
			if e == nil {
				t.Errorf("no entry %s", name)
				continue
			}
			if len(e.params) != len(kernelParams) {
				t.Errorf("%s: %d parameters", name, len(e.params))
				continue
			}
			for i, p := range e.params {
				if p.name != name+"_"+kernelParams[i] || p.typ != "u64" {
					t.Errorf("%s: parameter %d is .%s %s", name, i, p.typ, p.name)
				}
			}
			if err := checkEntry(e); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if n := len(e.insts); n == 0 || e.insts[n-1].op != "ret" || e.insts[n-1].guard != "" {
				t.Errorf("%s does not end with an unconditional ret", name)
			}
		}
	}
}

// TestPTXCheckerRejects makes sure the checker is not vacuous: broken
// variants of a kernel must fail to parse or check.
func TestPTXCheckerRejects(t *testing.T) {
	good := newKernel(device.F16, device.Sum)
	src := generatePTX()
	start := strings.Index(src, ".visible .entry "+good.Name+"(")
	end := start + strings.Index(src[start:], "\n}\n") + 3
	header := src[:strings.Index(src, "\n// dst")]
	one := header + "\n" + src[start:end]
	if m, err := parsePTX(one); err != nil || checkEntry(m.entries[0]) != nil {
		t.Fatalf("the unmodified kernel fails: %v", err)
	}
	breaks := []struct{ name, old, new string }{
		{"undeclared register", "%h6, %f3", "%h7, %f3"},
		{"float register as integer", "add.s64 \t%rd11, %rd11, %rd7", "add.s64 \t%rd11, %fd1, %rd7"},
		{"narrowing without rounding", "cvt.rn.f16.f32", "cvt.f16.f32"},
		{"widening with rounding", "cvt.f32.f16 \t%f1, %h1", "cvt.rn.f32.f16 \t%f1, %h1"},
		{"missing semicolon", "mov.u64 \t%rd11, %rd6;", "mov.u64 \t%rd11, %rd6"},
		{"unbalanced brace", "\tret;\n}", "\tret;\n}}"},
		{"undefined label", "bra \t" + good.Name + "_done", "bra \t" + good.Name + "_gone"},
		{"wrong vector width", "{%r10, %r11, %r12, %r13}, [%rd13]", "{%r10, %r11, %r12}, [%rd13]"},
		{"16-bit register as 32-bit", "mov.b32 \t%r10, {%h5, %h6}", "mov.b32 \t%h5, {%h5, %h6}"},
		{"unknown instruction", "mad.wide.u32", "mad.hi.u32"},
		{"predicate as data", "selp.b64 \t%rd18, %rd17, %rd18, %p3", "selp.b64 \t%rd18, %p3, %rd18, %p3"},
	}
	for _, b := range breaks {
		if !strings.Contains(one, b.old) {
			t.Fatalf("%s: %q not in the kernel", b.name, b.old)
		}
		bad := strings.Replace(one, b.old, b.new, 1)
		m, err := parsePTX(bad)
		if err == nil {
			err = checkEntry(m.entries[0])
		}
		if err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
}

func TestPlanReduce(t *testing.T) {
	cases := []struct {
		dst, src     uint64
		n, size, max int
		head, nvec   uint64
		blocks       int
		wantErr      bool
	}{
		{dst: 0x1000, src: 0x2000, n: 1000, size: 4, max: 100, head: 0, nvec: 250, blocks: 1},
		{dst: 0x1004, src: 0x2004, n: 1000, size: 4, max: 100, head: 3, nvec: 249, blocks: 1},
		{dst: 0x1004, src: 0x2008, n: 1000, size: 4, max: 100, head: 0, nvec: 0, blocks: 4},              // unequal alignment: all scalar
		{dst: 0x100e, src: 0x200e, n: 1, size: 2, max: 100, head: 1, nvec: 0, blocks: 1},                 // head longer than n
		{dst: 0x1000, src: 0x1000, n: 0, size: 8, max: 100, head: 0, nvec: 0, blocks: 1},                 // empty
		{dst: 0x1000, src: 0x2000, n: 1 << 26, size: 4, max: 1056, head: 0, nvec: 1 << 24, blocks: 1056}, // capped at the GPU
		{dst: 0x1001, src: 0x2001, n: 100, size: 1, max: 100, head: 15, nvec: 5, blocks: 1},
		{dst: 0x1002, src: 0x2000, n: 10, size: 4, max: 100, wantErr: true}, // misaligned elements
	}
	for _, c := range cases {
		l, err := planReduce(c.dst, c.src, c.n, c.size, c.max)
		if c.wantErr {
			if err == nil {
				t.Errorf("%+v: no error", c)
			}
			continue
		}
		if err != nil || l.head != c.head || l.nvec != c.nvec || l.blocks != c.blocks || l.threads != blockThreads || l.n != uint64(c.n) {
			t.Errorf("planReduce(%#x, %#x, %d, %d, %d) = %+v, %v; want head %d nvec %d blocks %d",
				c.dst, c.src, c.n, c.size, c.max, l, err, c.head, c.nvec, c.blocks)
		}
	}
}

// randomElements fills b with random elements of dt, with the special
// values (zeros of both signs, infinities, NaNs, subnormals, extremes)
// mixed in.
func randomElements(rng *rand.Rand, b []byte, dt device.DType) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := i; j < min(i+8, len(b)); j++ {
			b[j] = byte(v >> (8 * (j - i)))
		}
	}
	sz := dt.Size()
	var specials []uint64
	switch dt {
	case device.F16:
		specials = []uint64{0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x8001, 0x7bff, 0x3c00, 0x3c01}
	case device.BF16:
		specials = []uint64{0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x7f7f, 0x3f80, 0x3f81}
	case device.F32:
		specials = []uint64{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 1, 0x7f7fffff, 0x3f800000, 0x3f800001}
	case device.F64:
		specials = []uint64{0, 1 << 63, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 1, 0x3ff0000000000000}
	default:
		specials = []uint64{0, 1, 1<<(8*sz-1) - 1, 1 << (8*sz - 1), 1<<(8*sz) - 1}
	}
	for i := 0; i+sz <= len(b); i += sz {
		if rng.IntN(4) == 0 {
			v := specials[rng.IntN(len(specials))]
			for j := range sz {
				b[i+j] = byte(v >> (8 * j))
			}
		} else if dt.IsFloat() && rng.IntN(2) == 0 {
			// Values of moderate size, so that sums and products round.
			f := (rng.Float64() - 0.5) * math.Pow(2, float64(rng.IntN(20)-10))
			var v uint64
			switch dt {
			case device.F16:
				v = uint64(device.F32ToF16(float32(f)))
			case device.BF16:
				v = uint64(device.F32ToBF16(float32(f)))
			case device.F32:
				v = uint64(math.Float32bits(float32(f)))
			case device.F64:
				v = math.Float64bits(f)
			}
			for j := range sz {
				b[i+j] = byte(v >> (8 * j))
			}
		}
	}
}

// sameElements compares element by element, any NaN equal to any NaN (the
// GPU's NaNs are canonical; the host's keep payloads).
func sameElements(got, want []byte, dt device.DType) error {
	sz := dt.Size()
	for i := 0; i < len(want); i += sz {
		g, w := got[i:i+sz], want[i:i+sz]
		if bytes.Equal(g, w) || (isNaN(g, dt) && isNaN(w, dt)) {
			continue
		}
		return fmt.Errorf("element %d: got %x, want %x", i/sz, g, w)
	}
	return nil
}

func isNaN(b []byte, dt device.DType) bool {
	var v uint64
	for j := len(b) - 1; j >= 0; j-- {
		v = v<<8 | uint64(b[j])
	}
	switch dt {
	case device.F16:
		return v&0x7c00 == 0x7c00 && v&0x3ff != 0
	case device.BF16:
		return v&0x7f80 == 0x7f80 && v&0x7f != 0
	case device.F32:
		return v&0x7fffffff > 0x7f800000
	case device.F64:
		return v&(1<<63-1) > 0x7ff0000000000000
	}
	return false
}

// TestKernelsInterpreted runs every kernel in the interpreter on random
// data (special values included) for many lengths, alignments and grid
// shapes, and demands device.ReduceHost's result, every byte of dst
// stored exactly once, and no access outside the operands.
func TestKernelsInterpreted(t *testing.T) {
	m, err := parsePTX(kernelsPTX)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]*ptxEntry{}
	for _, e := range m.entries {
		entries[e.name] = e
	}
	const seed = 1
	rng := rand.New(rand.NewPCG(seed, 2))
	lengths := []int{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 64, 100, 259}
	if testing.Short() {
		lengths = []int{0, 1, 9, 33, 100}
	}
	for _, dt := range device.DTypes() {
		sz := dt.Size()
		for _, op := range device.Ops() {
			e := entries[kernelName(dt, op)]
			for _, n := range lengths {
				// Offsets of dst and src past a 256-byte aligned base:
				// aligned, equally misaligned, unequally misaligned.
				offsets := [][2]int{{0, 0}, {sz, sz}, {16 - sz, 16 - sz}, {0, sz}, {3 * sz, 5 * sz}}
				for _, o := range offsets {
					if o[0] >= 16 || o[1] >= 16 {
						continue // 8-byte elements: {sz, sz} and {16-sz, 16-sz} coincide
					}
					blocks, threads := 1+rng.IntN(3), []int{1, 2, 32, 64}[rng.IntN(4)]
					dst := make([]byte, n*sz)
					src := make([]byte, n*sz)
					randomElements(rng, dst, dt)
					randomElements(rng, src, dt)
					if rng.IntN(8) == 0 && o[0] == o[1] {
						copy(src, dst) // dst op dst
					}
					want := append([]byte(nil), dst...)
					device.ReduceHost(want, src, dt, op)
					srcCopy := append([]byte(nil), src...)

					dstAddr, srcAddr := uint64(0x10000+o[0]), uint64(0x20000+o[1])
					mem := &gpuMem{}
					dr := mem.add("dst", dstAddr, dst, true)
					mem.add("src", srcAddr, src, false)
					l, err := planReduce(dstAddr, srcAddr, n, sz, blocks)
					if err != nil {
						t.Fatal(err)
					}
					where := fmt.Sprintf("%s %s n=%d offsets %v grid %dx%d (head %d, nvec %d; seed %d)", dt, op, n, o, l.blocks, threads, l.head, l.nvec, seed)
					if err := runGrid(e, mem, l.blocks, threads, l.dst, l.src, l.head, l.nvec, l.n); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					for i, c := range dr.stores {
						if c != 1 {
							t.Fatalf("%s: byte %d of dst stored %d times", where, i, c)
						}
					}
					if !bytes.Equal(src, srcCopy) {
						t.Fatalf("%s: src modified", where)
					}
					if err := sameElements(dst, want, dt); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
				}
			}
		}
	}
}
