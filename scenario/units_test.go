package scenario

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
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
		{"", 0, "want a number and a unit"},
		{"MiB", 0, "want a number and a unit"},
		{"-1", 0, "negative"},
		{"-1KiB", 0, "negative"},
		{"1.5B", 0, "whole number of bytes"},
		{"0.1KiB", 0, "whole number of bytes"},
		{"8M", 0, `unknown unit "M"`},
		{"8mib", 0, `unknown unit "mib"`},
		{"eight", 0, "want a number"},
		{"1..2", 0, "not a number"},
		{"1e99", 0, "not a number"},
		{"1025TiB", 0, "too large"},
		{"0x10", 0, `unknown unit "x10"`},
		{"1/2", 0, `unknown unit "/2"`},
		{"1.2.3", 0, "not a number"},
		{"+5", 5, ""},
		{"5e", 0, "not a number"},
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

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    sim.Time
		wantErr string
	}{
		{"0", 0, ""},
		{"5us", 5 * sim.Microsecond, ""},
		{"5µs", 5 * sim.Microsecond, ""},
		{"5 us", 5 * sim.Microsecond, ""},
		{"1.5ms", 1500 * sim.Microsecond, ""},
		{"100ns", 100 * sim.Nanosecond, ""},
		{"1s", sim.Second, ""},
		{"2.5ps", 3, ""}, // rounded half up
		{"0.4ps", 0, ""},
		{"1e-3s", sim.Millisecond, ""},
		{"0s", 0, ""},
		{"5", 0, "missing unit"},
		{"5 sec", 0, `unknown unit "sec"`},
		{"-5us", 0, "negative"},
		{"us", 0, "want a number and a unit"},
		{"", 0, "want a number and a unit"},
		{"2000000s", 0, "too long"},
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
		{"25GB/s", 25e9, ""},
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
		{"0GB/s", 0, "positive"},
		{"0", 0, "positive"},
		{"12.5", 0, "missing unit"},
		{"12.5Gb/s", 0, `unknown unit "Gb/s"`},
		{"12.5GB", 0, `unknown unit "GB"`},
		{"-1GB/s", 0, "negative"},
		{"fast", 0, "want a number"},
		{"1e40TB/s", 0, "too large"},
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
		{"1..1TiB x2", nil, ""}, // checked by length below
		{"8KiB..1KiB", nil, "above end"},
		{"0..1KiB x2", nil, "must start above 0"},
		{"1..8 x1", nil, "factor"},
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
		if err != nil {
			t.Errorf("ParseByteRange(%q): %v", tt.in, err)
			continue
		}
		if tt.want == nil {
			if len(got) != 41 || got[40] != 1<<40 {
				t.Errorf("ParseByteRange(%q) has %d values, last %d; want 41, last 1TiB", tt.in, len(got), got[len(got)-1])
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseByteRange(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseIntRange(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr string
	}{
		{"8", []int64{8}, ""},
		{"2..64 x2", []int64{2, 4, 8, 16, 32, 64}, ""},
		{"1..4 +1", []int64{1, 2, 3, 4}, ""},
		{"1..9223372036854775807 x1048576", []int64{1, 1 << 20, 1 << 40, 1 << 60}, ""},
		{"9223372036854775800..9223372036854775807 +4", []int64{9223372036854775800, 9223372036854775804}, ""},
		{"2KiB..4KiB", nil, "not a whole number"},
		{"-2..4", nil, "not a whole number"},
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
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseIntRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
