package plots

import (
	"image/color"
	"math"
	"testing"
)

// TestStylesKeepTwelveApart checks what palette's comment claims: the
// first 12 series of a figure differ in colour (by CIEDE2000 22 or more,
// 12 or more for a deuteranope) and in marker, any 4 in a row in dash
// too, and no colour comes near auto's black, the budget line's red or
// the ceiling's grey, drawn in dashes of their own; series 12 apart
// share a colour, not a marker.
func TestStylesKeepTwelveApart(t *testing.T) {
	refs := map[string]color.Color{"auto": color.Black, "budget": budgetStyle().Color, "ceiling": ceilingStyle().Color}
	for i := range 12 {
		a := styleFor(i)
		for j := i + 1; j < 12; j++ {
			b := styleFor(j)
			if a.glyph.Shape == b.glyph.Shape {
				t.Errorf("series %d and %d share a marker", i, j)
			}
			if j-i < 4 && slicesEqual(a.line.Dashes, b.line.Dashes) {
				t.Errorf("series %d and %d share a dash", i, j)
			}
			if d := ciede2000(a.line.Color, b.line.Color, false); d < 22 {
				t.Errorf("series %d and %d: colours %.1f apart", i, j, d)
			}
			if d := ciede2000(a.line.Color, b.line.Color, true); d < 12 {
				t.Errorf("series %d and %d: colours %.1f apart in deuteranopia", i, j, d)
			}
		}
		for name, c := range refs {
			// 19.6: vermillion and the budget's red.
			if d := ciede2000(a.line.Color, c, false); d < 19.5 {
				t.Errorf("series %d: colour %.1f from %s's", i, d, name)
			}
		}
		if slicesEqual(a.line.Dashes, referenceDashes) {
			t.Errorf("series %d has the dashes of the reference lines", i)
		}
	}
	for i := range 144 {
		for m := 1; i+12*m < 144; m++ {
			if styleFor(i).glyph.Shape == styleFor(i+12*m).glyph.Shape {
				t.Fatalf("series %d and %d share colour and marker", i, i+12*m)
			}
		}
	}
}

