package live

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
)

// The figures of this package: predicted against measured times
// (ComparePlot) and measured against predicted crossovers (VerifyPlot).
// They follow the conventions of package plots: sizes in binary units at
// powers of two, times in s/ms/µs, the Okabe-Ito palette.

var (
	colMeasured  = color.NRGBA{0x00, 0x72, 0xB2, 0xFF} // blue
	colPredicted = color.NRGBA{0xD5, 0x5E, 0x00, 0xFF} // vermillion
	colGrey      = color.NRGBA{0x7F, 0x7F, 0x7F, 0xFF}
)

// secondsTicks labels a log axis of times at 1-2-5 steps.
type secondsTicks struct{}

func (secondsTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo*0.999 || v > hi*1.001 {
				continue
			}
			ts = append(ts, plot.Tick{Value: v, Label: units.FormatSeconds(v)})
		}
	}
	if len(ts) < 2 {
		return plot.LogTicks{}.Ticks(lo, hi)
	}
	return ts
}

// ratioTicks labels a log axis of ratios.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, v := range []float64{0.05, 0.1, 0.2, 0.25, 0.5, 0.8, 1, 1.25, 2, 4, 5, 10, 20} {
		if v >= lo && v <= hi {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
		}
	}
	if len(ts) < 2 {
		return plot.LogTicks{}.Ticks(lo, hi)
	}
	return ts
}

// vline draws a vertical line at x across [lo, hi].
func vline(p *plot.Plot, label string, x, lo, hi float64, c color.Color, dashes []vg.Length) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.2), dashes
	p.Add(l)
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plots.SizeTicks(6)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// line adds a line with markers to p, in c, dashed if asked.
func line(p *plot.Plot, label string, xys plotter.XYs, c color.Color, dashed bool) error {
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		pts.Shape = draw.RingGlyph{}
	} else {
		pts.Shape = draw.CircleGlyph{}
	}
	pts.Color, pts.Radius = c, vg.Points(2)
	p.Add(l, pts)
	if label != "" {
		p.Legend.Add(label, l, pts)
	}
	return nil
}

