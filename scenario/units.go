package scenario

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/sim"
)

// Limits on what the unit parsers accept, so that a typo cannot ask for an
// absurd run (or make the parser itself allocate without bound).
const (
	// MaxBytes is the largest message size a scenario may name: 1 PiB.
	MaxBytes = 1 << 50
	// MaxRangeValues is the most values one range may expand to.
	MaxRangeValues = 4096
	// maxNumberLen bounds the length of a number's text.
	maxNumberLen = 64
	// maxExponent bounds the decimal exponent of a number (1e40).
	maxExponent = 40
)

// byteUnits are the size units ParseBytes accepts; bare numbers are bytes.
var byteUnits = []unit{
	{"B", 1, 1},
	{"KB", 1e3, 1}, {"kB", 1e3, 1}, {"MB", 1e6, 1}, {"GB", 1e9, 1}, {"TB", 1e12, 1},
	{"KiB", 1 << 10, 1}, {"MiB", 1 << 20, 1}, {"GiB", 1 << 30, 1}, {"TiB", 1 << 40, 1},
}

// bandwidthUnits are the rate units ParseBandwidth accepts, in bytes per
// second. Decimal prefixes are powers of 10, binary ones powers of 2.
var bandwidthUnits = []unit{
	{"B/s", 1, 1},
	{"KB/s", 1e3, 1}, {"kB/s", 1e3, 1}, {"MB/s", 1e6, 1}, {"GB/s", 1e9, 1}, {"TB/s", 1e12, 1},
	{"KiB/s", 1 << 10, 1}, {"MiB/s", 1 << 20, 1}, {"GiB/s", 1 << 30, 1}, {"TiB/s", 1 << 40, 1},
	{"bit/s", 1, 8},
	{"Kbit/s", 1e3, 8}, {"kbit/s", 1e3, 8}, {"Mbit/s", 1e6, 8}, {"Gbit/s", 1e9, 8}, {"Tbit/s", 1e12, 8},
	{"Mbps", 1e6, 8}, {"Gbps", 1e9, 8}, {"Tbps", 1e12, 8},
}

// flopUnits are the units of an amount of compute ParseFLOPs accepts,
// and flopsUnits those of a rate ParseFLOPS accepts (powers of 10).
var flopUnits = []unit{
	{"FLOP", 1, 1}, {"kFLOP", 1e3, 1}, {"MFLOP", 1e6, 1}, {"GFLOP", 1e9, 1}, {"TFLOP", 1e12, 1}, {"PFLOP", 1e15, 1}, {"EFLOP", 1e18, 1},
}
var flopsUnits = []unit{
	{"FLOP/s", 1, 1}, {"kFLOP/s", 1e3, 1}, {"MFLOP/s", 1e6, 1}, {"GFLOP/s", 1e9, 1}, {"TFLOP/s", 1e12, 1}, {"PFLOP/s", 1e15, 1}, {"EFLOP/s", 1e18, 1},
}

// durationUnits are the time units ParseDuration accepts, in picoseconds.
var durationUnits = []unit{
	{"ps", 1, 1}, {"ns", 1e3, 1}, {"us", 1e6, 1}, {"µs", 1e6, 1}, {"μs", 1e6, 1}, {"ms", 1e9, 1}, {"s", 1e12, 1},
}

// unit is a unit worth num/den base units (bytes, bytes per second,
// picoseconds).
type unit struct {
	name     string
	num, den int64
}

func unitNames(us []unit) string {
	names := make([]string, len(us))
	for i, u := range us {
		names[i] = u.name
	}
	return strings.Join(names, ", ")
}

