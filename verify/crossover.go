package verify

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
)

// Variant is an algorithm with the parameters a tuning table sets.
type Variant struct {
	Algorithm string
	Params    map[string]int
}

func (v Variant) String() string {
	if len(v.Params) == 0 {
		return v.Algorithm
	}
	return v.Algorithm + "(" + strings.ReplaceAll(sweep.FormatParams(v.Params), ";", ",") + ")"
}

// Target is a crossover a tuning table predicts: on World ranks, Below
// is chosen under Predicted bytes and Above from there on. Sizes are where
// nexar-live verify measures both.
type Target struct {
	Collective   string
	World        int
	Below, Above Variant
	// Predicted is the step's from_bytes.
	Predicted int
	Sizes     []int
	// From names the table entry: "crossover 1 step 2".
	From string
}

// TargetOptions say where around a predicted crossover to measure.
type TargetOptions struct {
	// Span is how many octaves (factors of two) on each side of the
	// prediction to cover (default 4: from a sixteenth to 16 times).
	Span int
	// Dense is how many octaves on each side are covered densely (default
	// 1), with PerOctave sizes per octave (default 4); the rest of the
	// span has one size per octave.
	Dense, PerOctave int
	// MaxBytes caps the sizes (default 256 MiB).
	MaxBytes int
}

func (o TargetOptions) withDefaults() TargetOptions {
	if o.Span <= 0 {
		o.Span = 4
	}
	if o.Dense <= 0 {
		o.Dense = 1
	}
	if o.PerOctave <= 0 {
		o.PerOctave = 4
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 256 << 20
	}
	return o
}

// Targets lists the crossovers of table t that apply to a world of world
// ranks: for each collective, the first crossover entry whose world range
// holds world (the one the table selects by), each of its steps after the
// first giving one target. The notes say what was left out: rules are not
// crossovers, and a table without an entry for the world has nothing to
// verify there.
func Targets(t *algos.Tuning, world int, opt TargetOptions) ([]Target, []string) {
	opt = opt.withDefaults()
	var out []Target
	var notes []string
	for _, c := range t.Collectives {
		var x *algos.Crossover
		idx := 0
		for i := range c.Crossovers {
			cx := &c.Crossovers[i]
			if world >= cx.MinWorld && (cx.MaxWorld == 0 || world <= cx.MaxWorld) {
				x, idx = cx, i
				break
			}
		}
		if x == nil {
			if len(c.Rules) > 0 || len(c.Crossovers) > 0 {
				notes = append(notes, fmt.Sprintf("%s: no crossover entry for %d ranks (its rules are not crossovers to verify)", c.Name, world))
			}
			continue
		}
		if len(x.Steps) < 2 {
			notes = append(notes, fmt.Sprintf("%s on %d ranks: crossover %d has one step, no crossover", c.Name, world, idx+1))
		}
		for k := 1; k < len(x.Steps); k++ {
			lo, hi := x.Steps[k-1], x.Steps[k]
			out = append(out, Target{
				Collective: c.Name, World: world,
				Below:     Variant{lo.Algorithm, lo.Params},
				Above:     Variant{hi.Algorithm, hi.Params},
				Predicted: hi.FromBytes,
				Sizes:     sizesAround(hi.FromBytes, world, opt),
				From:      fmt.Sprintf("crossover %d step %d", idx+1, k+1),
			})
		}
	}
	return out, notes
}

