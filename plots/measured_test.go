package plots

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteComparePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "compare.png")
	pts := []Measured{
		{Bytes: 1024, Time: 1e-5, TimeMin: 9e-6, TimeMax: 2e-5, Predicted: 8e-6},
		{Bytes: 1 << 20, Time: 1e-3, TimeMax: 1.1e-3, Predicted: 1.2e-3},
	}
	if err := WriteComparePNG(path, "measured: scenario s · predicted: network n", []ComparePanel{{Title: "allreduce ring, 4 ranks", Points: pts}}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("no figure: %v", err)
	}
	if err := WriteComparePNG(path, "", nil); !errors.Is(err, ErrNoData) {
		t.Errorf("no panels: %v, want ErrNoData", err)
	}
}

func TestWriteRatioPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verify.png")
	panels := []RatioPanel{
		{Title: "allreduce, 4 ranks: a / b", Sizes: []int{1024, 2048, 4096}, Measured: []float64{0.5, 0.9, 1.5},
			Predicted: []float64{0.6, 0, 1.4}, Table: Marker{"table: 2 KiB", 2048},
			Simulated: &Marker{"simulated: 2.5 KiB", 2500}, Crossover: Marker{"measured: 2.3 KiB", 2300}},
		{Title: "allgather, 4 ranks: a / b", Sizes: []int{1024, 2048}, Measured: []float64{0.5, 0.6},
			Table: Marker{"table: 4 KiB", 4096}, Crossover: Marker{"measured: > 2 KiB", math.NaN()}},
	}
	if err := WriteRatioPNG(path, panels); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("no figure: %v", err)
	}
}

// TestLogSecondsTicksLabelled: every axis of the compare figure has at
// least two labelled ticks, however narrow its range (gonum's log ticks
// label none within a decade).
func TestLogSecondsTicksLabelled(t *testing.T) {
	for _, r := range [][2]float64{{1e-6, 1e-3}, {2.1e-3, 4.9e-3}, {1.2e-3, 1.9e-3}, {1.11e-3, 1.13e-3}, {3e-2, 3.3e-2}} {
		n := 0
		for _, tk := range (logSecondsTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" && tk.Value >= r[0]*0.999 && tk.Value <= r[1]*1.001 {
				n++
			}
		}
		if n < 2 {
			t.Errorf("range %v: %d labelled ticks, want 2 or more", r, n)
		}
	}
}

// TestScatterPanel: the compare figure's last panel holds every point with
// both times, and leaves room above the data for its legend.
func TestScatterPanel(t *testing.T) {
	panels := []ComparePanel{
		{Title: "a", Points: []Measured{{Bytes: 1, Time: 1e-5, Predicted: 8e-6}, {Bytes: 2, Time: 2e-5, Predicted: 0}}},
		{Title: "b", Points: []Measured{{Bytes: 1, Time: 1e-3, Predicted: 1.2e-3}}},
	}
	p, err := scatterPanel(panels)
	if err != nil || p == nil {
		t.Fatalf("scatter: %v, %v", p, err)
	}
	if p.Y.Label.Text == "" || p.X.Label.Text == "" {
		t.Error("an axis without a label")
	}
	if p.Y.Max <= 1.2e-3 {
		t.Errorf("y axis tops at %g: no room above the data (1.2 ms) for the legend", p.Y.Max)
	}
	if p, err := scatterPanel([]ComparePanel{{Title: "c", Points: []Measured{{Bytes: 1, Time: 1}}}}); p != nil || err != nil {
		t.Errorf("no point with a prediction: %v, %v, want none", p, err)
	}
}
