package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/units"
	"github.com/nexar-go/nexar-go/workload"
)

// Workload is the [workload] table: a training step (package workload)
// and the values of its keys that the file sweeps. Its Points are every
// combination of them, each a workload.Spec ready to plan.
//
//	[workload]
//	transformer = { layers = 40, hidden = 5140, heads = 40, seq = 2048, vocab = 50257, micro_batch = 1 }
//	layout = ["dp8-tp8-pp1", "dp4-tp8-pp2"]   # swept: one point each
//	global_batch = 64                         # sequences a step: micro_batches = 64 / (dp · micro_batch)
//	schedule = "1f1b"                         # gpipe, 1f1b, interleaved (with chunks)
//	bucket = "1MiB..256MiB x2"                # swept
//	first_bucket = "1MiB"
//	overlap = true
//	zero = 0                                  # 0..3, or a list
//	mfu = 0.5                                 # share of [network] flops reached
//
//	[workload.algorithms]                     # per process group
//	dp = ["nccl_ring_simple", "nccl_tree_simple"]   # swept
//	tp = "auto"
//
// WorkloadKeys lists every key.
type Workload struct {
	// Line is the line of the [workload] header.
	Line int
	// Model says where the layers come from: "transformer", "layers" or
	// "aicb FILE".
	Model string
	// AICB is the AICB file read, nil if none.
	AICB *workload.AICB
	// FLOPS is the rate of work given in FLOPs on one GPU: the [workload]
	// flops key, else [network]'s, times mfu; 0 if unknown (then no layer
	// may give its work in FLOPs).
	FLOPS float64
	// Tuning is the table the groups' "auto" algorithms select by: the
	// file's tuning, with its policy; nil for nexar's default.
	Tuning *algos.Tuning
	// Axes name the swept keys, in the order of the file's keys, and
	// Points are their combinations, the last axis varying fastest.
	Axes   []string
	Points []WorkloadPoint
}

// WorkloadPoint is one combination of the swept values.
type WorkloadPoint struct {
	Index int
	Spec  workload.Spec
	// Values gives each axis's value as results name it ("dp8-tp8-pp1",
	// "1MiB", "dp=ring"), in the order of Workload.Axes.
	Values []string
}

// Value returns the point's value of axis, "" if the file does not
// sweep it.
func (w *Workload) Value(p WorkloadPoint, axis string) string {
	if i := slices.Index(w.Axes, axis); i >= 0 {
		return p.Values[i]
	}
	return ""
}

var workloadKeys = []KeyInfo{
	{"transformer", false, `a GPT from its paper's sizes: { layers = 40, hidden = 5140, heads = 40, seq = 2048, vocab = 50257, micro_batch = 1 } (ffn = 4·hidden by default); or [[workload.layer]] tables; or aicb`},
	{"aicb", false, `an AICB workload file of SimAI (relative to the scenario): its layers, and its layout and micro-batches unless the table sets them`},
	{"layout", false, `the parallel layout, "dpD-tpT-ppP[-epE]" (sizes left out are 1), or a list of them (swept); required but with aicb`},
	{"order", false, `the order of the dimensions in rank numbers, fastest first: "tp-dp-pp" (default: TP ranks side by side inside a node, then DP, then PP)`},
	{"micro_batches", false, `micro-batches a step on each pipeline (gradient accumulation), default 1; or give global_batch`},
	{"global_batch", false, `sequences a step: micro_batches = global_batch / (dp · the transformer's micro_batch), for every layout`},
	{"schedule", false, `the pipeline schedule: "gpipe", "1f1b" (default) or "interleaved"; or a list (swept)`},
	{"chunks", false, `model chunks a stage under the interleaved schedule (at least 2)`},
	{"bucket", false, `gradient bucket size, a size or a list or range ("1MiB..256MiB x2", swept); default "25MiB", PyTorch DDP's`},
	{"first_bucket", false, `the first bucket's size, default "1MiB" as PyTorch DDP's; 0 for bucket's`},
	{"overlap", false, `reduce each bucket during the backward, beside the compute (default true); false puts every DP collective on the critical path`},
	{"zero", false, `ZeRO stage 0 (DDP allreduce, default), 1 or 2 (reduce-scatter, parameter allgather) or 3 (FSDP); or a list (swept)`},
	{"prefetch", false, `ZeRO-3: the layers whose parameters are gathered ahead of the compute (default 1)`},
	{"sequence_parallel", false, `true: each TP allreduce is a reduce-scatter and an allgather (Megatron's sequence parallelism)`},
	{"grad_dtype", false, `the gradients' element type (default "bf16")`},
	{"param_dtype", false, `the type of the parameters ZeRO gathers (default "bf16")`},
	{"optimizer", false, `the optimizer's compute a step for the whole model on one GPU, a time ("20ms") or FLOPs ("4TFLOP"); ranks take their share`},
	{"flops", false, `one GPU's compute rate, such as "989TFLOP/s", overriding [network] flops`},
	{"mfu", false, `the share of the rate a step's compute reaches, 0 to 1 (default 1): work in FLOPs takes FLOPs / (flops · mfu)`},
	{"skew", false, `relative standard deviation of the ranks' compute speeds (default 0), drawn from the seed`},
	{"stragglers", false, `ranks, drawn from the seed, that compute slowdown times slower (default 0)`},
	{"slowdown", false, `the stragglers' slowdown, at least 1 (default 1.5)`},
	{"algorithms", false, `a table: per process group (tp, dp, ep, dp_ep) an algorithm for all its collectives ("ring", "nccl_tree_simple", "auto"), a table { allreduce = "ring", reduce_scatter = "ring" }, or a list of either (swept)`},
	{"layer", false, `[[workload.layer]] tables, first layer first: name, count, params, expert_params, activation, forward, backward (times, or forward_flops, backward_flops), tp_collectives, alltoall, alltoalls, edge`},
}

