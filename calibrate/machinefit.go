package calibrate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
)

// MachineParam is one figure of a GPU machine that FitMachine fits: a
// bandwidth of the preset (with the keys that scale with it) or a
// latency.
type MachineParam struct {
	// Key is the scenario key: nvlink_bandwidth, nic_bandwidth,
	// nvlink_latency, nic_latency.
	Key string
	// With are the keys a bandwidth scales together with Key: the
	// switches' reductions, set at line rate by the presets
	// (nvls_bandwidth with NVLink, sharp_bandwidth with the NICs).
	With []string
	// Bandwidth is set for bandwidths (bytes per second), else the
	// figure is a latency (seconds).
	Bandwidth bool
	// Preset is the machine's value before the fit, Value after.
	Preset, Value float64
	// Held is set where the samples do not determine the figure; Why
	// says why, or, where fitted, from which samples.
	Held bool
	Why  string
}

// Text writes the value as the scenario key takes it.
func (p MachineParam) Text() string { return formatFigure(p.Value, p.Bandwidth) }

func formatFigure(v float64, bandwidth bool) string {
	if bandwidth {
		return units.FormatBandwidthGB(v, 5)
	}
	return units.FormatNanoseconds(v, 1)
}

// MachineFit is a machine fitted to samples.
type MachineFit struct {
	// Machine is the preset with the fitted figures as its keys.
	Machine Machine
	Params  []MachineParam
	Samples []Sample
	// Before and After are the predictions of the samples on the machine
	// as given and as fitted, and how they agree with them.
	Before, After       []Prediction
	BeforeFit, AfterFit Agreement
	Evaluations         int
	Notes               []string
	notes               map[string]string // the last note about each figure
}

// MachineFitOptions tune FitMachine.
type MachineFitOptions struct {
	PredictOptions
	// Hold keeps these figures (scenario keys) at the machine's values.
	Hold []string
}

// The samples that determine a figure: bandwidth from the sizes where a
// collective's time is its bytes over its bandwidth (1 MiB and more, and
// at least 1/64 of the largest sample, the top of a sweep), latency from
// the smaller ones.
const (
	fitLargeFrom  = 1 << 20
	fitLargeShare = 64
)

// figureOf reads the machine's value of a figure in SI units.
func figureOf(m Machine, p scenario.Preset, key string, bandwidth bool) (float64, error) {
	v, ok := m.key(p, key)
	if !ok {
		if bandwidth {
			return 0, fmt.Errorf("calibrate: preset %s has no %s", m.Preset, key)
		}
		return 0, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("calibrate: %s = %v: want a string", key, v)
	}
	if bandwidth {
		return units.ParseBandwidth(s)
	}
	d, err := units.ParseDuration(s)
	return d.Seconds(), err
}

// FitMachine fits the figures of a GPU machine to measured samples, so
// that a cluster measured once is predicted at other node counts and
// collectives: the NICs' bandwidth and latency to samples that span
// nodes, NVLink's to samples inside one node (bandwidth from 1 MiB and the
// top of the sweep, latency below 64 KiB; a figure the samples do not
// reach is held, and says why). Each figure is found by simulating the
// samples that determine it on the machine (PredictMachine), a bandwidth
// by scaling it until the median predicted time of its samples is the
// measured one, a latency by the secant method on the same median; twice
// round, as each moves the other's samples a little. The other keys of
// the machine, NCCL's own figures, and NCCL's choice ("auto" under the
// nccl policy, or what the log's INFO lines say NCCL chose) are kept.
func FitMachine(ctx context.Context, m Machine, samples []Sample, opt MachineFitOptions) (*MachineFit, error) {
	preset, err := scenario.LookupPreset(m.Preset)
	if err != nil {
		return nil, err
	}
	coll := collectiveSamples(samples)
	if len(coll) == 0 {
		return nil, errNoSamples
	}
	f := &MachineFit{Machine: m.with(nil), Samples: coll, notes: map[string]string{}}
	if len(coll) < len(samples) {
		f.Notes = append(f.Notes, fmt.Sprintf("%d point-to-point sample(s) left out: a machine is fitted to collectives", len(samples)-len(coll)))
	}
	if f.Before, err = PredictMachine(ctx, m, coll, opt.PredictOptions); err != nil {
		return nil, err
	}
	f.BeforeFit = Agree(coll, times(f.Before))
	classes, err := machineClasses(m, preset, coll)
	if err != nil {
		return nil, err
	}
	x := &machineFitter{ctx: ctx, opt: opt, preset: preset, f: f, coll: coll, params: map[string]*MachineParam{}}
	for _, c := range classes {
		if err := x.fitClass(c); err != nil {
			return nil, err
		}
	}
	if err := x.holdUnreached(classes); err != nil {
		return nil, err
	}
	x.collect()
	if f.After, err = PredictMachine(ctx, f.Machine, coll, opt.PredictOptions); err != nil {
		return nil, err
	}
	f.AfterFit = Agree(coll, times(f.After))
	return f, nil
}

