package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nexar-go/nexar-go/internal/atomicfile"
)

// DefaultDPI is the resolution of PNG output.
const DefaultDPI = 120

// Figure is a titled image of one or more plot panels in a grid, with one
// legend shared by all panels drawn between the title and the panels, so
// that it never covers data. Build one with [LatencyPanels],
// [BusBWPanels], [CrossoverMap] or [AutoSlowdown]; write it with Save or
// Encode.
type Figure struct {
	// Title is drawn centred at the top.
	Title string
	// Width and Height are the size of the image; the constructors size
	// it for the number of panels.
	Width, Height vg.Length
	// Note is an optional line of small print under the panels, to say how
	// to read the figure.
	Note string
	// DPI is the resolution of PNG output (DefaultDPI when 0).
	DPI int

	rows, cols int
	n          int          // number of panels
	panels     []*plot.Plot // row-major; nil leaves a tile empty
	legend     []legendEntry
	subtitle   string // see SetSubtitle
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// Layout constants.
var (
	margin      = vg.Points(10)
	panelPadX   = vg.Points(18)
	panelPadY   = vg.Points(14)
	legendThumb = vg.Points(26)
	legendGap   = vg.Points(16) // between entries on one legend line
	minWidth    = 6 * vg.Inch   // room for a title and a legend line
)

// newFigure lays n panels out in a grid of panelW x panelH tiles.
func newFigure(title string, n int, panelW, panelH vg.Length) *Figure {
	cols := 1
	switch {
	case n <= 3:
		cols = max(n, 1)
	case n == 4:
		cols = 2
	case n <= 9:
		cols = 3
	default:
		cols = 4
	}
	rows := (n + cols - 1) / cols
	f := &Figure{
		Title:  title,
		Width:  max(vg.Length(cols)*panelW+2*margin, minWidth),
		rows:   rows,
		cols:   cols,
		n:      n,
		panels: make([]*plot.Plot, rows*cols),
	}
	f.Height = vg.Length(rows) * panelH
	return f
}

// finish adds the header's height to the figure once the legend is known.
// The note is wrapped to the figure's width here.
func (f *Figure) finish() {
	if f.Note != "" && !strings.Contains(f.Note, "\n") {
		f.Note = strings.Join(wrapText(noteStyle(), f.Note, f.Width-2*margin), "\n")
	}
	f.Height += f.headerHeight(f.Width) + f.footerHeight() + 2*margin
}

func noteStyle() text.Style {
	sty := textStyle(8.5)
	sty.Color = color.Gray{Y: 0x40}
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	return sty
}

func (f *Figure) footerHeight() vg.Length {
	if f.Note == "" {
		return 0
	}
	return noteStyle().Height(f.Note) + vg.Points(8)
}

// SetSubtitle sets the small print under the title, wrapped to the
// figure's width, and makes the figure taller by its height: what the
// figure is of (the scenario and its network), so that an image alone
// tells one study from another. "" removes it.
func (f *Figure) SetSubtitle(s string) {
	before := f.headerHeight(f.Width)
	f.subtitle = s
	f.Height += f.headerHeight(f.Width) - before
}

// Subtitle returns the figure's subtitle (see SetSubtitle).
func (f *Figure) Subtitle() string { return f.subtitle }

func subtitleStyle() text.Style {
	sty := textStyle(subtitleSize)
	sty.Color = color.Gray{Y: 0x30}
	return sty
}

// subtitleLines breaks the subtitle into lines no wider than width, at
// spaces.
func (f *Figure) subtitleLines(width vg.Length) []string {
	if f.subtitle == "" {
		return nil
	}
	return wrapText(subtitleStyle(), f.subtitle, width)
}

// wrapText breaks s into lines no wider than width, at the spaces after
// a comma, semicolon or colon, or around a "·", so that "key value" pairs
// stay whole; at other spaces only where a piece between those is wider
// than a line itself.
func wrapText(sty text.Style, s string, width vg.Length) []string {
	var pieces []string // the text between the preferred breaks
	piece := ""
	for _, w := range strings.Fields(s) {
		if w == "·" && piece != "" {
			pieces = append(pieces, piece)
			piece = ""
		}
		if piece != "" {
			piece += " "
		}
		piece += w
		if w == "·" || strings.HasSuffix(w, ",") || strings.HasSuffix(w, ";") || strings.HasSuffix(w, ":") {
			pieces = append(pieces, piece)
			piece = ""
		}
	}
	if piece != "" {
		pieces = append(pieces, piece)
	}
	var lines []string
	line := ""
	for _, p := range pieces {
		switch {
		case line == "":
		case sty.Width(line+" "+p) <= width:
			line += " " + p
			continue
		default:
			lines = append(lines, line)
		}
		line = ""
		// A piece wider than a line breaks at its spaces.
		for _, w := range strings.Fields(p) {
			switch {
			case line == "":
				line = w
			case sty.Width(line+" "+w) <= width:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func (f *Figure) addLegend(label string, thumbs ...plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{label: label, thumbs: thumbs})
}

// legendLines packs the legend entries into lines no wider than width.
func (f *Figure) legendLines(width vg.Length) [][]legendEntry {
	sty := textStyle(legendSize)
	var lines [][]legendEntry
	var cur []legendEntry
	var w vg.Length
	for _, e := range f.legend {
		ew := legendThumb + vg.Points(4) + sty.Width(e.label)
		if len(cur) > 0 && w+legendGap+ew > width {
			lines = append(lines, cur)
			cur, w = nil, 0
		}
		if len(cur) > 0 {
			w += legendGap
		}
		cur = append(cur, e)
		w += ew
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

func legendLineHeight() vg.Length {
	return textStyle(legendSize).Height("Xg") * 1.35
}

func (f *Figure) headerHeight(width vg.Length) vg.Length {
	var h vg.Length
	if f.Title != "" {
		h += textStyle(titleSize).Height(f.Title) + vg.Points(6)
	}
	if n := len(f.subtitleLines(width - 2*margin)); n > 0 {
		h += vg.Length(n)*subtitleStyle().Height("Xg") + vg.Points(6)
	}
	if n := len(f.legendLines(width - 2*margin)); n > 0 {
		h += vg.Length(n)*legendLineHeight() + vg.Points(6)
	}
	return h
}

// Draw draws the figure onto c.
func (f *Figure) Draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, margin, -margin, margin, -margin)

	top := c.Max.Y
	if f.Title != "" {
		sty := textStyle(titleSize)
		c.FillText(sty, vg.Point{X: c.Center().X, Y: top}, f.Title)
		top -= sty.Height(f.Title) + vg.Points(6)
	}
	if lines := f.subtitleLines(c.Max.X - c.Min.X); len(lines) > 0 {
		sty := subtitleStyle()
		for _, l := range lines {
			c.FillText(sty, vg.Point{X: c.Center().X, Y: top}, l)
			top -= sty.Height("Xg")
		}
		top -= vg.Points(6)
	}
	lines := f.legendLines(c.Max.X - c.Min.X)
	if len(lines) > 0 {
		top = f.drawLegend(c, lines, top)
		top -= vg.Points(6)
	}
	body := c
	body.Max.Y = top
	if f.Note != "" {
		c.FillText(noteStyle(), c.Min, f.Note)
		body.Min.Y += f.footerHeight()
	}

	tiles := draw.Tiles{Rows: f.rows, Cols: f.cols, PadX: panelPadX, PadY: panelPadY}
	grid := make([][]*plot.Plot, f.rows)
	for r := range grid {
		grid[r] = f.panels[r*f.cols : (r+1)*f.cols]
	}
	canvases := plot.Align(grid, tiles, body)
	for r := range grid {
		for col, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][col])
			}
		}
	}
}

