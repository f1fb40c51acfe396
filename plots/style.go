package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is the Okabe-Ito colour-blind-safe set (without its yellow, which
// is unreadable as a thin line on white), then four Tableau colours for
// catalogues larger than six.
var palette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x8C, 0x56, 0x4B, 0xFF}, // brown
	{0x7F, 0x7F, 0x7F, 0xFF}, // grey
	{0xBC, 0xBD, 0x22, 0xFF}, // olive
	{0x17, 0xBE, 0xCF, 0xFF}, // cyan
}

// dashes cycle with a period (4) prime to the palette's (10) so that two
// series never share both colour and dash in one figure of fewer than 20.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(7), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{},
	draw.BoxGlyph{},
}

type seriesStyle struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

// styleFor is the style of the i-th series of a figure.
func styleFor(i int) seriesStyle {
	c := palette[i%len(palette)]
	return seriesStyle{
		line: draw.LineStyle{
			Color:  c,
			Width:  vg.Points(1.5),
			Dashes: dashes[i%len(dashes)],
		},
		glyph: draw.GlyphStyle{
			Color:  c,
			Radius: vg.Points(2.2),
			Shape:  glyphs[i%len(glyphs)],
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

// lighten mixes c with white; crossover cells use it so that the black
// boundaries stand out against every fill.
func lighten(c color.NRGBA, f float64) color.NRGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*f + 0.5) }
	return color.NRGBA{mix(c.R), mix(c.G), mix(c.B), 0xFF}
}

// Font sizes, in points.
const (
	titleSize      = 14
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