// WorkloadKeys describes the keys of [workload], for listings and help.
func WorkloadKeys() []KeyInfo { return workloadKeys }

// workloadAxis is a swept key: its name and the values, as text and as
// a change to the spec.
type workloadAxis struct {
	name   string
	texts  []string
	values []func(*workload.Spec)
}

// workload reads the [workload] table t.
func (c *checker) workload(t *table, seed uint64) *Workload {
	r := newWorkloadReader(c, t, seed)
	aicbLayout := r.readModel()
	r.readLayout(aicbLayout)
	r.readSchedule()
	r.readGradients()
	r.readCompute()
	algs, ok := c.workloadAlgorithms(t)
	r.note(ok)
	for _, a := range algs {
		r.sweep("algorithms."+a.name, a)
	}
	t.finish()
	if r.good && r.checkFLOPsRate() {
		r.combine()
	}
	return r.w
}

// workloadReader is one reading of a [workload] table: the Workload it
// fills, the spec every point starts from, the swept keys, and whether
// every key read so far was good. Its steps read the keys in a fixed
// order, which is the order of the errors they report.
type workloadReader struct {
	c    *checker
	t    *table
	w    *Workload
	base workload.Spec
	axes []*workloadAxis
	good bool
	// microBatch is the transformer's sequences a micro-batch (1 for the
	// other models) and globalBatch the global_batch key (0: not set),
	// which give each point its micro-batches.
	microBatch  int
	globalBatch int64
}

// newWorkloadReader starts reading t with the file's default tuning and
// the spec's defaults (PyTorch DDP's buckets, 1F1B, bf16).
func newWorkloadReader(c *checker, t *table, seed uint64) *workloadReader {
	w := &Workload{Line: lineOf(c.lines, t.path), Tuning: c.defaultTuning}
	if c.defaultPolicy != "" && c.defaultPolicyOK {
		w.Tuning = w.Tuning.WithPolicy(c.policies[c.defaultPolicy])
	}
	base := workload.Spec{Seed: seed, Overlap: true, Bucket: 25 << 20, FirstBucket: 1 << 20, Prefetch: 1, Schedule: workload.OneFOneB,
		GradDType: device.BF16, ParamDType: device.BF16, Slowdown: 1.5}
	return &workloadReader{c: c, t: t, w: w, base: base, good: true, microBatch: 1}
}

// key is the path of the table's key k, for errors.
func (r *workloadReader) key(k string) string { return joinPath(r.t.path, k) }

// note records whether a key read well.
func (r *workloadReader) note(ok bool) { r.good = r.good && ok }

// sweep makes a key of several values an axis, and sets a key of one
// value in the base spec.
func (r *workloadReader) sweep(name string, a *workloadAxis) {
	if a != nil && len(a.texts) > 1 {
		a.name = name
		r.axes = append(r.axes, a)
	} else if a != nil && len(a.values) == 1 {
		a.values[0](&r.base)
	}
}

