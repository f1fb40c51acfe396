package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CrossoverMap draws which algorithm is fastest where: world sizes
// (categorical, one row each, ascending upwards) against message size (log),
// each sweep point a cell coloured by its [Winners] entry, with thick lines
// along the crossover boundaries (between neighbouring cells whose winners
// differ) and, in each cell wide enough, how much slower the runner-up is.
// Sizes of zero bytes cannot sit on the log axis and are left out.
func CrossoverMap(points []Point, collective string) (*Figure, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, fmt.Errorf("crossover: %w", err)
	}
	all, err := s.winners()
	if err != nil {
		return nil, fmt.Errorf("crossover: %w", err)
	}
	var rows []WinnerRow
	for _, r := range all {
		var cells []Winner
		for _, c := range r.Cells {
			if c.Bytes > 0 {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			rows = append(rows, WinnerRow{World: r.World, Cells: cells})
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("crossover: %w: %q has no point of positive size", ErrNoData, collective)
	}

	m := &cellMap{rows: rows, fill: map[string]color.Color{}}
	var winners []string
	for _, r := range rows {
		m.edges = append(m.edges, cellEdges(r.Cells))
		for _, c := range r.Cells {
			if !slices.Contains(winners, c.Algorithm) {
				winners = append(winners, c.Algorithm)
			}
		}
	}
	slices.Sort(winners)
	for _, alg := range winners {
		m.fill[alg] = lighten(palette[s.styleIndex(alg)%len(palette)], 0.45)
	}

	h := vg.Length(len(rows))*vg.Inch*0.55 + vg.Inch*1.1
	f := newFigure(s.title("fastest algorithm by world size and message size"), 1, 9*vg.Inch, max(h, 3*vg.Inch))
	p := newPanel("")
	p.Add(m)
	p.X.Label.Text = "message size"
	p.Y.Label.Text = "world size (ranks)"
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = m.xRange()
	// Ticks at the swept sizes, so that labels sit under cell centres even
	// when the sweep did not run every power of two.
	var sizes []float64
	for _, r := range rows {
		for _, c := range r.Cells {
			sizes = append(sizes, float64(c.Bytes))
		}
	}
	slices.Sort(sizes)
	p.X.Tick.Marker = sizeTicks{sizes: slices.Compact(sizes), maxLabels: 10}
	p.X.Padding, p.Y.Padding = 0, 0
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	var yt plot.ConstantTicks
	for i, r := range rows {
		yt = append(yt, plot.Tick{Value: float64(i), Label: strconv.Itoa(r.World)})
	}
	p.Y.Tick.Marker = yt
	f.panels[0] = p
	for _, alg := range winners {
		f.addLegend(alg, &plotter.Polygon{Color: m.fill[alg], LineStyle: draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(0.5)}})
	}
	f.addLegend("crossover", &plotter.Line{LineStyle: boundaryStyle()})
	f.Note = "Each cell is one sweep point, coloured by its fastest algorithm; the number in it is how much slower the runner-up is (\"tie\": equal times, first name shown)."
	f.finish()
	return f, nil
}

func boundaryStyle() draw.LineStyle {
	return draw.LineStyle{Color: color.Black, Width: vg.Points(2.2)}
}

// cellEdges returns the len(cells)+1 cell edges along the size axis: the
// geometric midpoints between neighbouring sizes, and half a step beyond
// the ends (an octave when there is a single size).
func cellEdges(cells []Winner) []float64 {
	n := len(cells)
	e := make([]float64, n+1)
	for j := 1; j < n; j++ {
		e[j] = math.Sqrt(float64(cells[j-1].Bytes) * float64(cells[j].Bytes))
	}
	if n == 1 {
		b := float64(cells[0].Bytes)
		e[0], e[1] = b/math.Sqrt2, b*math.Sqrt2
		return e
	}
	e[0] = float64(cells[0].Bytes) * float64(cells[0].Bytes) / e[1]
	e[n] = float64(cells[n-1].Bytes) * float64(cells[n-1].Bytes) / e[n-1]
	return e
}

