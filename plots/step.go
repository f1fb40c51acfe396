package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// StepPoint is one simulated training step (package workload), for the
// step figures: where it ran, what it is (a panel: its layout and other
// settings; a series: its algorithms), its gradient bucket, and its times
// in seconds.
type StepPoint struct {
	Network string
	// Panel groups the points of one panel (the layout, with any other
	// setting the study sweeps); Series the points of one line (the
	// process groups' algorithms).
	Panel, Series string
	Bucket        float64
	// Step is the step's time and Exposed its exposed communication; the
	// rest break the step down (the means over the ranks): compute,
	// exposed tensor-parallel, data-parallel and other communication,
	// pipeline bubble, idle time.
	Step, Exposed                               float64
	Compute, ExposedTP, ExposedDP, ExposedOther float64
	Bubble, Idle                                float64
}

func (p StepPoint) valid() error {
	for _, v := range []float64{p.Bucket, p.Step, p.Exposed, p.Compute, p.ExposedTP, p.ExposedDP, p.ExposedOther, p.Bubble, p.Idle} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("step point %s/%s/%s: a time or size %v is not a finite non-negative number", p.Network, p.Panel, p.Series, v)
		}
	}
	return nil
}

// stepSelection is a network's points, their panels and series in the
// order they first appear.
type stepSelection struct {
	points         []StepPoint
	panels, series []string
}

func selectSteps(points []StepPoint, network string) (*stepSelection, error) {
	s := &stepSelection{}
	for _, p := range points {
		if p.Network != network {
			continue
		}
		if err := p.valid(); err != nil {
			return nil, err
		}
		s.points = append(s.points, p)
		if !slices.Contains(s.panels, p.Panel) {
			s.panels = append(s.panels, p.Panel)
		}
		if !slices.Contains(s.series, p.Series) {
			s.series = append(s.series, p.Series)
		}
	}
	if len(s.points) == 0 {
		return nil, fmt.Errorf("%w: no step of network %q", ErrNoData, network)
	}
	return s, nil
}

func seriesLabel(s string) string {
	if s == "" {
		return "default algorithms"
	}
	return s
}

// StepBucketPanels draws, for one network, the step's time (solid) and
// its exposed communication (dashed, the same colour) against the
// gradient bucket size: a panel per layout, a line per choice of
// algorithms. The best bucket of each line is where its step time is
// lowest; the exposed time shows why: small buckets pay a collective's
// latency many times, large ones leave the last bucket's reduction
// exposed after the backward.
func StepBucketPanels(points []StepPoint, network string) (*Figure, error) {
	s, err := selectSteps(points, network)
	if err != nil {
		return nil, fmt.Errorf("step: %w", err)
	}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, p := range s.points {
		if p.Bucket > 0 {
			xlo, xhi = math.Min(xlo, p.Bucket), math.Max(xhi, p.Bucket)
		}
	}
	if math.IsInf(xlo, 1) {
		return nil, fmt.Errorf("step: %w: network %q has no bucket size", ErrNoData, network)
	}
	f := newFigure(fmt.Sprintf("training step vs gradient bucket: %s", network), len(s.panels), panelW, panelH)
	drawn := map[int]bool{}
	for i, panel := range s.panels {
		p := newPanel(panel)
		ymax := 0.0
		for k, ser := range s.series {
			var step, exp plotter.XYs
			for _, pt := range s.points {
				if pt.Panel == panel && pt.Series == ser && pt.Bucket > 0 {
					step = append(step, plotter.XY{X: pt.Bucket, Y: pt.Step})
					exp = append(exp, plotter.XY{X: pt.Bucket, Y: pt.Exposed})
					ymax = math.Max(ymax, pt.Step)
				}
			}
			if len(step) == 0 {
				continue
			}
			sortXY(step)
			sortXY(exp)
			st := styleFor(k)
			st.line.Dashes = nil
			if err := addSeries(p, step, st); err != nil {
				return nil, fmt.Errorf("step: %w", err)
			}
			ex := st
			ex.line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			ex.line.Width = vg.Points(1.1)
			ex.glyph.Radius = vg.Points(1.6)
			if err := addSeries(p, exp, ex); err != nil {
				return nil, fmt.Errorf("step: %w", err)
			}
			drawn[k] = true
		}
		setBytesAxis(&p.X, xlo, xhi, panelXLabels)
		p.Y.Min, p.Y.Max = 0, ymax*1.08
		p.Y.Tick.Marker = secondsTicks{}
		f.place(i, p, "gradient bucket", "time")
	}
	for k, ser := range s.series {
		if drawn[k] {
			st := styleFor(k)
			st.line.Dashes = nil
			f.addLegend(seriesLabel(ser), &plotter.Line{LineStyle: st.line}, &plotter.Scatter{GlyphStyle: st.glyph})
		}
	}
	f.Note = "solid: the step's time; dashed: its exposed communication (the compute stream's waits for communication, mean over ranks)"
	f.finish()
	return f, nil
}