// readModel reads where the layers come from: transformer, [[workload.layer]]
// tables or aicb, exactly one of them. It returns whether an AICB file
// gave the layout, which then need not be given.
func (r *workloadReader) readModel() (aicbLayout bool) {
	c, t := r.c, r.t
	sources := 0
	if tt := t.subtable("transformer", false, "[workload] transformer", "an inline table { layers = 40, hidden = 5140, ... }"); tt != nil {
		sources++
		tr, ok := c.transformer(tt)
		r.note(ok)
		if ok {
			r.base.Layers = tr.LayerSet()
			r.microBatch = max(tr.MicroBatch, 1)
			r.w.Model = "transformer"
		}
	}
	if v, path, ok := t.get("layer"); ok {
		sources++
		tables, isTables := v.([]map[string]any)
		if !isTables {
			c.errorf(path, "want [[workload.layer]] tables (two brackets), got %s", typeName(v))
			r.good = false
		}
		for i, m := range tables {
			lt := &table{c: c, path: indexPath(path, i), m: m, what: fmt.Sprintf("[[workload.layer]] %d", i+1)}
			ls, ok := c.layer(lt)
			r.note(ok)
			r.base.Layers = append(r.base.Layers, ls...)
		}
		r.w.Model = "layers"
	}
	if name, ok := t.str("aicb", false, "", `the path of an AICB workload file: aicb = "workload.txt"`); !ok {
		r.good = false
	} else if name != "" {
		sources++
		aicbLayout = r.readAICBModel(name)
	}
	if sources == 0 && r.good {
		t.missing("transformer", "the model: transformer = { ... }, [[workload.layer]] tables, or aicb = \"file\"")
		r.good = false
	} else if sources > 1 {
		c.errorf(t.path, "give the model once: transformer, [[workload.layer]] tables or aicb, not %d of them", sources)
		r.good = false
	}
	return aicbLayout
}

// readAICBModel takes the layers, layout and micro-batches of the AICB
// file name, and reports whether it could.
func (r *workloadReader) readAICBModel(name string) bool {
	a, err := r.c.readAICB(name)
	if err != nil {
		r.c.errorf(r.key("aicb"), "%v", err)
		r.good = false
		return false
	}
	r.w.AICB, r.w.Model = a, "aicb "+name
	if len(a.Ignored) > 0 {
		r.w.Model += " (header keys skipped, as SimAI skips them: " + strings.Join(a.Ignored, ", ") + ")"
	}
	s := a.Spec()
	r.base.Layers, r.base.Layout, r.base.MicroBatches = s.Layers, s.Layout, s.MicroBatches
	if a.PP > 1 {
		r.base.Schedule = workload.OneFOneB
	}
	if _, set := r.t.m["layout"]; a.World == 0 && !set {
		// SimAI takes the world from its own command line; without
		// it a data-parallel group (MICRO's collectives all run on
		// it) would be one rank, and the step would move nothing.
		r.c.errorf(r.key("aicb"), "%s gives no all_gpus (the world), so its groups' sizes are unknown: give layout, as \"dp%d-tp%d-pp%d\" for %d GPUs", name, 8, a.TP, a.PP, 8*a.TP*a.PP)
		r.good = false
	}
	return true
}

// readLayout reads the parallel layout (required unless an AICB file
// gave it), the order of its ranks, and the micro-batches a step, as
// micro_batches or global_batch but not both.
func (r *workloadReader) readLayout(aicbLayout bool) {
	c, t := r.c, r.t
	layouts, ok := c.layouts(t, !aicbLayout)
	r.note(ok)
	r.sweep("layout", layouts)
	if order, ok := t.str("order", false, "", `an order such as "tp-dp-pp"`); !ok {
		r.good = false
	} else if order != "" {
		r.base.Order = order
		probe := workload.Spec{Layout: workload.Layout{DP: 1, TP: 1, PP: 1, EP: 1, Order: order}}
		if err := probe.Validate(); err != nil && strings.Contains(err.Error(), "order") {
			c.errorf(r.key("order"), "%s", firstLine(err, "order"))
			r.good = false
		}
	}
	_, setM := t.m["micro_batches"]
	_, setG := t.m["global_batch"]
	mb, ok := t.integer("micro_batches", int64(max(r.base.MicroBatches, 1)), 1, 1<<20)
	r.note(ok)
	r.base.MicroBatches = int(mb)
	gb, ok := t.integer("global_batch", 0, 1, 1<<30)
	r.note(ok)
	r.globalBatch = gb
	if setM && setG {
		c.errorf(r.key("global_batch"), "give micro_batches or global_batch, not both")
		r.good = false
	}
}

