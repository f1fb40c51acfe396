package units

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""},
		{"1024", 1024, ""},
		{"1_024", 1024, ""},
		{"8MiB", 8 << 20, ""},
		{"8 MiB", 8 << 20, ""},
		{" 1KiB ", 1024, ""},
		{"1KB", 1000, ""},
		{"1kB", 1000, ""},
		{"1.5KiB", 1536, ""},
		{"1.5KB", 1500, ""},
		{"2GiB", 2 << 30, ""},
		{"1TB", 1e12, ""},
		{"1e3", 1000, ""},
		{"1.25e3B", 1250, ""},
		{"3B", 3, ""},
		{"1TiB", 1 << 40, ""},
		{"1024TiB", 1 << 50, ""},
		{"+5", 5, ""},
		{"", 0, `"" is not a size: want a number and a unit (B, KB, kB, MB, GB, TB, KiB, MiB, GiB, TiB)`},
		{"MiB", 0, "want a number and a unit"},
		{"-1", 0, `"-1" is not a size: it is negative`},
		{"-1KiB", 0, "negative"},
		{"1.5B", 0, `"1.5B" is not a whole number of bytes`},
		{"0.1KiB", 0, "whole number of bytes"},
		{"8M", 0, `"8M" is not a size: unknown unit "M" (want one of B, KB, kB, MB, GB, TB, KiB, MiB, GiB, TiB)`},
		{"8mib", 0, `unknown unit "mib"`},
		{"eight", 0, "want a number"},
		{"1..2", 0, `"1..2" is not a size: "1..2" is not a number`},
		{"1e99", 0, "not a number"},
		{"1025TiB", 0, `"1025TiB" is too large (at most 1125899906842624 bytes, 1PiB)`},
		{"0x10", 0, `unknown unit "x10"`},
		{"1/2", 0, `unknown unit "/2"`},
		{"1.2.3", 0, "not a number"},
		{"5e", 0, "not a number"},
		{strings.Repeat("1", 65), 0, "is too long"},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseBytes(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseNCCLBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"8", 8, ""},
		{"128M", 128 << 20, ""},
		{"128m", 128 << 20, ""},
		{"64K", 64 << 10, ""},
		{"1G", 1 << 30, ""},
		{"1T", 1 << 40, ""},
		{" 1G ", 1 << 30, ""},
		{"+8K", 8 << 10, ""},
		{"8MiB", 8 << 20, ""},
		{"1KB", 1000, ""},
		{"1024T", 1 << 50, ""},
		{"1025T", 0, `unknown unit "T"`},
		{"-1K", 0, "negative"},
		{"1.5K", 0, `unknown unit "K"`},
		{"K", 0, "want a number and a unit"},
		{"9999999999999G", 0, `unknown unit "G"`},
	}
	for _, tt := range tests {
		got, err := ParseNCCLBytes(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseNCCLBytes(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseNCCLBytes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    Picoseconds
		wantErr string
	}{
		{"0", 0, ""},
		{"5us", 5e6, ""},
		{"5µs", 5e6, ""},
		{"5μs", 5e6, ""}, // the Greek mu, not the micro sign
		{"5 us", 5e6, ""},
		{"1.5ms", 1.5e9, ""},
		{"100ns", 1e5, ""},
		{"1s", 1e12, ""},
		{"2.5ps", 3, ""}, // rounded half up
		{"0.4ps", 0, ""},
		{"1e-3s", 1e9, ""},
		{"0s", 0, ""},
		{"1000000s", MaxDuration, ""},
		{"5", 0, `"5" is not a duration: missing unit (want one of ps, ns, us, µs, μs, ms, s)`},
		{"5 sec", 0, `unknown unit "sec"`},
		{"-5us", 0, "negative"},
		{"us", 0, "want a number and a unit"},
		{"", 0, "want a number and a unit"},
		{"2000000s", 0, `"2000000s" is too long (at most 1e+06s)`},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"12.5GB/s", 12.5e9, ""},
		{"12.5 GB/s", 12.5e9, ""},
		{"1B/s", 1, ""},
		{"1KB/s", 1e3, ""},
		{"1kB/s", 1e3, ""},
		{"1MB/s", 1e6, ""},
		{"1TB/s", 1e12, ""},
		{"1KiB/s", 1024, ""},
		{"1MiB/s", 1 << 20, ""},
		{"1GiB/s", 1 << 30, ""},
		{"100Gbit/s", 12.5e9, ""},
		{"400Gbit/s", 50e9, ""},
		{"100Gbps", 12.5e9, ""},
		{"800Mbit/s", 1e8, ""},
		{"1Tbit/s", 125e9, ""},
		{"8bit/s", 1, ""},
		{"1bit/s", 0.125, ""},
		{"inf", math.Inf(1), ""},
		{" +Inf ", math.Inf(1), ""},
		{"0GB/s", 0, `"0GB/s" is not a bandwidth: it must be positive`},
		{"0", 0, "positive"},
		{"12.5", 0, "missing unit"},
		{"12.5Gb/s", 0, `unknown unit "Gb/s"`},
		{"12.5GB", 0, `unknown unit "GB"`},
		{"-1GB/s", 0, "negative"},
		{"fast", 0, "want a number"},
		{"1e40TB/s", 0, `"1e40TB/s" is too large a bandwidth (use "inf" for an infinite one)`},
	}
	for _, tt := range tests {
		got, err := ParseBandwidth(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseBandwidth(%q) = %g, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseBandwidth(%q) = %g, %v; want %g", tt.in, got, err, tt.want)
		}
	}
}

