package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Panel size of the per-world figures. Three panels across fit a 12-inch
// wide image; at that width the size axis holds five labels.
var (
	panelW = vg.Inch * 3.7
	panelH = vg.Inch * 2.8
)

const panelXLabels = 5

// LatencyPanels draws the collective's time against message size on
// log-log axes: one panel per world size, one line per algorithm (auto as
// a dotted black line on top), error bars where points carry a Spread.
func LatencyPanels(points []Point, collective string) (*Figure, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	xlo, xhi, worlds := s.plottable(func(p Point) bool { return p.Time > 0 })
	if len(worlds) == 0 {
		return nil, fmt.Errorf("latency: %w: %q has no point with positive size and time", ErrNoData, collective)
	}
	f := newFigure(s.title("latency vs message size"), len(worlds), panelW, panelH)
	drawn := map[string]bool{}
	for i, w := range worlds {
		p := newPanel(fmt.Sprintf("p = %d", w))
		tmin, tmax := math.Inf(1), math.Inf(-1)
		for _, alg := range s.drawOrder() {
			pts := s.series(alg, w)
			if len(pts) == 0 {
				continue
			}
			xys := make(plotter.XYs, len(pts))
			var errs plotter.YErrors
			for j, pt := range pts {
				xys[j] = plotter.XY{X: float64(pt.Bytes), Y: pt.Time}
				lo, hi := pt.Time, pt.Time
				if pt.Spread > 0 {
					// A log axis cannot show t - spread <= 0, and a bar
					// reaching decades below the data would squash every
					// line: clip it at a tenth of the time.
					lo = math.Max(pt.Time-pt.Spread, pt.Time*0.1)
					hi = pt.Time + pt.Spread
					errs = append(errs, struct{ Low, High float64 }{pt.Time - lo, hi - pt.Time})
				} else {
					errs = append(errs, struct{ Low, High float64 }{0, 0})
				}
				tmin, tmax = math.Min(tmin, lo), math.Max(tmax, hi)
			}
			st := s.style(alg)
			if err := addSeries(p, xys, st); err != nil {
				return nil, fmt.Errorf("latency: %w", err)
			}
			drawn[alg] = true
			if hasSpread(pts) {
				eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: st.line, CapWidth: vg.Points(4)}
				eb.LineStyle.Dashes = nil
				eb.LineStyle.Width = vg.Points(0.8)
				p.Add(eb)
			}
		}
		setBytesAxis(&p.X, xlo, xhi, panelXLabels)
		p.Y.Scale = plot.LogScale{}
		p.Y.Min, p.Y.Max = niceLogRange(tmin, tmax)
		p.Y.Tick.Marker = decadeTicks{maxLabels: 6, format: FormatSeconds}
		f.place(i, p, "message size", "time")
	}
	s.addAlgorithmLegend(f, drawn)
	f.finish()
	return f, nil
}

// BusBWPanels draws the collective's bus bandwidth (as nccl-tests reports
// it) against message size, log x and linear y from zero, one panel per
// world size, one line per algorithm. ceilingGBps > 0 draws the link
// bandwidth as a grey dashed ceiling: at the bandwidth bound busbw meets it.
// All panels share the y range so that heights compare across panels.
func BusBWPanels(points []Point, collective string, ceilingGBps float64) (*Figure, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, fmt.Errorf("busbw: %w", err)
	}
	if math.IsNaN(ceilingGBps) || math.IsInf(ceilingGBps, 0) || ceilingGBps < 0 {
		return nil, fmt.Errorf("busbw: ceiling %v GB/s is not a finite non-negative number", ceilingGBps)
	}
	xlo, xhi, worlds := s.plottable(func(p Point) bool { return p.BusBW > 0 })
	if len(worlds) == 0 {
		return nil, fmt.Errorf("busbw: %w for %q", ErrNoBusBW, collective)
	}
	ymax := ceilingGBps
	for _, p := range s.points {
		ymax = math.Max(ymax, p.BusBW)
	}
	f := newFigure(s.title("bus bandwidth vs message size"), len(worlds), panelW, panelH)
	ceiling := ceilingStyle()
	drawn := map[string]bool{}
	for i, w := range worlds {
		p := newPanel(fmt.Sprintf("p = %d", w))
		if ceilingGBps > 0 { // first, so the data lies on top
			l, err := plotter.NewLine(plotter.XYs{{X: xlo, Y: ceilingGBps}, {X: xhi, Y: ceilingGBps}})
			if err != nil {
				return nil, fmt.Errorf("busbw: %w", err)
			}
			l.LineStyle = ceiling
			p.Add(l)
		}
		for _, alg := range s.drawOrder() {
			var xys plotter.XYs
			for _, pt := range s.points {
				if pt.Algorithm == alg && pt.World == w && pt.Bytes > 0 && pt.BusBW > 0 {
					xys = append(xys, plotter.XY{X: float64(pt.Bytes), Y: pt.BusBW})
				}
			}
			if len(xys) == 0 {
				continue
			}
			if err := addSeries(p, xys, s.style(alg)); err != nil {
				return nil, fmt.Errorf("busbw: %w", err)
			}
			drawn[alg] = true
		}
		setBytesAxis(&p.X, xlo, xhi, panelXLabels)
		p.Y.Min, p.Y.Max = 0, ymax*1.08
		p.Y.Tick.Marker = linearTicks{want: 5}
		f.place(i, p, "message size", "busbw (GB/s)")
	}
	s.addAlgorithmLegend(f, drawn)
	if ceilingGBps > 0 {
		f.addLegend(fmt.Sprintf("link bandwidth (%s GB/s)", sig3(ceilingGBps)), &plotter.Line{LineStyle: ceiling})
	}
	for _, alg := range s.algorithms {
		if drawn[alg] && !s.competes(alg) {
			f.Note = "Lossy algorithms (grey) send less than the data, so their bus bandwidth, counted on the whole buffer, may pass the link's; the ceiling holds for the exact ones."
			break
		}
	}
	f.finish()
	return f, nil
}