// cellMap is the plotter of the crossover map.
type cellMap struct {
	rows  []WinnerRow
	edges [][]float64 // per row
	fill  map[string]color.Color
}

func (m *cellMap) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, e := range m.edges {
		lo, hi = math.Min(lo, e[0]), math.Max(hi, e[len(e)-1])
	}
	return lo, hi
}

// winnerAt is the winner of row i whose cell contains size x, or "".
func (m *cellMap) winnerAt(i int, x float64) string {
	e := m.edges[i]
	j, _ := slices.BinarySearch(e, x)
	if j == 0 || j == len(e) {
		return ""
	}
	return m.rows[i].Cells[j-1].Algorithm
}

// Plot implements plot.Plotter.
func (m *cellMap) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sep := draw.LineStyle{Color: color.White, Width: vg.Points(0.6)}
	label := textStyle(8)
	label.XAlign, label.YAlign = draw.XCenter, draw.YCenter
	label.Color = color.Gray{Y: 0x30}
	for i, r := range m.rows {
		y0, y1 := trY(float64(i)-0.5), trY(float64(i)+0.5)
		for j, cell := range r.Cells {
			x0, x1 := trX(m.edges[i][j]), trX(m.edges[i][j+1])
			rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			c.FillPolygon(m.fill[cell.Algorithm], c.ClipPolygonXY(rect))
			c.StrokeLines(sep, c.ClipLinesXY(append(rect, rect[0]))...)
			if cell.RunnerUp == "" {
				continue
			}
			txt := formatMargin(cell.Margin())
			if cell.Tie() {
				txt = "tie"
			}
			if label.Width(txt)+vg.Points(3) <= x1-x0 {
				c.FillText(label, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, txt)
			}
		}
	}

	bs := boundaryStyle()
	for i, r := range m.rows {
		y0, y1 := trY(float64(i)-0.5), trY(float64(i)+0.5)
		// Between neighbouring sizes of one world.
		for j := 1; j < len(r.Cells); j++ {
			if r.Cells[j-1].Algorithm != r.Cells[j].Algorithm {
				x := trX(m.edges[i][j])
				c.StrokeLines(bs, c.ClipLinesXY([]vg.Point{{X: x, Y: y0}, {X: x, Y: y1}})...)
			}
		}
		if i+1 == len(m.rows) {
			continue
		}
		// Between this world and the next: the two rows may have been swept
		// at different sizes, so compare them on the union of their edges.
		xs := append(append([]float64(nil), m.edges[i]...), m.edges[i+1]...)
		slices.Sort(xs)
		xs = slices.Compact(xs)
		var seg []vg.Point
		flush := func() {
			if len(seg) > 0 {
				c.StrokeLines(bs, c.ClipLinesXY(seg)...)
			}
			seg = nil
		}
		for k := 1; k < len(xs); k++ {
			mid := math.Sqrt(xs[k-1] * xs[k])
			a, b := m.winnerAt(i, mid), m.winnerAt(i+1, mid)
			if a == "" || b == "" || a == b {
				flush()
				continue
			}
			if len(seg) == 0 {
				seg = append(seg, vg.Point{X: trX(xs[k-1]), Y: y1})
			}
			seg = append(seg, vg.Point{X: trX(xs[k]), Y: y1})
		}
		flush()
	}
}

// DataRange implements plot.DataRanger.
func (m *cellMap) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = m.xRange()
	return xmin, xmax, -0.5, float64(len(m.rows)) - 0.5
}

// formatMargin writes a runner-up margin: "0.4%", "12%".
func formatMargin(f float64) string {
	pct := f * 100
	if pct < 9.95 {
		return strconv.FormatFloat(pct, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(pct, 'f', 0, 64) + "%"
}