func sortXY(xys plotter.XYs) {
	slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
}

// secondsTicks labels a linear time axis in s, ms or µs.
type secondsTicks struct{}

func (secondsTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = FormatSeconds(ts[i].Value)
		}
	}
	return ts
}

// stepParts are the parts of a step a breakdown stacks, bottom up.
var stepParts = []struct {
	name string
	get  func(StepPoint) float64
	col  color.NRGBA
}{
	{"compute", func(p StepPoint) float64 { return p.Compute }, color.NRGBA{0x99, 0x99, 0x99, 0xFF}},
	{"exposed TP", func(p StepPoint) float64 { return p.ExposedTP }, palette[0]},
	{"exposed DP", func(p StepPoint) float64 { return p.ExposedDP }, palette[1]},
	{"exposed EP, other", func(p StepPoint) float64 { return p.ExposedOther }, palette[2]},
	{"pipeline bubble", func(p StepPoint) float64 { return p.Bubble }, palette[3]},
	{"idle", func(p StepPoint) float64 { return p.Idle }, color.NRGBA{0xDD, 0xDD, 0xDD, 0xFF}},
}

// StepBreakdown draws, for one network, where each layout's step goes at
// its best bucket: a stacked bar per layout and choice of algorithms of
// compute, exposed communication by group, pipeline bubble and idle time
// (means over the ranks, which add up to the mean rank's step), with the
// step's time (the slowest rank's) marked above it.
func StepBreakdown(points []StepPoint, network string) (*Figure, error) {
	s, err := selectSteps(points, network)
	if err != nil {
		return nil, fmt.Errorf("step breakdown: %w", err)
	}
	// The best point of each panel and series.
	var bars []StepPoint
	var labels []string
	for _, panel := range s.panels {
		for _, ser := range s.series {
			best := -1
			for i, pt := range s.points {
				if pt.Panel == panel && pt.Series == ser && (best < 0 || pt.Step < s.points[best].Step) {
					best = i
				}
			}
			if best < 0 {
				continue
			}
			bars = append(bars, s.points[best])
			l := panel
			if len(s.series) > 1 {
				l += "\n" + seriesLabel(ser)
			}
			if s.points[best].Bucket > 0 {
				l += "\n" + FormatBytes(s.points[best].Bucket)
			}
			labels = append(labels, l)
		}
	}
	w := max(vg.Inch*0.9*vg.Length(len(bars))+vg.Inch*1.5, panelW)
	f := newFigure(fmt.Sprintf("where the step goes, at the best bucket: %s", network), 1, w, panelH*1.25)
	p := newPanel("")
	ymax := 0.0
	var below *plotter.BarChart
	for _, part := range stepParts {
		vals := make(plotter.Values, len(bars))
		for i, b := range bars {
			vals[i] = part.get(b)
		}
		bc, err := plotter.NewBarChart(vals, vg.Points(22))
		if err != nil {
			return nil, fmt.Errorf("step breakdown: %w", err)
		}
		bc.Color = part.col
		bc.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		f.addLegend(part.name, bc)
	}
	var steps plotter.XYs
	for i, b := range bars {
		steps = append(steps, plotter.XY{X: float64(i), Y: b.Step})
		ymax = math.Max(ymax, b.Step)
	}
	sc, err := plotter.NewScatter(steps)
	if err != nil {
		return nil, fmt.Errorf("step breakdown: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
	p.Add(sc)
	f.addLegend("step (slowest rank)", sc)
	p.NominalX(labels...)
	p.X.Tick.Label.Font.Size = tickLabelSize - 1
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	p.Y.Tick.Marker = secondsTicks{}
	f.place(0, p, "", "time")
	f.finish()
	return f, nil
}
