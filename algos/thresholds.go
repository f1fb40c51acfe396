package algos

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Thresholds are the payload sizes, in bytes, at which realnet (nexar's
// transport, and nexar-live's) changes how it sends a message. One value
// travels everywhere they matter: the [transport] table of a Tuning,
// realnet.Config, the simulator's model of realnet (sim.TwoPaths, a
// scenario's model = "realnet" with its bulk_threshold and
// eager_threshold), nexar-live's --bulk-threshold and --eager-threshold
// and the argv its launcher gives its workers, the bulk_threshold and
// eager_threshold columns of nexar-live's results.csv, and the settings
// calibrate holds a model's thresholds at.
//
// String writes a Thresholds as ParseThresholds reads it, with each size
// spelled as nexar-live's flags and scenario files spell one ("64KiB",
// "never", "off").
type Thresholds struct {
	// Bulk is the size from which a message travels on the bulk TCP
	// connection, by rendezvous (a request to send and a clear to send on
	// TCP, then the payload), instead of its QUIC stream: 0 or
	// more, or BulkNever to keep every message on QUIC. An empty message
	// has nothing to move on the bulk path, so realnet sends it on QUIC
	// whatever Bulk says: for realnet 0 and 1 mean the same (but see
	// realnet.Config, whose zero value means its default). The tuning
	// table's bulk_threshold; nexar-sim derives it (package derive).
	Bulk int
	// Eager, when positive, turns realnet's eager mode on: every message
	// between ranks with a bulk connection goes over TCP, one of fewer
	// than Eager bytes eagerly (header and payload at once, on a TCP
	// connection that carries nothing large), a larger one by rendezvous
	// on the bulk connection, so that Bulk then does not apply. 0, the
	// zero value, is off: small messages take QUIC. The tuning table's
	// eager_threshold; nexar-sim derives it where a scenario gives the
	// receiver's copy bandwidth.
	Eager int
}

// BulkNever is the Thresholds.Bulk that keeps every message on QUIC,
// written "never" (bulk_threshold = "never" in a tuning table or a
// scenario, --bulk-threshold off) and -1 in results.csv.
const BulkNever = -1

// The bulk thresholds used where nothing else is said. They differ today,
// and each is kept where it was used so that no run changes: which one
// should be the only default is for a measurement of the bulk path
// against QUIC at 16 KiB and at 64 KiB (nexar-live ladder) to say.
const (
	// DefaultBulkThreshold is the one default bulk threshold: realnet's
	// (a Config that leaves it 0), nexar-live's ranks' (unless
	// --bulk-threshold or --tuning says otherwise; its --help prints it),
	// a scenario's realnet model's without bulk_threshold, and the one
	// calibrate holds a model's thresholds at for samples whose file does
	// not record their run's. Chosen by measurement: nexar-live's ladder
	// (realnet-quic-bw against realnet-bulk-bw, 2000 transfers of one
	// message and a 1 B acknowledgement, 5 passes, 3 runs on a quiet
	// 2-core machine) had the bulk path at 0.78x QUIC's bandwidth at 16
	// KiB, 0.97x at 32 KiB and 1.27x at 64 KiB: 64 KiB is the first power
	// of two at which the rendezvous pays for itself.
	DefaultBulkThreshold = 64 << 10
)

// DefaultThresholds are nexar-live's: DefaultBulkThreshold, eager mode
// off.
func DefaultThresholds() Thresholds { return Thresholds{Bulk: DefaultBulkThreshold} }

// String writes t as ParseThresholds reads it: "bulk=64KiB,eager=off",
// "bulk=never,eager=16KiB".
func (t Thresholds) String() string {
	return "bulk=" + FormatBulkThreshold(t.Bulk) + ",eager=" + FormatEagerThreshold(t.Eager)
}

// ParseThresholds reads thresholds as String writes them: bulk=SIZE and
// eager=SIZE, separated by a comma, each as ParseBulkThreshold and
// ParseEagerThreshold read it. Both are required.
func ParseThresholds(s string) (Thresholds, error) {
	var t Thresholds
	var seen [2]bool
	for _, part := range strings.Split(s, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Thresholds{}, fmt.Errorf("thresholds %q: want bulk=SIZE,eager=SIZE", s)
		}
		var i int
		var err error
		switch key = strings.TrimSpace(key); key {
		case "bulk":
			t.Bulk, err = ParseBulkThreshold(value)
		case "eager":
			i = 1
			t.Eager, err = ParseEagerThreshold(value)
		default:
			return Thresholds{}, fmt.Errorf("thresholds %q: unknown threshold %q (want bulk and eager)", s, key)
		}
		if err != nil {
			return Thresholds{}, fmt.Errorf("thresholds %q: %w", s, err)
		}
		if seen[i] {
			return Thresholds{}, fmt.Errorf("thresholds %q: %s given twice", s, key)
		}
		seen[i] = true
	}
	if !seen[0] || !seen[1] {
		return Thresholds{}, fmt.Errorf("thresholds %q: want both bulk=SIZE and eager=SIZE", s)
	}
	return t, nil
}

