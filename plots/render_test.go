package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var plotsOut = flag.String("plots.out", "", "also write the synthetic sweep's figures to this directory, to look at them")

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

func checkImage(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(path) {
	case ".png":
		if !bytes.HasPrefix(data, pngMagic) {
			t.Errorf("%s: no PNG signature", path)
		}
	case ".svg":
		if !bytes.HasPrefix(data, []byte("<?xml")) || !bytes.Contains(data, []byte("<svg")) ||
			!bytes.HasSuffix(bytes.TrimSpace(data), []byte("</svg>")) {
			t.Errorf("%s: not an SVG document", path)
		}
		dec := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: malformed XML: %v", path, err)
				break
			}
		}
	default:
		t.Errorf("%s: unexpected extension", path)
	}
	if len(data) < 1000 {
		t.Errorf("%s: only %d bytes", path, len(data))
	}
}

// figures builds each kind of figure of the synthetic sweep.
func figures(t testing.TB, pts []Point) map[string]*Figure {
	t.Helper()
	out := map[string]*Figure{}
	var err error
	if out["latency"], err = LatencyPanels(pts, "allreduce"); err != nil {
		t.Fatal(err)
	}
	if out["busbw"], err = BusBWPanels(pts, "allreduce", synthLinkGBs); err != nil {
		t.Fatal(err)
	}
	if out["crossover"], err = CrossoverMap(pts, "allreduce"); err != nil {
		t.Fatal(err)
	}
	if out["auto"], err = AutoSlowdown(pts, "allreduce", 5); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFiguresRenderPNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	figs := figures(t, synthSweep())
	noisy := figures(t, noisySweep())
	for kind, f := range noisy {
		figs["noisy_"+kind] = f
	}
	for _, kind := range slices.Sorted(maps.Keys(figs)) {
		for _, ext := range []string{"png", "svg"} {
			path := filepath.Join(dir, kind+"."+ext)
			start := time.Now()
			if err := figs[kind].Save(path); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			// The brief is under a second per figure; the bound here is
			// loose because the test machine is shared.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s took %v to render", path, d)
			}
			checkImage(t, path)
		}
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
	if *plotsOut != "" {
		opts := Options{CeilingGBps: synthLinkGBs, AutoBudgetPct: 5}
		if _, err := WriteAll(*plotsOut, synthSweep(), opts); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteAll(filepath.Join(*plotsOut, "noisy"), noisySweep(), opts); err != nil {
			t.Fatal(err)
		}
	}
}

// The same points in any order give the same bytes.
// noisySweep is a sparser synthetic sweep with seeded noise and a spread on
// every point, the way a repeated run on a noisy network reports it; worlds
// are not powers of two and sizes not evenly spaced.
func noisySweep() []Point {
	rng := rand.New(rand.NewPCG(3, 4))
	var pts []Point
	for _, p := range synthSweep() {
		if p.World == 16 || p.Bytes%3 == 1 {
			continue
		}
		if p.World == 64 {
			p.World = 48
		}
		noise := 1 + 0.1*rng.Float64()
		p.Time *= noise
		p.BusBW /= noise
		p.Spread = p.Time * 0.3 * rng.Float64()
		pts = append(pts, p)
	}
	for n := int64(3000); n < 1<<28; n *= 7 {
		t := synthTime("ring", 3, float64(n))
		pts = append(pts, Point{Collective: "allreduce", Algorithm: "ring", DType: "f32", World: 3, Bytes: n, Time: t, Spread: t / 5,
			BusBW: float64(n) / t * 4 / 3 / 1e9})
	}
	return pts
}

func TestFiguresDeterministic(t *testing.T) {
	pts := synthSweep()
	shuffled := slices.Clone(pts)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	a, b := figures(t, pts), figures(t, shuffled)
	for kind := range a {
		for _, format := range []string{"png", "svg"} {
			var x, y bytes.Buffer
			if err := a[kind].Encode(&x, format); err != nil {
				t.Fatal(err)
			}
			if err := b[kind].Encode(&y, format); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x.Bytes(), y.Bytes()) {
				t.Errorf("%s %s differs after shuffling the input", kind, format)
			}
		}
	}
}