// collectiveSamples are the samples of collectives: a machine is not
// fitted to point-to-point ones.
func collectiveSamples(samples []Sample) []Sample {
	var coll []Sample
	for _, s := range samples {
		if s.Collective != PointToPoint {
			coll = append(coll, s)
		}
	}
	return coll
}

// machineClass is a class of samples and the figures it determines:
// the bandwidths to try (the first that binds is fitted), the latency,
// and why the figures are held when no sample is of the class.
type machineClass struct {
	name    string
	idx     []int
	bws     []string
	lat     string
	missing string
}

// bandwidthWith are the keys each bandwidth scales together with.
var bandwidthWith = map[string][]string{"nvlink_bandwidth": {"nvls_bandwidth"}, "nic_bandwidth": {"sharp_bandwidth"}}

// machineClasses sorts the samples coll into the classes that determine
// different figures: inside one node NVLink's, across nodes the NICs'
// (or NVLink's bandwidth where it binds there).
func machineClasses(m Machine, preset scenario.Preset, coll []Sample) ([]machineClass, error) {
	var intra, inter []int
	for i, s := range coll {
		keys, err := machineNetwork(m, preset, s)
		if err != nil {
			return nil, err
		}
		if keys["nodes"].(int64) > 1 {
			inter = append(inter, i)
		} else {
			intra = append(intra, i)
		}
	}
	return []machineClass{
		{"inside one node", intra, []string{"nvlink_bandwidth"}, "nvlink_latency", "no sample runs inside one node: NVLink's figures are the machine's"},
		{"across nodes", inter, []string{"nic_bandwidth", "nvlink_bandwidth"}, "nic_latency", "no sample spans nodes: the NICs' figures are the machine's"},
	}, nil
}

// machineFitter is one run of FitMachine: the fit it fills, the
// collective samples, and the figures met so far by key, in the order
// they were met.
type machineFitter struct {
	ctx    context.Context
	opt    MachineFitOptions
	preset scenario.Preset
	f      *MachineFit
	coll   []Sample
	params map[string]*MachineParam
	order  []string
}

// predict simulates the samples idx on m and returns their times,
// counting the evaluation.
func (x *machineFitter) predict(m Machine, idx []int) ([]float64, error) {
	sub := make([]Sample, len(idx))
	for i, j := range idx {
		sub[i] = x.coll[j]
	}
	x.f.Evaluations++
	pr, err := PredictMachine(x.ctx, m, sub, x.opt.PredictOptions)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(pr))
	for i, p := range pr {
		out[i] = p.Time
	}
	return out, nil
}

// newParam is the figure key at the machine's value, with the keys that
// scale with it, held if the options hold it.
func (x *machineFitter) newParam(key string, bandwidth bool) (*MachineParam, error) {
	p := &MachineParam{Key: key, Bandwidth: bandwidth}
	for _, w := range bandwidthWith[key] {
		if _, ok := x.f.Machine.key(x.preset, w); ok {
			p.With = append(p.With, w)
		}
	}
	v, err := figureOf(x.f.Machine, x.preset, key, bandwidth)
	p.Preset, p.Value = v, v
	if slices.Contains(x.opt.Hold, key) {
		p.Held, p.Why = true, "held as asked"
	}
	return p, err
}

// add records the figure p of key.
func (x *machineFitter) add(key string, p *MachineParam) {
	x.params[key], x.order = p, append(x.order, key)
}