// readSchedule reads the pipeline schedule and its chunks.
func (r *workloadReader) readSchedule() {
	sched, ok := r.c.enumList(r.t, "schedule", []string{"gpipe", "1f1b", "interleaved"}, func(s string) func(*workload.Spec) {
		sc, _ := workload.ParseSchedule(s)
		return func(sp *workload.Spec) { sp.Schedule = sc }
	})
	r.note(ok)
	r.sweep("schedule", sched)
	ch, ok := r.t.integer("chunks", 1, 1, 1<<10)
	r.note(ok)
	r.base.Chunks = int(ch)
}

// readGradients reads how gradients and parameters travel: buckets and
// their overlap with the backward, the ZeRO stage and its prefetch,
// sequence parallelism and the element types.
func (r *workloadReader) readGradients() {
	c, t := r.c, r.t
	buckets, ok := c.bucketList(t)
	r.note(ok)
	r.sweep("bucket", buckets)
	if fb, ok := c.optSize(t, "first_bucket"); !ok {
		r.good = false
	} else if fb >= 0 {
		r.base.FirstBucket = fb
	}
	if b, ok := t.boolean("overlap", true); ok {
		r.base.Overlap = b
	} else {
		r.good = false
	}
	zero, ok := c.zeroList(t)
	r.note(ok)
	r.sweep("zero", zero)
	pf, ok := t.integer("prefetch", 1, 0, 1<<10)
	r.note(ok)
	r.base.Prefetch = int(pf)
	if b, ok := t.boolean("sequence_parallel", false); ok {
		r.base.SequenceParallel = b
	} else {
		r.good = false
	}
	for _, k := range []struct {
		name string
		dst  *device.DType
	}{{"grad_dtype", &r.base.GradDType}, {"param_dtype", &r.base.ParamDType}} {
		s, ok := t.str(k.name, false, "bf16", `an element type such as "bf16"`)
		if !ok {
			r.good = false
			continue
		}
		dt, err := device.ParseDType(s)
		if err != nil {
			c.errorf(r.key(k.name), "%v", err)
			r.good = false
			continue
		}
		*k.dst = dt
	}
}

// readCompute reads the optimizer's work, the compute rate (the table's
// flops, else [network]'s, times mfu), and the ranks' skew and
// stragglers.
func (r *workloadReader) readCompute() {
	c, t := r.c, r.t
	if work, ok := c.work(t, "optimizer"); ok {
		r.base.Optimizer = work
	} else {
		r.good = false
	}
	rate := 0.0
	if c.net != nil && c.net.Machine != nil {
		rate = c.net.Machine.FLOPS
	}
	if s, ok := t.str("flops", false, "", `a FLOP rate such as "989TFLOP/s"`); !ok {
		r.good = false
	} else if s != "" {
		f, err := ParseFLOPS(s)
		if err != nil {
			c.errorf(r.key("flops"), "%v", err)
			r.good = false
		}
		rate = f
	}
	mfu, ok := t.float("mfu", 1, 1e-6, 1)
	r.note(ok)
	r.w.FLOPS = rate * mfu
	skew, ok := t.float("skew", 0, 0, 10)
	r.note(ok)
	r.base.Skew = skew
	st, ok := t.integer("stragglers", 0, 0, MaxWorld)
	r.note(ok)
	r.base.Stragglers = int(st)
	sd, ok := t.float("slowdown", 1.5, 1, 1e6)
	r.note(ok)
	r.base.Slowdown = sd
}

// checkFLOPsRate reports a layer that gives its work in FLOPs when no
// rate is known to turn it into time, and returns false if it reported
// one.
func (r *workloadReader) checkFLOPsRate() bool {
	if r.w.FLOPS != 0 {
		return true
	}
	for _, l := range r.base.Layers {
		if l.Forward.FLOPs > 0 || l.Backward.FLOPs > 0 {
			r.c.errorf(r.t.path, "layer %q gives its compute in FLOPs, but no rate is known: set flops in [network] (the presets do) or [workload]", l.Name)
			return false
		}
	}
	return true
}

// combine makes a point of every combination of the swept values, the
// last axis varying fastest, and stops at the first point that cannot
// run or past MaxRangeValues points.
func (r *workloadReader) combine() {
	c, w := r.c, r.w
	idx := make([]int, len(r.axes))
	for _, a := range r.axes {
		w.Axes = append(w.Axes, a.name)
	}
	for {
		p, ok := r.point(idx)
		if !ok {
			return
		}
		if err := c.checkWorkloadPoint(r.t, w, p); err != nil {
			c.errs = append(c.errs, err)
			return
		}
		w.Points = append(w.Points, p)
		if len(w.Points) > MaxRangeValues {
			c.errorf(r.t.path, "the swept keys make more than %d points", MaxRangeValues)
			return
		}
		if !nextCombination(idx, r.axes) {
			return
		}
	}
}

