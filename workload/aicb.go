package workload

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/internal/textdist"
)

// AICB is a workload file of SimAI's AICB (github.com/aliyun/aicb, read
// by SimAI's astra-sim Workload::initialize_workload): a header line
// with the parallel sizes, a line with the number of layers, then one
// line per layer with its forward, input-gradient and weight-gradient
// compute and communication:
//
//	HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 2 vpp: 20 ga: 16 all_gpus: 128 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 2621440
//	3
//	grad_norm	-1	1	ALLGATHER	1571307520	1	NONE	0	1	REDUCESCATTER	3142615040	100
//	attention_column	-1	752000	ALLGATHER	20971520	752000	NONE	0	1	NONE	0	100
//	mlp_row	-1	750000	REDUCESCATTER	20971520	750000	NONE	20971520	1	NONE	0	100
//
// A layer's fields are its name, a dependency (-1), then for each of the
// forward, the input gradient and the weight gradient its compute time in
// nanoseconds (SimAI's ticks), its collective and its size in bytes (as
// nccl-tests counts them), and last the weight update's time (unused
// here). A collective is NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER,
// ALLTOALL or BROADCAST, on the tensor-parallel group in the forward and
// input-gradient phases and on the data-parallel group in the
// weight-gradient phase, unless suffixed _EP (the expert-parallel group)
// or _DP_EP (the experts' data-parallel group), as SimAI maps them. The
// header's policy is HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER,
// DATA or MICRO; its keys model_parallel_NPU_group (TP), ep (or
// expert_parallel_npu_group), pp, vpp, ga (micro-batches), all_gpus
// (the world), pp_comm (the bytes a micro-batch sends between stages),
// checkpoints and checkpoint_initiates (which list layers, ignored here);
// other keys, and the value after each, are skipped, as SimAI does.
//
// SimAI runs the layers' list on every rank and charges pipeline
// parallelism by a formula; here Spec splits the layers among the stages
// (layers with no compute, as AICB's gradient-norm and embedding lines,
// go with their neighbours) and runs the schedule, sending pp_comm bytes
// between stages. AICB writes vpp as the number of layers, so it is read
// but unused: the interleaved schedule is the scenario's choice.
type AICB struct {
	// Policy is the header's first word.
	Policy string
	// The header's sizes (1 where absent), GA its micro-batches, World
	// all_gpus (0 where absent), PPComm pp_comm.
	TP, EP, PP, VPP, GA, World int
	PPComm                     int64
	Layers                     []Layer
	// Ignored are the header's keys this reader does not know, each with
	// the one value after it, skipped as SimAI skips them.
	Ignored []string
}

// AICBError is a problem of an AICB file, at a line.
type AICBError struct {
	File string
	Line int
	Msg  string
}

func (e *AICBError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// maxAICBLayers bounds the layer count a file may declare, so that a bad
// count cannot make the reader allocate without limit.
const maxAICBLayers = 1 << 20

// aicbKeys are the header's keys this reader knows.
var aicbKeys = []string{"model_parallel_NPU_group", "ep", "expert_parallel_npu_group", "pp", "vpp", "ga", "all_gpus",
	"checkpoints", "checkpoint_initiates", "pp_comm"}

var aicbPolicies = []string{"HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER", "DATA", "MICRO"}

// ReadAICB reads an AICB workload file; file names it in errors.
func ReadAICB(file string, r io.Reader) (*AICB, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	fail := func(format string, args ...any) error {
		return &AICBError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	next := func() (string, bool) {
		for sc.Scan() {
			line++
			if t := strings.TrimSpace(sc.Text()); t != "" {
				return t, true
			}
		}
		return "", false
	}
	head, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, fail("%v", err)
		}
		line = max(line, 1)
		return nil, fail("empty file: want a header such as HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ...")
	}
	a := &AICB{TP: 1, EP: 1, PP: 1, VPP: 1, GA: 1}
	if err := a.header(strings.Fields(head)); err != nil {
		return nil, fail("%v", err)
	}
	countLine, ok := next()
	if !ok {
		return nil, fail("no layer count after the header")
	}
	count, err := strconv.Atoi(countLine)
	if err != nil || count < 0 || count > maxAICBLayers {
		return nil, fail("layer count %q: want a whole number from 0 to %d", countLine, maxAICBLayers)
	}
	for range count {
		text, ok := next()
		if !ok {
			if err := sc.Err(); err != nil {
				return nil, fail("%v", err)
			}
			return nil, fail("the file ends after %d of its %d layers", len(a.Layers), count)
		}
		l, err := aicbLayer(strings.Fields(text))
		if err != nil {
			return nil, fail("%v", err)
		}
		l.Activation = a.PPComm
		a.Layers = append(a.Layers, l)
	}
	if text, ok := next(); ok {
		return nil, fail("more lines than the %d layers the file declares: %.40q", count, text)
	}
	if err := sc.Err(); err != nil {
		return nil, fail("%v", err)
	}
	return a, nil
}

