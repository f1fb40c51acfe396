package cuda

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A parser and static checker for the subset of PTX that ptxgen.go writes.
// No PTX assembler (ptxas) is available where this package is developed, so
// the kernels are checked here structurally (entries, parameters, balanced
// braces, declared registers, defined labels) and by operand types, with the
// rules of the PTX ISA as this checker encodes them: a register of a bit
// type (.b16, .b32, .b64) fits any instruction type of its size; a float
// register only float or bit types of its size; ld and st may move 8- and
// 16-bit integers through wider integer registers; float narrowing needs a
// rounding modifier and widening takes none. The interpreter in
// ptx_interp_test.go then runs the kernels. Neither is the NVIDIA
// toolchain: the kernels have still to be JIT-compiled on a GPU.

type ptxModule struct {
	version, target string
	addressSize     int
	entries         []*ptxEntry
}

type ptxParam struct{ name, typ string }

type ptxRegDecl struct {
	typ   string // "pred", "b16", "b32", "b64", "f32", "f64"
	count int    // registers 0..count-1
}

type ptxInst struct {
	line  int
	guard string // predicate register, or ""
	neg   bool   // guard is negated (@!%p)
	op    string
	parts []string // op split at its dots
	args  []string
}

type ptxEntry struct {
	name   string
	params []ptxParam
	regs   map[string]ptxRegDecl // by prefix: "%r", "%rd", ...
	insts  []ptxInst
	labels map[string]int // label -> index of the instruction it precedes
	bits   map[string]int // register name -> bits, filled by the interpreter
}

var (
	reRegDecl = regexp.MustCompile(`^\.reg\s+\.(pred|b16|b32|b64|f32|f64)\s+(%[a-z]+)<(\d+)>;$`)
	reEntry   = regexp.MustCompile(`^\.visible\s+\.entry\s+([A-Za-z_][A-Za-z0-9_]*)\($`)
	reParam   = regexp.MustCompile(`^\.param\s+\.(u64|u32)\s+([A-Za-z_][A-Za-z0-9_]*)(,?)$`)
	reLabel   = regexp.MustCompile(`^([A-Za-z_$][A-Za-z0-9_$]*):$`)
	reInst    = regexp.MustCompile(`^(@!?%p\d+\s+)?([a-z][a-z0-9.]*)(\s+(.*))?;$`)
	reReg     = regexp.MustCompile(`^(%[a-z]+)(\d+)$`)
)

