package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/units"
)

// The figures of measurements held against the model (package verify,
// nexar-live compare and verify): predicted against measured times
// (WriteComparePNG) and measured against predicted crossovers
// (WriteRatioPNG). They follow the conventions of the other figures:
// sizes in binary units at powers of two, times in s/ms/µs, the Okabe-Ito
// palette, the subtitle's style.

var (
	colMeasured  = color.NRGBA{0x00, 0x72, 0xB2, 0xFF} // blue
	colPredicted = color.NRGBA{0xD5, 0x5E, 0x00, 0xFF} // vermillion
	colGrey      = color.NRGBA{0x7F, 0x7F, 0x7F, 0xFF}
)

// Measured is a measured time beside the model's prediction of it, at
// one message size.
type Measured struct {
	Bytes int
	// Time is the measured time (a median over iterations), TimeMin and
	// TimeMax the fastest and slowest iteration, Predicted the model's
	// time; seconds. A TimeMin of 0 draws no lower error bar.
	Time, TimeMin, TimeMax, Predicted float64
}

// ComparePanel is one panel of WriteComparePNG's figure: one collective,
// algorithm and world size, its points by ascending size.
type ComparePanel struct {
	Title  string
	Points []Measured
}

// WriteComparePNG draws, for each panel, the measured time (solid, with
// the spread over iterations as error bars) and the predicted time
// (dashed) against message size, three panels a row, under subtitle (if
// not ""), and writes the figure as a PNG at path.
func WriteComparePNG(path, subtitle string, panels []ComparePanel) error {
	var drawn []*plot.Plot
	for _, cp := range panels {
		p := measuredPanel(cp.Title, "message size", "time")
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logSecondsTicks{}
		meas := make(plotter.XYs, len(cp.Points))
		pred := make(plotter.XYs, len(cp.Points))
		errs := make(plotter.YErrors, len(cp.Points))
		ylo, yhi := math.Inf(1), math.Inf(-1)
		for i, c := range cp.Points {
			meas[i] = plotter.XY{X: float64(c.Bytes), Y: c.Time}
			pred[i] = plotter.XY{X: float64(c.Bytes), Y: c.Predicted}
			lo, hi := c.Time-c.TimeMin, c.TimeMax-c.Time
			if c.TimeMin <= 0 {
				lo = 0
			}
			errs[i] = struct{ Low, High float64 }{lo, hi}
			for _, v := range []float64{c.Time - lo, c.Time + hi, c.Predicted} {
				if v > 0 {
					ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
				}
			}
		}
		legendRoom(&p.Y, ylo, yhi)
		if err := measuredLine(p, "measured (median)", meas, colMeasured, false); err != nil {
			return err
		}
		if err := measuredLine(p, "predicted", pred, colPredicted, true); err != nil {
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
		drawn = append(drawn, p)
	}
	if sc, err := scatterPanel(panels); err != nil {
		return err
	} else if sc != nil {
		drawn = append(drawn, sc)
	}
	return savePanelGrid(path, subtitle, drawn, 3)
}

// scatterPanel is the compare figure's last panel: every point, measured
// against predicted, on log-log axes with the line y = x (the model
// exact) and the lines of 25% off either way; nil when no point has
// both times positive.
func scatterPanel(panels []ComparePanel) (*plot.Plot, error) {
	var xys plotter.XYs
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, cp := range panels {
		for _, c := range cp.Points {
			if c.Time > 0 && c.Predicted > 0 {
				xys = append(xys, plotter.XY{X: c.Predicted, Y: c.Time})
				lo, hi = math.Min(lo, math.Min(c.Time, c.Predicted)), math.Max(hi, math.Max(c.Time, c.Predicted))
			}
		}
	}
	if len(xys) == 0 {
		return nil, nil
	}
	if hi <= lo*1.01 {
		lo, hi = lo/1.1, hi*1.1
	}
	p := plot.New()
	p.Title.Text = "every point: measured against predicted"
	p.X.Label.Text, p.Y.Label.Text = "predicted time", "measured time"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logSecondsTicks{}, logSecondsTicks{}
	p.X.Min, p.X.Max = lo, hi
	legendRoom(&p.Y, lo, hi)
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	for _, ref := range []struct {
		f      float64
		label  string
		c      color.Color
		dashes []vg.Length
	}{{1, "y = x", color.Black, nil}, {1.25, "25% off", colGrey, []vg.Length{vg.Points(4), vg.Points(3)}}, {1 / 1.25, "", colGrey, []vg.Length{vg.Points(4), vg.Points(3)}}} {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo * ref.f}, {X: hi, Y: hi * ref.f}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = ref.c, vg.Points(1), ref.dashes
		p.Add(l)
		if ref.label != "" {
			p.Legend.Add(ref.label, l)
		}
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	sc.Color, sc.Radius, sc.Shape = colMeasured, vg.Points(2.2), draw.CircleGlyph{}
	p.Add(sc)
	p.Legend.Add("measured point", sc)
	return p, nil
}

// Marker is a vertical line at a message size, named in the legend.
type Marker struct {
	Label string
	// Bytes is where the line is drawn; NaN draws none, and the legend
	// names Label alone.
	Bytes float64
}

// RatioPanel is one panel of WriteRatioPNG's figure: the ratio of two
// variants' times (the first's over the second's: under 1 the first
// wins) at ascending sizes, measured and predicted, with the crossovers
// of a tuning table, of the model and of the measurements.
type RatioPanel struct {
	Title    string
	Sizes    []int
	Measured []float64
	// Predicted are the model's ratios at Sizes, nil without a model;
	// ratios that are not positive are left out.
	Predicted []float64
	// Table is the table's crossover (grey, dashed), Simulated the
	// model's (vermillion, dotted; nil for none), Crossover the measured
	// one (blue).
	Table     Marker
	Simulated *Marker
	Crossover Marker
}

// WriteRatioPNG draws, for each panel, the measured (solid) and predicted
// (dashed) ratios against message size, on a log axis with a line at 1,
// and the panel's markers, two panels a row, and writes the figure as a
// PNG at path.
func WriteRatioPNG(path string, panels []RatioPanel) error {
	var drawn []*plot.Plot
	for _, rp := range panels {
		p, err := ratioPanel(rp)
		if err != nil {
			return err
		}
		drawn = append(drawn, p)
	}
	return savePanelGrid(path, "", drawn, 2)
}

func ratioPanel(rp RatioPanel) (*plot.Plot, error) {
	p := measuredPanel(rp.Title, "message size", "time ratio (first / second)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ratioTicks{}
	meas := make(plotter.XYs, len(rp.Sizes))
	lo, hi := 1.0, 1.0
	for i, n := range rp.Sizes {
		meas[i] = plotter.XY{X: float64(n), Y: rp.Measured[i]}
		lo, hi = math.Min(lo, meas[i].Y), math.Max(hi, meas[i].Y)
	}
	if err := measuredLine(p, "measured", meas, colMeasured, false); err != nil {
		return nil, err
	}
	if rp.Predicted != nil {
		pred := make(plotter.XYs, 0, len(rp.Sizes))
		for i, n := range rp.Sizes {
			if rp.Predicted[i] > 0 {
				pred = append(pred, plotter.XY{X: float64(n), Y: rp.Predicted[i]})
				lo, hi = math.Min(lo, pred[len(pred)-1].Y), math.Max(hi, pred[len(pred)-1].Y)
			}
		}
		if len(pred) > 0 {
			if err := measuredLine(p, "predicted", pred, colPredicted, true); err != nil {
				return nil, err
			}
		}
	}
	lo, hi = lo/1.1, hi*1.1
	legendRoom(&p.Y, lo, hi)
	x0, x1 := float64(rp.Sizes[0]), float64(rp.Sizes[len(rp.Sizes)-1])
	one, err := plotter.NewLine(plotter.XYs{{X: x0, Y: 1}, {X: x1, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Color, one.Width = color.Black, vg.Points(0.8)
	p.Add(one)
	if err := markerLine(p, rp.Table, lo, hi, colGrey, []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
		return nil, err
	}
	if rp.Simulated != nil {
		if err := markerLine(p, *rp.Simulated, lo, hi, colPredicted, []vg.Length{vg.Points(1.5), vg.Points(2)}); err != nil {
			return nil, err
		}
	}
	if err := markerLine(p, rp.Crossover, lo, hi, colMeasured, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// logSecondsTicks labels a log axis of times at 1-2-5 steps, or finer
// steps where the axis spans too little for two of those, so that every
// panel's axis has at least two labelled ticks (gonum's log ticks label
// only powers of ten, none on an axis within one decade).
type logSecondsTicks struct{}

func (logSecondsTicks) Ticks(lo, hi float64) []plot.Tick {
	for _, steps := range [][]float64{{1, 2, 5}, {1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9}} {
		var ts []plot.Tick
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range steps {
				v := m * math.Pow(10, e)
				if v < lo*0.999 || v > hi*1.001 {
					continue
				}
				ts = append(ts, plot.Tick{Value: v, Label: units.FormatSeconds(v)})
			}
		}
		if len(ts) >= 2 {
			return ts
		}
	}
	// Less than a tenth of a decade: label both ends.
	return []plot.Tick{{Value: lo, Label: units.FormatSeconds(lo)}, {Value: hi, Label: units.FormatSeconds(hi)}}
}

// legendRoom raises a log axis's top so that the legend, at the panel's
// top left, sits above the data: a third of the data's span (in
// decades) again.
func legendRoom(a *plot.Axis, lo, hi float64) {
	if !(lo > 0) || !(hi > lo) {
		return
	}
	a.Min, a.Max = lo/math.Pow(hi/lo, 0.05), hi*math.Pow(hi/lo, 0.45)
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

// markerLine draws m as a vertical line across [lo, hi], or, where its
// size is NaN, names it in the legend alone.
func markerLine(p *plot.Plot, m Marker, lo, hi float64, c color.Color, dashes []vg.Length) error {
	if math.IsNaN(m.Bytes) {
		p.Legend.Add(m.Label)
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: m.Bytes, Y: lo}, {X: m.Bytes, Y: hi}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.2), dashes
	p.Add(l)
	if m.Label != "" {
		p.Legend.Add(m.Label, l)
	}
	return nil
}

// measuredPanel is a panel of these figures: gonum's fonts, a log size
// axis, the legend at the top left, a grid.
func measuredPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = SizeTicks(6)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// measuredLine adds a line with markers to p, in c, dashed if asked.
func measuredLine(p *plot.Plot, label string, xys plotter.XYs, c color.Color, dashed bool) error {
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

// savePanelGrid draws panels in a grid of cols columns into a PNG file,
// written beside path and renamed into place, under subtitle (if not
// "") wrapped to the figure's width.
func savePanelGrid(path, subtitle string, panels []*plot.Plot, cols int) error {
	if len(panels) == 0 {
		return fmt.Errorf("%w to plot for %s", ErrNoData, path)
	}
	cols = min(cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	const w, h = 5 * vg.Inch, 3.6 * vg.Inch
	const margin = 6 * vg.Millimeter
	width := w * vg.Length(cols)
	var lines []string
	var header vg.Length
	sty := subtitleStyle()
	if subtitle != "" {
		lines = wrapText(sty, subtitle, width-2*margin)
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
