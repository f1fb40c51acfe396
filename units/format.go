package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sizes.

// FormatBytes writes a size with binary units: "512 B", "1 KiB", "64 MiB",
// "1.5 GiB". Up to three significant digits; exact powers of two print as
// integers. The unit steps up at 1000 rather than 1024, so that a label
// never needs four digits ("0.98 MiB", not "1005 KiB"). The figures and the
// commands' reports write sizes so.
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	neg := b < 0
	v := math.Abs(b)
	i := 0
	for sig3Rounds(v) >= 1000 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := Sig3(v) + " " + units[i]
	if neg {
		s = "-" + s
	}
	return s
}

// FormatBytesCompact writes n bytes in the largest binary unit that
// divides it, up to GiB, without a space, as a scenario writes sizes:
// "64KiB", "3MiB", "1000B". ParseBytes reads it back.
func FormatBytesCompact(n int64) string { return bytesExact(n, "") }

// FormatBytesExact is FormatBytesCompact with a space before the unit, for
// people: "64 KiB", "1000 B". nexar-live's verify and peer tables write
// sizes so.
func FormatBytesExact(n int64) string { return bytesExact(n, " ") }

func bytesExact(n int64, sep string) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + sep + u.name
		}
	}
	return strconv.FormatInt(n, 10) + sep + "B"
}

