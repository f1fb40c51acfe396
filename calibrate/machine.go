package calibrate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Machine is a GPU machine of package scenario's presets (dgx-h100, ...),
// with keys of its [network] table that override the preset's: what
// PredictMachine predicts nccl-tests on from a cluster's description alone,
// and what FitMachine fits to a log. Its collectives run as NCCL runs them:
// "auto" under Policy (NCCL's own choice of algorithm, protocol and
// channels at each size) for the collectives NCCL chooses for, or what a
// log's INFO lines say NCCL chose.
type Machine struct {
	// Preset names the preset: "dgx-h100".
	Preset string
	// Keys override the preset's keys as a scenario's [network] table
	// sets them: a string ("350Gbit/s", "2us") or a whole number. nil is
	// none.
	Keys map[string]any
	// Fitted are keys fitted to measurements (FitMachine's): the
	// simulated network takes them, over Keys, but NCCL's choice is made
	// without them, as NCCL chooses by what its graph search finds of the
	// hardware as built, not by what a benchmark measured. nil is none.
	Fitted map[string]any
	// Policy is how "auto" chooses: "nccl" (the default) or "table".
	Policy string
}

// String names the machine and its overrides in a line.
func (m Machine) String() string {
	s := m.Preset
	for _, k := range slices.Sorted(maps.Keys(m.Keys)) {
		s += fmt.Sprintf(", %s = %v", k, m.Keys[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Fitted)) {
		s += fmt.Sprintf(", %s = %v (fitted)", k, m.Fitted[k])
	}
	return s
}

// simulated is the machine the network simulates: Keys and Fitted
// together.
func (m Machine) simulated() Machine {
	out := m.with(m.Fitted)
	out.Fitted = nil
	return out
}

// chooser is the machine NCCL chooses on: without the fitted keys.
func (m Machine) chooser() Machine {
	out := m
	out.Fitted = nil
	return out
}

// key returns the machine's value of key: fitted, else its own, else
// the preset's.
func (m Machine) key(p scenario.Preset, key string) (any, bool) {
	if v, ok := m.Fitted[key]; ok {
		return v, true
	}
	if v, ok := m.Keys[key]; ok {
		return v, true
	}
	return p.Value(key)
}

// with returns a copy of m with keys set.
func (m Machine) with(keys map[string]any) Machine {
	out := m
	out.Keys = make(map[string]any, len(m.Keys)+len(keys))
	for k, v := range m.Keys {
		out.Keys[k] = v
	}
	for k, v := range keys {
		out.Keys[k] = v
	}
	return out
}

// writeNetwork writes the scenario's top of a run of m: its policy and
// its [network] table with extra keys (the nodes, the channels a log
// gives), each once and in order.
func (m Machine) writeNetwork(b *bytes.Buffer, extra map[string]any) {
	policy := cmp.Or(m.Policy, "nccl")
	fmt.Fprintf(b, "policy = %s\n\n[network]\npreset = %s\n", strconv.Quote(policy), strconv.Quote(m.Preset))
	keys := m.simulated().with(extra).Keys
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		switch v := keys[k].(type) {
		case string:
			fmt.Fprintf(b, "%s = %s\n", k, strconv.Quote(v))
		default:
			fmt.Fprintf(b, "%s = %v\n", k, v)
		}
	}
}

// DefaultMaxSimulated is the largest size PredictMachine simulates by
// default; larger ones are extrapolated (see PredictOptions).
const DefaultMaxSimulated = 256 << 20

// PredictOptions tune PredictMachine.
type PredictOptions struct {
	// MaxSimulated is the largest size simulated message by message (0:
	// DefaultMaxSimulated; negative: no limit). A larger size is
	// extrapolated from the times of the algorithm that runs it (NCCL's
	// choice there, for "auto") simulated at MaxSimulated and half of it:
	// in the bandwidth regime a pipelined collective's time is affine in
	// its size (on the GPU presets the extrapolated time of 1 GiB from 128
	// and 256 MiB is the simulated one to the nanosecond), and simulating
	// 8 GiB on 16 ranks takes minutes and gigabytes of memory.
	MaxSimulated int
	// Jobs is the points simulated at once (0: one per CPU).
	Jobs int
}

// Prediction is the predicted time of one sample.
type Prediction struct {
	// Time is in seconds.
	Time float64
	// Ran is the variant that ran (for "auto", what it chose, as the
	// point's policy says): "nccl_nvls_tree(channels=16)".
	Ran string
	// Extrapolated is set for a size above PredictOptions.MaxSimulated.
	Extrapolated bool
}