// drawLegend draws the legend lines centred below top and returns the y
// below them.
func (f *Figure) drawLegend(c draw.Canvas, lines [][]legendEntry, top vg.Length) vg.Length {
	sty := textStyle(legendSize)
	sty.XAlign = draw.XLeft
	sty.YAlign = draw.YCenter
	lh := legendLineHeight()
	for _, line := range lines {
		var w vg.Length
		for i, e := range line {
			if i > 0 {
				w += legendGap
			}
			w += legendThumb + vg.Points(4) + sty.Width(e.label)
		}
		x := c.Center().X - w/2
		mid := top - lh/2
		for _, e := range line {
			th := sty.Height("X")
			icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - th/2},
				Max: vg.Point{X: x + legendThumb, Y: mid + th/2},
			}}
			for _, t := range e.thumbs {
				t.Thumbnail(&icon)
			}
			x += legendThumb + vg.Points(4)
			c.FillText(sty, vg.Point{X: x, Y: mid}, e.label)
			x += sty.Width(e.label) + legendGap
		}
		top -= lh
	}
	return top
}

// Encode writes the figure in format "png" or "svg".
func (f *Figure) Encode(w io.Writer, format string) error {
	var cw vg.CanvasWriterTo
	switch strings.ToLower(format) {
	case "png":
		dpi := f.DPI
		if dpi <= 0 {
			dpi = DefaultDPI
		}
		img := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(dpi))
		f.Draw(draw.New(img))
		cw = vgimg.PngCanvas{Canvas: img}
	case "svg":
		img := vgsvg.New(f.Width, f.Height)
		f.Draw(draw.New(img))
		cw = img
	default:
		return fmt.Errorf("plots: unsupported image format %q (want png or svg)", format)
	}
	_, err := cw.WriteTo(w)
	return err
}

// Save writes the figure to path, as PNG or SVG after the path's extension.
// It writes a temporary file beside path and renames it, so a reader never
// sees a half-written image.
func (f *Figure) Save(path string) error {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	var buf bytes.Buffer
	if err := f.Encode(&buf, format); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}