func TestWriteAll(t *testing.T) {
	pts := synthSweep()
	// A second collective without busbw or auto, and a barrier with no sizes.
	for _, alg := range []string{"ring", "recursive_doubling"} {
		for _, p := range []int{4, 8} {
			for n := int64(1024); n <= 1<<20; n *= 4 {
				pts = append(pts, Point{Collective: "allgather", Algorithm: alg, World: p, Bytes: n,
					Time: synthAlpha*float64(p) + float64(n)*synthBeta})
			}
		}
	}
	pts = append(pts, Point{Collective: "barrier", Algorithm: "dissemination", World: 8, Time: 15e-6})
	dir := filepath.Join(t.TempDir(), "out")
	got, err := WriteAll(dir, pts, Options{Formats: []string{"png"}, CeilingGBps: 12.5, AutoBudgetPct: 5})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		checkImage(t, p)
		names = append(names, filepath.Base(p))
	}
	want := []string{
		"latency_allgather.png", "crossover_allgather.png",
		"latency_allreduce.png", "busbw_allreduce.png", "crossover_allreduce.png", "auto_allreduce.png",
	}
	if !slices.Equal(names, want) {
		t.Errorf("WriteAll wrote %q, want %q", names, want)
	}
}

func TestWriteAllSplitsDTypes(t *testing.T) {
	var pts []Point
	for _, dt := range []string{"f32", "f16"} {
		for _, alg := range []string{"a", "b"} {
			pts = append(pts, Point{Collective: "all reduce", Algorithm: alg, DType: dt, World: 2, Bytes: 64, Time: 1e-5})
		}
	}
	got, err := WriteAll(t.TempDir(), pts, Options{Formats: []string{"svg"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	want := []string{"latency_all_reduce_f16.svg", "crossover_all_reduce_f16.svg", "latency_all_reduce_f32.svg", "crossover_all_reduce_f32.svg"}
	if !slices.Equal(names, want) {
		t.Errorf("WriteAll wrote %q, want %q", names, want)
	}
}

func TestFigureErrors(t *testing.T) {
	good := Point{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 1024, Time: 1e-5}
	onlyAuto := good
	onlyAuto.Algorithm = Auto
	zeroSize := good
	zeroSize.Bytes = 0
	nan := good
	nan.Time = -1
	f16 := good
	f16.DType = "f16"
	f16.Algorithm = "x"

	cases := []struct {
		name string
		err  func() error
		want error
	}{
		{"latency of absent collective", func() error { _, err := LatencyPanels([]Point{good}, "bcast"); return err }, ErrNoData},
		{"latency of zero sizes", func() error { _, err := LatencyPanels([]Point{zeroSize}, "allreduce"); return err }, ErrNoData},
		{"busbw without busbw", func() error { _, err := BusBWPanels([]Point{good}, "allreduce", 0); return err }, ErrNoBusBW},
		{"crossover of auto only", func() error { _, err := CrossoverMap([]Point{onlyAuto}, "allreduce"); return err }, ErrNoData},
		{"auto without auto", func() error { _, err := AutoSlowdown([]Point{good}, "allreduce", 5); return err }, ErrNoAuto},
		{"auto alone", func() error { _, err := AutoSlowdown([]Point{onlyAuto}, "allreduce", 5); return err }, ErrNoAuto},
		{"mixed dtypes", func() error { _, err := LatencyPanels([]Point{good, f16}, "allreduce"); return err }, ErrMixedDTypes},
		{"winners of nothing", func() error { _, err := Winners(nil, "allreduce"); return err }, ErrNoData},
	}
	for _, c := range cases {
		if err := c.err(); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}

	var ip *InvalidPointError
	if _, err := LatencyPanels([]Point{good, nan}, "allreduce"); !errors.As(err, &ip) {
		t.Errorf("negative time: got %v, want *InvalidPointError", err)
	}
	if _, err := BusBWPanels([]Point{good}, "allreduce", -1); err == nil {
		t.Error("negative ceiling: no error")
	}
	fig, err := LatencyPanels([]Point{good}, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	if err := fig.Save(filepath.Join(t.TempDir(), "x.jpg")); err == nil || !strings.Contains(err.Error(), "jpg") {
		t.Errorf("saving .jpg: got %v, want an unsupported-format error", err)
	}
	if _, err := WriteAll(t.TempDir(), []Point{good}, Options{Formats: []string{"pdf"}}); err == nil {
		t.Error("WriteAll with pdf: no error")
	}
}

// A single point (one size, one world) still renders: the axes widen
// around it instead of collapsing.
func TestSinglePointRenders(t *testing.T) {
	pts := []Point{
		{Collective: "reduce_scatter", Algorithm: "a", World: 1, Bytes: 1000, Time: 2e-6, BusBW: 1, Spread: 5e-6},
		{Collective: "reduce_scatter", Algorithm: Auto, World: 1, Bytes: 1000, Time: 2e-6},
	}
	dir := t.TempDir()
	if *plotsOut != "" {
		dir = filepath.Join(*plotsOut, "single")
	}
	got, err := WriteAll(dir, pts, Options{CeilingGBps: 3, AutoBudgetPct: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 { // latency, busbw, auto; no crossover with one algorithm
		t.Errorf("wrote %q", got)
	}
	for _, p := range got {
		checkImage(t, p)
	}
}
