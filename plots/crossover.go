package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nexar-go/nexar-go/algos"
)

// CrossoverMap draws which algorithm is fastest where: world sizes
// (categorical, one row each, ascending upwards) against message size (log),
// each sweep point a cell coloured by its [Winners] entry, with thick lines
// along the crossover boundaries (between neighbouring cells whose winners
// differ) and, in every cell, how much slower the runner-up is: "12%",
// "×3.4" when it takes 3.4 times as long, "tie", or "only" where no other
// algorithm ran. The figure is made wide enough for every cell's label.
// Sizes of zero bytes cannot sit on the log axis and are left out.
func CrossoverMap(points []Point, collective string) (*Figure, error) {
	f, _, err := crossoverMap(points, collective)
	return f, err
}

// crossoverMap is CrossoverMap, with the plotter of its cells for tests.
func crossoverMap(points []Point, collective string) (*Figure, *cellMap, error) {
	s, err := selectPoints(points, collective)
	if err != nil {
		return nil, nil, fmt.Errorf("crossover: %w", err)
	}
	all, err := s.winners()
	if err != nil {
		return nil, nil, fmt.Errorf("crossover: %w", err)
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
		return nil, nil, fmt.Errorf("crossover: %w: %q has no point of positive size", ErrNoData, collective)
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
	slices.SortFunc(winners, func(a, b string) int { return s.styleIndex(a) - s.styleIndex(b) })
	for _, alg := range winners {
		m.fill[alg] = lighten(palette[s.styleIndex(alg)%len(palette)], 0.45)
	}

	h := vg.Length(len(rows))*vg.Inch*0.55 + vg.Inch*1.1
	f := newFigure(s.title("fastest algorithm by world size and message size"), 1, m.width(), max(h, 3*vg.Inch))
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
	if m.hasBoundary() {
		f.addLegend("crossover", &plotter.Line{LineStyle: boundaryStyle()})
	}
	f.Note = "Each cell is one sweep point, coloured by its fastest algorithm; the number in it is how much slower the runner-up is (×N: N times as long; \"tie\": equal times, the simpler shown: fewer parameters, then the catalogue's order"
	if m.hasAlone() {
		f.Note += "; \"only\": no other algorithm ran"
	}
	f.Note += ")."
	if out := s.notCandidates(); len(out) > 0 {
		f.Note += " Never called fastest: " + strings.Join(out, ", ") + "."
	}
	f.finish()
	return f, m, nil
}

// cellLabel is what a cell says of its runner-up.
func cellLabel(w Winner) string {
	switch {
	case w.RunnerUp == "":
		return "only"
	case w.Tie():
		return "tie"
	case w.Margin() >= 1:
		// Twice as long or more: a percentage of three or more digits
		// would not fit a cell, a ratio does.
		r := w.RunnerUpTime / w.Time
		if r < 9.95 {
			return "×" + strconv.FormatFloat(r, 'f', 1, 64)
		}
		return "×" + strconv.FormatFloat(r, 'f', 0, 64)
	default:
		return formatMargin(w.Margin())
	}
}

// Cell labels are drawn at cellLabelSize, or as small as minLabelSize in
// cells too narrow for it; width sizes the figure so that they fit.
const (
	cellLabelSize = 8
	minLabelSize  = 5
	cellLabelPad  = 3 // points of room on either side, together
)

func cellLabelStyle(size vg.Length) text.Style {
	sty := textStyle(size)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	return sty
}

// width is the width of a figure of the map: 9 inches, or wider, up to
// 30, where the narrowest cell would not hold its label at cellLabelSize.
func (m *cellMap) width() vg.Length {
	const axis = 1.1 * vg.Inch // the y axis, its labels and the margins
	lo, hi := m.xRange()
	span := math.Log(hi / lo)
	sty := cellLabelStyle(cellLabelSize)
	plotW := 9*vg.Inch - axis
	for i, r := range m.rows {
		for j, c := range r.Cells {
			frac := math.Log(m.edges[i][j+1]/m.edges[i][j]) / span
			need := (sty.Width(cellLabel(c)) + vg.Points(cellLabelPad)) / vg.Length(frac)
			plotW = max(plotW, need)
		}
	}
	return min(plotW+axis, 30*vg.Inch)
}

// hasBoundary reports whether the map draws a crossover boundary: two
// neighbouring cells, along a row or between rows, with different
// winners.
func (m *cellMap) hasBoundary() bool {
	for i, r := range m.rows {
		for j := 1; j < len(r.Cells); j++ {
			if r.Cells[j-1].Algorithm != r.Cells[j].Algorithm {
				return true
			}
		}
		if i+1 < len(m.rows) && len(m.rowBoundary(i)) > 0 {
			return true
		}
	}
	return false
}

// hasAlone reports whether some cell had no runner-up.
func (m *cellMap) hasAlone() bool {
	for _, r := range m.rows {
		for _, c := range r.Cells {
			if c.RunnerUp == "" {
				return true
			}
		}
	}
	return false
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
	// labelled counts the cells the last Plot labelled, and shrunk those
	// of them it labelled in type smaller than cellLabelSize, for tests.
	labelled, shrunk int
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
	m.labelled, m.shrunk = 0, 0
	for i, r := range m.rows {
		y0, y1 := trY(float64(i)-0.5), trY(float64(i)+0.5)
		for j, cell := range r.Cells {
			x0, x1 := trX(m.edges[i][j]), trX(m.edges[i][j+1])
			rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			c.FillPolygon(m.fill[cell.Algorithm], c.ClipPolygonXY(rect))
			c.StrokeLines(sep, c.ClipLinesXY(append(rect, rect[0]))...)
			// Smaller type where the cell is narrow (the figure is as wide
			// as it may be); nothing only where even the smallest is too
			// wide.
			txt := cellLabel(cell)
			for size := vg.Length(cellLabelSize); size >= minLabelSize; size-- {
				if sty := cellLabelStyle(size); sty.Width(txt)+vg.Points(cellLabelPad) <= x1-x0 {
					sty.Color = cellLabelColour(m.fill[cell.Algorithm])
					c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, txt)
					m.labelled++
					if size < cellLabelSize {
						m.shrunk++
					}
					break
				}
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
		for _, seg := range m.rowBoundary(i) {
			c.StrokeLines(bs, c.ClipLinesXY([]vg.Point{{X: trX(seg[0]), Y: y1}, {X: trX(seg[1]), Y: y1}})...)
		}
	}
}

// rowBoundary returns the stretches of message size, [from, to],
// along which rows i and i+1 have different winners. The two rows may
// have been swept at different sizes, so they are compared on the union
// of their edges.
func (m *cellMap) rowBoundary(i int) [][2]float64 {
	xs := append(append([]float64(nil), m.edges[i]...), m.edges[i+1]...)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	var segs [][2]float64
	for k := 1; k < len(xs); k++ {
		mid := math.Sqrt(xs[k-1] * xs[k])
		a, b := m.winnerAt(i, mid), m.winnerAt(i+1, mid)
		if a == "" || b == "" || a == b {
			continue
		}
		if n := len(segs); n > 0 && segs[n-1][1] == xs[k-1] {
			segs[n-1][1] = xs[k]
		} else {
			segs = append(segs, [2]float64{xs[k-1], xs[k]})
		}
	}
	return segs
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

// notCandidates names what ran but is never called fastest: auto (a
// policy) and the lossy algorithms (they compute something else).
func (s *selection) notCandidates() []string {
	var out []string
	for _, a := range s.algorithms {
		if name := algos.VariantBase(a) + " (lossy)"; !s.competes(a) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if s.hasAuto {
		out = append(out, "auto (a policy)")
	}
	return out
}