// savePanels draws panels in a grid of cols columns into a PNG file,
// written beside path and renamed into place, under subtitle (if not
// "") wrapped to the figure's width.
func savePanels(path, subtitle string, panels []*plot.Plot, cols int) error {
	if len(panels) == 0 {
		return fmt.Errorf("live: no data to plot for %s", path)
	}
	cols = min(cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	const w, h = 5 * vg.Inch, 3.6 * vg.Inch
	const margin = 6 * vg.Millimeter
	width := w * vg.Length(cols)
	var lines []string
	var header vg.Length
	sty := plots.SubtitleStyle()
	if subtitle != "" {
		lines = plots.WrapSubtitle(subtitle, width-2*margin)
		header = vg.Length(len(lines))*sty.Height("Xg") + vg.Points(8)
	}
	img := vgimg.NewWith(vgimg.UseWH(width, h*vg.Length(rows)+header), vgimg.UseDPI(110))
	dc := draw.New(img)
	for i, l := range lines {
		pt := vg.Point{X: width / 2, Y: dc.Max.Y - vg.Points(4) - vg.Length(i)*sty.Height("Xg")}
		dc.FillText(sty, pt, l)
	}
	dc.Max.Y -= header
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range cols {
			if i := r*cols + c; i < len(panels) {
				grid[r][c] = panels[i]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b.Bytes())
}

// ComparePlot draws, for each collective, world size and algorithm, the
// measured time (solid, with the spread over iterations as error bars)
// and the predicted time (dashed) against message size, and writes the
// figure as a PNG at path, subtitled with what was measured and the model
// that predicts it (see CompareSubtitle). Points of zero bytes are left
// out (the axis is logarithmic).
func ComparePlot(path, subtitle string, cs []Comparison) error {
	type key struct {
		coll, alg string
		world     int
	}
	var keys []key
	groups := map[key][]Comparison{}
	for _, c := range cs {
		if c.Bytes <= 0 || c.Time <= 0 || c.Predicted <= 0 {
			continue
		}
		k := key{c.Collective, c.Algorithm, c.World}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	var panels []*plot.Plot
	for _, k := range keys {
		g := groups[k]
		slices.SortFunc(g, func(a, b Comparison) int { return a.Bytes - b.Bytes })
		p := newPanel(fmt.Sprintf("%s %s, %d ranks", k.coll, k.alg, k.world), "message size", "time")
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = secondsTicks{}
		meas := make(plotter.XYs, len(g))
		pred := make(plotter.XYs, len(g))
		errs := make(plotter.YErrors, len(g))
		for i, c := range g {
			meas[i] = plotter.XY{X: float64(c.Bytes), Y: c.Time}
			pred[i] = plotter.XY{X: float64(c.Bytes), Y: c.Predicted}
			lo, hi := c.Time-c.TimeMin, c.TimeMax-c.Time
			if c.TimeMin <= 0 {
				lo = 0
			}
			errs[i] = struct{ Low, High float64 }{lo, hi}
		}
		if err := line(p, "measured (median)", meas, colMeasured, false); err != nil {
			return err
		}
		if err := line(p, "predicted", pred, colPredicted, true); err != nil {
			return err
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{meas, errs})
		if err == nil {
			eb.Color = colMeasured
			p.Add(eb)
		}
		panels = append(panels, p)
	}
	return savePanels(path, subtitle, panels, 3)
}

// CompareSubtitle says what a comparison figure shows: the scenario
// measured and the model, with its parameters, that predicted it.
func CompareSubtitle(s *scenario.Scenario) string {
	net := s.Network.Summary
	if net == "" {
		net = s.Network.Model
	}
	return fmt.Sprintf("measured: scenario %s · predicted: network %s", s.Name, net)
}

// VerifyPlot draws, for each checked crossover, the ratio of the two
// variants' times (below-variant over above-variant: under 1 the first
// wins) against message size, measured (solid) and predicted by the model
// (dashed), with vertical lines at the table's crossover (grey), the
// simulated one (vermillion, dotted) and the measured one (blue), and
// writes the figure as a PNG at path.
func VerifyPlot(path string, checks []CrossoverCheck) error {
	var panels []*plot.Plot
	for _, c := range checks {
		t := c.Target
		p := newPanel(fmt.Sprintf("%s, %d ranks: %s / %s", t.Collective, t.World, t.Below, t.Above), "message size", "time ratio")
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = ratioTicks{}
		meas := make(plotter.XYs, len(c.Sizes))
		lo, hi := 1.0, 1.0
		for i, n := range c.Sizes {
			meas[i] = plotter.XY{X: float64(n), Y: c.BelowTime[i] / c.AboveTime[i]}
			lo, hi = math.Min(lo, meas[i].Y), math.Max(hi, meas[i].Y)
		}
		if err := line(p, "measured", meas, colMeasured, false); err != nil {
			return err
		}
		if c.Simulated != nil {
			pred := make(plotter.XYs, 0, len(c.Sizes))
			for i, n := range c.Sizes {
				if c.BelowPredicted[i] > 0 && c.AbovePredicted[i] > 0 {
					pred = append(pred, plotter.XY{X: float64(n), Y: c.BelowPredicted[i] / c.AbovePredicted[i]})
					lo, hi = math.Min(lo, pred[len(pred)-1].Y), math.Max(hi, pred[len(pred)-1].Y)
				}
			}
			if len(pred) > 0 {
				if err := line(p, "predicted", pred, colPredicted, true); err != nil {
					return err
				}
			}
		}
		lo, hi = lo/1.1, hi*1.1
		x0, x1 := float64(c.Sizes[0]), float64(c.Sizes[len(c.Sizes)-1])
		one, err := plotter.NewLine(plotter.XYs{{X: x0, Y: 1}, {X: x1, Y: 1}})
		if err != nil {
			return err
		}
		one.Color, one.Width = color.Black, vg.Points(0.8)
		p.Add(one)
		if err := vline(p, "table: "+units.FormatBytesG(float64(t.Predicted)), float64(t.Predicted), lo, hi, colGrey, []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
			return err
		}
		if c.Simulated != nil && !math.IsNaN(c.Simulated.Bytes) {
			if err := vline(p, "simulated: "+c.Simulated.String(), c.Simulated.Bytes, lo, hi, colPredicted, []vg.Length{vg.Points(1.5), vg.Points(2)}); err != nil {
				return err
			}
		}
		if !math.IsNaN(c.Measured.Bytes) {
			if err := vline(p, "measured: "+c.Measured.String(), c.Measured.Bytes, lo, hi, colMeasured, nil); err != nil {
				return err
			}
		} else {
			p.Legend.Add("measured: " + c.Measured.String())
		}
		panels = append(panels, p)
	}
	return savePanels(path, "", panels, 2)
}
