package units

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

// Each parser's fuzz target checks what it accepts is in range, and that
// a writer's text of the value reads back as the same value.

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0", "1024", "8MiB", "1.5 KB", "-1", "1e3", "1_0KiB", "x", "1e99", "0.5B", "1024TiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err != nil {
			if n != 0 {
				t.Fatalf("ParseBytes(%q) = %d with error %v", s, n, err)
			}
			return
		}
		if n < 0 || n > MaxBytes {
			t.Fatalf("ParseBytes(%q) = %d, outside [0, MaxBytes]", s, n)
		}
		for _, text := range []string{FormatBytesCompact(n), FormatBytesExact(n)} {
			if m, err := ParseBytes(text); err != nil || m != n {
				t.Fatalf("ParseBytes(%q) = %d, but ParseBytes(%q) = %d, %v", s, n, text, m, err)
			}
		}
	})
}

func FuzzParseNCCLBytes(f *testing.F) {
	for _, s := range []string{"8", "128M", "1G", "64K", "8MiB", "1.5KB", "9999999999999G", "-1K", "1024T", "1k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNCCLBytes(s)
		if err != nil {
			return
		}
		if n < 0 || n > MaxBytes {
			t.Fatalf("ParseNCCLBytes(%q) = %d, outside [0, MaxBytes]", s, n)
		}
		text := FormatBytesCompact(n)
		if m, err := ParseNCCLBytes(text); err != nil || m != n {
			t.Fatalf("ParseNCCLBytes(%q) = %d, but ParseNCCLBytes(%q) = %d, %v", s, n, text, m, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "5us", "1.5 ms", "2.5ps", "-1s", "5", "1e-3s", "µs", "1000000s", "123456.789123456s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 || d > MaxDuration {
			t.Fatalf("ParseDuration(%q) = %v, outside [0, %v]", s, d, MaxDuration)
		}
		text := d.String()
		e, err := ParseDuration(text)
		if err != nil {
			t.Fatalf("ParseDuration(%q) = %d ps, but ParseDuration(%q): %v", s, d, text, err)
		}
		// Exact up to 2^51 ps; above, String's float64 keeps about 16
		// digits.
		if diff := max(e-d, d-e); d < 1<<51 && diff != 0 || diff > d>>50+1 {
			t.Fatalf("ParseDuration(%q) = %d ps, but ParseDuration(%q) = %d ps", s, d, text, e)
		}
	})
}

func FuzzParseBandwidth(f *testing.F) {
	for _, s := range []string{"12.5GB/s", "100Gbit/s", "1KiB/s", "inf", "0GB/s", "-1B/s", "1e40TB/s", "8bit/s", "1e-30B/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bw, err := ParseBandwidth(s)
		if err != nil {
			return
		}
		if !(bw > 0) || bw > 1e30 && !math.IsInf(bw, 1) {
			t.Fatalf("ParseBandwidth(%q) = %g, not a positive bandwidth of at most 1e30 B/s, nor inf", s, bw)
		}
		if math.IsInf(bw, 1) || bw < 1e-30 {
			return
		}
		text := FormatBandwidth(bw)
		if b, err := ParseBandwidth(text); err != nil || b != bw {
			t.Fatalf("ParseBandwidth(%q) = %g, but ParseBandwidth(%q) = %g, %v", s, bw, text, b, err)
		}
	})
}

// FuzzParseFLOPs and FuzzParseFLOPS write the value bare, with as many
// digits as it takes: nexar writes no amounts of compute.
func FuzzParseFLOPs(f *testing.F) {
	for _, s := range []string{"0", "1.2TFLOP", "350 GFLOP", "1e12", "-1", "1e31", "1 EFLOP"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseFLOPs(s)
		if err != nil {
			return
		}
		if !(x >= 0) || x > 1e30 {
			t.Fatalf("ParseFLOPs(%q) = %g, outside [0, 1e30]", s, x)
		}
		if x != 0 && x < 1e-30 {
			return
		}
		text := strconv.FormatFloat(x, 'g', -1, 64)
		if y, err := ParseFLOPs(text); err != nil || y != x {
			t.Fatalf("ParseFLOPs(%q) = %g, but ParseFLOPs(%q) = %g, %v", s, x, text, y, err)
		}
	})
}

func FuzzParseFLOPS(f *testing.F) {
	for _, s := range []string{"989TFLOP/s", "2.5 PFLOP/s", "1e9", "0", "1e31", "1 EFLOP/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseFLOPS(s)
		if err != nil {
			return
		}
		if !(x > 0) || x > 1e30 {
			t.Fatalf("ParseFLOPS(%q) = %g, outside (0, 1e30]", s, x)
		}
		if x < 1e-30 {
			return
		}
		text := strconv.FormatFloat(x, 'g', -1, 64) + "FLOP/s"
		if y, err := ParseFLOPS(text); err != nil || y != x {
			t.Fatalf("ParseFLOPS(%q) = %g, but ParseFLOPS(%q) = %g, %v", s, x, text, y, err)
		}
	})
}

func FuzzParseByteRange(f *testing.F) {
	for _, s := range []string{"1KiB..1GiB x2", "0..4KiB +1KiB", "8MiB", "1..1", "1..9e15 x3", "5..1", "0..1MiB +1", "1..8 +3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vals, err := ParseByteRange(s)
		if err != nil {
			return
		}
		if len(vals) == 0 || len(vals) > MaxRangeValues {
			t.Fatalf("ParseByteRange(%q) gave %d values", s, len(vals))
		}
		for i, v := range vals {
			if v < 0 || v > MaxBytes || i > 0 && v <= vals[i-1] {
				t.Fatalf("ParseByteRange(%q) = %v: not increasing sizes", s, vals)
			}
		}
		roundTrip(t, "ParseByteRange", s, vals, ParseByteRange)
	})
}

func FuzzParseIntRange(f *testing.F) {
	for _, s := range []string{"8", "2..64 x2", "1..4 +1", "1..9223372036854775807 x1048576", "1_000..2_000 +500", "-2..4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vals, err := ParseIntRange(s)
		if err != nil {
			return
		}
		if len(vals) == 0 || len(vals) > MaxRangeValues {
			t.Fatalf("ParseIntRange(%q) gave %d values", s, len(vals))
		}
		for i, v := range vals {
			if v < 0 || i > 0 && v <= vals[i-1] {
				t.Fatalf("ParseIntRange(%q) = %v: not increasing", s, vals)
			}
		}
		roundTrip(t, "ParseIntRange", s, vals, ParseIntRange)
	})
}

// roundTrip writes vals, which parse read from s, as a Range that gives
// them (one value steps by 1, two by their difference, more by their
// common difference or ratio) and checks that parse reads that back.
func roundTrip(t *testing.T, name, s string, vals []int64, parse func(string) ([]int64, error)) {
	t.Helper()
	r := Range{Start: vals[0], End: vals[len(vals)-1], Step: 1}
	switch {
	case len(vals) == 2:
		r.Step = vals[1] - vals[0]
	case len(vals) > 2 && vals[2]-vals[1] == vals[1]-vals[0]:
		r.Step = vals[1] - vals[0]
	case len(vals) > 2:
		r.Step, r.Factor = 0, vals[1]/vals[0]
	}
	text := r.String()
	again, err := parse(text)
	if err != nil || !slices.Equal(again, vals) {
		t.Fatalf("%s(%q) = %v, but %s(%q) = %v, %v", name, s, vals, name, text, again, err)
	}
}