// fitClass fits the figures of class c to its samples: a bandwidth to the
// large ones, then the latency to the small ones. A class of no sample
// is left to holdUnreached, unless another class fits its figures.
func (x *machineFitter) fitClass(c machineClass) error {
	large, small := classSamples(x.coll, c.idx)
	if len(c.idx) == 0 {
		return nil
	}
	bw, err := x.fitClassBandwidth(c, large)
	if err != nil {
		return err
	}
	return x.fitClassLatency(c, bw, large, small)
}

// fitClassBandwidth fits the first of c's bandwidths, not fitted by an
// earlier class, that binds the model's time at the large samples, and
// holds the others saying why. It returns the fitted one, nil if none.
func (x *machineFitter) fitClassBandwidth(c machineClass, large []int) (*MachineParam, error) {
	var bw *MachineParam
	for _, key := range c.bws {
		if x.params[key] != nil {
			continue // fitted by an earlier class
		}
		p, err := x.newParam(key, true)
		if err != nil {
			return nil, err
		}
		x.add(key, p)
		switch {
		case p.Held:
		case len(large) == 0:
			p.Held, p.Why = true, fmt.Sprintf("no sample %s of 1 MiB or more", c.name)
		case bw == nil:
			bound, err := x.f.fitBandwidth(p, large, x.coll, x.predict)
			if err != nil {
				return nil, err
			}
			if bound {
				bw = p
				p.Why = fmt.Sprintf("fitted to %d sample(s) %s from %s", len(large), c.name, units.FormatBytes(float64(x.coll[large[0]].Bytes)))
			} else {
				p.Held, p.Why = true, fmt.Sprintf("does not bound the model's time %s", c.name)
			}
		default:
			p.Held, p.Why = true, fmt.Sprintf("%s bounds the model's time %s", bw.Key, c.name)
		}
	}
	return bw, nil
}

// fitClassLatency fits c's latency to the small samples, twice round
// with the bandwidth bw (if one was fitted) refitted between, as the
// latency moves the bandwidth's samples a little.
func (x *machineFitter) fitClassLatency(c machineClass, bw *MachineParam, large, small []int) error {
	below := ""
	if len(large) > 0 {
		below = " below " + units.FormatBytes(float64(x.coll[large[0]].Bytes))
	}
	lat, err := x.newParam(c.lat, false)
	if err != nil {
		return err
	}
	x.add(c.lat, lat)
	switch {
	case lat.Held:
	case len(small) == 0:
		lat.Held, lat.Why = true, fmt.Sprintf("no sample %s below the bandwidth's", c.name)
	default:
		for round := 0; round < 2; round++ {
			if err := x.f.fitLatency(lat, small, x.coll, x.predict); err != nil {
				return err
			}
			if bw == nil || round == 1 {
				break
			}
			// Once more: the latency moves the bandwidth's samples a
			// little.
			if _, err := x.f.fitBandwidth(bw, large, x.coll, x.predict); err != nil {
				return err
			}
		}
		lat.Why = fmt.Sprintf("fitted to %d sample(s) %s%s", len(small), c.name, below)
	}
	return nil
}

// holdUnreached adds the figures no class fitted, at the machine's
// values, held because no sample is of their class.
func (x *machineFitter) holdUnreached(classes []machineClass) error {
	for _, c := range classes {
		for _, key := range append(slices.Clone(c.bws), c.lat) {
			if x.params[key] == nil {
				p, err := x.newParam(key, key != c.lat)
				if err != nil {
					return err
				}
				if !p.Held {
					p.Held, p.Why = true, c.missing
				}
				x.add(key, p)
			}
		}
	}
	return nil
}

// collect puts the figures into the fit in the order of figureOrder,
// each with the last note about it.
func (x *machineFitter) collect() {
	slices.SortStableFunc(x.order, func(a, b string) int { return strings.Compare(figureOrder(a), figureOrder(b)) })
	for _, k := range x.order {
		x.f.Params = append(x.f.Params, *x.params[k])
		if n, ok := x.f.notes[k]; ok {
			x.f.Notes = append(x.f.Notes, n)
		}
	}
}

func times(pr []Prediction) []float64 {
	out := make([]float64, len(pr))
	for i, p := range pr {
		out[i] = p.Time
	}
	return out
}