// point is the point of the axes' values idx: the base spec with each
// axis's value set, and its micro-batches from global_batch if given.
// It reports a global batch that does not divide among the point's
// data-parallel micro-batches.
func (r *workloadReader) point(idx []int) (WorkloadPoint, bool) {
	p := WorkloadPoint{Index: len(r.w.Points), Spec: r.base}
	p.Spec.Layers = slices.Clone(r.base.Layers)
	p.Spec.Algorithms = cloneAlgs(r.base.Algorithms)
	for i, a := range r.axes {
		a.values[idx[i]](&p.Spec)
		p.Values = append(p.Values, a.texts[idx[i]])
	}
	if gb := r.globalBatch; gb > 0 {
		per := int64(p.Spec.DP * r.microBatch)
		if gb%per != 0 {
			r.c.errorf(r.key("global_batch"), "%d sequences do not divide among dp %d of micro-batches of %d sequences (layout %v)", gb, p.Spec.DP, r.microBatch, p.Spec.Layout)
			return p, false
		}
		p.Spec.MicroBatches = int(gb / per)
	}
	return p, true
}

// nextCombination advances idx to the next combination of the axes'
// values, the last varying fastest, and returns false after the last.
func nextCombination(idx []int, axes []*workloadAxis) bool {
	i := len(idx) - 1
	for i >= 0 {
		idx[i]++
		if idx[i] < len(axes[i].values) {
			break
		}
		idx[i] = 0
		i--
	}
	return i >= 0
}

func cloneAlgs(m map[workload.Group]map[string]string) map[workload.Group]map[string]string {
	out := map[workload.Group]map[string]string{}
	for g, cs := range m {
		out[g] = map[string]string{}
		for k, v := range cs {
			out[g][k] = v
		}
	}
	return out
}

// firstLine returns the line of err's text that mentions word, or its
// first line.
func firstLine(err error, word string) string {
	lines := strings.Split(err.Error(), "\n")
	for _, l := range lines {
		if strings.Contains(l, word) {
			return l
		}
	}
	return lines[0]
}

// checkWorkloadPoint reports what makes point p impossible, on the line
// of the key that decides it.
func (c *checker) checkWorkloadPoint(t *table, w *Workload, p WorkloadPoint) *Error {
	at := func(k, format string, args ...any) *Error {
		path := joinPath(t.path, k)
		return &Error{File: c.file, Line: lineOf(c.lines, path), Key: path, Msg: fmt.Sprintf(format, args...)}
	}
	desc := strings.Join(p.Values, ", ")
	if desc != "" {
		desc = " (" + desc + ")"
	}
	if _, err := workload.NewPlan(p.Spec); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		switch {
		case strings.Contains(msg, "interleaved"):
			return at("schedule", "%s%s", msg, desc)
		case strings.Contains(msg, "layout"), strings.Contains(msg, "stage"):
			return at("layout", "%s%s", msg, desc)
		case strings.Contains(msg, "stragglers"):
			return at("stragglers", "%s", msg)
		}
		return at("", "%s%s", msg, desc)
	}
	world := p.Spec.World()
	if c.networkOK && c.net != nil && c.net.Sim != nil && !c.worldsOK[world] {
		if err := c.net.Check(world); err != nil {
			return at("layout", "layout %v: a world of %d ranks: the network cannot run it: %v", p.Spec.Layout, world, err)
		}
		if c.worldsOK == nil {
			c.worldsOK = map[int]bool{}
		}
		c.worldsOK[world] = true
	}
	// Algorithms: each must run at its group's size.
	for _, g := range []workload.Group{workload.TP, workload.DP, workload.EP, workload.DPEP} {
		size := groupSize(p.Spec, g)
		for coll, alg := range p.Spec.Algorithms[g] {
			co, err := algos.Lookup(coll)
			if err != nil {
				return at("algorithms."+g.String(), "%v", err)
			}
			a, err := co.Algorithm(alg)
			if err != nil {
				continue // checked when read: the name is some collective's
			}
			if a.PowerOfTwo && size > 1 && bits.OnesCount(uint(size)) != 1 {
				return at("algorithms."+g.String(), "%s %s needs a power-of-two group, and %s has %d ranks (layout %v)", coll, a.Name, g, size, p.Spec.Layout)
			}
		}
	}
	return nil
}

