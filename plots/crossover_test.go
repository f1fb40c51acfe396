package plots

import (
	"io"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestCellLabel(t *testing.T) {
	for _, c := range []struct {
		w    Winner
		want string
	}{
		{Winner{Algorithm: "ring", Time: 1}, "only"},
		{Winner{Algorithm: "ring", Time: 1, RunnerUp: "tree", RunnerUpTime: 1}, "tie"},
		{Winner{Algorithm: "ring", Time: 1, RunnerUp: "tree", RunnerUpTime: 1.004}, "0.4%"},
		{Winner{Algorithm: "ring", Time: 1, RunnerUp: "tree", RunnerUpTime: 1.95}, "95%"},
		{Winner{Algorithm: "ring", Time: 1, RunnerUp: "tree", RunnerUpTime: 2}, "×2.0"},
		{Winner{Algorithm: "ring", Time: 1, RunnerUp: "tree", RunnerUpTime: 9.94}, "×9.9"},
		{Winner{Algorithm: "ring", Time: 1, RunnerUp: "tree", RunnerUpTime: 1234}, "×1234"},
	} {
		if got := cellLabel(c.w); got != c.want {
			t.Errorf("cellLabel(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}

// legendLabels lists a figure's legend entries.
func legendLabels(f *Figure) []string {
	var out []string
	for _, e := range f.legend {
		out = append(out, e.label)
	}
	return out
}

// TestCrossoverMapLabelsEveryCell draws a map of 40 sizes, a margin in
// every cell, some of them a runner-up a thousand times slower, which a
// percentage would not fit: the figure widens, and every cell gets its
// label.
func TestCrossoverMapLabelsEveryCell(t *testing.T) {
	var pts []Point
	cells := 0
	for _, w := range []int{2, 3, 64} {
		for e := range 40 {
			b := int64(1) << e
			fast := 1e-6 * float64(e+1)
			pts = append(pts, Point{Collective: "allreduce", Algorithm: "ring", World: w, Bytes: b, Time: fast})
			cells++
			if e == 7 {
				continue // "only"
			}
			slow := fast * (1 + 1234*float64(e%3)) // a tie, x1235 and x2469
			pts = append(pts, Point{Collective: "allreduce", Algorithm: "tree", World: w, Bytes: b, Time: slow})
		}
	}
	f, m, err := crossoverMap(pts, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Encode(io.Discard, "png"); err != nil {
		t.Fatal(err)
	}
	if f.Width <= 9*vg.Inch {
		t.Errorf("figure %v wide, want wider than 9 inches for 40 sizes", f.Width)
	}
	if m.labelled != cells || m.shrunk != 0 {
		t.Errorf("%d of %d cells labelled, %d in smaller type; want all, at %dpt", m.labelled, cells, m.shrunk, cellLabelSize)
	}
	// ring wins everywhere: no boundary is drawn, none is in the legend.
	if got := legendLabels(f); !slices.Equal(got, []string{"ring"}) {
		t.Errorf("legend %q, want only ring", got)
	}
}

// TestCrossoverLegend names "crossover" in the legend where a boundary is
// drawn: between sizes of one world, or between two worlds only.
func TestCrossoverLegend(t *testing.T) {
	pt := func(alg string, world int, bytes int64, time float64) Point {
		return Point{Collective: "c", Algorithm: alg, World: world, Bytes: bytes, Time: time}
	}
	for _, c := range []struct {
		name string
		pts  []Point
		want []string
	}{
		{"along a row", []Point{pt("a", 2, 8, 1), pt("b", 2, 8, 2), pt("a", 2, 16, 2), pt("b", 2, 16, 1)}, []string{"a", "b", "crossover"}},
		{"between rows", []Point{pt("a", 2, 8, 1), pt("b", 2, 8, 2), pt("a", 4, 8, 2), pt("b", 4, 8, 1)}, []string{"a", "b", "crossover"}},
		{"none", []Point{pt("a", 2, 8, 1), pt("b", 2, 8, 2), pt("a", 4, 8, 1), pt("b", 4, 8, 2)}, []string{"a"}},
	} {
		f, err := CrossoverMap(c.pts, "c")
		if err != nil {
			t.Fatal(err)
		}
		if got := legendLabels(f); !slices.Equal(got, c.want) {
			t.Errorf("%s: legend %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPanelLegends lists in the legends of the per-world figures only the
// algorithms they draw: one whose points all have zero busbw (unknown)
// is in the latency figure's legend, not in the busbw figure's.
func TestPanelLegends(t *testing.T) {
	pts := []Point{
		{Collective: "c", Algorithm: "a", World: 2, Bytes: 8, Time: 1e-6, BusBW: 1},
		{Collective: "c", Algorithm: "b", World: 2, Bytes: 8, Time: 2e-6},
		{Collective: "c", Algorithm: "z", World: 2, Bytes: 0, Time: 2e-6, BusBW: 1}, // no size on a log axis
		{Collective: "c", Algorithm: Auto, World: 2, Bytes: 8, Time: 1e-6, BusBW: 1},
	}
	lat, err := LatencyPanels(pts, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := legendLabels(lat); !slices.Equal(got, []string{"a", "b", Auto}) {
		t.Errorf("latency legend %q", got)
	}
	bw, err := BusBWPanels(pts, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := legendLabels(bw); !slices.Equal(got, []string{"a", Auto}) {
		t.Errorf("busbw legend %q", got)
	}
}
