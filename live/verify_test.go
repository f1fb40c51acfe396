package live

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

func TestMeasuredCrossover(t *testing.T) {
	sizes := []int{1000, 2000, 4000, 8000, 16000, 32000}
	for _, c := range []struct {
		name         string
		below, above []float64
		hint         float64
		lo, hi       int
		side         string
		disagree     int
		bytes        float64 // 0: not checked
	}{
		{"clean", []float64{1, 1, 1, 2, 4, 8}, []float64{2, 2, 2, 2.5, 2, 2}, 0, 8000, 16000, "", 0, 0},
		// The difference goes from 1 - 2 = -1 at 2000 to 4 - 1 = 3 at
		// 4000: zero a quarter of the way.
		{"interpolated", []float64{1, 1, 4, 4, 4, 4}, []float64{4, 2, 1, 1, 1, 1}, 0, 2000, 4000, "", 0, 2500},
		// Affine times: 10 + n/1000 against 20 + n/2000 cross at 20000.
		{"affine", []float64{11, 12, 14, 18, 26, 42}, []float64{20.5, 21, 22, 24, 28, 36}, 0, 16000, 32000, "", 0, 20000},
		// One noisy size above the crossover does not make three.
		{"noisy", []float64{1, 1, 1, 3, 1, 3}, []float64{2, 2, 2, 2, 2, 2}, 0, 4000, 8000, "", 1, 0},
		{"below everywhere", []float64{1, 1, 1, 1, 1, 1}, []float64{2, 2, 2, 2, 2, 2}, 0, 32000, 32000, "below", 0, 0},
		{"above everywhere", []float64{3, 3, 3, 3, 3, 3}, []float64{2, 2, 2, 2, 2, 2}, 0, 1000, 1000, "above", 0, 0},
		// Alternating: every boundary is as bad; the hint picks.
		{"hinted", []float64{1, 3, 1, 3, 1, 3}, []float64{2, 2, 2, 2, 2, 2}, 20000, 16000, 32000, "", 2, 0},
	} {
		got := MeasuredCrossover(sizes, c.below, c.above, c.hint)
		if got.Lo != c.lo || got.Hi != c.hi || got.Side != c.side || got.Disagree != c.disagree ||
			c.side == "" && !(got.Bytes >= float64(got.Lo) && got.Bytes <= float64(got.Hi)) ||
			c.bytes != 0 && math.Abs(got.Bytes/c.bytes-1) > 1e-9 {
			t.Errorf("%s: %+v, want [%d, %d] side %q disagree %d bytes %g", c.name, got, c.lo, c.hi, c.side, c.disagree, c.bytes)
		}
	}
}

func TestTargets(t *testing.T) {
	tab, err := algos.LoadTuning("testdata/tuning-p3.toml")
	if err != nil {
		t.Fatal(err)
	}
	ts, notes := Targets(tab, 3, TargetOptions{Span: 2, Dense: 1, PerOctave: 2})
	if len(ts) != 1 || len(notes) != 0 {
		t.Fatalf("targets %+v, notes %q", ts, notes)
	}
	x := ts[0]
	if x.Below.Algorithm != "recursive_doubling" || x.Above.Algorithm != "ring" || x.Predicted != 24000 || x.World != 3 {
		t.Errorf("target %+v", x)
	}
	// 2 octaves each side, the inner one at 2 per octave: 1/4, 1/2,
	// 1/sqrt2, 1, sqrt2, 2, 4 times 24000, in multiples of 3 x 8 bytes.
	want := []int{6000, 12000, 16968, 24000, 33936, 48000, 96000}
	if !slices.Equal(x.Sizes, want) {
		t.Errorf("sizes %v, want %v", x.Sizes, want)
	}
	if ts, notes := Targets(tab, 4, TargetOptions{}); len(ts) != 0 || len(notes) != 1 {
		t.Errorf("world 4: targets %v, notes %q; want a note that only rules apply", ts, notes)
	}
	var b bytes.Buffer
	if err := VerifyScenario(&b, "v", `model = "alpha-beta"`+"\nlatency = \"2ms\"\nbandwidth = \"20MB/s\"", ts, device.F32); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("v.toml", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pts, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2*len(want) || pts[0].Algorithm.Name != "recursive_doubling" {
		t.Errorf("%d points, want %d:\n%s", len(pts), 2*len(want), b.String())
	}
}

// TestCheckCrossovers: on simulated "measurements" of the closed forms
// the measured crossover is the table's.
func TestCheckCrossovers(t *testing.T) {
	tab, err := algos.LoadTuning("testdata/tuning-p3.toml")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := Targets(tab, 3, TargetOptions{})
	var b bytes.Buffer
	if err := VerifyScenario(&b, "v", `model = "alpha-beta"`+"\nlatency = \"2ms\"\nbandwidth = \"20MB/s\"", ts, device.F32); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("v.toml", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := sweep.Plan(s)
	var rs []Result
	for _, p := range pts {
		row, err := sweep.RunPoint(p)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, Result{Row: row.Row})
	}
	cs, err := Predict(s, rs)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := CheckCrossovers(ts, cs, true)
	if err != nil {
		t.Fatal(err)
	}
	c := checks[0]
	if c.Measured.Disagree != 0 || math.Abs(c.Ratio()-1) > 0.01 || math.Abs(c.Simulated.Bytes-c.Measured.Bytes) > 1e-6 {
		t.Errorf("measured %+v (ratio %.3f), simulated %+v; sizes %v below %v above %v", c.Measured, c.Ratio(), c.Simulated, c.Sizes, c.BelowTime, c.AboveTime)
	}
	var csv, table bytes.Buffer
	if err := WriteVerifyCSV(&csv, checks); err != nil {
		t.Fatal(err)
	}
	WriteVerifyTable(&table, checks)
	if !strings.HasPrefix(csv.String(), strings.Join(VerifyHeader, ",")) || !strings.Contains(table.String(), "recursive_doubling -> ring") {
		t.Errorf("csv:\n%s\ntable:\n%s", csv.String(), table.String())
	}
	if err := VerifyPlot(t.TempDir()+"/verify.png", checks); err != nil {
		t.Error(err)
	}
}
