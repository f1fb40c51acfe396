package sim

import (
	"math"
	"time"

	"github.com/nexar-go/nexar-go/units"
)

// Time is a point on, or a span of, the simulator's virtual clock, in
// picoseconds. Integer time keeps runs exactly reproducible; picoseconds keep
// the rounding of each message's duration (at most half a picosecond) far
// below the 1e-6 relative accuracy the cost model is checked to, for
// messages of a single byte on 400 Gbit/s links.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Duration converts t to a time.Duration, truncating below a nanosecond.
func (t Time) Duration() time.Duration { return time.Duration(t / Nanosecond) }

// String writes t as a scenario writes a duration: "0s", "500ps", "5us",
// "1.5ms" (units.Picoseconds.String).
func (t Time) String() string { return units.Picoseconds(t).String() }

// FromSeconds converts seconds to Time, rounding to the nearest picosecond.
func FromSeconds(s float64) Time { return Time(math.Round(s * float64(Second))) }

// TransferTime is the time to move n bytes at bandwidth bytesPerSecond,
// rounded to the nearest picosecond. It is computed per message rather than
// as n times a rounded per-byte cost, so rounding never accumulates.
func TransferTime(n int, bytesPerSecond float64) Time {
	if n == 0 || math.IsInf(bytesPerSecond, 1) {
		return 0
	}
	return Time(math.Round(float64(n) * float64(Second) / bytesPerSecond))
}
