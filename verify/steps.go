package verify

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/workload"
)

// StepComparison is a measured step beside the simulator's prediction
// of it: the same point, simulated on a network model.
type StepComparison struct {
	Measured, Predicted workload.Row
}

// Ratio is the predicted step over the measured one (NaN when the
// measured step is 0).
func (c StepComparison) Ratio() float64 {
	if c.Measured.Step == 0 {
		return math.NaN()
	}
	return c.Predicted.Step / c.Measured.Step
}

// RelErr is |predicted/measured - 1|.
func (c StepComparison) RelErr() float64 { return math.Abs(c.Ratio() - 1) }

// PredictSteps simulates the point of every measured row of s (a row of
// step.csv: its Point is the index of s's [workload] point) on network,
// the [network] of s or of a calibrated scenario (nexar-live calibrate
// --out), with s's seed, FLOP rate and tuning.
func PredictSteps(s *scenario.Scenario, network *scenario.Network, rows []workload.Row) ([]StepComparison, error) {
	if s.Workload == nil {
		return nil, fmt.Errorf("%s: no [workload] table", s.File)
	}
	out := make([]StepComparison, 0, len(rows))
	for _, r := range rows {
		if r.Point < 0 || r.Point >= len(s.Workload.Points) {
			return nil, fmt.Errorf("%s: no [workload] point %d", s.File, r.Point)
		}
		p := s.Workload.Points[r.Point]
		plan, err := workload.NewPlan(p.Spec)
		if err != nil {
			return nil, fmt.Errorf("point %d: %w", r.Point, err)
		}
		if err := network.Check(plan.World()); err != nil {
			return nil, fmt.Errorf("point %d: %w", r.Point, err)
		}
		res, _, err := workload.Simulate(plan, workload.SimConfig{Model: network.Seeded(s.Seed), Machine: network.MachineFor(plan.World()),
			FLOPS: s.Workload.FLOPS, Tuning: s.Workload.Tuning})
		if err != nil {
			return nil, fmt.Errorf("predicting point %d: %w", r.Point, err)
		}
		out = append(out, StepComparison{Measured: r, Predicted: workload.NewRow(r.Network, r.Point, p.Spec, res)})
	}
	return out, nil
}

// StepCompareColumns are the columns of nexar-live step's compare.csv:
// the point as step.csv names it, then the predicted and measured step,
// their ratio, and the predicted and measured compute and exposed
// communication (seconds; means over the ranks as in step.csv).
var StepCompareColumns = []string{"network", "point", "layout", "bucket_bytes", "algorithms",
	"predicted_s", "measured_s", "ratio", "predicted_compute_s", "measured_compute_s", "predicted_exposed_s", "measured_exposed_s"}

// WriteStepCompareCSV writes comparisons as compare.csv.
func WriteStepCompareCSV(w io.Writer, cs []StepComparison) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(StepCompareColumns); err != nil {
		return err
	}
	for _, c := range cs {
		m, p := c.Measured, c.Predicted
		cw.Write([]string{m.Network, strconv.Itoa(m.Point), m.Layout, strconv.FormatInt(m.Bucket, 10), m.Algorithms,
			secs(p.Step), secs(m.Step), formatFloat(c.Ratio()), secs(p.Compute), secs(m.Compute), secs(p.Exposed), secs(m.Exposed)})
	}
	cw.Flush()
	return cw.Error()
}

// SummarizeSteps is the median and mean |predicted/measured - 1| of cs
// (points measured at 0 left out), and how many points there are.
func SummarizeSteps(cs []StepComparison) (n int, med, mean float64) {
	var errs []float64
	for _, c := range cs {
		if c.Measured.Step > 0 {
			errs = append(errs, c.RelErr())
			mean += c.RelErr()
		}
	}
	if len(errs) == 0 {
		return 0, math.NaN(), math.NaN()
	}
	slices.Sort(errs)
	return len(errs), median(errs), mean / float64(len(errs))
}

func secs(v float64) string { return strconv.FormatFloat(v, 'f', 9, 64) }
