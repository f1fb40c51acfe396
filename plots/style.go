package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette keeps up to 12 lines apart: the Okabe-Ito colour-blind-safe
// set first (without its yellow, unreadable as a thin line on white, and
// its black, which is auto's), then six colours found by a search of the
// sRGB grid of step 0x11 for the largest least CIEDE2000 difference to
// the others and to themselves, in normal vision and in deuteranopia
// (Machado et al. 2009), keeping clear of auto's black, the budget line's
// red (but for vermillion, 19.6 from it) and the ceiling's grey, which
// are drawn in dashes no series has. Any two of the 12 differ by at least
// 22.2 (the least difference within Okabe-Ito's six), 12.5 in
// deuteranopia; the ten colours this replaced, Okabe-Ito's and four of
// Tableau's, came to 13.7 and 2.1 (sky blue and cyan), and repeated from
// the eleventh line on. Readers with other colour vision tell lines apart
// by marker and dash (see styleFor).
var palette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x11, 0x55, 0x00, 0xFF}, // dark green
	{0x77, 0x33, 0x44, 0xFF}, // plum
	{0x00, 0x00, 0xDD, 0xFF}, // ultramarine
	{0x00, 0x55, 0x55, 0xFF}, // dark teal
	{0x77, 0x66, 0x00, 0xFF}, // olive
	{0x99, 0x66, 0xFF, 0xFF}, // violet
}

// dashes cycle with a period of 4: with colour and marker, a third
// difference between series of one figure.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(7), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

// referenceDashes draw the lines that are not series (the busbw
// ceiling, auto's budget): long dashes, unlike any of dashes.
var referenceDashes = []vg.Length{vg.Points(12), vg.Points(4)}

// glyphs are 12 markers, one per colour of the palette: five filled
// shapes, the same five outlined, a cross and a plus.
var glyphs = []draw.GlyphDrawer{
	marker{shape: circle, filled: true},
	marker{shape: square, filled: true},
	marker{shape: triangleUp, filled: true},
	marker{shape: diamond, filled: true},
	marker{shape: triangleDown, filled: true},
	marker{shape: circle},
	marker{shape: square},
	marker{shape: triangleUp},
	marker{shape: diamond},
	marker{shape: triangleDown},
	marker{shape: cross},
	marker{shape: plus},
}

// markerShape is the outline of a marker.
type markerShape uint8

const (
	circle markerShape = iota
	square
	triangleUp
	diamond
	triangleDown
	cross
	plus
)

// marker draws a point's marker. gonum's outlined glyphs stroke at half
// a point, which is too faint to tell from a filled one at this size; a
// marker strokes at 1 point, and sizes every shape to look as large as
// the circle.
type marker struct {
	shape  markerShape
	filled bool
}

// DrawGlyph implements draw.GlyphDrawer.
func (m marker) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	var p vg.Path
	switch m.shape {
	case circle:
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
	case square:
		p = polygon(pt, r*1.15, 4, 45)
	case triangleUp:
		p = polygon(pt, r*1.35, 3, 90)
	case diamond:
		p = polygon(pt, r*1.3, 4, 90)
	case triangleDown:
		p = polygon(pt, r*1.35, 3, -90)
	case cross, plus:
		angle := 45.0
		if m.shape == plus {
			angle = 0
		}
		for _, a := range []float64{angle, angle + 90} {
			dx, dy := vg.Length(math.Cos(a*math.Pi/180))*r*1.3, vg.Length(math.Sin(a*math.Pi/180))*r*1.3
			p.Move(vg.Point{X: pt.X - dx, Y: pt.Y - dy})
			p.Line(vg.Point{X: pt.X + dx, Y: pt.Y + dy})
		}
		c.Stroke(p)
		return
	}
	if m.filled {
		c.Fill(p)
	} else {
		c.Stroke(p)
	}
}