// parsePTX parses a module, failing on anything outside the subset.
func parsePTX(text string) (*ptxModule, error) {
	m := &ptxModule{}
	depth := 0
	for i, raw := range strings.Split(text, "\n") {
		depth += strings.Count(raw, "{") - strings.Count(stripComment(raw), "}")
		if depth < 0 {
			return nil, fmt.Errorf("line %d: unbalanced '}'", i+1)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced braces: depth %d at the end", depth)
	}
	lines := strings.Split(text, "\n")
	const (
		top = iota
		header
		beforeBody
		body
	)
	state := top
	var e *ptxEntry
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(stripComment(lines[i]))
		if line == "" {
			continue
		}
		n := i + 1
		switch state {
		case top:
			f := strings.Fields(line)
			switch {
			case f[0] == ".version" && len(f) == 2:
				m.version = f[1]
			case f[0] == ".target" && len(f) == 2:
				m.target = f[1]
			case f[0] == ".address_size" && len(f) == 2:
				v, err := strconv.Atoi(f[1])
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", n, err)
				}
				m.addressSize = v
			case reEntry.MatchString(line):
				if m.version == "" || m.target == "" || m.addressSize == 0 {
					return nil, fmt.Errorf("line %d: entry before .version, .target and .address_size", n)
				}
				e = &ptxEntry{name: reEntry.FindStringSubmatch(line)[1], regs: map[string]ptxRegDecl{}, labels: map[string]int{}}
				m.entries = append(m.entries, e)
				state = header
			default:
				return nil, fmt.Errorf("line %d: unexpected %q at top level", n, line)
			}
		case header:
			if line == ")" {
				if len(e.params) > 0 && e.params[len(e.params)-1].name == "" {
					return nil, fmt.Errorf("line %d: trailing comma in parameters of %s", n, e.name)
				}
				state = beforeBody
				continue
			}
			sm := reParam.FindStringSubmatch(line)
			if sm == nil {
				return nil, fmt.Errorf("line %d: bad parameter %q", n, line)
			}
			// Every parameter but the last ends with a comma.
			next := strings.TrimSpace(stripComment(lines[i+1]))
			if (sm[3] == ",") != (next != ")") {
				return nil, fmt.Errorf("line %d: comma after parameter %s wrong", n, sm[2])
			}
			e.params = append(e.params, ptxParam{name: sm[2], typ: sm[1]})
		case beforeBody:
			if line != "{" {
				return nil, fmt.Errorf("line %d: want '{' opening the body of %s, got %q", n, e.name, line)
			}
			state = body
		case body:
			switch {
			case line == "}":
				state = top
			case strings.HasPrefix(line, ".reg"):
				sm := reRegDecl.FindStringSubmatch(line)
				if sm == nil {
					return nil, fmt.Errorf("line %d: bad register declaration %q", n, line)
				}
				if _, dup := e.regs[sm[2]]; dup {
					return nil, fmt.Errorf("line %d: %s declared twice", n, sm[2])
				}
				c, _ := strconv.Atoi(sm[3])
				e.regs[sm[2]] = ptxRegDecl{typ: sm[1], count: c}
			case reLabel.MatchString(line):
				l := reLabel.FindStringSubmatch(line)[1]
				if _, dup := e.labels[l]; dup {
					return nil, fmt.Errorf("line %d: label %s defined twice", n, l)
				}
				e.labels[l] = len(e.insts)
			default:
				sm := reInst.FindStringSubmatch(line)
				if sm == nil {
					return nil, fmt.Errorf("line %d: cannot parse %q (missing ';'?)", n, line)
				}
				in := ptxInst{line: n, op: sm[2], parts: strings.Split(sm[2], ".")}
				if g := strings.TrimSpace(sm[1]); g != "" {
					in.neg = strings.HasPrefix(g, "@!")
					in.guard = strings.TrimLeft(g, "@!")
				}
				if sm[4] != "" {
					in.args = splitArgs(sm[4])
				}
				e.insts = append(e.insts, in)
			}
		}
	}
	if state != top {
		return nil, fmt.Errorf("module ends inside entry %s", e.name)
	}
	return m, nil
}

func stripComment(s string) string {
	if i := strings.Index(s, "//"); i >= 0 {
		return s[:i]
	}
	return s
}

// splitArgs splits operands at the commas outside braces and brackets.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// typeBits is the size of a PTX type or register type.
func typeBits(t string) int {
	switch t {
	case "pred":
		return 1
	case "u8", "s8", "b8":
		return 8
	case "u16", "s16", "b16", "f16":
		return 16
	case "u32", "s32", "b32", "f32":
		return 32
	case "u64", "s64", "b64", "f64":
		return 64
	}
	return 0
}

func isFloat(t string) bool { return strings.HasPrefix(t, "f") }