// FormatBytesFixed writes n bytes in the largest binary unit, up to TiB,
// that it reaches, with three significant digits and their trailing zeros:
// "512 B", "1.00 MiB", "14.7 GiB". nexar-sim's estimates write sizes so.
func FormatBytesFixed(n int64) string {
	x := float64(n)
	for _, u := range []struct {
		f float64
		s string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if x >= u.f {
			return sigFixed(x/u.f, 3) + " " + u.s
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// FormatBytesG writes a size, which may be fractional, in the largest
// binary unit, up to GiB, that it reaches, with printf's %.3g: "1.5 KiB",
// "1.02e+03 GiB"; whole bytes below 1 KiB ("999 B"), and "-" for NaN (no
// size). nexar-live's verify writes crossover sizes so.
func FormatBytesG(b float64) string {
	switch {
	case math.IsNaN(b):
		return "-"
	case b >= 1<<30:
		return fmt.Sprintf("%.3g GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.3g MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.3g KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

// Durations.

// Picoseconds is a duration in picoseconds, as ParseDuration reads it: the
// resolution of the simulator's clock.
type Picoseconds int64

// MaxDuration is the longest duration ParseDuration accepts: a million
// seconds, far below the overflow of int64 picoseconds.
const MaxDuration Picoseconds = 1e18

// Seconds returns p in seconds.
func (p Picoseconds) Seconds() float64 { return float64(p) / 1e12 }

// String writes p in the largest unit it reaches, without a space and
// with as many digits as it takes: "0s", "500ps", "1.5ns", "5us", "2ms",
// "1e+06s". ParseDuration reads it back: exactly up to 2^51 ps (37
// minutes), to within float64's precision above.
func (p Picoseconds) String() string {
	switch a := max(p, -p); {
	case a == 0:
		return "0s"
	case a < 1e3:
		return fmt.Sprintf("%dps", int64(p))
	case a < 1e6:
		return fmt.Sprintf("%gns", float64(p)/1e3)
	case a < 1e9:
		return fmt.Sprintf("%gus", float64(p)/1e6)
	case a < 1e12:
		return fmt.Sprintf("%gms", float64(p)/1e9)
	}
	return fmt.Sprintf("%gs", p.Seconds())
}

// FormatSeconds writes a duration with the unit that keeps the number
// between 1 and 1000: "250 ns", "10 µs", "1.5 ms", "2 s". Up to three
// significant digits. The figures and the commands' reports write times
// so.
func FormatSeconds(s float64) string {
	if s == 0 {
		return "0 s"
	}
	neg := s < 0
	v := math.Abs(s)
	units := []struct {
		name  string
		scale float64
	}{{"s", 1}, {"ms", 1e-3}, {"µs", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}}
	u := units[len(units)-1]
	for _, c := range units {
		// The small tolerance keeps 999.9999 µs (a rounding artefact of
		// 1e-3) printing as "1 ms" rather than "1000 µs".
		if v >= c.scale*(1-1e-9) {
			u = c
			break
		}
	}
	out := Sig3(v/u.scale) + " " + u.name
	if neg {
		out = "-" + out
	}
	return out
}

// FormatSecondsG writes a duration of s seconds in ns, µs, ms or s with
// printf's %.3g: "250 ns", "1.5 ms", "0" for zero. nexar-live's comparison
// with a peer library writes times so.
func FormatSecondsG(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.3g ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.3g µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3g ms", s*1e3)
	}
	return fmt.Sprintf("%.3g s", s)
}

// FormatNanoseconds writes s seconds in nanoseconds with decimals digits
// after the point, as ParseDuration reads it: "5000.000ns" (s = 5e-6,
// decimals 3). Calibrated scenarios write their fitted times so (3
// decimals), and a calibrated machine its latencies (1).
func FormatNanoseconds(s float64, decimals int) string {
	return strconv.FormatFloat(s*1e9, 'f', decimals, 64) + "ns"
}

// FormatSecondsRough writes a duration of s seconds roughly, as an
// estimate: "0.25s", "42s", "12 min", "1.4 h", "3.0 days". nexar-sim's
// estimates of a run's cost write times so.
func FormatSecondsRough(s float64) string {
	switch {
	case s < 1:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	case s < 60:
		return sigFixed(s, 2) + "s"
	case s < 3600:
		return sigFixed(s/60, 2) + " min"
	case s < 48*3600:
		return sigFixed(s/3600, 2) + " h"
	}
	return sigFixed(s/86400, 2) + " days"
}

// FormatElapsed writes d to the second, as a clock: "7s", "2m05s",
// "1h02m". nexar-sim's progress line writes times so.
func FormatElapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// FormatNCCLMicros writes a time of s seconds in µs as nccl-tests' tables
// do, in seven characters up to 10 s: two decimals below 100 µs, one below
// 10 ms, none from there ("  12.34", " 1234.5").
func FormatNCCLMicros(s float64) string {
	us := s * 1e6
	switch {
	case us < 100:
		return fmt.Sprintf("%7.2f", us)
	case us < 1e4:
		return fmt.Sprintf("%7.1f", us)
	}
	return fmt.Sprintf("%7.0f", us)
}

// Bandwidths, in bytes per second.

// FormatBandwidth writes a bandwidth with as many digits as it takes, in
// B/s: "1.25e+10B/s". ParseBandwidth reads back every bandwidth from 1e-30
// to 1e30 B/s exactly. nexar-live writes an emulated network's bandwidth
// so.
func FormatBandwidth(bps float64) string {
	return strconv.FormatFloat(bps, 'g', -1, 64) + "B/s"
}

// FormatBandwidthWhole writes a bandwidth rounded to whole bytes per
// second: "12500000000B/s". ParseBandwidth reads it back. Calibrated
// scenarios write their fitted bandwidths so.
func FormatBandwidthWhole(bps float64) string {
	return strconv.FormatFloat(bps, 'f', 0, 64) + "B/s"
}

// FormatBandwidthGB writes a bandwidth in GB/s (1e9 B/s) with up to digits
// significant digits, as ParseBandwidth reads it: "12.5GB/s". A calibrated
// machine's figures are written so, with 5 digits.
func FormatBandwidthGB(bps float64, digits int) string {
	return strconv.FormatFloat(bps/1e9, 'g', digits, 64) + "GB/s"
}

// FormatBandwidthG writes a bandwidth in GB/s from 1e9 B/s, MB/s from 1e6
// and KB/s below, with printf's %.3g: "12.5 GB/s", "800 MB/s". The
// calibration's messages write bandwidths so.
func FormatBandwidthG(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.3g GB/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.3g MB/s", bps/1e6)
	}
	return fmt.Sprintf("%.3g KB/s", bps/1e3)
}

// Numbers.

// FormatCount writes n with three significant digits and a decimal prefix
// from 1000 on (k, M, G, T), trailing zeros kept: "950", "12.3k", "8.59G".
// nexar-sim's estimates count messages and events so.
func FormatCount(n int64) string {
	x := float64(n)
	for _, u := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= u.f {
			return sigFixed(x/u.f, 3) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// Sig3 writes v >= 0 with at most three significant digits and no
// exponent or trailing zeros: 1, 1.5, 12.3, 256, 1020. Integers print
// whole. It is the number of FormatBytes and FormatSeconds.
func Sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	if r := math.Round(v); math.Abs(v-r) <= 1e-9*v {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(v)))
	if digits < 0 {
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// sig3Rounds is v as Sig3 prints it, so that 999.7 (printed "1000") steps
// up a unit too.
func sig3Rounds(v float64) float64 {
	x, _ := strconv.ParseFloat(Sig3(v), 64)
	return x
}

// sigFixed writes x (at least 1) with about digits significant digits,
// trailing zeros kept, and no exponent: sigFixed(8.5899, 3) is "8.59",
// sigFixed(1, 3) "1.00", sigFixed(123.4, 2) "123".
func sigFixed(x float64, digits int) string {
	return strconv.FormatFloat(x, 'f', max(0, digits-1-int(math.Floor(math.Log10(max(x, 1))))), 64)
}