func groupSize(s workload.Spec, g workload.Group) int {
	switch g {
	case workload.TP:
		return s.TP
	case workload.DP:
		return s.DP
	case workload.EP:
		return s.EP
	case workload.DPEP:
		return s.DP / max(s.EP, 1)
	}
	return s.PP
}

// optSize reads an optional size (a whole number of bytes or a size
// string); -1 if absent.
func (c *checker) optSize(t *table, key string) (int64, bool) {
	v, path, ok := t.get(key)
	if !ok {
		return -1, true
	}
	vals, err := sizeElem(path, v)
	if err == nil && len(vals) != 1 {
		err = errors.New("want one size, not a range")
	}
	if err != nil {
		c.errorf(path, "%v", err)
		return 0, false
	}
	return vals[0], true
}

// work reads an amount of compute: key as a time ("2ms") or key_flops
// (a number or "1.2TFLOP").
func (c *checker) work(t *table, key string) (workload.Work, bool) {
	var w workload.Work
	good := true
	if _, set := t.m[key]; set {
		d, ok := t.duration(key, false)
		good = ok
		w.Time = time.Duration(d / 1000)
		if ok && d%1000 != 0 {
			c.errorf(joinPath(t.path, key), "compute is timed to the nanosecond: %v is not a whole number of them", d)
			good = false
		}
	} else {
		t.known = append(t.known, key)
	}
	fk := key + "_flops"
	v, path, ok := t.get(fk)
	if ok {
		var f float64
		var err error
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		case string:
			f, err = ParseFLOPs(x)
		default:
			err = fmt.Errorf("want a number of FLOPs (1.2e12 or \"1.2TFLOP\"), got %s", typeName(v))
		}
		if err == nil && (f < 0 || math.IsNaN(f) || f > 1e30) {
			err = fmt.Errorf("%g FLOPs: want 0 to 1e30", f)
		}
		if err != nil {
			c.errorf(path, "%v", err)
			good = false
		}
		if w.Time > 0 {
			c.errorf(path, "give %s as a time or as FLOPs (%s), not both", key, fk)
			good = false
		}
		w.FLOPs = f
	}
	return w, good
}

// transformer reads the transformer inline table.
func (c *checker) transformer(t *table) (workload.Transformer, bool) {
	var tr workload.Transformer
	good := true
	req := func(k string, lo, hi int64) int {
		n, ok := t.requiredInt(k, lo, hi, "a whole number")
		good = good && ok
		return int(n)
	}
	tr.Layers = req("layers", 1, 1<<16)
	tr.Hidden = req("hidden", 1, 1<<22)
	tr.Heads = req("heads", 1, 1<<16)
	tr.Seq = req("seq", 1, 1<<24)
	tr.Vocab = req("vocab", 1, 1<<24)
	opt := func(k string, def, lo, hi int64) int {
		n, ok := t.integer(k, def, lo, hi)
		good = good && ok
		return int(n)
	}
	tr.MicroBatch = opt("micro_batch", 1, 1, 1<<16)
	tr.FFN = opt("ffn", 0, 0, 1<<24)
	if s, ok := t.str("dtype", false, "bf16", `an element type such as "bf16"`); ok {
		dt, err := device.ParseDType(s)
		if err != nil {
			c.errorf(joinPath(t.path, "dtype"), "%v", err)
			good = false
		}
		tr.DType = dt
	} else {
		good = false
	}
	t.finish()
	return tr, good
}

// layer reads a [[workload.layer]] table: count copies of one layer.
func (c *checker) layer(t *table) ([]workload.Layer, bool) {
	good := true
	l := workload.Layer{}
	name, ok := t.str("name", false, "", "a string")
	good = good && ok
	l.Name = name
	count, ok := t.integer("count", 1, 1, 1<<16)
	good = good && ok
	for _, k := range []struct {
		name string
		dst  *int64
	}{{"params", &l.Params}, {"expert_params", &l.ExpertParams}} {
		n, ok := t.integer(k.name, 0, 0, 1<<50)
		good = good && ok
		*k.dst = n
	}
	for _, k := range []struct {
		name string
		dst  *int64
	}{{"activation", &l.Activation}, {"alltoall", &l.Alltoall}} {
		n, ok := c.optSize(t, k.name)
		good = good && ok
		*k.dst = max(n, 0)
	}
	tc, ok := t.integer("tp_collectives", 0, 0, 64)
	good = good && ok
	l.TPCollectives = int(tc)
	a2a, ok := t.integer("alltoalls", 0, 0, 64)
	good = good && ok
	l.Alltoalls = int(a2a)
	if e, ok := t.boolean("edge", false); ok {
		l.Edge = e
	} else {
		good = false
	}
	if w, ok := c.work(t, "forward"); ok {
		l.Forward = w
	} else {
		good = false
	}
	if w, ok := c.work(t, "backward"); ok {
		l.Backward = w
	} else {
		good = false
	}
	if l.ExpertParams > l.Params {
		c.errorf(joinPath(t.path, "expert_params"), "%d expert parameters of %d in all", l.ExpertParams, l.Params)
		good = false
	}
	if l.Alltoalls > 0 && l.Alltoall == 0 {
		c.errorf(joinPath(t.path, "alltoalls"), "alltoalls without an alltoall size")
		good = false
	}
	t.finish()
	out := make([]workload.Layer, count)
	for i := range out {
		out[i] = l
		if count > 1 {
			out[i].Name = fmt.Sprintf("%s %d", l.Name, i)
		}
	}
	return out, good
}