// FormatBulkThreshold writes a Thresholds.Bulk as ParseBulkThreshold
// reads it: "never" for BulkNever (or any negative size), else the size
// ("64KiB", "1000").
func FormatBulkThreshold(n int) string {
	if n < 0 {
		return "never"
	}
	return formatSize(n)
}

// FormatEagerThreshold writes a Thresholds.Eager as ParseEagerThreshold
// reads it: "off" for 0 (or less), else the size.
func FormatEagerThreshold(n int) string {
	if n <= 0 {
		return "off"
	}
	return formatSize(n)
}

// ParseBulkThreshold reads a bulk threshold as --bulk-threshold takes it:
// a size ("64KiB", "16384", "0": every message with a payload) or "never"
// ("off" and -1 too): BulkNever.
func ParseBulkThreshold(s string) (int, error) {
	switch strings.TrimSpace(s) {
	case "never", "off", "-1":
		return BulkNever, nil
	}
	return parseSize(s)
}

// ParseEagerThreshold reads an eager threshold as --eager-threshold takes
// it: a size ("16KiB") or "off" ("never" and "0" too): 0.
func ParseEagerThreshold(s string) (int, error) {
	switch strings.TrimSpace(s) {
	case "off", "never", "0":
		return 0, nil
	}
	return parseSize(s)
}

// formatSize writes n bytes in the largest binary unit that holds it
// whole ("64KiB", "1MiB"), else in bytes ("1000").
func formatSize(n int) string {
	for _, u := range [...]struct {
		name string
		size int
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.Itoa(n/u.size) + u.name
		}
	}
	return strconv.Itoa(n)
}

// sizeUnits are the units parseSize takes, those of scenario.ParseBytes,
// in the order its errors list them.
var sizeUnits = []struct {
	name string
	size int64
}{
	{"B", 1}, {"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
}

const sizeUnitNames = "B, KB, kB, MB, GB, TB, KiB, MiB, GiB, TiB"

// maxThreshold bounds a threshold's size: 1 PiB, the largest size a
// scenario names.
const maxThreshold = 1 << 50

// parseSize reads a whole number of bytes, 0 or more, as a scenario file
// spells sizes: a number ("16384", "1.5", "1e3") and an optional unit
// (B; KB, MB, GB, TB: powers of 10; KiB, MiB, GiB, TiB: powers of 2).
func parseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !strings.ContainsRune("0123456789.+-eE_", r) })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	num = strings.ReplaceAll(num, "_", "")
	if num == "" {
		return 0, fmt.Errorf("%q is not a size: want a number and a unit (%s)", s, sizeUnitNames)
	}
	if e := strings.IndexAny(num, "eE"); len(num) > 40 || e >= 0 && len(num)-e > 4 {
		return 0, fmt.Errorf("%q is not a size: too many digits", s)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%q is not a size: %q is not a number", s, num)
	}
	if unit != "" {
		scale := int64(0)
		for _, u := range sizeUnits {
			if u.name == unit {
				scale = u.size
			}
		}
		if scale == 0 {
			return 0, fmt.Errorf("%q is not a size: unknown unit %q (want one of %s)", s, unit, sizeUnitNames)
		}
		r.Mul(r, new(big.Rat).SetInt64(scale))
	}
	switch {
	case r.Sign() < 0:
		return 0, fmt.Errorf("%q is not a size: it is negative", s)
	case !r.IsInt():
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	case r.Cmp(new(big.Rat).SetInt64(maxThreshold)) > 0:
		return 0, errors.New(strconv.Quote(s) + " is too large (at most 1PiB)")
	}
	return int(r.Num().Int64()), nil
}
