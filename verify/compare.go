package verify

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Comparison is one measured point (its results.csv row) beside the
// simulator's prediction of it on the scenario's network model.
type Comparison struct {
	results.Row
	// Predicted is the simulated time in seconds.
	Predicted float64
}

// Ratio is Predicted / measured time: above 1 the model is pessimistic,
// below 1 it is optimistic. NaN when the measured time is 0.
func (c Comparison) Ratio() float64 {
	if c.Time == 0 {
		return math.NaN()
	}
	return c.Predicted / c.Time
}

// RelErr is |Predicted/measured - 1|, the error the calibration targets.
func (c Comparison) RelErr() float64 { return math.Abs(c.Ratio() - 1) }

// CompareHeader is the header of compare.csv.
var CompareHeader = []string{"collective", "algorithm", "world", "bytes", "dtype", "params", "op", "predicted_s", "measured_s", "ratio"}

// PointFor rebuilds the point a result measured, for simulating it on the
// network of s: the collective, algorithm variant, world, size and type of
// the result, with the root and tuning table of the first sweep of s for
// the same collective (root 0 and nexar's table if there is none). Where
// the result records the transport thresholds its run used and the model
// has realnet's (model = "realnet"), the model takes the result's, not the
// file's (scenario.Network.WithThresholds).
func PointFor(s *scenario.Scenario, r results.Row) (sweep.Point, error) {
	coll, err := algos.Lookup(r.Collective)
	if err != nil {
		return sweep.Point{}, err
	}
	alg, err := coll.Algorithm(sweep.BaseAlgorithm(r.Algorithm))
	if err != nil {
		return sweep.Point{}, err
	}
	params, err := sweep.ParseParams(r.Params)
	if err != nil {
		return sweep.Point{}, err
	}
	dt, err := device.ParseDType(r.DType)
	if err != nil {
		return sweep.Point{}, err
	}
	op := device.Sum
	if r.Op != "" {
		if op, err = device.ParseOp(r.Op); err != nil {
			return sweep.Point{}, err
		}
	}
	p := sweep.Point{
		Index: -1, Collective: coll, Algorithm: alg, Name: r.Algorithm,
		World: r.World, Bytes: r.Bytes, DType: dt, Op: op, Params: params,
		Data: scenario.Phantom, Seed: s.Seed, Repeat: 1, Network: &s.Network, Tuning: s.Tuning,
	}
	for _, sw := range s.Sweeps {
		if sw.Collective == coll {
			p.Root, p.Tuning = sw.Root, sw.Tuning
			break
		}
	}
	if p.Root >= p.World {
		p.Root = 0
	}
	n := &s.Network
	if r.HasThresholds() {
		n = n.WithThresholds(algos.Thresholds{Bulk: r.BulkThreshold, Eager: r.EagerThreshold})
	}
	if p.Network, err = networkFor(n, r); err != nil {
		return sweep.Point{}, err
	}
	if s.Network.Random {
		p.Repeat = 5 // a median over draws of the noise
	}
	if err := s.Network.Check(p.World); err != nil {
		return sweep.Point{}, err
	}
	return p, nil
}

// Predict simulates every result's point on the network of s.
func Predict(s *scenario.Scenario, rs []results.Row) ([]Comparison, error) {
	out := make([]Comparison, 0, len(rs))
	for _, r := range rs {
		p, err := PointFor(s, r)
		if err != nil {
			return nil, fmt.Errorf("predicting %s/%s world=%d bytes=%d: %w", r.Collective, r.Algorithm, r.World, r.Bytes, err)
		}
		row, err := sweep.RunPoint(p)
		if err != nil {
			return nil, err
		}
		out = append(out, Comparison{Row: r, Predicted: row.Time})
	}
	return out, nil
}

// WriteCompareCSV writes comparisons as compare.csv: the predicted time
// to the simulator's picosecond, the measured one to the nanosecond.
func WriteCompareCSV(w io.Writer, cs []Comparison) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CompareHeader); err != nil {
		return err
	}
	for _, c := range cs {
		cw.Write([]string{
			c.Collective, c.Algorithm, strconv.Itoa(c.World), strconv.Itoa(c.Bytes), c.DType, c.Params, c.Op,
			strconv.FormatFloat(c.Predicted, 'f', results.SimDecimals, 64), strconv.FormatFloat(c.Time, 'f', results.LiveDecimals, 64), formatFloat(c.Ratio()),
		})
	}
	cw.Flush()
	return cw.Error()
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ErrorSummary summarises how far predictions are from measurements.
type ErrorSummary struct {
	N int
	// Median and Mean of |predicted/measured - 1|.
	Median, Mean float64
	// Worst are the points of largest error, worst first (at most 5).
	Worst []Comparison
}

// Summarize computes the ErrorSummary of cs (points with a measured time
// of 0 are left out).
func Summarize(cs []Comparison) ErrorSummary {
	var good []Comparison
	for _, c := range cs {
		if c.Time > 0 {
			good = append(good, c)
		}
	}
	s := ErrorSummary{N: len(good)}
	if len(good) == 0 {
		return s
	}
	errs := make([]float64, len(good))
	for i, c := range good {
		errs[i] = c.RelErr()
		s.Mean += errs[i]
	}
	s.Mean /= float64(len(good))
	slices.Sort(errs)
	s.Median = median(errs)
	slices.SortStableFunc(good, func(a, b Comparison) int { return cmpFloat(b.RelErr(), a.RelErr()) })
	s.Worst = good[:min(5, len(good))]
	return s
}

func (s ErrorSummary) String() string {
	return fmt.Sprintf("%d points: median |predicted/measured - 1| = %.1f%%, mean %.1f%%", s.N, 100*s.Median, 100*s.Mean)
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