// operandSpecs returns what each operand of in must be: a type name, "pred",
// "mem", "label", "special", or "vN:T" for a vector of N elements of T; a
// leading "~" allows an integer register wider than the type (ld and st).
func operandSpecs(in ptxInst) ([]string, error) {
	p := strings.Split(in.op, ".")
	last := p[len(p)-1]
	bad := func() ([]string, error) {
		return nil, fmt.Errorf("line %d: unsupported instruction %s", in.line, in.op)
	}
	switch p[0] {
	case "ret":
		if len(p) != 1 {
			return bad()
		}
		return nil, nil
	case "bra":
		if len(p) != 1 {
			return bad()
		}
		return []string{"label"}, nil
	case "ld", "st":
		if len(p) < 3 || (p[1] != "param" && p[1] != "global") || typeBits(last) == 0 || isFloat(last) {
			return bad()
		}
		val := "~" + last
		if len(p) == 4 {
			switch p[2] {
			case "v2", "v4":
				val = p[2] + ":~" + last
			default:
				return bad()
			}
		} else if len(p) != 3 {
			return bad()
		}
		if p[1] == "param" && (p[0] != "ld" || len(p) != 3 || last != "u64") {
			return bad()
		}
		if p[0] == "ld" {
			return []string{val, "mem"}, nil
		}
		return []string{"mem", val}, nil
	case "cvta":
		if in.op != "cvta.to.global.u64" {
			return bad()
		}
		return []string{"u64", "u64"}, nil
	case "mov":
		if len(p) != 2 || typeBits(last) < 16 {
			return bad()
		}
		if len(in.args) == 2 && strings.HasPrefix(in.args[0], "{") {
			k := len(splitArgs(strings.Trim(in.args[0], "{}")))
			return []string{fmt.Sprintf("v%d:b%d", k, typeBits(last)/k), "b" + strconv.Itoa(typeBits(last))}, nil
		}
		if len(in.args) == 2 && strings.HasPrefix(in.args[1], "{") {
			k := len(splitArgs(strings.Trim(in.args[1], "{}")))
			return []string{"b" + strconv.Itoa(typeBits(last)), fmt.Sprintf("v%d:b%d", k, typeBits(last)/k)}, nil
		}
		if len(in.args) == 2 && strings.Contains(in.args[1], ".") {
			if last != "u32" {
				return bad()
			}
			return []string{"u32", "special"}, nil
		}
		return []string{last, last}, nil
	case "cvt":
		if len(p) < 3 || len(p) > 4 {
			return bad()
		}
		dst, src := p[len(p)-2], p[len(p)-1]
		rounding := len(p) == 4
		if rounding && p[1] != "rn" && p[1] != "rz" && p[1] != "rm" && p[1] != "rp" {
			return bad()
		}
		switch {
		case isFloat(dst) && isFloat(src) && typeBits(dst) < typeBits(src):
			if !rounding {
				return nil, fmt.Errorf("line %d: %s: float narrowing needs a rounding modifier", in.line, in.op)
			}
		case rounding:
			return nil, fmt.Errorf("line %d: %s: this conversion takes no rounding modifier", in.line, in.op)
		case isFloat(dst) != isFloat(src):
			return bad() // int<->float conversions are not used
		}
		return []string{dst, src}, nil
	case "mad":
		if in.op != "mad.wide.u32" {
			return bad()
		}
		return []string{"u64", "u32", "u32", "u64"}, nil
	case "mul":
		switch {
		case in.op == "mul.wide.u32":
			return []string{"u64", "u32", "u32"}, nil
		case len(p) == 3 && p[1] == "lo" && !isFloat(last):
			return []string{last, last, last}, nil
		case len(p) == 3 && p[1] == "rn" && isFloat(last):
			return []string{last, last, last}, nil
		}
		return bad()
	case "add", "sub":
		switch {
		case len(p) == 2 && !isFloat(last):
			return []string{last, last, last}, nil
		case len(p) == 3 && p[1] == "rn" && isFloat(last):
			return []string{last, last, last}, nil
		}
		return bad()
	case "min", "max":
		if len(p) != 2 || (last[0] != 'u' && last[0] != 's') {
			return bad()
		}
		return []string{last, last, last}, nil
	case "and", "or":
		if len(p) != 2 || last[0] != 'b' {
			return bad()
		}
		return []string{last, last, last}, nil
	case "shl", "shr":
		if len(p) != 2 || (p[0] == "shl" && last[0] != 'b') || (p[0] == "shr" && last[0] == 'f') {
			return bad()
		}
		return []string{last, last, "u32"}, nil
	case "setp":
		if len(p) != 3 {
			return bad()
		}
		switch p[1] {
		case "lt", "le", "gt", "ge", "eq", "ne":
		case "nan", "num":
			if !isFloat(last) {
				return bad()
			}
		default:
			return bad()
		}
		return []string{"pred", last, last}, nil
	case "selp":
		if len(p) != 2 {
			return bad()
		}
		return []string{last, last, last, "pred"}, nil
	case "bfe":
		if len(p) != 2 || (last != "u32" && last != "s32" && last != "u64" && last != "s64") {
			return bad()
		}
		return []string{last, last, "u32", "u32"}, nil
	case "bfi":
		if len(p) != 2 || (last != "b32" && last != "b64") {
			return bad()
		}
		return []string{last, last, last, "u32", "u32"}, nil
	}
	return bad()
}

