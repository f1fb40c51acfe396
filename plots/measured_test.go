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