// header reads the header's words.
func (a *AICB) header(words []string) error {
	a.Policy = words[0]
	known := false
	for _, p := range aicbPolicies {
		known = known || p == a.Policy
	}
	if !known {
		return fmt.Errorf("unknown policy %q (want one of %s)", a.Policy, strings.Join(aicbPolicies, ", "))
	}
	ints := map[string]*int{"model_parallel_NPU_group": &a.TP, "ep": &a.EP, "expert_parallel_npu_group": &a.EP,
		"pp": &a.PP, "vpp": &a.VPP, "ga": &a.GA, "all_gpus": &a.World}
	for i := 1; i < len(words); i++ {
		key := strings.TrimSuffix(words[i], ":")
		if i+1 >= len(words) {
			return fmt.Errorf("header key %q has no value", key)
		}
		val := words[i+1]
		i++
		switch key {
		case "checkpoints", "checkpoint_initiates":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > len(words) {
				return fmt.Errorf("header %s %q: want a count of the layers listed after it", key, val)
			}
			i += n // the layers listed
			if i >= len(words) {
				return fmt.Errorf("header %s lists %d layers, but the line ends", key, n)
			}
			continue
		case "pp_comm":
			// AICB writes a float when it divides by TP.
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f < 0 || f > 1<<50 {
				return fmt.Errorf("header pp_comm %q: want a size in bytes", val)
			}
			a.PPComm = int64(f)
			continue
		}
		p, ok := ints[key]
		if !ok {
			// SimAI skips the keys it does not know (AICB's inference
			// files write mode:, for one), and so does this reader, but
			// for a likely misspelling of one it knows, which SimAI
			// would skip too, silently changing the run.
			for _, k := range aicbKeys {
				if strings.EqualFold(key, k) || len(key) > 3 && textdist.Edit(strings.ToLower(key), strings.ToLower(k)) <= 2 {
					return fmt.Errorf("unknown header key %q; did you mean %q?", words[i-1], k+":")
				}
			}
			a.Ignored = append(a.Ignored, key)
			continue
		}
		n, err := strconv.Atoi(val)
		lo := 1
		if key == "all_gpus" {
			lo = 0
		}
		if err != nil || n < lo || n > 1<<20 {
			return fmt.Errorf("header %s %q: want a whole number from %d to %d", key, val, lo, 1<<20)
		}
		*p = n
	}
	return nil
}

// aicbLayer reads a layer's fields.
func aicbLayer(f []string) (Layer, error) {
	if len(f) != 12 {
		return Layer{}, fmt.Errorf("a layer has 12 fields (name, dependency, then compute, collective and size for the forward, input gradient and weight gradient, then the update time), not %d", len(f))
	}
	e := &Explicit{}
	num := func(i int, what string) (int64, error) {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || n < 0 || n > 1<<50 {
			return 0, fmt.Errorf("field %d (%s) %q: want a whole number from 0 to 2^50", i+1, what, f[i])
		}
		return n, nil
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return Layer{}, fmt.Errorf("field 2 (dependency) %q: want a whole number", f[1])
	}
	phases := []struct {
		name   string
		work   *Work
		comms  *[]Comm
		deflt  Group
		fields int
	}{
		{"forward", &e.Forward, &e.FwdComms, TP, 2},
		{"input gradient", &e.InputGrad, &e.InputComms, TP, 5},
		{"weight gradient", &e.WeightGrad, &e.WeightComms, DP, 8},
	}
	edge := true
	for _, ph := range phases {
		t, err := num(ph.fields, ph.name+" compute")
		if err != nil {
			return Layer{}, err
		}
		*ph.work = Work{Time: time.Duration(t)}
		edge = edge && t <= 1
		size, err := num(ph.fields+2, ph.name+" size")
		if err != nil {
			return Layer{}, err
		}
		c, err := aicbComm(f[ph.fields+1], ph.deflt)
		if err != nil {
			return Layer{}, fmt.Errorf("field %d (%s collective): %v", ph.fields+2, ph.name, err)
		}
		if c.Collective != "" && size > 0 {
			c.Bytes = size
			*ph.comms = append(*ph.comms, c)
		}
	}
	if _, err := num(11, "update time"); err != nil {
		return Layer{}, err
	}
	return Layer{Name: f[0], Explicit: e, Edge: edge}, nil
}

// aicbComm reads a collective's name: its collective ("" for NONE) and
// group.
func aicbComm(s string, deflt Group) (Comm, error) {
	c := Comm{Group: deflt}
	base := s
	switch {
	case strings.HasSuffix(s, "_DP_EP"):
		c.Group, base = DPEP, strings.TrimSuffix(s, "_DP_EP")
	case strings.HasSuffix(s, "_EP"):
		c.Group, base = EP, strings.TrimSuffix(s, "_EP")
	}
	switch base {
	case "NONE":
		return Comm{}, nil
	case "ALLREDUCE":
		c.Collective = "allreduce"
	case "ALLGATHER":
		c.Collective = "allgather"
	case "REDUCESCATTER":
		c.Collective = "reduce_scatter"
	case "ALLTOALL":
		c.Collective = "alltoall"
	case "BROADCAST":
		c.Collective = "broadcast"
	case "ALLREDUCEALLTOALL":
		return Comm{}, fmt.Errorf("%s is not supported (an allreduce then an alltoall in one call)", s)
	default:
		return Comm{}, fmt.Errorf("unknown collective %q (want NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or BROADCAST, optionally with _EP or _DP_EP)", s)
	}
	return c, nil
}

// Spec returns the step the file describes: its layers, its layout
// (DP = all_gpus / (TP·PP); 1 without all_gpus), ga micro-batches, 1F1B
// when it has pipeline stages. Overlap is on, as in SimAI, where the
// weight-gradient collectives run beside the compute.
func (a *AICB) Spec() Spec {
	dp := 1
	if a.World > 0 && a.World%(a.TP*a.PP) == 0 {
		dp = a.World / (a.TP * a.PP)
	}
	s := Spec{Layers: a.Layers, Layout: Layout{DP: dp, TP: a.TP, PP: a.PP, EP: a.EP}, MicroBatches: a.GA, Overlap: true}
	if a.PP > 1 {
		s.Schedule = OneFOneB
	}
	return s
}