// checkEntry checks every instruction of e against operandSpecs, and that
// every register it names is declared.
func checkEntry(e *ptxEntry) error {
	params := map[string]bool{}
	for _, p := range e.params {
		params[p.name] = true
	}
	for _, in := range e.insts {
		if in.guard != "" {
			if err := checkOperand(e, params, in.guard, "pred"); err != nil {
				return fmt.Errorf("line %d: guard: %v", in.line, err)
			}
		}
		specs, err := operandSpecs(in)
		if err != nil {
			return err
		}
		if len(specs) != len(in.args) {
			return fmt.Errorf("line %d: %s takes %d operands, has %d", in.line, in.op, len(specs), len(in.args))
		}
		for i, a := range in.args {
			if err := checkOperand(e, params, a, specs[i]); err != nil {
				return fmt.Errorf("line %d: %s operand %d (%s): %v", in.line, in.op, i, a, err)
			}
		}
	}
	return nil
}

var specials = map[string]bool{"%tid.x": true, "%ntid.x": true, "%ctaid.x": true, "%nctaid.x": true}

// regType returns the declared type of register name.
func regType(e *ptxEntry, name string) (string, error) {
	sm := reReg.FindStringSubmatch(name)
	if sm == nil {
		return "", fmt.Errorf("%q is not a register", name)
	}
	d, ok := e.regs[sm[1]]
	if !ok {
		return "", fmt.Errorf("register %s: %s is not declared", name, sm[1])
	}
	if i, _ := strconv.Atoi(sm[2]); i >= d.count {
		return "", fmt.Errorf("register %s outside %s<%d>", name, sm[1], d.count)
	}
	return d.typ, nil
}

func checkOperand(e *ptxEntry, params map[string]bool, a, spec string) error {
	switch {
	case spec == "label":
		if _, ok := e.labels[a]; !ok {
			return fmt.Errorf("undefined label")
		}
		return nil
	case spec == "special":
		if !specials[a] {
			return fmt.Errorf("unknown special register")
		}
		return nil
	case spec == "mem":
		if !strings.HasPrefix(a, "[") || !strings.HasSuffix(a, "]") {
			return fmt.Errorf("not an address")
		}
		in := a[1 : len(a)-1]
		if params[in] {
			return nil
		}
		t, err := regType(e, in)
		if err != nil {
			return err
		}
		if typeBits(t) != 64 || isFloat(t) {
			return fmt.Errorf("address register of type %s", t)
		}
		return nil
	case strings.HasPrefix(spec, "v"):
		k, _ := strconv.Atoi(spec[1:strings.Index(spec, ":")])
		elem := spec[strings.Index(spec, ":")+1:]
		if !strings.HasPrefix(a, "{") || !strings.HasSuffix(a, "}") {
			return fmt.Errorf("not a vector")
		}
		parts := splitArgs(a[1 : len(a)-1])
		if len(parts) != k {
			return fmt.Errorf("vector of %d, want %d", len(parts), k)
		}
		for _, x := range parts {
			if err := checkOperand(e, params, x, elem); err != nil {
				return err
			}
		}
		return nil
	}
	relax := strings.HasPrefix(spec, "~")
	want := strings.TrimPrefix(spec, "~")
	if isImmediate(a) {
		if want == "pred" || isFloat(want) {
			return fmt.Errorf("immediate where a %s register is needed", want)
		}
		return nil
	}
	t, err := regType(e, a)
	if err != nil {
		return err
	}
	switch {
	case want == "pred" || t == "pred":
		if want != t {
			return fmt.Errorf("%s register where %s is needed", t, want)
		}
	case isFloat(t):
		if typeBits(t) != typeBits(want) || !(isFloat(want) || want[0] == 'b') {
			return fmt.Errorf("%s register where %s is needed", t, want)
		}
	case typeBits(t) == typeBits(want):
	case relax && typeBits(t) > typeBits(want) && !isFloat(want):
	default:
		return fmt.Errorf("%s register where %s is needed", t, want)
	}
	return nil
}

func isImmediate(a string) bool {
	_, err := strconv.ParseInt(a, 0, 64)
	return err == nil
}