// machineGroup is the samples that run as one sweep: one collective,
// variant, world, dtype, op and root on one network.
type machineGroup struct {
	net     string // the scenario's top, from writeNetwork
	spec    sweepSpec
	variant string // as results name it
	sizes   []int
}

// sampleVariant is what a sample runs on a machine: what the log says
// NCCL chose at its size, else "auto" for a benchmark's sample (the
// library chose; the policy stands for it), else the sample's own.
func sampleVariant(s Sample) (string, error) {
	if ch, ok := s.NCCL.Choice(s.Collective, s.Bytes); ok {
		return ch.Variant(), nil
	}
	if s.Assumed || s.Algorithm == "" {
		c, err := algos.Lookup(s.Collective)
		if err != nil {
			return "", err
		}
		if _, err := c.Algorithm("auto"); err != nil {
			if c.Name == "alltoall" {
				return "linear", nil // NCCL's sends and receives, posted at once
			}
			return "", fmt.Errorf("%s: NCCL has no choice to model here", s.Collective)
		}
		return "auto", nil
	}
	return s.Algorithm, nil
}

// machineNetwork is the [network] keys a sample adds to m: its nodes
// (where its ranks fill fewer GPUs a node than the preset has, that many
// GPUs a node), and the channels its log gives.
func machineNetwork(m Machine, p scenario.Preset, s Sample) (map[string]any, error) {
	g, _ := m.key(p, "gpus_per_node")
	gpus, ok := g.(int64)
	if !ok || gpus < 1 {
		return nil, fmt.Errorf("preset %s: no gpus_per_node", m.Preset)
	}
	keys := map[string]any{}
	nodes := s.Nodes
	if nodes <= 0 {
		nodes = (s.World + int(gpus) - 1) / int(gpus)
	}
	keys["nodes"] = int64(nodes)
	if ppn := (s.World + nodes - 1) / nodes; int64(ppn) < gpus {
		keys["gpus_per_node"] = int64(ppn)
		if n, ok := m.key(p, "nics_per_node"); ok {
			if nics, ok := n.(int64); ok && nics > int64(ppn) {
				keys["nics_per_node"] = int64(ppn)
			}
		}
	}
	if s.NCCL != nil && s.NCCL.Channels > 0 {
		keys["channels"] = int64(s.NCCL.Channels)
	}
	if s.NCCL != nil {
		// NCCL_ALGO and NCCL_PROTO the run set limit NCCL's choice;
		// a value this NCCL would refuse (an older release's "CollNet")
		// is left out, and the choice is free.
		algo, proto := s.NCCL.Env["NCCL_ALGO"], s.NCCL.Env["NCCL_PROTO"]
		if algo != "" && tuner.CheckEnv(algo, "") == nil {
			keys["nccl_algo"] = algo
		}
		if proto != "" && tuner.CheckEnv("", proto) == nil {
			keys["nccl_proto"] = proto
		}
	}
	return keys, nil
}