// classSamples splits the samples idx of coll into those that determine
// bandwidth (from 1 MiB and 1/64 of the largest) and those that
// determine latency (the smaller ones: below 64 KiB a collective's time
// is its latency; between, its pipeline's filling, which the latency of
// its steps sets), by size.
func classSamples(coll []Sample, idx []int) (large, small []int) {
	largest := 0
	for _, i := range idx {
		largest = max(largest, coll[i].Bytes)
	}
	from := max(fitLargeFrom, largest/fitLargeShare)
	for _, i := range idx {
		if coll[i].Bytes >= from {
			large = append(large, i)
		} else {
			small = append(small, i)
		}
	}
	slices.SortFunc(large, func(a, b int) int { return coll[a].Bytes - coll[b].Bytes })
	return large, small
}

// medianRatio is the median of predicted over measured time.
func medianRatio(coll []Sample, idx []int, pred []float64) float64 {
	r := make([]float64, len(idx))
	for i, j := range idx {
		r[i] = pred[i] / coll[j].Time
	}
	return median(r)
}

// set puts a figure's value, and the keys that scale with it, into the
// fit's machine.
func (f *MachineFit) set(p *MachineParam, v float64) {
	keys := map[string]any{p.Key: formatFigure(v, p.Bandwidth)}
	if p.Bandwidth && p.Preset > 0 {
		pr, _ := scenario.LookupPreset(f.Machine.Preset)
		for _, w := range p.With {
			if base, err := figureOf(f.Machine, pr, w, true); err == nil && base > 0 {
				keys[w] = formatFigure(base*v/p.Value, true)
			}
		}
	}
	fitted := make(map[string]any, len(f.Machine.Fitted)+len(keys))
	for k, x := range f.Machine.Fitted {
		fitted[k] = x
	}
	for k, x := range keys {
		fitted[k] = x
	}
	f.Machine.Fitted = fitted
	p.Value = v
}

// fitTolerance is how close the median ratio must come to 1.
const fitTolerance = 0.005

// fitBandwidth scales p until the median predicted time of the large
// samples is the measured one: k times the bandwidth gives about 1/k
// times the time in the bandwidth regime; the exponent is measured as it
// goes, and a figure that barely moves the times is left where it is, with
// a note.
func (f *MachineFit) fitBandwidth(p *MachineParam, large []int, coll []Sample, predict func(Machine, []int) ([]float64, error)) (bool, error) {
	pred, err := predict(f.Machine, large)
	if err != nil {
		return false, err
	}
	r := medianRatio(coll, large, pred)
	slope := 1.0 // d log(ratio) / d log(1/bandwidth)
	best, bestR, moved := p.Value, r, false
	for it := 0; it < 8 && math.Abs(r-1) > fitTolerance; it++ {
		old, oldR := p.Value, r
		k := math.Pow(r, 1/slope)
		k = min(max(k, 0.25), 4) // a step at most 4x
		v := min(max(old*k, p.Preset/50), p.Preset*50)
		if v == old {
			break
		}
		f.set(p, v)
		if pred, err = predict(f.Machine, large); err != nil {
			return false, err
		}
		r = medianRatio(coll, large, pred)
		if math.Abs(r-1) < math.Abs(bestR-1) {
			best, bestR = v, r
		}
		if s := math.Log(oldR/r) / math.Log(v/old); s > 0.05 {
			slope, moved = min(s, 1.5), true
			continue
		}
		if !moved {
			f.notes[p.Key] = fmt.Sprintf("%s: %s to %s moves the median predicted time of its samples only from %.3f to %.3f of the measured: the model's time there is not this bandwidth's, kept at %s",
				p.Key, formatFigure(old, true), formatFigure(v, true), oldR, r, formatFigure(old, true))
			f.set(p, old)
			return false, nil
		}
		// The time moves irregularly this close (chunks against links):
		// the best value seen.
		break
	}
	if p.Value != best {
		f.set(p, best)
		r = bestR
	}
	delete(f.notes, p.Key)
	if math.Abs(r-1) > 0.02 {
		f.notes[p.Key] = fmt.Sprintf("%s: the median predicted time of its samples stays %.3f of the measured at %s", p.Key, r, p.Text())
	}
	return true, nil
}