// readAICB reads an AICB file named relative to the scenario.
func (c *checker) readAICB(name string) (*workload.AICB, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(c.file), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, fmt.Errorf("cannot read AICB file %s: %s", path, msg)
	}
	c.hash.Write(data)
	return workload.ReadAICB(path, bytes.NewReader(data))
}

// layouts reads the layout key: one layout or a list.
func (c *checker) layouts(t *table, required bool) (*workloadAxis, bool) {
	if _, set := t.m["layout"]; !set && !required {
		t.known = append(t.known, "layout")
		return nil, true
	}
	names, ok := t.stringList("layout", `a layout such as "dp8-tp8-pp1", or a list of them`)
	if !ok {
		return nil, false
	}
	a := &workloadAxis{}
	for _, n := range names {
		l, err := workload.ParseLayout(n)
		if err != nil {
			c.errorf(joinPath(t.path, "layout"), "%v", err)
			return nil, false
		}
		if slices.Contains(a.texts, l.String()) {
			c.errorf(joinPath(t.path, "layout"), "layout %s is listed twice", l)
			return nil, false
		}
		a.texts = append(a.texts, l.String())
		a.values = append(a.values, func(s *workload.Spec) { order := s.Order; s.Layout = l; s.Order = order })
	}
	return a, true
}

// enumList reads a key that is one of names, or a list of them.
func (c *checker) enumList(t *table, key string, names []string, set func(string) func(*workload.Spec)) (*workloadAxis, bool) {
	if _, ok := t.m[key]; !ok {
		t.known = append(t.known, key)
		return nil, true
	}
	vals, ok := t.stringList(key, "one of "+strings.Join(names, ", ")+", or a list of them")
	if !ok {
		return nil, false
	}
	a := &workloadAxis{}
	for _, v := range vals {
		if !slices.Contains(names, v) {
			c.errorf(joinPath(t.path, key), "unknown %s %q (want %s)", key, v, strings.Join(names, ", "))
			return nil, false
		}
		if slices.Contains(a.texts, v) {
			c.errorf(joinPath(t.path, key), "%q is listed twice", v)
			return nil, false
		}
		a.texts = append(a.texts, v)
		a.values = append(a.values, set(v))
	}
	return a, true
}

// bucketList reads bucket: a size, a range or a list.
func (c *checker) bucketList(t *table) (*workloadAxis, bool) {
	if _, ok := t.m["bucket"]; !ok {
		t.known = append(t.known, "bucket")
		return nil, true
	}
	sizes, ok := t.list("bucket", `bucket sizes: "25MiB", ["1MiB", "4MiB"] or "1MiB..256MiB x2"`, sizeElem)
	if !ok {
		return nil, false
	}
	a := &workloadAxis{}
	for _, b := range sizes {
		text := units.FormatBytesCompact(b)
		if slices.Contains(a.texts, text) {
			c.errorf(joinPath(t.path, "bucket"), "bucket %s is listed twice", text)
			return nil, false
		}
		a.texts = append(a.texts, text)
		a.values = append(a.values, func(s *workload.Spec) { s.Bucket = b })
	}
	return a, true
}

