package cuda

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/device"
)

// An interpreter for the PTX subset of ptxgen.go, to run the reduction
// kernels without a GPU. It executes the threads of a grid one after the
// other (the kernels do not communicate between threads), checks every
// memory access against the buffers it may touch and their alignment, and
// counts the stores to each byte, so a kernel that skips an element, writes
// one twice or strays outside its buffers fails. Its semantics of each
// instruction are this file's reading of the PTX ISA; f32 and f64
// arithmetic is Go's (IEEE 754, round to nearest even), with NaN results
// made the canonical NaN as the GPU does, and the f16 conversions are
// device.F16ToF32 and device.F32ToF16.

// gpuMem is the global memory of an interpreted launch: a few regions at
// fixed addresses.
type gpuMem struct {
	regions []*memRegion
}

type memRegion struct {
	name     string
	base     uint64
	data     []byte
	writable bool
	stores   []int // stores to each byte
}

func (m *gpuMem) add(name string, base uint64, data []byte, writable bool) *memRegion {
	r := &memRegion{name: name, base: base, data: data, writable: writable, stores: make([]int, len(data))}
	m.regions = append(m.regions, r)
	return r
}

// access returns the bytes at addr..addr+n, checking bounds and alignment.
func (m *gpuMem) access(addr uint64, n int, align int, store bool) ([]byte, *memRegion, error) {
	if addr%uint64(align) != 0 {
		return nil, nil, fmt.Errorf("misaligned %d-byte access at %#x", n, addr)
	}
	for _, r := range m.regions {
		if addr >= r.base && addr+uint64(n) <= r.base+uint64(len(r.data)) {
			if store && !r.writable {
				return nil, nil, fmt.Errorf("store into read-only %s at %#x", r.name, addr)
			}
			off := int(addr - r.base)
			return r.data[off : off+n], r, nil
		}
	}
	return nil, nil, fmt.Errorf("%d-byte access at %#x outside every buffer", n, addr)
}

// thread is the state of one interpreted thread.
type thread struct {
	e       *ptxEntry
	regs    map[string]uint64
	special map[string]uint64
	params  map[string]uint64
	mem     *gpuMem
}

// runGrid runs entry e over blocks x threads threads with the given
// parameter values (in e's parameter order).
func runGrid(e *ptxEntry, mem *gpuMem, blocks, threads int, args ...uint64) error {
	if len(args) != len(e.params) {
		return fmt.Errorf("%s takes %d parameters, got %d", e.name, len(e.params), len(args))
	}
	if e.bits == nil {
		e.bits = map[string]int{}
	}
	params := map[string]uint64{}
	for i, p := range e.params {
		params[p.name] = args[i]
	}
	for b := range blocks {
		for t := range threads {
			th := &thread{e: e, regs: map[string]uint64{}, params: params, mem: mem,
				special: map[string]uint64{"%tid.x": uint64(t), "%ntid.x": uint64(threads), "%ctaid.x": uint64(b), "%nctaid.x": uint64(blocks)}}
			if err := th.run(); err != nil {
				return fmt.Errorf("%s, block %d thread %d: %v", e.name, b, t, err)
			}
		}
	}
	return nil
}

const maxSteps = 10_000_000

func (th *thread) run() error {
	pc := 0
	for steps := 0; pc < len(th.e.insts); steps++ {
		if steps > maxSteps {
			return fmt.Errorf("no ret after %d instructions", maxSteps)
		}
		in := th.e.insts[pc]
		pc++
		if in.guard != "" {
			g, err := th.get(in.guard)
			if err != nil {
				return fmt.Errorf("line %d: %v", in.line, err)
			}
			if (g != 0) == in.neg {
				continue
			}
		}
		switch in.op {
		case "ret":
			return nil
		case "bra":
			pc = th.e.labels[in.args[0]]
			continue
		}
		if err := th.exec(in); err != nil {
			return fmt.Errorf("line %d: %s %s: %v", in.line, in.op, strings.Join(in.args, ", "), err)
		}
	}
	return fmt.Errorf("fell off the end without ret")
}

// get reads a register (which must have been written) or an immediate.
func (th *thread) get(a string) (uint64, error) {
	if isImmediate(a) {
		v, _ := strconv.ParseInt(a, 0, 64)
		return uint64(v), nil
	}
	if v, ok := th.special[a]; ok {
		return v, nil
	}
	v, ok := th.regs[a]
	if !ok {
		return 0, fmt.Errorf("read of %s before any write", a)
	}
	return v, nil
}