func TestParseFLOPs(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"0", 0, ""},
		{"1e12", 1e12, ""},
		{"1.2TFLOP", 1.2e12, ""},
		{"350 GFLOP", 350e9, ""},
		{"1 EFLOP", 1e18, ""}, // without the space, "1E" reads as a number with an exponent, and fails
		{"-1", 0, "negative"},
		{"1TFLOP/s", 0, `unknown unit "TFLOP/s"`},
		{"1e31", 0, `"1e31" is too many FLOPs`},
	}
	for _, tt := range tests {
		got, err := ParseFLOPs(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFLOPs(%q) = %g, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFLOPs(%q) = %g, %v; want %g", tt.in, got, err, tt.want)
		}
	}
}

func TestParseFLOPS(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"989TFLOP/s", 989e12, ""},
		{"2.5 PFLOP/s", 2.5e15, ""},
		{"1e9", 1e9, ""},
		{"0", 0, `"0" is not a FLOP rate: want a positive rate such as "989TFLOP/s"`},
		{"1e31", 0, "not a FLOP rate"},
		{"1TFLOP", 0, `unknown unit "TFLOP"`},
	}
	for _, tt := range tests {
		got, err := ParseFLOPS(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFLOPS(%q) = %g, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFLOPS(%q) = %g, %v; want %g", tt.in, got, err, tt.want)
		}
	}
}

