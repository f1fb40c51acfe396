package scenario

import (
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/units"
)

// The syntax of a scenario's quantities is package units'; these are the
// names scenario has always had for it, and ParseDuration gives the
// simulator's Time.

// Limits on what the unit parsers accept: units.MaxBytes and
// units.MaxRangeValues.
const (
	// MaxBytes is the largest message size a scenario may name: 1 PiB.
	MaxBytes = units.MaxBytes
	// MaxRangeValues is the most values one range may expand to.
	MaxRangeValues = units.MaxRangeValues
)

// ParseBytes parses a size in bytes, such as "1024", "8MiB" or "1.5 KB":
// see units.ParseBytes.
func ParseBytes(s string) (int64, error) { return units.ParseBytes(s) }

// maxDuration is the longest duration ParseDuration accepts: a million
// seconds, far below the overflow of sim.Time.
const maxDuration = sim.Time(units.MaxDuration)

// ParseDuration parses a duration such as "5us", "1.5 ms" or "0", to the
// nearest picosecond, the simulator's resolution: see units.ParseDuration.
func ParseDuration(s string) (sim.Time, error) {
	ps, err := units.ParseDuration(s)
	return sim.Time(ps), err
}

// ParseBandwidth parses a bandwidth in bytes per second, such as
// "12.5GB/s", "400Gbit/s" or "inf": see units.ParseBandwidth.
func ParseBandwidth(s string) (float64, error) { return units.ParseBandwidth(s) }

// ParseByteRange parses a range of sizes such as "1KiB..1GiB x2" or
// "0..3KiB +1KiB", or a single size: see units.ParseByteRange.
func ParseByteRange(s string) ([]int64, error) { return units.ParseByteRange(s) }

// ParseIntRange parses a range of whole numbers such as "2..64 x2": see
// units.ParseIntRange.
func ParseIntRange(s string) ([]int64, error) { return units.ParseIntRange(s) }

// ParseFLOPs parses an amount of compute such as "1.2TFLOP": see
// units.ParseFLOPs.
func ParseFLOPs(s string) (float64, error) { return units.ParseFLOPs(s) }

// ParseFLOPS parses a rate of compute such as "989TFLOP/s": see
// units.ParseFLOPS.
func ParseFLOPS(s string) (float64, error) { return units.ParseFLOPS(s) }