// set writes a register, keeping only as many bits as it has.
func (th *thread) set(a string, v uint64) error {
	b, ok := th.e.bits[a]
	if !ok {
		t, err := regType(th.e, a)
		if err != nil {
			return err
		}
		b = typeBits(t)
		th.e.bits[a] = b
	}
	if b < 64 {
		v &= 1<<b - 1
	}
	th.regs[a] = v
	return nil
}

func vector(a string) []string { return splitArgs(strings.Trim(a, "{}")) }

func (th *thread) address(a string) (uint64, error) {
	in := strings.Trim(a, "[]")
	if v, ok := th.params[in]; ok {
		return v, nil
	}
	return th.get(in)
}

// sext sign-extends the low n bits of v.
func sext(v uint64, n int) uint64 { return uint64(int64(v<<(64-n)) >> (64 - n)) }

func f32(v uint64) float32 { return math.Float32frombits(uint32(v)) }
func f64(v uint64) float64 { return math.Float64frombits(v) }

func fromF32(f float32) uint64 {
	if f != f {
		return 0x7fffffff // the GPU's canonical NaN
	}
	return uint64(math.Float32bits(f))
}

func fromF64(f float64) uint64 {
	if f != f {
		return 0x7fffffffffffffff
	}
	return math.Float64bits(f)
}

func (th *thread) exec(in ptxInst) error {
	p := in.parts
	last := p[len(p)-1]
	nb := typeBits(last)
	var argv [8]uint64
	args := argv[:len(in.args)]
	// Read the source operands (all but the first, except for st).
	srcFrom := 1
	if p[0] == "st" {
		srcFrom = 0
	}
	for i := srcFrom; i < len(in.args); i++ {
		a := in.args[i]
		if strings.HasPrefix(a, "[") || strings.HasPrefix(a, "{") {
			continue
		}
		v, err := th.get(a)
		if err != nil {
			return err
		}
		args[i] = v
	}
	d := in.args[0]
	mask := func(v uint64) uint64 {
		if nb < 64 {
			return v & (1<<nb - 1)
		}
		return v
	}
	switch p[0] {
	case "ld", "st":
		addr, err := th.address(in.args[map[bool]int{true: 1, false: 0}[p[0] == "ld"]])
		if err != nil {
			return err
		}
		if p[1] == "param" {
			return th.set(d, addr)
		}
		size := nb / 8
		regs := []string{in.args[0]}
		if p[0] == "st" {
			regs = []string{in.args[1]}
		}
		if len(p) == 4 {
			regs = vector(regs[0])
		}
		b, r, err := th.mem.access(addr, size*len(regs), size*len(regs), p[0] == "st")
		if err != nil {
			return err
		}
		for k, reg := range regs {
			w := b[k*size : (k+1)*size]
			if p[0] == "ld" {
				var v uint64
				for j := size - 1; j >= 0; j-- {
					v = v<<8 | uint64(w[j])
				}
				if err := th.set(reg, v); err != nil {
					return err
				}
				continue
			}
			v, err := th.get(reg)
			if err != nil {
				return err
			}
			for j := range size {
				w[j] = byte(v >> (8 * j))
			}
		}
		if p[0] == "st" {
			off := int(addr - r.base)
			for j := range size * len(regs) {
				r.stores[off+j]++
			}
		}
		return nil
	case "cvta":
		return th.set(d, args[1])
	case "mov":
		if strings.HasPrefix(d, "{") { // unpack, low bits first
			parts := vector(d)
			w := nb / len(parts)
			for k, reg := range parts {
				if err := th.set(reg, args[1]>>(w*k)); err != nil {
					return err
				}
			}
			return nil
		}
		if strings.HasPrefix(in.args[1], "{") { // pack
			parts := vector(in.args[1])
			w := nb / len(parts)
			var v uint64
			for k, reg := range parts {
				x, err := th.get(reg)
				if err != nil {
					return err
				}
				v |= (x & (1<<w - 1)) << (w * k)
			}
			return th.set(d, v)
		}
		return th.set(d, args[1])
	case "cvt":
		dst, src := p[len(p)-2], p[len(p)-1]
		x := args[1]
		switch {
		case dst == "f32" && src == "f16":
			return th.set(d, uint64(math.Float32bits(device.F16ToF32(uint16(x)))))
		case dst == "f16" && src == "f32" && p[1] == "rn":
			f := f32(x)
			if f != f {
				return th.set(d, 0x7fff) // canonical f16 NaN
			}
			return th.set(d, uint64(device.F32ToF16(f)))
		case !isFloat(dst) && !isFloat(src):
			x &= 1<<typeBits(src) - 1
			if src[0] == 's' {
				x = sext(x, typeBits(src))
			}
			return th.set(d, x)
		}
	case "mad":
		return th.set(d, uint64(uint32(args[1]))*uint64(uint32(args[2]))+args[3])
	case "mul":
		switch p[1] {
		case "wide":
			return th.set(d, uint64(uint32(args[1]))*uint64(uint32(args[2])))
		case "lo":
			return th.set(d, mask(args[1]*args[2]))
		case "rn":
			if last == "f32" {
				return th.set(d, fromF32(f32(args[1])*f32(args[2])))
			}
			return th.set(d, fromF64(f64(args[1])*f64(args[2])))
		}
	case "add", "sub":
		if isFloat(last) {
			if p[0] != "add" {
				break
			}
			if last == "f32" {
				return th.set(d, fromF32(f32(args[1])+f32(args[2])))
			}
			return th.set(d, fromF64(f64(args[1])+f64(args[2])))
		}
		if p[0] == "add" {
			return th.set(d, mask(args[1]+args[2]))
		}
		return th.set(d, mask(args[1]-args[2]))
	case "min", "max":
		a, b := mask(args[1]), mask(args[2])
		less := a < b
		if last[0] == 's' {
			less = int64(sext(a, nb)) < int64(sext(b, nb))
		}
		if (p[0] == "min") == less {
			return th.set(d, a)
		}
		return th.set(d, b)
	case "and":
		return th.set(d, args[1]&args[2])
	case "or":
		return th.set(d, args[1]|args[2])
	case "shl":
		if args[2] >= uint64(nb) {
			return th.set(d, 0)
		}
		return th.set(d, mask(args[1]<<args[2]))
	case "shr":
		if last[0] == 's' {
			return fmt.Errorf("arithmetic shift not interpreted")
		}
		if args[2] >= uint64(nb) {
			return th.set(d, 0)
		}
		return th.set(d, mask(args[1])>>args[2])
	case "setp":
		r, err := compare(p[1], last, args[1], args[2])
		if err != nil {
			return err
		}
		return th.set(d, map[bool]uint64{false: 0, true: 1}[r])
	case "selp":
		if args[3] != 0 {
			return th.set(d, args[1])
		}
		return th.set(d, args[2])
	case "bfe":
		pos, n := args[2]&0xff, args[3]&0xff
		if n == 0 || pos >= uint64(nb) {
			return fmt.Errorf("bfe with position %d, length %d not interpreted", pos, n)
		}
		n = min(n, uint64(nb)-pos)
		v := (args[1] >> pos) & (1<<n - 1)
		if last[0] == 's' {
			v = sext(v, int(n))
		}
		return th.set(d, mask(v))
	case "bfi":
		pos, n := args[3]&0xff, args[4]&0xff
		if n == 0 || pos+n > uint64(nb) {
			return fmt.Errorf("bfi with position %d, length %d not interpreted", pos, n)
		}
		m := (uint64(1)<<n - 1) << pos
		return th.set(d, mask(args[2]&^m|(args[1]<<pos)&m))
	}
	return fmt.Errorf("not interpreted")
}

