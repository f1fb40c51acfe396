package verify

import (
	"fmt"
	"math"
	"slices"

	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
)

// ComparePlot draws, for each collective, world size and algorithm, the
// measured time (solid, with the spread over iterations as error bars)
// and the predicted time (dashed) against message size, and writes the
// figure as a PNG at path (plots.WriteComparePNG), subtitled with what was
// measured and the model that predicts it (see CompareSubtitle). Points of
// zero bytes are left out (the axis is logarithmic).
func ComparePlot(path, subtitle string, cs []Comparison) error {
	type key struct {
		coll, alg string
		world     int
	}
	var keys []key
	groups := map[key][]Comparison{}
	for _, c := range cs {
		if c.Bytes <= 0 || c.Time <= 0 || c.Predicted <= 0 {
			continue
		}
		k := key{c.Collective, c.Algorithm, c.World}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	var panels []plots.ComparePanel
	for _, k := range keys {
		g := groups[k]
		slices.SortFunc(g, func(a, b Comparison) int { return a.Bytes - b.Bytes })
		p := plots.ComparePanel{Title: fmt.Sprintf("%s %s, %d ranks", k.coll, k.alg, k.world)}
		for _, c := range g {
			p.Points = append(p.Points, plots.Measured{Bytes: c.Bytes, Time: c.Time, TimeMin: c.TimeMin, TimeMax: c.TimeMax, Predicted: c.Predicted})
		}
		panels = append(panels, p)
	}
	return plots.WriteComparePNG(path, subtitle, panels)
}

// CompareSubtitle says what a comparison figure shows: the scenario
// measured and the model, with its parameters, that predicted it.
func CompareSubtitle(s *scenario.Scenario) string {
	net := s.Network.Summary
	if net == "" {
		net = s.Network.Model
	}
	return fmt.Sprintf("measured: scenario %s · predicted: network %s", s.Name, net)
}

// CrossoverPlot draws, for each checked crossover, the ratio of the two
// variants' times (below-variant over above-variant: under 1 the first
// wins) against message size, measured (solid) and predicted by the model
// (dashed), with vertical lines at the table's crossover (grey), the
// simulated one (vermillion, dotted) and the measured one (blue), and
// writes the figure as a PNG at path (plots.WriteRatioPNG).
func CrossoverPlot(path string, checks []Check) error {
	var panels []plots.RatioPanel
	for _, c := range checks {
		t := c.Target
		p := plots.RatioPanel{
			Title:     fmt.Sprintf("%s, %d ranks: %s / %s", t.Collective, t.World, t.Below, t.Above),
			Sizes:     c.Sizes,
			Table:     plots.Marker{Label: "table: " + units.FormatBytesG(float64(t.Predicted)), Bytes: float64(t.Predicted)},
			Crossover: plots.Marker{Label: "measured: " + c.Measured.String(), Bytes: c.Measured.Bytes},
		}
		for i := range c.Sizes {
			p.Measured = append(p.Measured, c.BelowTime[i]/c.AboveTime[i])
		}
		if c.Simulated != nil {
			p.Predicted = make([]float64, len(c.Sizes))
			for i := range c.Sizes {
				if c.BelowPredicted[i] > 0 && c.AbovePredicted[i] > 0 {
					p.Predicted[i] = c.BelowPredicted[i] / c.AbovePredicted[i]
				}
			}
			if !math.IsNaN(c.Simulated.Bytes) {
				p.Simulated = &plots.Marker{Label: "simulated: " + c.Simulated.String(), Bytes: c.Simulated.Bytes}
			}
		}
		panels = append(panels, p)
	}
	return plots.WriteRatioPNG(path, panels)
}
