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
	var coll []Sample
	for _, s := range samples {
		if s.Collective != PointToPoint {
			coll = append(coll, s)
		}
	}
	if len(coll) == 0 {
		return nil, errNoSamples
	}
	f := &MachineFit{Machine: m.with(nil), Samples: coll, notes: map[string]string{}}
	if len(coll) < len(samples) {
		f.Notes = append(f.Notes, fmt.Sprintf("%d point-to-point sample(s) left out: a machine is fitted to collectives", len(samples)-len(coll)))
	}
	predict := func(m Machine, idx []int) ([]float64, error) {
		sub := make([]Sample, len(idx))
		for i, j := range idx {
			sub[i] = coll[j]
		}
		f.Evaluations++
		pr, err := PredictMachine(ctx, m, sub, opt.PredictOptions)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(pr))
		for i, p := range pr {
			out[i] = p.Time
		}
		return out, nil
	}
	if f.Before, err = PredictMachine(ctx, m, coll, opt.PredictOptions); err != nil {
		return nil, err
	}
	f.BeforeFit = Agree(coll, times(f.Before))

	// The samples of each class: inside a node, across nodes.
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
	type class struct {
		name    string
		idx     []int
		bws     []string // the bandwidths to try, the first that binds
		lat     string
		missing string
	}
	classes := []class{
		{"inside one node", intra, []string{"nvlink_bandwidth"}, "nvlink_latency", "no sample runs inside one node: NVLink's figures are the machine's"},
		{"across nodes", inter, []string{"nic_bandwidth", "nvlink_bandwidth"}, "nic_latency", "no sample spans nodes: the NICs' figures are the machine's"},
	}
	with := map[string][]string{"nvlink_bandwidth": {"nvls_bandwidth"}, "nic_bandwidth": {"sharp_bandwidth"}}
	params := map[string]*MachineParam{}
	newParam := func(key string, bandwidth bool) (*MachineParam, error) {
		p := &MachineParam{Key: key, Bandwidth: bandwidth}
		for _, w := range with[key] {
			if _, ok := f.Machine.key(preset, w); ok {
				p.With = append(p.With, w)
			}
		}
		v, err := figureOf(f.Machine, preset, key, bandwidth)
		p.Preset, p.Value = v, v
		if slices.Contains(opt.Hold, key) {
			p.Held, p.Why = true, "held as asked"
		}
		return p, err
	}
	var order []string
	for _, c := range classes {
		large, small := classSamples(coll, c.idx)
		below := ""
		if len(large) > 0 {
			below = " below " + units.FormatBytes(float64(coll[large[0]].Bytes))
		}
		if len(c.idx) == 0 {
			continue // its figures are held below, unless another class fits them
		}
		var bw *MachineParam
		for _, key := range c.bws {
			if params[key] != nil {
				continue // fitted by an earlier class
			}
			p, err := newParam(key, true)
			if err != nil {
				return nil, err
			}
			params[key], order = p, append(order, key)
			switch {
			case p.Held:
			case len(large) == 0:
				p.Held, p.Why = true, fmt.Sprintf("no sample %s of 1 MiB or more", c.name)
			case bw == nil:
				bound, err := f.fitBandwidth(p, large, coll, predict)
				if err != nil {
					return nil, err
				}
				if bound {
					bw = p
					p.Why = fmt.Sprintf("fitted to %d sample(s) %s from %s", len(large), c.name, units.FormatBytes(float64(coll[large[0]].Bytes)))
				} else {
					p.Held, p.Why = true, fmt.Sprintf("does not bound the model's time %s", c.name)
				}
			default:
				p.Held, p.Why = true, fmt.Sprintf("%s bounds the model's time %s", bw.Key, c.name)
			}
		}
		lat, err := newParam(c.lat, false)
		if err != nil {
			return nil, err
		}
		params[c.lat], order = lat, append(order, c.lat)
		switch {
		case lat.Held:
		case len(small) == 0:
			lat.Held, lat.Why = true, fmt.Sprintf("no sample %s below the bandwidth's", c.name)
		default:
			for round := 0; round < 2; round++ {
				if err := f.fitLatency(lat, small, coll, predict); err != nil {
					return nil, err
				}
				if bw == nil || round == 1 {
					break
				}
				// Once more: the latency moves the bandwidth's samples a
				// little.
				if _, err := f.fitBandwidth(bw, large, coll, predict); err != nil {
					return nil, err
				}
			}
			lat.Why = fmt.Sprintf("fitted to %d sample(s) %s%s", len(small), c.name, below)
		}
	}
	for _, c := range classes {
		for _, key := range append(slices.Clone(c.bws), c.lat) {
			if params[key] == nil {
				p, err := newParam(key, key != c.lat)
				if err != nil {
					return nil, err
				}
				if !p.Held {
					p.Held, p.Why = true, c.missing
				}
				params[key], order = p, append(order, key)
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return strings.Compare(figureOrder(a), figureOrder(b)) })
	for _, k := range order {
		f.Params = append(f.Params, *params[k])
		if n, ok := f.notes[k]; ok {
			f.Notes = append(f.Notes, n)
		}
	}
	if f.After, err = PredictMachine(ctx, f.Machine, coll, opt.PredictOptions); err != nil {
		return nil, err
	}
	f.AfterFit = Agree(coll, times(f.After))
	return f, nil
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