// zeroList reads zero: a stage or a list.
func (c *checker) zeroList(t *table) (*workloadAxis, bool) {
	v, path, ok := t.get("zero")
	if !ok {
		return nil, true
	}
	arr, isArr := v.([]any)
	if !isArr {
		arr = []any{v}
	}
	a := &workloadAxis{}
	for _, x := range arr {
		n, isInt := x.(int64)
		if !isInt || n < 0 || n > 3 {
			c.errorf(path, "want a ZeRO stage 0 to 3, or a list of them, got %s", typeName(x))
			return nil, false
		}
		text := fmt.Sprint(n)
		if slices.Contains(a.texts, text) {
			c.errorf(path, "ZeRO stage %d is listed twice", n)
			return nil, false
		}
		a.texts = append(a.texts, text)
		a.values = append(a.values, func(s *workload.Spec) { s.ZeRO = int(n) })
	}
	if len(arr) == 0 {
		c.errorf(path, "empty list")
		return nil, false
	}
	return a, true
}

// groupCollectives are the collectives a group's streams run.
var groupCollectives = map[workload.Group][]string{
	workload.TP:   {"allreduce", "reduce_scatter", "allgather"},
	workload.DP:   {"allreduce", "reduce_scatter", "allgather"},
	workload.EP:   {"alltoall"},
	workload.DPEP: {"allreduce"},
}

// workloadAlgorithms reads [workload.algorithms]: per group an algorithm
// name, a table of them by collective, or a list of either (an axis).
func (c *checker) workloadAlgorithms(t *table) ([]*workloadAxis, bool) {
	at := t.subtable("algorithms", false, "[workload.algorithms]", `a table of algorithms by process group: [workload.algorithms] with dp = "ring"`)
	if at == nil {
		return nil, true
	}
	var out []*workloadAxis
	good := true
	names := keysOf(at.m)
	for _, gname := range names {
		v, path, _ := at.get(gname)
		g, err := workload.ParseGroup(gname)
		if err != nil || g == workload.PP {
			c.errorf(path, "unknown process group %q (want tp, dp, ep or dp_ep: pipeline messages are point to point)", gname)
			good = false
			continue
		}
		arr, isArr := v.([]any)
		if !isArr {
			arr = []any{v}
		}
		a := &workloadAxis{}
		for _, x := range arr {
			choice, text, err := groupChoice(g, x)
			if err != nil {
				c.errorf(path, "%v", err)
				good = false
				continue
			}
			if slices.Contains(a.texts, text) {
				c.errorf(path, "%s is listed twice", text)
				good = false
				continue
			}
			a.texts = append(a.texts, text)
			a.values = append(a.values, func(s *workload.Spec) {
				if s.Algorithms == nil {
					s.Algorithms = map[workload.Group]map[string]string{}
				}
				s.Algorithms[g] = choice
			})
		}
		if len(arr) == 0 {
			c.errorf(path, "empty list")
			good = false
		}
		if len(a.values) > 0 {
			a.name = gname
			out = append(out, a)
		}
	}
	at.finish()
	return out, good
}

// groupChoice reads one choice of a group's algorithms: a name for all
// its collectives that have one by it, or a table by collective; text
// names it in results ("ring", "allreduce=ring,allgather=bruck").
func groupChoice(g workload.Group, v any) (map[string]string, string, error) {
	out := map[string]string{}
	switch x := v.(type) {
	case string:
		for _, coll := range groupCollectives[g] {
			co, err := algos.Lookup(coll)
			if err != nil {
				continue
			}
			if _, err := co.Algorithm(x); err == nil || x == "auto" {
				out[coll] = x
			}
		}
		if len(out) == 0 {
			return nil, "", fmt.Errorf("no collective of the %s group (%s) has an algorithm %q%s", g, strings.Join(groupCollectives[g], ", "), x, UnknownAlgorithmHint)
		}
		return out, x, nil
	case map[string]any:
		var parts []string
		for _, coll := range keysOf(x) {
			name, ok := x[coll].(string)
			if !ok {
				return nil, "", fmt.Errorf("%s: want an algorithm's name, got %s", coll, typeName(x[coll]))
			}
			if !slices.Contains(groupCollectives[g], coll) {
				return nil, "", fmt.Errorf("the %s group runs no %s (it runs %s)", g, coll, strings.Join(groupCollectives[g], ", "))
			}
			co, err := algos.Lookup(coll)
			if err != nil {
				return nil, "", err
			}
			if _, err := co.Algorithm(name); err != nil && name != "auto" {
				return nil, "", fmt.Errorf("%w%s", err, UnknownAlgorithmHint)
			}
			out[coll] = name
			parts = append(parts, coll+"="+name)
		}
		sort.Strings(parts)
		return out, strings.Join(parts, ","), nil
	}
	return nil, "", fmt.Errorf("want an algorithm's name or a table of them by collective, got %s", typeName(v))
}