// splitNumber splits s into a number and the unit that follows it, with
// optional spaces between them.
func splitNumber(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && strings.IndexByte("0123456789.+-eE_", s[i]) >= 0 {
		// An 'e' is part of the number only where an exponent can be.
		if (s[i] == 'e' || s[i] == 'E') && (i == 0 || !isDigitOrDot(s[i-1])) {
			break
		}
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func isDigitOrDot(c byte) bool { return c == '.' || c >= '0' && c <= '9' }

// parseDecimal parses a plain decimal number ("12.5", "1e3", "1_000")
// exactly.
func parseDecimal(s string) (*big.Rat, error) {
	if s == "" {
		return nil, fmt.Errorf("missing number")
	}
	if len(s) > maxNumberLen {
		return nil, fmt.Errorf("number %.20q... is too long", s)
	}
	clean := strings.ReplaceAll(s, "_", "")
	mant, exp := clean, ""
	if i := strings.IndexAny(clean, "eE"); i >= 0 {
		mant, exp = clean[:i], clean[i+1:]
	}
	ok := mant != "" && mant != "." && mant != "+" && mant != "-"
	for j := 0; j < len(mant) && ok; j++ {
		c := mant[j]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && strings.Count(mant, ".") == 1:
		case (c == '+' || c == '-') && j == 0:
		default:
			ok = false
		}
	}
	if ok && len(mant) < len(clean) { // there is an exponent
		e, err := strconv.Atoi(exp)
		if err != nil || e > maxExponent || e < -maxExponent {
			ok = false
		}
	}
	if !ok {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	r, ok := new(big.Rat).SetString(clean)
	if !ok {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return r, nil
}

// parseQuantity parses "<number><unit>" with a unit from units and returns
// the value in base units. bare says whether a number without a unit is in
// base units; otherwise only zero may go without one.
func parseQuantity(s, what string, units []unit, bare bool) (*big.Rat, error) {
	num, u := splitNumber(s)
	if num == "" {
		return nil, fmt.Errorf("%q is not a %s: want a number and a unit (%s)", s, what, unitNames(units))
	}
	r, err := parseDecimal(num)
	if err != nil {
		return nil, fmt.Errorf("%q is not a %s: %v", s, what, err)
	}
	if r.Sign() < 0 {
		return nil, fmt.Errorf("%q is not a %s: it is negative", s, what)
	}
	if u == "" {
		if !bare && r.Sign() != 0 {
			return nil, fmt.Errorf("%q is not a %s: missing unit (want one of %s)", s, what, unitNames(units))
		}
		return r, nil
	}
	for _, x := range units {
		if x.name == u {
			return r.Mul(r, big.NewRat(x.num, x.den)), nil
		}
	}
	return nil, fmt.Errorf("%q is not a %s: unknown unit %q (want one of %s)", s, what, u, unitNames(units))
}

// ParseBytes parses a size in bytes: a whole number of bytes with an
// optional unit, decimal (B, KB, MB, GB, TB: powers of 10) or binary (KiB,
// MiB, GiB, TiB: powers of 2), such as "1024", "8MiB", "1.5 KB". The size
// must be a whole number of bytes, not negative, and at most MaxBytes.
func ParseBytes(s string) (int64, error) {
	r, err := parseQuantity(s, "size", byteUnits, true)
	if err != nil {
		return 0, err
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	if r.Cmp(big.NewRat(MaxBytes, 1)) > 0 {
		return 0, fmt.Errorf("%q is too large (at most %d bytes, 1PiB)", s, int64(MaxBytes))
	}
	return r.Num().Int64(), nil
}

// maxDuration is the longest duration ParseDuration accepts: a million
// seconds, far below the overflow of sim.Time.
const maxDuration = 1e6 * sim.Second

// ParseDuration parses a duration such as "5us", "1.5 ms" or "0": a number
// and a unit, one of ps, ns, us (or µs), ms, s. Zero needs no unit. The
// result is rounded to the nearest picosecond, the simulator's resolution.
func ParseDuration(s string) (sim.Time, error) {
	r, err := parseQuantity(s, "duration", durationUnits, false)
	if err != nil {
		return 0, err
	}
	if r.Cmp(big.NewRat(int64(maxDuration), 1)) > 0 {
		return 0, fmt.Errorf("%q is too long (at most %v)", s, maxDuration)
	}
	// Round half up: r is not negative.
	q := new(big.Int).Add(new(big.Int).Mul(r.Num(), big.NewInt(2)), r.Denom())
	q.Quo(q, new(big.Int).Mul(r.Denom(), big.NewInt(2)))
	return sim.Time(q.Int64()), nil
}

// ParseBandwidth parses a bandwidth in bytes per second, such as
// "12.5GB/s", "400Gbit/s" or "10 GiB/s". Decimal prefixes (KB/s, MB/s,
// GB/s, TB/s, Kbit/s, Mbit/s, Gbit/s, Tbit/s) are powers of 10, binary ones
// (KiB/s, MiB/s, GiB/s, TiB/s) powers of 2; bit rates are divided by 8. "inf"
// is an infinite bandwidth (moving data takes no time). A bandwidth must be
// positive.
func ParseBandwidth(s string) (float64, error) {
	switch strings.TrimSpace(s) {
	case "inf", "Inf", "+inf", "+Inf":
		return math.Inf(1), nil
	}
	r, err := parseQuantity(s, "bandwidth", bandwidthUnits, false)
	if err != nil {
		return 0, err
	}
	if r.Sign() == 0 {
		return 0, fmt.Errorf("%q is not a bandwidth: it must be positive", s)
	}
	f, _ := r.Float64()
	if math.IsInf(f, 0) || f > 1e30 {
		return 0, fmt.Errorf("%q is too large a bandwidth (use \"inf\" for an infinite one)", s)
	}
	return f, nil
}

// ParseByteRange parses a range of sizes "START..END STEP": START, then
// each next value by STEP while it is at most END. STEP is "xF" (multiply
// by the integer F >= 2; START must then be above 0) or "+S" (add the size
// S > 0); without a STEP the range doubles, as in "1KiB..1GiB" (the
// default of nccl-tests' -f 2). START and END are sizes as ParseBytes
// reads them. A range gives at most MaxRangeValues values.
//
// A string without ".." is a single size.
func ParseByteRange(s string) ([]int64, error) {
	return parseRange(s, ParseBytes)
}

// parseInt parses a plain non-negative integer such as a world size.
func parseInt(s string) (int64, error) {
	t := strings.TrimSpace(s)
	v, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 10, 64)
	if err != nil || v < 0 || strings.HasPrefix(t, "_") {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return v, nil
}

// ParseIntRange parses a range of whole numbers with the syntax of
// ParseByteRange but no units, such as "2..64 x2" or "1..8 +1".
func ParseIntRange(s string) ([]int64, error) {
	return parseRange(s, parseInt)
}

func parseRange(s string, parse func(string) (int64, error)) ([]int64, error) {
	lo, rest, isRange := strings.Cut(s, "..")
	if !isRange {
		v, err := parse(s)
		if err != nil {
			return nil, err
		}
		return []int64{v}, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("range %q: %s (want START..END, START..END xFACTOR or START..END +STEP, such as \"1KiB..1GiB x2\")",
			s, fmt.Sprintf(format, args...))
	}
	hi, step := rest, ""
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == 'x' || c == '*' || c == '+' && (i == 0 || rest[i-1] != 'e' && rest[i-1] != 'E') {
			hi, step = rest[:i], strings.TrimSpace(rest[i:])
			break
		}
	}
	start, err := parse(lo)
	if err != nil {
		return nil, bad("start: %v", err)
	}
	end, err := parse(hi)
	if err != nil {
		return nil, bad("end: %v", err)
	}
	if start > end {
		return nil, bad("start %d is above end %d", start, end)
	}
	// next returns the value after v, and false if it is past end.
	var next func(v int64) (int64, bool)
	switch {
	case step == "":
		step = "x2"
		fallthrough
	case step[0] == 'x' || step[0] == '*':
		f, err := strconv.ParseInt(strings.TrimSpace(step[1:]), 10, 64)
		if err != nil || f < 2 || f > 1<<20 {
			return nil, bad("factor %q must be a whole number from 2 to %d", step[1:], 1<<20)
		}
		if start == 0 {
			return nil, bad("a range that multiplies must start above 0 (list 0 on its own: [0, \"1..8 x2\"])")
		}
		next = func(v int64) (int64, bool) {
			if v > end/f {
				return 0, false
			}
			return v * f, true
		}
	default: // '+'
		d, err := parse(step[1:])
		if err != nil {
			return nil, bad("step: %v", err)
		}
		if d <= 0 {
			return nil, bad("step must be above 0")
		}
		next = func(v int64) (int64, bool) {
			if v > end-d {
				return 0, false
			}
			return v + d, true
		}
	}
	out := []int64{start}
	for v, ok := next(start); ok; v, ok = next(v) {
		if len(out) == MaxRangeValues {
			return nil, bad("more than %d values", MaxRangeValues)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseFLOPs parses an amount of compute in floating-point operations,
// such as "1.2TFLOP", "350 GFLOP" or a bare number (FLOPs); prefixes are
// powers of 10. It must not be negative, nor above 1e30.
func ParseFLOPs(s string) (float64, error) {
	r, err := parseQuantity(s, "number of FLOPs", flopUnits, true)
	if err != nil {
		return 0, err
	}
	f, _ := r.Float64()
	if f > 1e30 {
		return 0, fmt.Errorf("%q is too many FLOPs", s)
	}
	return f, nil
}

// ParseFLOPS parses a rate of compute in floating-point operations per
// second, such as "989TFLOP/s", "2.5 PFLOP/s" or a bare number (FLOP/s);
// prefixes are powers of 10. It must be positive, and at most 1e30.
func ParseFLOPS(s string) (float64, error) {
	r, err := parseQuantity(s, "FLOP rate", flopsUnits, true)
	if err != nil {
		return 0, err
	}
	f, _ := r.Float64()
	if !(f > 0) || f > 1e30 {
		return 0, fmt.Errorf("%q is not a FLOP rate: want a positive rate such as \"989TFLOP/s\"", s)
	}
	return f, nil
}