// polygon is the closed path of a regular polygon of n corners at
// distance r from centre, the first at angle degrees (90 is up).
func polygon(centre vg.Point, r vg.Length, n int, angle float64) vg.Path {
	var p vg.Path
	for i := range n {
		a := (angle + 360*float64(i)/float64(n)) * math.Pi / 180
		q := vg.Point{X: centre.X + r*vg.Length(math.Cos(a)), Y: centre.Y + r*vg.Length(math.Sin(a))}
		if i == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	return p
}

type seriesStyle struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

// styleFor is the style of the i-th series of a figure: the first 12
// differ in colour and marker, and any 4 in a row in dash too. Past 12
// colours repeat, and the marker and dash shift by one more each round,
// so that series i and i+12m (m < 12) still differ in marker.
func styleFor(i int) seriesStyle {
	c := palette[i%len(palette)]
	k := i + i/len(palette)
	return seriesStyle{
		line: draw.LineStyle{
			Color:  c,
			Width:  vg.Points(1.5),
			Dashes: dashes[k%len(dashes)],
		},
		glyph: draw.GlyphStyle{
			Color:  c,
			Radius: vg.Points(2.2),
			Shape:  glyphs[k%len(glyphs)],
		},
	}
}

// autoStyle draws the auto policy: black, thin and dotted so that it stays
// visible on top of the algorithm it picked.
func autoStyle() seriesStyle {
	return seriesStyle{
		line: draw.LineStyle{
			Color:  color.Black,
			Width:  vg.Points(1),
			Dashes: []vg.Length{vg.Points(1), vg.Points(2)},
		},
		glyph: draw.GlyphStyle{
			Color:  color.Black,
			Radius: vg.Points(1.4),
			Shape:  draw.CircleGlyph{},
		},
	}
}

// lossyGreys draw the lossy algorithms (compressed allreduces), which are
// shown but never called best: greys, apart from the palette's colours,
// so that the 12 that compete keep the 12 colours, and darker than the
// ceiling's light grey (0x99), which is drawn in long dashes.
var lossyGreys = []color.NRGBA{
	{0x66, 0x66, 0x66, 0xFF},
	{0x44, 0x44, 0x44, 0xFF},
	{0x7A, 0x7A, 0x7A, 0xFF},
}

// lossyStyle is the style of the i-th lossy series: grey, thin, in
// dash-dot, with an outlined marker that no competing series of the first
// 12 shares in the same colour.
func lossyStyle(i int) seriesStyle {
	c := lossyGreys[i%len(lossyGreys)]
	return seriesStyle{
		line: draw.LineStyle{
			Color:  c,
			Width:  vg.Points(1.2),
			Dashes: []vg.Length{vg.Points(4), vg.Points(2), vg.Points(1), vg.Points(2)},
		},
		glyph: draw.GlyphStyle{
			Color:  c,
			Radius: vg.Points(2.2),
			Shape:  glyphs[(5+i)%len(glyphs)],
		},
	}
}

// lighten mixes c with white; crossover cells use it so that the black
// boundaries stand out against every fill.
func lighten(c color.NRGBA, f float64) color.NRGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*f + 0.5) }
	return color.NRGBA{mix(c.R), mix(c.G), mix(c.B), 0xFF}
}

// cellLabelColour is the colour of a crossover cell's label on fill:
// dark grey, or black where grey would read at less than WCAG's AA
// contrast for text (4.5:1), as on the lightened dark colours of the
// palette's second half.
func cellLabelColour(fill color.Color) color.Color {
	grey := color.Gray{Y: 0x30}
	if contrast(grey, fill) >= 4.5 {
		return grey
	}
	return color.Black
}

// contrast is WCAG's contrast ratio of two colours, from 1 to 21.
func contrast(a, b color.Color) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// relativeLuminance is WCAG's relative luminance of an sRGB colour.
func relativeLuminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xFFFF
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// Font sizes, in points.
const (
	titleSize      = 14
	subtitleSize   = 10
	panelTitleSize = 11
	axisLabelSize  = 10
	tickLabelSize  = 9
	legendSize     = 10
)

func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

var gridColor = color.Gray{Y: 0xE0}

// newPanel returns a plot with this package's fonts and a light grid.
func newPanel(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = panelTitleSize
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = axisLabelSize
		a.Tick.Label.Font.Size = tickLabelSize
		a.Label.Padding = vg.Points(2)
	}
	return p
}