// sizesAround lists sizes around a predicted crossover, geometrically,
// each a multiple of world 8-byte elements, so that every collective's
// layout divides it evenly whatever the element type.
func sizesAround(pred int, world int, opt TargetOptions) []int {
	unit := 8 * world
	var sizes []int
	add := func(f float64) {
		n := int(math.Round(float64(pred)*f/float64(unit))) * unit
		n = max(n, unit)
		if n <= opt.MaxBytes && !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	for k := -opt.Span; k <= opt.Span; k++ {
		if k >= -opt.Dense && k < opt.Dense {
			for j := range opt.PerOctave {
				add(math.Exp2(float64(k) + float64(j)/float64(opt.PerOctave)))
			}
		} else {
			add(math.Exp2(float64(k)))
		}
	}
	slices.Sort(sizes)
	return sizes
}

// WriteScenario writes the scenario file of a verification run: for
// each target, a sweep of its two variants at its sizes on its world,
// with real data; network is the [network] table to put in it (the
// model that predicts the points, or a placeholder: a run measures, it
// does not use the model).
func WriteScenario(w io.Writer, name string, network string, targets []Target, dt device.DType) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by nexar-live verify: both algorithms of each predicted crossover,\n# at sizes around it.\n")
	fmt.Fprintf(&b, "name = %s\nseed = 1\n\n[network]\n%s\n", strconv.Quote(name), strings.TrimSpace(network))
	for _, t := range targets {
		// One sweep per variant (a sweep's params apply to all its
		// algorithms), or one for both when neither has parameters.
		groups := [][]Variant{{t.Below}, {t.Above}}
		if len(t.Below.Params) == 0 && len(t.Above.Params) == 0 && t.Below.Algorithm != t.Above.Algorithm {
			groups = [][]Variant{{t.Below, t.Above}}
		}
		for _, g := range groups {
			names := make([]string, len(g))
			for i, v := range g {
				names[i] = v.Algorithm
			}
			fmt.Fprintf(&b, "\n# %s on %d ranks: %s below %s, %s from there (%s)\n", t.Collective, t.World, t.Below, units.FormatBytesExact(int64(t.Predicted)), t.Above, t.From)
			fmt.Fprintf(&b, "[[sweep]]\ncollective = %s\nalgorithms = [%s]\nworld = [%d]\nbytes = [%s]\ndtype = %s\ndata = \"host\"\n",
				strconv.Quote(t.Collective), quoteAll(names), t.World, joinInts(t.Sizes), strconv.Quote(dt.String()))
			writeParams(&b, g[0].Params)
		}
	}
	if _, err := scenario.Parse(name+".toml", b.Bytes()); err != nil {
		return fmt.Errorf("verify: the verification scenario does not parse: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Check is a predicted crossover beside the measured one, both read by
// derive.MeasuredCrossover (the rule of derive's predicted crossovers).
type Check struct {
	Target Target
	// Simulated is the crossover of the model's predictions at the
	// measured sizes (nil without a model).
	Simulated *derive.Boundary
	Measured  derive.Boundary
	// Times at each size of Target.Sizes that both variants ran:
	// measured and (with a model) predicted, seconds.
	Sizes                          []int
	BelowTime, AboveTime           []float64
	BelowPredicted, AbovePredicted []float64
}

// Ratio is the measured crossover over the table's, NaN when there is no
// measured crossover within the sizes.
func (c Check) Ratio() float64 {
	return c.Measured.Bytes / float64(c.Target.Predicted)
}

// Crossovers reads each target's crossover from measured comparisons
// (results with predictions; predictions may be zero when there is no
// model), and with a model the simulated one at the same sizes.
func Crossovers(targets []Target, cs []Comparison, withModel bool) ([]Check, error) {
	type key struct {
		alg   string
		world int
		bytes int
	}
	byKey := map[key]Comparison{}
	for _, c := range cs {
		byKey[key{c.Collective + "\x00" + c.Algorithm, c.World, c.Bytes}] = c
	}
	var out []Check
	for _, t := range targets {
		ck := Check{Target: t}
		for _, n := range t.Sizes {
			b, okB := byKey[key{t.Collective + "\x00" + t.Below.String(), t.World, n}]
			a, okA := byKey[key{t.Collective + "\x00" + t.Above.String(), t.World, n}]
			if !okB || !okA || b.Time <= 0 || a.Time <= 0 {
				continue
			}
			ck.Sizes = append(ck.Sizes, n)
			ck.BelowTime, ck.AboveTime = append(ck.BelowTime, b.Time), append(ck.AboveTime, a.Time)
			ck.BelowPredicted, ck.AbovePredicted = append(ck.BelowPredicted, b.Predicted), append(ck.AbovePredicted, a.Predicted)
		}
		if len(ck.Sizes) < 2 {
			return nil, fmt.Errorf("verify: %s on %d ranks, %s against %s: measured at %d sizes, want at least 2",
				t.Collective, t.World, t.Below, t.Above, len(ck.Sizes))
		}
		ck.Measured = derive.MeasuredCrossover(ck.Sizes, ck.BelowTime, ck.AboveTime, float64(t.Predicted))
		if withModel {
			s := derive.MeasuredCrossover(ck.Sizes, ck.BelowPredicted, ck.AbovePredicted, float64(t.Predicted))
			ck.Simulated = &s
		}
		out = append(out, ck)
	}
	return out, nil
}

// CrossoverHeader is the header of verify.csv.
var CrossoverHeader = []string{"collective", "world", "below", "above", "table_bytes", "simulated_bytes",
	"measured_bytes", "measured_lo", "measured_hi", "measured_side", "disagreeing_sizes", "sizes", "ratio"}

// WriteCrossoverCSV writes checks as verify.csv: for each crossover, the
// table's size, the simulated crossover at the measured sizes, the
// measured one (the sizes it lies between, or which variant won at every
// size), how many sizes contradict it, and measured / table.
func WriteCrossoverCSV(w io.Writer, checks []Check) error {
	cw := csv.NewWriter(w)
	cw.Write(CrossoverHeader)
	for _, c := range checks {
		sim := ""
		if c.Simulated != nil {
			sim = formatFloat(c.Simulated.Bytes)
		}
		cw.Write([]string{c.Target.Collective, strconv.Itoa(c.Target.World), c.Target.Below.String(), c.Target.Above.String(),
			strconv.Itoa(c.Target.Predicted), sim, formatFloat(c.Measured.Bytes), strconv.Itoa(c.Measured.Lo), strconv.Itoa(c.Measured.Hi),
			c.Measured.Side, strconv.Itoa(c.Measured.Disagree), strconv.Itoa(len(c.Sizes)), formatFloat(c.Ratio())})
	}
	cw.Flush()
	return cw.Error()
}

// WriteCrossoverTable prints checks as a table for people.
func WriteCrossoverTable(w io.Writer, checks []Check) {
	fmt.Fprintf(w, "%-12s %5s  %-40s %10s %10s %10s %7s  %s\n", "collective", "world", "crossover (below -> above)", "table", "simulated", "measured", "ratio", "disagreeing sizes")
	for _, c := range checks {
		sim := "-"
		if c.Simulated != nil {
			sim = c.Simulated.String()
		}
		ratio := "-"
		if r := c.Ratio(); !math.IsNaN(r) {
			ratio = fmt.Sprintf("%.2f", r)
		}
		fmt.Fprintf(w, "%-12s %5d  %-40s %10s %10s %10s %7s  %d of %d\n", c.Target.Collective, c.Target.World,
			c.Target.Below.String()+" -> "+c.Target.Above.String(), units.FormatBytesG(float64(c.Target.Predicted)), sim, c.Measured.String(), ratio,
			c.Measured.Disagree, len(c.Sizes))
	}
}