// compare evaluates setp's comparison cmp on operands of type t.
func compare(cmp, t string, a, b uint64) (bool, error) {
	nb := typeBits(t)
	var c int // -1, 0, 1; 2 if unordered
	switch t[0] {
	case 'f':
		x, y := f64(a), f64(b)
		if t == "f32" {
			x, y = float64(f32(a)), float64(f32(b))
		}
		switch {
		case x != x || y != y:
			c = 2
		case x < y:
			c = -1
		case x > y:
			c = 1
		}
	case 's':
		x, y := int64(sext(a, nb)), int64(sext(b, nb))
		c = map[bool]int{true: -1, false: 0}[x < y] + map[bool]int{true: 1, false: 0}[x > y]
	default:
		if nb < 64 {
			a, b = a&(1<<nb-1), b&(1<<nb-1)
		}
		if a < b {
			c = -1
		} else if a > b {
			c = 1
		}
	}
	switch cmp {
	case "lt":
		return c == -1, nil
	case "le":
		return c == -1 || c == 0, nil
	case "gt":
		return c == 1, nil
	case "ge":
		return c == 1 || c == 0, nil
	case "eq":
		return c == 0, nil
	case "ne":
		return c == -1 || c == 1, nil
	case "nan":
		return c == 2, nil
	case "num":
		return c != 2, nil
	}
	return false, fmt.Errorf("comparison %s not interpreted", cmp)
}