// PredictMachine predicts every collective sample's time on m as nexar-sim
// runs it (see Machine), in the order of samples. Each sample runs on its
// own nodes (Sample.Nodes, else as many as its ranks fill) with the
// channels its log gives. Where m has fitted keys, "auto" runs what NCCL
// chooses on the machine without them.
func PredictMachine(ctx context.Context, m Machine, samples []Sample, opt PredictOptions) ([]Prediction, error) {
	p, err := scenario.LookupPreset(m.Preset)
	if err != nil {
		return nil, err
	}
	limit := opt.MaxSimulated
	if limit == 0 {
		limit = DefaultMaxSimulated
	}
	variants := make([]string, len(samples))
	for i, s := range samples {
		if variants[i], err = sampleVariant(s); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Source, err)
		}
	}
	if len(m.Fitted) > 0 {
		// NCCL's choice on the machine as built, run on the fitted one.
		if err := chooseOn(m.chooser(), p, samples, variants); err != nil {
			return nil, err
		}
	}
	groups, of, err := groupForMachine(m.simulated(), p, samples, variants)
	if err != nil {
		return nil, err
	}
	// First the sizes up to the limit, and the choice at each larger one.
	var sim []sweep.Point
	type key struct{ g, bytes int }
	at := map[key]int{}     // a simulated point's index in sim
	ran := map[key]string{} // what the point of a size ran
	var far []extrapolation // sizes above the limit
	farVariants := map[string]*extraSweep{}
	for gi, g := range groups {
		points, err := planGroup(g, g.sizes)
		if err != nil {
			return nil, err
		}
		for _, pt := range points {
			k := key{gi, pt.Bytes}
			variant, err := choiceOf(pt)
			if err != nil {
				return nil, fmt.Errorf("%v: %w", pt, err)
			}
			ran[k] = variant
			if limit < 0 || pt.Bytes <= limit {
				at[k] = len(sim)
				sim = append(sim, pt)
				continue
			}
			id := g.net + "\x00" + variant + "\x00" + g.spec.Collective + "\x00" + strconv.Itoa(g.spec.Worlds[0]) + "\x00" + g.spec.DType
			if farVariants[id] == nil {
				farVariants[id] = &extraSweep{group: g, variant: variant}
			}
			far = append(far, extrapolation{g: gi, bytes: pt.Bytes, used: pt.UsedBytes(), via: id})
		}
	}
	// Then each algorithm that runs a larger size, at the limit and half
	// of it.
	extraIDs := slices.Sorted(maps.Keys(farVariants))
	for _, id := range extraIDs {
		x := farVariants[id]
		spec := x.group.spec
		name, params := splitVariant(x.variant)
		spec.Algorithms, spec.Params = []string{name}, params
		g := machineGroup{net: x.group.net, spec: spec, variant: x.variant}
		points, err := planGroup(g, []int{limit / 2, limit})
		if err != nil {
			return nil, err
		}
		x.first = len(sim)
		x.used = [2]int{points[0].UsedBytes(), points[1].UsedBytes()}
		sim = append(sim, points...)
	}
	rows := make([]sweep.Row, 0, len(sim))
	if err := sweep.Run(ctx, sim, sweep.Options{Jobs: opt.Jobs}, func(r sweep.Row) error { rows = append(rows, r); return nil }); err != nil {
		return nil, err
	}
	if len(rows) != len(sim) {
		return nil, fmt.Errorf("calibrate: %d rows for %d points", len(rows), len(sim))
	}
	times := map[key]Prediction{}
	for k, i := range at {
		times[k] = Prediction{Time: rows[i].Time, Ran: ran[k]}
	}
	for _, e := range far {
		x := farVariants[e.via]
		t1, t2 := rows[x.first].Time, rows[x.first+1].Time
		b1, b2 := x.used[0], x.used[1]
		if b2 <= b1 {
			return nil, fmt.Errorf("calibrate: cannot extrapolate %s from %d and %d bytes", x.variant, b1, b2)
		}
		t := t2 + float64(e.used-b2)*(t2-t1)/float64(b2-b1)
		times[key{e.g, e.bytes}] = Prediction{Time: t, Ran: ran[key{e.g, e.bytes}], Extrapolated: true}
	}
	out := make([]Prediction, len(samples))
	for i, s := range samples {
		pr, ok := times[key{of[i], s.Bytes}]
		if !ok {
			return nil, fmt.Errorf("calibrate: no prediction of %v", s)
		}
		out[i] = pr
	}
	return out, nil
}

type extrapolation struct {
	g, bytes, used int
	via            string
}

type extraSweep struct {
	group   machineGroup
	variant string
	first   int
	used    [2]int
}

// chooseOn replaces each "auto" of variants by what it picks for its
// sample on m.
func chooseOn(m Machine, p scenario.Preset, samples []Sample, variants []string) error {
	groups, of, err := groupForMachine(m, p, samples, variants)
	if err != nil {
		return err
	}
	chosen := map[[2]int]string{}
	for gi, g := range groups {
		if g.variant != "auto" {
			continue
		}
		points, err := planGroup(g, g.sizes)
		if err != nil {
			return err
		}
		for _, pt := range points {
			if chosen[[2]int{gi, pt.Bytes}], err = choiceOf(pt); err != nil {
				return fmt.Errorf("%v: %w", pt, err)
			}
		}
	}
	for i, s := range samples {
		if variants[i] == "auto" {
			variants[i] = chosen[[2]int{of[i], s.Bytes}]
		}
	}
	return nil
}