// fitLatency finds the latency at which the median predicted time of the
// small samples is the measured one, by the secant method (the time grows
// with the latency), from the machine's value; at least 0.
func (f *MachineFit) fitLatency(p *MachineParam, small []int, coll []Sample, predict func(Machine, []int) ([]float64, error)) error {
	eval := func(v float64) (float64, error) {
		f.set(p, v)
		pred, err := predict(f.Machine, small)
		if err != nil {
			return 0, err
		}
		return medianRatio(coll, small, pred) - 1, nil
	}
	x0 := p.Value
	g0, err := eval(x0)
	if err != nil {
		return err
	}
	if math.Abs(g0) <= fitTolerance {
		return nil
	}
	// A second point: the latency moved by a step of its own size (at
	// least 500 ns) against the error.
	step := max(x0, 500e-9)
	x1 := x0 + step
	if g0 > 0 {
		x1 = max(x0-step, 0)
	}
	g1, err := eval(x1)
	if err != nil {
		return err
	}
	for it := 0; it < 10 && math.Abs(g1) > fitTolerance; it++ {
		if g1 == g0 {
			break
		}
		x2 := x1 - g1*(x1-x0)/(g1-g0)
		if x2 < 0 {
			x2 = 0
		}
		if x2 > 1e-3 {
			x2 = 1e-3
		}
		if x2 == x1 {
			break
		}
		g2, err := eval(x2)
		if err != nil {
			return err
		}
		x0, g0, x1, g1 = x1, g1, x2, g2
	}
	delete(f.notes, p.Key)
	if x1 == 0 && g1 > fitTolerance {
		f.notes[p.Key] = (fmt.Sprintf("%s: even with no latency on these links the model is %.0f%% slower than measured at its samples: its time there is NCCL's own per-step figures", p.Key, 100*g1))
	}
	if p.Value != x1 {
		f.set(p, x1)
	}
	return nil
}

// WriteScenario writes the fitted machine as a scenario nexar-sim runs:
// the preset with the fitted keys as its [network], policy "nccl", and a
// sweep of "auto" over the samples' collectives, world sizes and sizes,
// so that nexar-sim predicts the measured points; change world (and
// nodes) to predict others.
func (f *MachineFit) WriteScenario(w io.Writer, name string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Calibrated by nexar-go's calibrate: the %s preset, its figures fitted to %d measured points\n", f.Machine.Preset, len(f.Samples))
	fmt.Fprintf(&b, "# (median |predicted/measured - 1|: before, %s; after, %s).\n", f.BeforeFit, f.AfterFit)
	for _, p := range f.Params {
		if p.Held {
			fmt.Fprintf(&b, "# %s %s, held: %s\n", p.Key, formatFigure(p.Value, p.Bandwidth), p.Why)
		} else {
			fmt.Fprintf(&b, "# %s %s -> %s, %s\n", p.Key, formatFigure(p.Preset, p.Bandwidth), p.Text(), p.Why)
		}
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "# Note: %s\n", n)
	}
	b.WriteString("# NCCL's choice (auto) in this scenario is made on the fitted figures; the fit and its\n# predictions made it on the machine as built, as NCCL does (calibrate.Machine.Fitted).\n")
	fmt.Fprintf(&b, "name = %s\nseed = 1\n", strconv.Quote(name))
	f.Machine.writeNetwork(&b, nil)
	b.WriteString("\n")
	sweeps, _ := sweepsOf(f.Samples)
	for _, sw := range sweeps {
		sw.Algorithms, sw.Params = []string{"auto"}, nil
	}
	if err := writeSweeps(&b, sweeps); err != nil {
		return err
	}
	if _, err := scenario.Parse(name+".toml", b.Bytes()); err != nil {
		return fmt.Errorf("calibrate: the calibrated scenario does not parse: %w\n%s", err, b.String())
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Describe writes the fitted figures in a line.
func (f *MachineFit) Describe() string {
	var parts []string
	for _, p := range f.Params {
		if !p.Held {
			parts = append(parts, fmt.Sprintf("%s %s (preset %s)", p.Key, p.Text(), formatFigure(p.Preset, p.Bandwidth)))
		}
	}
	if len(parts) == 0 {
		return "nothing fitted"
	}
	return strings.Join(parts, ", ")
}

// figureOrder orders the figures of a report: NVLink's, then the NICs'.
func figureOrder(key string) string {
	return map[string]string{"nvlink_bandwidth": "0", "nvlink_latency": "1", "nic_bandwidth": "2", "nic_latency": "3"}[key]
}
