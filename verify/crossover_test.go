package verify

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

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
	if err := WriteScenario(&b, "v", `model = "alpha-beta"`+"\nlatency = \"2ms\"\nbandwidth = \"20MB/s\"", ts, device.F32); err != nil {
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

// TestCrossovers: on simulated "measurements" of the closed forms
// the measured crossover is the table's.
func TestCrossovers(t *testing.T) {
	tab, err := algos.LoadTuning("testdata/tuning-p3.toml")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := Targets(tab, 3, TargetOptions{})
	var b bytes.Buffer
	if err := WriteScenario(&b, "v", `model = "alpha-beta"`+"\nlatency = \"2ms\"\nbandwidth = \"20MB/s\"", ts, device.F32); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("v.toml", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := sweep.Plan(s)
	var rs []results.Row
	for _, p := range pts {
		row, err := sweep.RunPoint(p)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, row.Row)
	}
	cs, err := Predict(s, rs)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := Crossovers(ts, cs, true)
	if err != nil {
		t.Fatal(err)
	}
	c := checks[0]
	if c.Measured.Disagree != 0 || math.Abs(c.Ratio()-1) > 0.01 || math.Abs(c.Simulated.Bytes-c.Measured.Bytes) > 1e-6 {
		t.Errorf("measured %+v (ratio %.3f), simulated %+v; sizes %v below %v above %v", c.Measured, c.Ratio(), c.Simulated, c.Sizes, c.BelowTime, c.AboveTime)
	}
	var csv, table bytes.Buffer
	if err := WriteCrossoverCSV(&csv, checks); err != nil {
		t.Fatal(err)
	}
	WriteCrossoverTable(&table, checks)
	if !strings.HasPrefix(csv.String(), strings.Join(CrossoverHeader, ",")) || !strings.Contains(table.String(), "recursive_doubling -> ring") {
		t.Errorf("csv:\n%s\ntable:\n%s", csv.String(), table.String())
	}
	if err := CrossoverPlot(t.TempDir()+"/verify.png", checks); err != nil {
		t.Error(err)
	}
}
