package units

import (
	"fmt"
	"strconv"
	"strings"
)

// A Range is a sequence of whole numbers that are not negative: Start,
// then each next value, times Factor or (where Factor is 0) plus Step,
// while it is at most End. "1KiB..1GiB x2" in a scenario and nccl-tests'
// "-b 1K -e 1G -f 2" are both Range{Start: 1 << 10, End: 1 << 30, Factor:
// 2}; "-i 1M" is a Step.
type Range struct {
	Start, End   int64
	Factor, Step int64
}

// Values expands r. ok is false, with no values, where r has more than
// MaxRangeValues values or is not one Values can expand: a negative Start,
// a Factor below 2 (other than 0) or one with Start 0, or neither a Factor
// nor a Step above 0. Callers check those first, in their own words. A
// Start above End gives no values.
func (r Range) Values() (vals []int64, ok bool) {
	if r.Start < 0 || r.Factor < 0 || r.Factor == 1 || r.Factor > 1 && r.Start == 0 || r.Factor == 0 && r.Step < 1 {
		return nil, false
	}
	if r.Start > r.End {
		return nil, true
	}
	// next returns the value after v, and false if it is past End.
	next := func(v int64) (int64, bool) {
		if v > r.End-r.Step {
			return 0, false
		}
		return v + r.Step, true
	}
	if r.Factor > 1 {
		next = func(v int64) (int64, bool) {
			if v > r.End/r.Factor {
				return 0, false
			}
			return v * r.Factor, true
		}
	}
	out := []int64{r.Start}
	for v, ok := next(r.Start); ok; v, ok = next(v) {
		if len(out) == MaxRangeValues {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// String writes r as ParseIntRange reads it, and ParseByteRange too where
// End is at most MaxBytes: "1024..1073741824 x2", "0..3072 +1024".
func (r Range) String() string {
	if r.Factor != 0 {
		return fmt.Sprintf("%d..%d x%d", r.Start, r.End, r.Factor)
	}
	return fmt.Sprintf("%d..%d +%d", r.Start, r.End, r.Step)
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
	var r Range
	var err error
	if r.Start, err = parse(lo); err != nil {
		return nil, bad("start: %v", err)
	}
	if r.End, err = parse(hi); err != nil {
		return nil, bad("end: %v", err)
	}
	if r.Start > r.End {
		return nil, bad("start %d is above end %d", r.Start, r.End)
	}
	switch {
	case step == "":
		step = "x2"
		fallthrough
	case step[0] == 'x' || step[0] == '*':
		f, err := strconv.ParseInt(strings.TrimSpace(step[1:]), 10, 64)
		if err != nil || f < 2 || f > 1<<20 {
			return nil, bad("factor %q must be a whole number from 2 to %d", step[1:], 1<<20)
		}
		if r.Start == 0 {
			return nil, bad("a range that multiplies must start above 0 (list 0 on its own: [0, \"1..8 x2\"])")
		}
		r.Factor = f
	default: // '+'
		d, err := parse(step[1:])
		if err != nil {
			return nil, bad("step: %v", err)
		}
		if d <= 0 {
			return nil, bad("step must be above 0")
		}
		r.Step = d
	}
	out, ok := r.Values()
	if !ok {
		return nil, bad("more than %d values", MaxRangeValues)
	}
	return out, nil
}
