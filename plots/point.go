package plots

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
)

// Auto is the algorithm name of the dispatcher's automatic policy. It is not
// a candidate for "fastest algorithm" (it only ever runs one of the others),
// and it is the subject of [AutoSlowdown].
const Auto = "auto"

// Point is one measured (or simulated) sweep point: the time one collective
// call took with one algorithm on one world size and message size. It is the
// only input of this package; [ReadCSV] makes Points from a results.csv.
type Point struct {
	Collective string  // e.g. "allreduce"
	Algorithm  string  // e.g. "ring", or [Auto]
	DType      string  // e.g. "f32"; may be empty
	World      int     // number of ranks, >= 1
	Bytes      int64   // message size as the collective defines it, >= 0
	Time       float64 // seconds (the median when the point was repeated)
	BusBW      float64 // bus bandwidth in GB/s (1e9 B/s); 0 when unknown
	// Spread is the half-width of the time's spread across repeats, in
	// seconds; latency plots draw it as an error bar Time ± Spread. 0 = none.
	Spread float64
}

// Errors returned by the figure constructors. They are wrapped with the
// figure and collective they concern; test with errors.Is.
var (
	// ErrNoData means no point of the collective can be drawn (none given,
	// or none with a positive size and time on a log axis).
	ErrNoData = errors.New("plots: no data")
	// ErrNoAuto means the collective has no points of the [Auto] policy, or
	// none that share a world and size with another algorithm.
	ErrNoAuto = errors.New(`plots: no "auto" points to compare`)
	// ErrNoBusBW means no point of the collective carries a bus bandwidth.
	ErrNoBusBW = errors.New("plots: no bus bandwidth data")
	// ErrMixedDTypes means the points of one collective have several dtypes;
	// select one dtype first (WriteAll does, one set of files per dtype).
	ErrMixedDTypes = errors.New("plots: several dtypes in one collective")
)

// InvalidPointError reports a point no plot can honestly draw: a NaN or
// negative time, a world below 1, a negative size.
type InvalidPointError struct {
	Point  Point
	Reason string
}

func (e *InvalidPointError) Error() string {
	p := e.Point
	return fmt.Sprintf("plots: invalid point %s/%s world=%d bytes=%d: %s",
		p.Collective, p.Algorithm, p.World, p.Bytes, e.Reason)
}

func validate(p Point) error {
	bad := func(r string) error { return &InvalidPointError{Point: p, Reason: r} }
	switch {
	case p.World < 1:
		return bad("world must be >= 1")
	case p.Bytes < 0:
		return bad("bytes must be >= 0")
	case math.IsNaN(p.Time) || math.IsInf(p.Time, 0) || p.Time < 0:
		return bad(fmt.Sprintf("time %v s is not a finite non-negative number", p.Time))
	case math.IsNaN(p.BusBW) || math.IsInf(p.BusBW, 0) || p.BusBW < 0:
		return bad(fmt.Sprintf("busbw %v GB/s is not a finite non-negative number", p.BusBW))
	case math.IsNaN(p.Spread) || math.IsInf(p.Spread, 0) || p.Spread < 0:
		return bad(fmt.Sprintf("spread %v s is not a finite non-negative number", p.Spread))
	}
	return nil
}

// comparePoints is a total order on points: the key (algorithm, world,
// bytes) first, then the fastest first, then the remaining fields, so that
// sorting makes the output independent of the input order.
func comparePoints(a, b Point) int {
	return cmp.Or(
		cmp.Compare(a.Collective, b.Collective),
		cmp.Compare(a.DType, b.DType),
		cmp.Compare(a.Algorithm, b.Algorithm),
		cmp.Compare(a.World, b.World),
		cmp.Compare(a.Bytes, b.Bytes),
		cmp.Compare(a.Time, b.Time),
		cmp.Compare(b.BusBW, a.BusBW),
		cmp.Compare(a.Spread, b.Spread),
	)
}

// selection is the points of one collective, validated, sorted and with one
// point per (algorithm, world, bytes).
type selection struct {
	collective string
	dtype      string
	points     []Point  // sorted by comparePoints, keys unique
	algorithms []string // Auto excluded: those that compete, then the lossy, each by simplicity
	hasAuto    bool
	worlds     []int // sorted
}

// selectPoints picks the points of collective. When several points share an
// (algorithm, world, bytes) key (a parameter sweep recorded in extra CSV
// columns, say) the fastest is kept: that is the algorithm at its best,
// which is what a crossover map compares. To draw parameter settings as
// separate lines, give them separate Algorithm names ("pipelined_ring/64KiB").
func selectPoints(points []Point, collective string) (*selection, error) {
	s := &selection{collective: collective}
	var dtypes []string
	for _, p := range points {
		if p.Collective != collective {
			continue
		}
		if err := validate(p); err != nil {
			return nil, err
		}
		if !slices.Contains(dtypes, p.DType) {
			dtypes = append(dtypes, p.DType)
		}
		s.points = append(s.points, p)
	}
	if len(s.points) == 0 {
		return nil, fmt.Errorf("%w for collective %q", ErrNoData, collective)
	}
	if len(dtypes) > 1 {
		slices.Sort(dtypes)
		return nil, fmt.Errorf("%w: %q has %q", ErrMixedDTypes, collective, dtypes)
	}
	s.dtype = dtypes[0]
	slices.SortFunc(s.points, comparePoints)
	s.points = slices.CompactFunc(s.points, func(a, b Point) bool {
		return a.Algorithm == b.Algorithm && a.World == b.World && a.Bytes == b.Bytes
	})
	for _, p := range s.points {
		if p.Algorithm == Auto {
			s.hasAuto = true
		} else if n := len(s.algorithms); n == 0 || s.algorithms[n-1] != p.Algorithm {
			s.algorithms = append(s.algorithms, p.Algorithm)
		}
		if !slices.Contains(s.worlds, p.World) {
			s.worlds = append(s.worlds, p.World)
		}
	}
	slices.Sort(s.worlds)
	slices.SortFunc(s.algorithms, func(a, b string) int {
		return cmp.Or(cmp.Compare(boolRank(!s.competes(a)), boolRank(!s.competes(b))),
			algos.CompareSimplicity(collective, a, b))
	})
	return s, nil
}

// competes reports whether alg may be called the fastest: neither auto nor
// a lossy algorithm (algos.Competes), which are drawn but never best.
func (s *selection) competes(alg string) bool { return algos.Competes(s.collective, alg) }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// series returns the points of one algorithm on one world, by size, that a
// log-log plot can show (positive size and time).
func (s *selection) series(algorithm string, world int) []Point {
	var out []Point
	for _, p := range s.points {
		if p.Algorithm == algorithm && p.World == world && p.Bytes > 0 && p.Time > 0 {
			out = append(out, p)
		}
	}
	return out
}

// styleIndex is the position of an algorithm among the collective's
// algorithms (those that compete first, in the order of simplicity), which
// picks its color, dash and marker; every figure of one collective
// therefore draws an algorithm the same way, and the 12 simplest that
// compete never share a colour.
func (s *selection) styleIndex(algorithm string) int {
	return max(slices.Index(s.algorithms, algorithm), 0)
}

// title prefixes a figure title with the collective and dtype.
func (s *selection) title(what string) string {
	if s.dtype == "" {
		return s.collective + ": " + what
	}
	return fmt.Sprintf("%s (%s): %s", s.collective, s.dtype, what)
}