func TestParseByteRange(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr string
	}{
		{"8MiB", []int64{8 << 20}, ""},
		{"1KiB..8KiB x2", []int64{1024, 2048, 4096, 8192}, ""},
		{"1KiB..8KiB", []int64{1024, 2048, 4096, 8192}, ""}, // doubles by default
		{"1KiB..8KiB*2", []int64{1024, 2048, 4096, 8192}, ""},
		{"1KiB .. 8KiB  x 2", []int64{1024, 2048, 4096, 8192}, ""},
		{"1KiB..10KiB x4", []int64{1024, 4096}, ""}, // the end need not be hit
		{"1..1 x2", []int64{1}, ""},
		{"0..3KiB +1KiB", []int64{0, 1024, 2048, 3072}, ""},
		{"1.5KiB..3KiB +512", []int64{1536, 2048, 2560, 3072}, ""},
		{"1e3..3e3 +1e3", []int64{1000, 2000, 3000}, ""},
		{"1..1e+3 x10", []int64{1, 10, 100, 1000}, ""},
		{"8KiB..1KiB", nil, `range "8KiB..1KiB": start 8192 is above end 1024 (want START..END, START..END xFACTOR or START..END +STEP, such as "1KiB..1GiB x2")`},
		{"0..1KiB x2", nil, "must start above 0"},
		{"1..8 x1", nil, `factor "1" must be a whole number from 2 to 1048576`},
		{"1..8 x", nil, "factor"},
		{"1..8 xx", nil, "factor"},
		{"1..8 +0", nil, "step must be above 0"},
		{"1..8 +-1", nil, "negative"},
		{"a..8", nil, "start"},
		{"1..b", nil, "end"},
		{"-1..8", nil, "negative"},
		{"1...8", nil, "end"},
		{"0..1MiB +1", nil, "more than 4096 values"},
		{"", nil, "want a number and a unit"},
	}
	for _, tt := range tests {
		got, err := ParseByteRange(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseByteRange(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseByteRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if got, err := ParseByteRange("1..1TiB x2"); err != nil || len(got) != 41 || got[40] != 1<<40 {
		t.Errorf("ParseByteRange(1..1TiB x2) = %d values, %v; want 41, the last 1TiB", len(got), err)
	}
}

func TestParseIntRange(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr string
	}{
		{"8", []int64{8}, ""},
		{"1_000", []int64{1000}, ""},
		{"2..64 x2", []int64{2, 4, 8, 16, 32, 64}, ""},
		{"1..4 +1", []int64{1, 2, 3, 4}, ""},
		{"1..9223372036854775807 x1048576", []int64{1, 1 << 20, 1 << 40, 1 << 60}, ""},
		{"9223372036854775800..9223372036854775807 +4", []int64{9223372036854775800, 9223372036854775804}, ""},
		{"2KiB..4KiB", nil, `"2KiB" is not a whole number`},
		{"-2..4", nil, "not a whole number"},
		{"_2", nil, "not a whole number"},
		{"1.5", nil, "not a whole number"},
	}
	for _, tt := range tests {
		got, err := ParseIntRange(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseIntRange(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseIntRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestRangeValues(t *testing.T) {
	tests := []struct {
		r    Range
		want []int64
		ok   bool
	}{
		{Range{Start: 1 << 10, End: 1 << 20, Factor: 4}, []int64{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20}, true},
		{Range{Start: 0, End: 3 << 10, Step: 1 << 10}, []int64{0, 1 << 10, 2 << 10, 3 << 10}, true},
		{Range{Start: 8, End: 8, Factor: 2}, []int64{8}, true},
		{Range{Start: 9, End: 8, Step: 1}, nil, true},
		{Range{Start: 1 << 49, End: 1 << 50, Factor: 1 << 20}, []int64{1 << 49}, true}, // no overflow
		{Range{Start: 1, End: 4096, Step: 1}, nil, true},                               // checked by length below
		{Range{Start: 0, End: 4096, Step: 1}, nil, false},                              // 4097 values
		{Range{Start: 0, End: 8, Factor: 2}, nil, false},
		{Range{Start: 1, End: 8, Factor: 1}, nil, false},
		{Range{Start: 1, End: 8}, nil, false},
		{Range{Start: -1, End: 8, Step: 1}, nil, false},
	}
	for _, tt := range tests {
		got, ok := tt.r.Values()
		if tt.ok && tt.want == nil && tt.r.Start <= tt.r.End {
			if !ok || len(got) != MaxRangeValues {
				t.Errorf("%+v.Values() = %d values, %v; want %d, true", tt.r, len(got), ok, MaxRangeValues)
			}
			continue
		}
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("%+v.Values() = %v, %v; want %v, %v", tt.r, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRangeString(t *testing.T) {
	for _, tt := range []struct {
		r    Range
		want string
	}{
		{Range{Start: 1024, End: 1 << 30, Factor: 2}, "1024..1073741824 x2"},
		{Range{Start: 0, End: 3072, Step: 1024}, "0..3072 +1024"},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
}