// ceilingStyle draws the link bandwidth: a light grey, which no
// algorithm's colour comes near (see palette), in long dashes that no
// series has.
func ceilingStyle() draw.LineStyle {
	return draw.LineStyle{
		Color:  color.Gray{Y: 0x99},
		Width:  vg.Points(1.2),
		Dashes: referenceDashes,
	}
}

// place puts panel p at position i and labels both its axes: every
// panel, so that any panel read alone (or cropped into a report) says
// what it shows.
func (f *Figure) place(i int, p *plot.Plot, xlabel, ylabel string) {
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(gridLines())
	f.panels[i] = p
}

func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical = draw.LineStyle{Color: gridColor, Width: vg.Points(0.5)}
	g.Horizontal = g.Vertical
	return g
}

// setBytesAxis makes a a log-scale message-size axis over [lo, hi].
func setBytesAxis(a *plot.Axis, lo, hi float64, labels int) {
	a.Scale = plot.LogScale{}
	a.Min, a.Max = pow2Range(lo, hi)
	a.Tick.Marker = bytesTicks{maxLabels: labels}
}

// addSeries adds a line with a marker at every point.
func addSeries(p *plot.Plot, xys plotter.XYs, st seriesStyle) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.LineStyle = st.line
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle = st.glyph
	p.Add(l, sc)
	return nil
}

func hasSpread(pts []Point) bool {
	for _, p := range pts {
		if p.Spread > 0 {
			return true
		}
	}
	return false
}

// plottable returns the size range and the world sizes (ascending) of the
// points with a positive size for which ok holds.
func (s *selection) plottable(ok func(Point) bool) (lo, hi float64, worlds []int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range s.points {
		if p.Bytes <= 0 || !ok(p) {
			continue
		}
		lo, hi = math.Min(lo, float64(p.Bytes)), math.Max(hi, float64(p.Bytes))
		if !slices.Contains(worlds, p.World) {
			worlds = append(worlds, p.World)
		}
	}
	slices.Sort(worlds)
	return lo, hi, worlds
}

// drawOrder lists the algorithms in the order they are drawn: those that
// compete by simplicity, then the lossy ones, then auto on top (thin and
// dotted, so that the series it runs shows through).
func (s *selection) drawOrder() []string {
	out := append([]string(nil), s.algorithms...)
	if s.hasAuto {
		out = append(out, Auto)
	}
	return out
}

func (s *selection) style(alg string) seriesStyle {
	if alg == Auto {
		return autoStyle()
	}
	if !s.competes(alg) {
		return lossyStyle(s.styleIndex(alg) - s.competing())
	}
	return styleFor(s.styleIndex(alg))
}

// addAlgorithmLegend adds the algorithms drawn to f's legend, in the
// order they are drawn; an algorithm with no point a figure can show
// (none of positive size, time or busbw) has no entry.
func (s *selection) addAlgorithmLegend(f *Figure, drawn map[string]bool) {
	for _, alg := range s.drawOrder() {
		if !drawn[alg] {
			continue
		}
		st := s.style(alg)
		label := alg
		if alg != Auto && !s.competes(alg) {
			label += " (lossy)"
		}
		f.addLegend(label, &plotter.Line{LineStyle: st.line}, &plotter.Scatter{GlyphStyle: st.glyph})
	}
}

// competing is how many of the collective's algorithms compete (they come
// first in s.algorithms).
func (s *selection) competing() int {
	n := 0
	for _, a := range s.algorithms {
		if s.competes(a) {
			n++
		}
	}
	return n
}