// groupForMachine groups samples, each running its variant, into sweeps
// on m, and returns each sample's group.
func groupForMachine(m Machine, p scenario.Preset, samples []Sample, variants []string) ([]machineGroup, []int, error) {
	var groups []machineGroup
	idx := map[string]int{}
	of := make([]int, len(samples))
	for i, s := range samples {
		if s.Collective == PointToPoint {
			return nil, nil, fmt.Errorf("%s: a point-to-point sample; a machine's prediction is of collectives", s.Source)
		}
		coll, err := algos.Lookup(s.Collective)
		if err != nil {
			return nil, nil, err
		}
		variant := variants[i]
		keys, err := machineNetwork(m, p, s)
		if err != nil {
			return nil, nil, err
		}
		var net bytes.Buffer
		m.writeNetwork(&net, keys)
		op := ""
		if coll.Reduces {
			op = s.Op.String()
		}
		root := 0
		if coll.Rooted {
			root = s.Root
		}
		name, params := splitVariant(variant)
		id := strings.Join([]string{net.String(), s.Collective, variant, strconv.Itoa(s.World), s.DType.String(), op, strconv.Itoa(root)}, "\x00")
		gi, ok := idx[id]
		if !ok {
			gi = len(groups)
			idx[id] = gi
			groups = append(groups, machineGroup{net: net.String(), variant: variant,
				spec: sweepSpec{Collective: s.Collective, Algorithms: []string{name}, Worlds: []int{s.World}, DType: s.DType.String(), Op: op, Root: root, Params: params}})
		}
		if !slices.Contains(groups[gi].sizes, s.Bytes) {
			groups[gi].sizes = append(groups[gi].sizes, s.Bytes)
		}
		of[i] = gi
	}
	for i := range groups {
		slices.Sort(groups[i].sizes)
	}
	return groups, of, nil
}

// splitVariant reads "nccl_ring_ll(channels=8)" as its algorithm and
// parameters.
func splitVariant(v string) (string, map[string]int) {
	params, err := variantParams(v)
	if err != nil {
		params = nil
	}
	return sweep.BaseAlgorithm(v), params
}

// planGroup plans the sweep of g at sizes, one point a size in order.
func planGroup(g machineGroup, sizes []int) ([]sweep.Point, error) {
	var b bytes.Buffer
	b.WriteString("name = \"prediction\"\nseed = 1\n")
	b.WriteString(g.net)
	b.WriteString("\n")
	spec := g.spec
	spec.Bytes = sizes
	if err := writeSweeps(&b, []*sweepSpec{&spec}); err != nil {
		return nil, err
	}
	s, err := scenario.Parse("prediction.toml", b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("calibrate: the machine's scenario: %w\n%s", err, b.String())
	}
	points, err := sweep.Plan(s)
	if err != nil {
		return nil, err
	}
	if len(points) != len(sizes) {
		return nil, fmt.Errorf("calibrate: %d points for %d sizes", len(points), len(sizes))
	}
	return points, nil
}

// choiceOf is the variant a point runs: for "auto", what its table (and
// policy) picks on its machine.
func choiceOf(p sweep.Point) (string, error) {
	if p.Algorithm.Name != "auto" {
		return p.VariantName(), nil
	}
	ch, err := p.AutoChoice()
	if err != nil {
		return "", err
	}
	if len(ch.Params) == 0 {
		return ch.Algorithm, nil
	}
	return ch.Algorithm + "(" + sweep.FormatParams(ch.Params) + ")", nil
}

// Agreement is how well predicted times follow measured ones, in nccl-tests'
// terms.
type Agreement struct {
	// BusBW is the median |predicted busbw / measured busbw - 1| over the
	// samples of 1 MiB and more (Large of them); Time the median
	// |predicted time / measured time - 1| over those below 64 KiB (Small
	// of them). NaN where there are none.
	BusBW, Time  float64
	Large, Small int
}

// Agreement sizes: the bandwidth regime from 1 MiB, the latency regime
// below 64 KiB.
const (
	AgreementLargeFrom  = 1 << 20
	AgreementSmallBelow = 64 << 10
)

// Agree measures how predicted times follow samples' times.
func Agree(samples []Sample, predicted []float64) Agreement {
	var large, small []float64
	for i, s := range samples {
		if i >= len(predicted) || !(s.Time > 0) || !(predicted[i] > 0) {
			continue
		}
		switch {
		case s.Bytes >= AgreementLargeFrom:
			large = append(large, math.Abs(s.Time/predicted[i]-1)) // busbw is bytes over time
		case s.Bytes < AgreementSmallBelow:
			small = append(small, math.Abs(predicted[i]/s.Time-1))
		}
	}
	return Agreement{BusBW: median(large), Time: median(small), Large: len(large), Small: len(small)}
}

// median returns the median of xs (NaN if empty), sorting a copy.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (a Agreement) String() string {
	f := func(v float64, n int) string {
		if math.IsNaN(v) {
			return "none"
		}
		return fmt.Sprintf("%.1f%% (%d sizes)", 100*v, n)
	}
	return fmt.Sprintf("busbw from 1 MiB %s, time below 64 KiB %s", f(a.BusBW, a.Large), f(a.Time, a.Small))
}

var errNoSamples = errors.New("calibrate: no collective samples")