// TestCellLabelContrast checks that a crossover cell's label reads
// against the fill of every colour at WCAG's AA contrast (4.5:1), in the
// dark grey of the light fills.
func TestCellLabelContrast(t *testing.T) {
	greys := 0
	for i, c := range palette {
		fill := lighten(c, 0.45)
		label := cellLabelColour(fill)
		if r := contrast(label, fill); r < 4.5 {
			t.Errorf("colour %d: label contrast %.2f on its fill %v", i, r, fill)
		}
		if label != color.Black {
			greys++
		}
	}
	if greys < 6 {
		t.Errorf("%d of 12 labels grey, want Okabe-Ito's six at least", greys)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ciede2000 is the CIEDE2000 colour difference of two sRGB colours (as a
// deuteranope sees them, after Machado, Oliveira and Fernandes 2009, with
// deutan), on a scale where 1 is about the least difference one sees.
func ciede2000(c1, c2 color.Color, deutan bool) float64 {
	l1, a1, b1 := cieLab(c1, deutan)
	l2, a2, b2 := cieLab(c2, deutan)
	rad := math.Pi / 180
	cb := (math.Hypot(a1, b1) + math.Hypot(a2, b2)) / 2
	g := 0.5 * (1 - math.Sqrt(math.Pow(cb, 7)/(math.Pow(cb, 7)+math.Pow(25, 7))))
	a1p, a2p := (1+g)*a1, (1+g)*a2
	c1p, c2p := math.Hypot(a1p, b1), math.Hypot(a2p, b2)
	hue := func(b, a float64) float64 {
		if a == 0 && b == 0 {
			return 0
		}
		return math.Mod(math.Atan2(b, a)/rad+360, 360)
	}
	h1p, h2p := hue(b1, a1p), hue(b2, a2p)
	dh := h2p - h1p
	switch {
	case c1p*c2p == 0:
		dh = 0
	case dh > 180:
		dh -= 360
	case dh < -180:
		dh += 360
	}
	dL, dC := l2-l1, c2p-c1p
	dH := 2 * math.Sqrt(c1p*c2p) * math.Sin(dh/2*rad)
	lbp, cbp := (l1+l2)/2, (c1p+c2p)/2
	hbp := h1p + h2p
	switch {
	case c1p*c2p == 0:
	case math.Abs(h1p-h2p) <= 180:
		hbp /= 2
	case h1p+h2p < 360:
		hbp = (hbp + 360) / 2
	default:
		hbp = (hbp - 360) / 2
	}
	tt := 1 - 0.17*math.Cos((hbp-30)*rad) + 0.24*math.Cos(2*hbp*rad) + 0.32*math.Cos((3*hbp+6)*rad) - 0.20*math.Cos((4*hbp-63)*rad)
	dth := 30 * math.Exp(-math.Pow((hbp-275)/25, 2))
	rc := 2 * math.Sqrt(math.Pow(cbp, 7)/(math.Pow(cbp, 7)+math.Pow(25, 7)))
	sl := 1 + 0.015*(lbp-50)*(lbp-50)/math.Sqrt(20+(lbp-50)*(lbp-50))
	sc, sh := 1+0.045*cbp, 1+0.015*cbp*tt
	rt := -math.Sin(2*dth*rad) * rc
	return math.Sqrt(math.Pow(dL/sl, 2) + math.Pow(dC/sc, 2) + math.Pow(dH/sh, 2) + rt*(dC/sc)*(dH/sh))
}

// cieLab converts an sRGB colour to CIELAB (D65).
func cieLab(c color.Color, deutan bool) (l, a, b float64) {
	r16, g16, b16, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xFFFF
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	r, g, bl := lin(r16), lin(g16), lin(b16)
	if deutan {
		clamp := func(v float64) float64 { return math.Min(math.Max(v, 0), 1) }
		r, g, bl = clamp(0.367322*r+0.860646*g-0.227968*bl), clamp(0.280085*r+0.672501*g+0.047413*bl), clamp(-0.011820*r+0.042940*g+0.968881*bl)
	}
	x := (0.4124*r + 0.3576*g + 0.1805*bl) / 0.95047
	y := 0.2126*r + 0.7152*g + 0.0722*bl
	z := (0.0193*r + 0.1192*g + 0.9505*bl) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x), f(y), f(z)
	return 116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)
}

// TestTwelveApart: the allreduce catalogue's 12 exact algorithms, its 2
// lossy ones and auto, in one figure: the 12 keep 12 colours of the
// palette, in the catalogue's order of simplicity; the lossy are greys no
// series of the palette has, and auto is drawn last.
func TestTwelveApart(t *testing.T) {
	names := []string{"ring", "pipelined_ring", "halving_doubling", "halving_doubling_nearest", "recursive_doubling",
		"recursive_doubling_nearest", "binomial_tree", "binomial_tree_nearest", "rs_ag", "direct", "bucketed",
		"hierarchical", "compressed_topk", "compressed_randomk", Auto}
	var pts []Point
	for i, n := range names {
		pts = append(pts, Point{Collective: "allreduce", Algorithm: n, World: 8, Bytes: 1024, Time: float64(i + 1)})
	}
	s, err := selectPoints(pts, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	order := s.drawOrder()
	if order[0] != "ring" || order[len(order)-1] != Auto || order[len(order)-2] != "compressed_randomk" {
		t.Errorf("draw order %v: want ring first, the lossy ones next to last, auto last", order)
	}
	seen := map[color.Color]string{}
	for _, alg := range order[:12] {
		c := s.style(alg).line.Color
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s share colour %v", alg, other, c)
		}
		seen[c] = alg
	}
	for _, alg := range []string{"compressed_topk", "compressed_randomk"} {
		if other, dup := seen[s.style(alg).line.Color]; dup {
			t.Errorf("lossy %s drawn in %s's colour", alg, other)
		}
	}
}
