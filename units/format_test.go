package units

import (
	"math"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{FormatBytes(0), "0 B"},
		{FormatBytes(1), "1 B"},
		{FormatBytes(999), "999 B"},
		{FormatBytes(1000), "0.977 KiB"},
		{FormatBytes(1023), "0.999 KiB"},
		{FormatBytes(1024), "1 KiB"},
		{FormatBytes(1536), "1.5 KiB"},
		{FormatBytes(64 << 20), "64 MiB"},
		{FormatBytes(1 << 40), "1 TiB"},
		{FormatBytes(1005 << 10), "0.981 MiB"},
		{FormatBytes(1023.9), "1 KiB"}, // rounds to 1000 of B, so steps up
		{FormatBytes(1e6), "977 KiB"},  // 976.5625 KiB, three significant digits
		{FormatBytes(-2048), "-2 KiB"},

		{FormatBytesCompact(0), "0B"},
		{FormatBytesCompact(1000), "1000B"},
		{FormatBytesCompact(64 << 10), "64KiB"},
		{FormatBytesCompact(1536 << 10), "1536KiB"},
		{FormatBytesCompact(3 << 20), "3MiB"},
		{FormatBytesCompact(4 << 40), "4096GiB"},
		{FormatBytesCompact(-1024), "-1024B"},
		{FormatBytesExact(64 << 10), "64 KiB"},
		{FormatBytesExact(1 << 30), "1 GiB"},
		{FormatBytesExact(1000), "1000 B"},

		{FormatBytesFixed(512), "512 B"},
		{FormatBytesFixed(15784004812), "14.7 GiB"},
		{FormatBytesFixed(1 << 20), "1.00 MiB"},
		{FormatBytesFixed(1000 << 10), "1000 KiB"},
		{FormatBytesFixed(3 << 40), "3.00 TiB"},

		{FormatBytesG(math.NaN()), "-"},
		{FormatBytesG(999.4), "999 B"},
		{FormatBytesG(1536), "1.5 KiB"},
		{FormatBytesG(98304.5), "96 KiB"},
		{FormatBytesG(3 << 29), "1.5 GiB"},
		{FormatBytesG(1 << 40), "1.02e+03 GiB"},

		{Picoseconds(0).String(), "0s"},
		{Picoseconds(500).String(), "500ps"},
		{Picoseconds(-500).String(), "-500ps"},
		{Picoseconds(1500).String(), "1.5ns"},
		{Picoseconds(5e6).String(), "5us"},
		{Picoseconds(2e9).String(), "2ms"},
		{Picoseconds(1234567e6).String(), "1.234567s"},
		{MaxDuration.String(), "1e+06s"},

		{FormatSeconds(0), "0 s"},
		{FormatSeconds(1e-5), "10 µs"},
		{FormatSeconds(1e-3), "1 ms"},
		{FormatSeconds(0.999999999999e-3), "1 ms"}, // floating noise below a unit boundary
		{FormatSeconds(250e-9), "250 ns"},
		{FormatSeconds(1538.0064e-6), "1.54 ms"},
		{FormatSeconds(5e-13), "0.5 ps"},
		{FormatSeconds(-3e-6), "-3 µs"},
		{FormatSeconds(1200), "1200 s"},

		{FormatSecondsG(0), "0"},
		{FormatSecondsG(250e-9), "250 ns"},
		{FormatSecondsG(12.345e-6), "12.3 µs"},
		{FormatSecondsG(1.5e-3), "1.5 ms"},
		{FormatSecondsG(1234), "1.23e+03 s"},

		{FormatNanoseconds(5e-6, 3), "5000.000ns"},
		{FormatNanoseconds(1.25e-9, 1), "1.2ns"},
		{FormatNanoseconds(0, 1), "0.0ns"},

		{FormatSecondsRough(0.25), "0.25s"},
		{FormatSecondsRough(42), "42s"},
		{FormatSecondsRough(720), "12 min"},
		{FormatSecondsRough(5000), "1.4 h"},
		{FormatSecondsRough(3 * 86400), "3.0 days"},

		{FormatElapsed(7 * time.Second), "7s"},
		{FormatElapsed(125 * time.Second), "2m05s"},
		{FormatElapsed(3720*time.Second + 400*time.Millisecond), "1h02m"},
		{FormatElapsed(59500 * time.Millisecond), "1m00s"},

		{FormatNCCLMicros(12.346e-6), "  12.35"},
		{FormatNCCLMicros(1234.5e-6), " 1234.5"},
		{FormatNCCLMicros(0.5), " 500000"},

		{FormatBandwidth(12.5e9), "1.25e+10B/s"},
		{FormatBandwidth(1e6), "1e+06B/s"},
		{FormatBandwidth(1536), "1536B/s"},
		{FormatBandwidthWhole(12.5e9), "12500000000B/s"},
		{FormatBandwidthWhole(1536.6), "1537B/s"},
		{FormatBandwidthGB(12.5e9, 5), "12.5GB/s"},
		{FormatBandwidthGB(1.0901234e9, 5), "1.0901GB/s"},
		{FormatBandwidthG(12.5e9), "12.5 GB/s"},
		{FormatBandwidthG(800e6), "800 MB/s"},
		{FormatBandwidthG(1234), "1.23 KB/s"},

		{FormatCount(950), "950"},
		{FormatCount(12345), "12.3k"},
		{FormatCount(8589803520), "8.59G"},
		{FormatCount(999999), "1000k"},
		{FormatCount(2e12), "2.00T"},

		{Sig3(0), "0"},
		{Sig3(1020), "1020"},
		{Sig3(12.34), "12.3"},
		{Sig3(1.5), "1.5"},
		{Sig3(0.0123456), "0.0123"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestPicosecondsSeconds(t *testing.T) {
	if got := Picoseconds(1500e6).Seconds(); got != 1.5e-3 {
		t.Errorf("Picoseconds(1.5e9).Seconds() = %g, want 1.5e-3", got)
	}
}
