package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Slowdown is the auto policy's cost at one sweep point.
type Slowdown struct {
	World int
	Bytes int64
	// Best is the fastest algorithm other than auto, BestTime its time.
	Best     string
	BestTime float64
	AutoTime float64
}

// Pct is time(auto)/time(best) - 1 in percent; negative when auto beat
// every algorithm swept (it may run a configuration the sweep did not).
func (s Slowdown) Pct() float64 {
	if s.BestTime <= 0 {
		return 0
	}
	return (s.AutoTime/s.BestTime - 1) * 100
}

// AutoSlowdowns lists, by world then size, every sweep point of the
// collective where auto and at least one other algorithm ran. It returns
// ErrNoAuto when there is none.
func AutoSlowdowns(points []Point, collective string) ([]Slowdown, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, err
	}
	return s.slowdowns()
}

func (s *selection) slowdowns() ([]Slowdown, error) {
	if !s.hasAuto {
		return nil, fmt.Errorf("%w for %q", ErrNoAuto, s.collective)
	}
	rows, err := s.winners()
	if err != nil {
		return nil, fmt.Errorf("%w for %q: %w", ErrNoAuto, s.collective, err)
	}
	type key struct {
		world int
		bytes int64
	}
	auto := map[key]float64{}
	for _, p := range s.points {
		if p.Algorithm == Auto {
			auto[key{p.World, p.Bytes}] = p.Time
		}
	}
	var out []Slowdown
	for _, r := range rows {
		for _, c := range r.Cells {
			if t, ok := auto[key{r.World, c.Bytes}]; ok {
				out = append(out, Slowdown{World: r.World, Bytes: c.Bytes, Best: c.Algorithm, BestTime: c.Time, AutoTime: t})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w for %q: auto ran at no point another algorithm ran", ErrNoAuto, s.collective)
	}
	return out, nil
}

// AutoSlowdown draws how much slower the auto policy is than the best
// algorithm at each sweep point, time(auto)/time(best) - 1 in percent,
// against message size (log), one line per world size. budgetPct > 0 draws
// that slowdown as a red dashed line: the tolerance auto is held to.
// It returns an error wrapping ErrNoAuto when the collective has no auto
// points to compare.
func AutoSlowdown(points []Point, collective string, budgetPct float64) (*Figure, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, fmt.Errorf("auto: %w", err)
	}
	if math.IsNaN(budgetPct) || math.IsInf(budgetPct, 0) || budgetPct < 0 {
		return nil, fmt.Errorf("auto: budget %v%% is not a finite non-negative number", budgetPct)
	}
	all, err := s.slowdowns()
	if err != nil {
		return nil, fmt.Errorf("auto: %w", err)
	}
	var sd []Slowdown
	for _, d := range all {
		if d.Bytes > 0 {
			sd = append(sd, d)
		}
	}
	if len(sd) == 0 {
		return nil, fmt.Errorf("auto: %w for %q: no point of positive size", ErrNoAuto, collective)
	}

	f := newFigure(s.title("auto policy slowdown vs the best algorithm"), 1, 9*vg.Inch, 4*vg.Inch)
	p := newPanel("")
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := 0.0, budgetPct
	type line struct {
		world int
		xys   plotter.XYs
		worst float64
	}
	var lines []line
	for _, d := range sd {
		if n := len(lines); n == 0 || lines[n-1].world != d.World {
			lines = append(lines, line{world: d.World, worst: math.Inf(-1)})
		}
		l := &lines[len(lines)-1]
		l.xys = append(l.xys, plotter.XY{X: float64(d.Bytes), Y: d.Pct()})
		l.worst = math.Max(l.worst, d.Pct())
		xlo, xhi = math.Min(xlo, float64(d.Bytes)), math.Max(xhi, float64(d.Bytes))
		ylo, yhi = math.Min(ylo, d.Pct()), math.Max(yhi, d.Pct())
	}
	setBytesAxis(&p.X, xlo, xhi, 10)
	if budgetPct > 0 {
		// Drawn first, so the data lies on top of it.
		bl, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: budgetPct}, {X: p.X.Max, Y: budgetPct}})
		if err != nil {
			return nil, fmt.Errorf("auto: %w", err)
		}
		bl.LineStyle = budgetStyle()
		p.Add(bl)
	}
	for i, l := range lines {
		st := styleFor(i)
		if err := addSeries(p, l.xys, st); err != nil {
			return nil, fmt.Errorf("auto: %w", err)
		}
		f.addLegend(fmt.Sprintf("p = %d (worst %s)", l.world, formatPct(l.worst)),
			&plotter.Line{LineStyle: st.line}, &plotter.Scatter{GlyphStyle: st.glyph})
	}
	if budgetPct > 0 {
		f.addLegend(fmt.Sprintf("budget (%s)", formatPct(budgetPct)), &plotter.Line{LineStyle: budgetStyle()})
	}
	// Headroom above the highest line, and at least one percent of range so
	// that an auto that is always exactly best still gets a readable axis.
	span := math.Max(yhi-ylo, 1)
	p.Y.Min = ylo
	if ylo < 0 {
		p.Y.Min = ylo - 0.08*span
	}
	p.Y.Max = yhi + 0.12*span
	p.Y.Tick.Marker = linearTicks{want: 6, suffix: "%"}
	f.place(0, p, "message size", "slowdown vs best")
	f.Note = "Best: the fastest algorithm at each point that computes the collective exactly; lossy algorithms are not compared."
	f.finish()
	return f, nil
}

// budgetStyle draws the budget: red, in long dashes that no series has
// (its red is as near vermillion's as any red can be, see palette).
func budgetStyle() draw.LineStyle {
	return draw.LineStyle{
		Color:  color.NRGBA{0xC0, 0x20, 0x20, 0xFF},
		Width:  vg.Points(1.2),
		Dashes: referenceDashes,
	}
}

// formatPct writes a percentage with up to three significant digits.
func formatPct(v float64) string {
	if v < 0 {
		return "-" + sig3(-v) + "%"
	}
	return sig3(v) + "%"
}
