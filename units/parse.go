package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Limits on what the parsers accept, so that a typo cannot ask for an
// absurd run (or make the parser itself allocate without bound).
const (
	// MaxBytes is the largest size ParseBytes accepts: 1 PiB.
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

// ParseNCCLBytes parses a size as nccl-tests' -b, -e and -i take it: a
// whole number with an optional K, M, G or T (either case; powers of
// 1024: "128M" is 128 MiB), or else as ParseBytes does ("8MiB", "1KB").
func ParseNCCLBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if n := len(t); n > 1 {
		shift := map[byte]uint{'K': 10, 'k': 10, 'M': 20, 'm': 20, 'G': 30, 'g': 30, 'T': 40, 't': 40}[t[n-1]]
		if v, err := strconv.ParseInt(t[:n-1], 10, 64); shift > 0 && err == nil && v >= 0 && v <= MaxBytes>>shift {
			return v << shift, nil
		}
	}
	return ParseBytes(t)
}

// ParseDuration parses a duration such as "5us", "1.5 ms" or "0": a number
// and a unit, one of ps, ns, us (or µs), ms, s. Zero needs no unit. The
// result is rounded to the nearest picosecond, half up; it is at most
// MaxDuration.
func ParseDuration(s string) (Picoseconds, error) {
	r, err := parseQuantity(s, "duration", durationUnits, false)
	if err != nil {
		return 0, err
	}
	if r.Cmp(big.NewRat(int64(MaxDuration), 1)) > 0 {
		return 0, fmt.Errorf("%q is too long (at most %v)", s, MaxDuration)
	}
	// Round half up: r is not negative.
	q := new(big.Int).Add(new(big.Int).Mul(r.Num(), big.NewInt(2)), r.Denom())
	q.Quo(q, new(big.Int).Mul(r.Denom(), big.NewInt(2)))
	return Picoseconds(q.Int64()), nil
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
