package workload

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Work is an amount of compute: a time, or a number of floating-point
// operations that the device's rate turns into a time. When both are
// given the time wins.
type Work struct {
	Time  time.Duration
	FLOPs float64
}

// IsZero reports whether w is no work.
func (w Work) IsZero() bool { return w.Time == 0 && w.FLOPs == 0 }

// Scale returns w times f.
func (w Work) Scale(f float64) Work {
	return Work{Time: time.Duration(math.Round(float64(w.Time) * f)), FLOPs: w.FLOPs * f}
}

// Add returns w + x.
func (w Work) Add(x Work) Work { return Work{Time: w.Time + x.Time, FLOPs: w.FLOPs + x.FLOPs} }

// Seconds is w's time at rate FLOP/s (rate is not needed for a time).
func (w Work) Seconds(rate float64) float64 {
	if w.Time > 0 || w.FLOPs == 0 {
		return w.Time.Seconds()
	}
	return w.FLOPs / rate
}

func (w Work) String() string {
	switch {
	case w.Time > 0:
		return w.Time.String()
	case w.FLOPs > 0:
		return fmt.Sprintf("%g FLOP", w.FLOPs)
	}
	return "0"
}

// Group is a process group of a parallel layout.
type Group uint8

const (
	// TP is tensor parallelism: the ranks that share a layer's weights.
	TP Group = iota
	// DP is data parallelism: the replicas of a stage, which reduce their
	// gradients.
	DP
	// PP is pipeline parallelism: the stages, which pass activations and
	// their gradients point to point.
	PP
	// EP is expert parallelism: ranks of a DP group that hold different
	// experts of a mixture-of-experts layer and exchange tokens with
	// alltoall.
	EP
	// DPEP is the replicas of one expert: the ranks of a DP group with
	// the same place in their EP group (SimAI's DP_EP).
	DPEP
)

var groupNames = [...]string{"tp", "dp", "pp", "ep", "dp_ep"}

func (g Group) String() string {
	if int(g) < len(groupNames) {
		return groupNames[g]
	}
	return fmt.Sprintf("group(%d)", uint8(g))
}

// ParseGroup returns the group named s ("tp", "dp", "pp", "ep", "dp_ep").
func ParseGroup(s string) (Group, error) {
	for i, n := range groupNames {
		if n == s {
			return Group(i), nil
		}
	}
	return 0, fmt.Errorf("unknown process group %q (want %s)", s, strings.Join(groupNames[:], ", "))
}

// Groups lists the process groups in order.
func Groups() []Group { return []Group{TP, DP, PP, EP, DPEP} }

// Comm is a collective a layer runs, on one process group, of Bytes as
// nccl-tests counts them (the whole buffer: an allgather's output, a
// reduce_scatter's input, an alltoall's send buffer).
type Comm struct {
	Group      Group
	Collective string
	Bytes      int64
}

// Layer is one layer of a model, or one line of an AICB workload.
type Layer struct {
	Name string
	// Params is the number of parameters of the whole layer (all TP
	// ranks together); TP ranks hold Params/TP each.
	Params int64
	// ExpertParams is how many of Params belong to experts of a
	// mixture-of-experts layer, spread over the EP group: their gradients
	// are reduced over the DP_EP group, once per step, apart from the
	// buckets.
	ExpertParams int64
	// Activation is the bytes of the layer's output for one micro-batch,
	// whole (all TP ranks together): the size of its tensor-parallel
	// collectives and, divided by TP, of the point-to-point message to
	// the next pipeline stage.
	Activation int64
	// Forward and Backward are the layer's compute for one micro-batch on
	// one device; TP ranks take 1/TP of it each. Backward defaults to
	// twice Forward where it is zero and Forward is not.
	Forward, Backward Work
	// TPCollectives is the number of tensor-parallel collectives of the
	// layer in each of its forward and backward passes (Megatron's
	// transformer layer: 2, after attention and after the MLP), each of
	// Activation bytes.
	TPCollectives int
	// Alltoalls is the number of alltoalls of Alltoall bytes over the EP
	// group in each pass (a mixture-of-experts layer: 2, dispatch and
	// combine).
	Alltoalls int
	Alltoall  int64
	// Edge marks layers that are not split among pipeline stages as the
	// others are (embedding, output head): an edge layer goes with its
	// neighbour, the first stage's or the last's.
	Edge bool

	// Explicit, if not nil, gives the layer's work on one rank as it is,
	// with the collectives of each phase: what an AICB workload file
	// describes. Params, Activation, Forward, Backward and the counts
	// above are then unused.
	Explicit *Explicit
}

// Explicit is one rank's work for a layer, as SimAI's AICB files give it:
// forward, input-gradient and weight-gradient compute, each followed by
// its collectives; the forward and input-gradient collectives are on the
// critical path, the weight-gradient ones run once per step, when the
// layer's last backward is done, beside the compute.
type Explicit struct {
	Forward, InputGrad, WeightGrad    Work
	FwdComms, InputComms, WeightComms []Comm
}

// Schedule is a pipeline schedule.
type Schedule uint8

const (
	// GPipe runs every micro-batch's forward, then every backward.
	GPipe Schedule = iota
	// OneFOneB is PipeDream-Flush's 1F1B: p-s-1 warm-up forwards on stage
	// s, then a forward and a backward in turn, then the rest of the
	// backwards.
	OneFOneB
	// Interleaved is Megatron's interleaved 1F1B: each stage holds Chunks
	// model chunks (virtual stages), which cuts the bubble by Chunks.
	Interleaved
)

var scheduleNames = [...]string{"gpipe", "1f1b", "interleaved"}

func (s Schedule) String() string {
	if int(s) < len(scheduleNames) {
		return scheduleNames[s]
	}
	return fmt.Sprintf("schedule(%d)", uint8(s))
}

// ParseSchedule returns the schedule named s ("gpipe", "1f1b",
// "interleaved").
func ParseSchedule(s string) (Schedule, error) {
	for i, n := range scheduleNames {
		if n == s {
			return Schedule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown pipeline schedule %q (want gpipe, 1f1b or interleaved)", s)
}

// Layout is a parallel layout: the sizes of the dimensions and the order
// of ranks.
type Layout struct {
	DP, TP, PP int
	// EP is the expert-parallel size, a divisor of DP (1: none).
	EP int
	// Order is the order of the dimensions in rank numbers, fastest
	// first: "tp-dp-pp" (the default: TP ranks are neighbours, inside a
	// node; then DP; PP slowest), or any order of tp, dp and pp.
	Order string
}

// World is the number of ranks of the layout.
func (l Layout) World() int { return l.DP * l.TP * l.PP }

func (l Layout) String() string {
	s := fmt.Sprintf("dp%d-tp%d-pp%d", l.DP, l.TP, l.PP)
	if l.EP > 1 {
		s += fmt.Sprintf("-ep%d", l.EP)
	}
	return s
}

// ParseLayout reads a layout written as Layout.String does
// ("dp8-tp8-pp1", "dp16-tp2-pp2-ep4"); dimensions left out are 1.
func ParseLayout(s string) (Layout, error) {
	l := Layout{DP: 1, TP: 1, PP: 1, EP: 1}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, "-") {
		var name string
		var n int
		i := strings.IndexFunc(part, func(r rune) bool { return r >= '0' && r <= '9' })
		if i <= 0 {
			return Layout{}, fmt.Errorf("layout %q: %q is not a dimension and its size, such as dp8", s, part)
		}
		name = part[:i]
		if _, err := fmt.Sscanf(part[i:], "%d", &n); err != nil || fmt.Sprint(n) != part[i:] || n < 1 {
			return Layout{}, fmt.Errorf("layout %q: %q: want a size of at least 1", s, part)
		}
		if seen[name] {
			return Layout{}, fmt.Errorf("layout %q: %s is given twice", s, name)
		}
		seen[name] = true
		switch name {
		case "dp":
			l.DP = n
		case "tp":
			l.TP = n
		case "pp":
			l.PP = n
		case "ep":
			l.EP = n
		default:
			return Layout{}, fmt.Errorf("layout %q: unknown dimension %q (want dp, tp, pp, ep)", s, name)
		}
	}
	return l, nil
}

// MaxWorld is the largest world a Spec may have: the simulator's own
// limit (scenario.MaxWorld, which this package cannot import), so that a
// training step runs on any world a collective sweep runs on.
const MaxWorld = 1 << 24

// Spec describes a training step: the model, its parallel layout, and
// how it trains.
type Spec struct {
	// Layers are the model's layers, first to last.
	Layers []Layer
	Layout
	// MicroBatches is the number of micro-batches of a step on each
	// pipeline (gradient accumulation); at least 1.
	MicroBatches int
	// Schedule is the pipeline schedule (with PP > 1), and Chunks the
	// model chunks of each stage under Interleaved (at least 2 there;
	// else 1).
	Schedule Schedule
	Chunks   int

	// Bucket is the size in bytes of the gradient buckets of data
	// parallelism, cut from the gradients in reverse layer order (as
	// PyTorch's DDP fills its buckets and Megatron its contiguous buffer);
	// FirstBucket is the first bucket's (PyTorch's 1 MiB). A bucket is
	// reduced once every layer it holds has its gradients. 0 makes one
	// bucket of everything.
	Bucket, FirstBucket int64
	// Overlap launches each bucket's collective on the DP stream as soon
	// as it is ready, beside the backward compute; without it every DP
	// collective runs on the critical path, after the gradients it needs
	// (nothing overlaps).
	Overlap bool
	// ZeRO is the ZeRO stage: 0 reduces gradient buckets with allreduce
	// (DDP); 1 and 2 reduce-scatter them and allgather the updated
	// parameters at the start of the next step, bucket by bucket before
	// the layers that need them (Megatron's distributed optimizer); 3
	// (FSDP) allgathers each layer's parameters before its forward and
	// again before its backward, Prefetch layers ahead, and
	// reduce-scatters its gradients.
	ZeRO     int
	Prefetch int
	// GradDType and ParamDType are the element types of gradients and of
	// the parameters ZeRO gathers; the zero value is f16, of bf16's two
	// bytes (on phantom data only sizes count).
	GradDType, ParamDType device.DType
	// SequenceParallel replaces each tensor-parallel allreduce by a
	// reduce-scatter and an allgather of the same size (Megatron's
	// sequence parallelism).
	SequenceParallel bool
	// Optimizer is the optimizer's compute for the whole model on one
	// device, per step: ranks take their share (1/(TP PP), and 1/DP more
	// under ZeRO).
	Optimizer Work

	// Algorithms chooses, per process group, the algorithm of each
	// collective by catalogue name (ring, nccl_tree_simple, ...; "auto"
	// or absent: the Comm's selector, the scenario's tuning table).
	Algorithms map[Group]map[string]string

	// Skew is the relative standard deviation of the ranks' compute
	// speeds: each rank's compute takes (1 + Skew·N(0,1)) times as long,
	// at least a tenth, drawn once per rank from Seed. Stragglers ranks,
	// drawn from Seed, compute Slowdown times slower still.
	Skew       float64
	Stragglers int
	Slowdown   float64
	Seed       uint64
}

// Validate reports what makes s impossible to run, every problem at once.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(s.Layers) == 0 {
		bad("the model has no layers")
	}
	if s.DP < 1 || s.TP < 1 || s.PP < 1 || s.EP < 1 {
		bad("layout %v: every size must be at least 1", s.Layout)
	} else if s.DP > MaxWorld || s.TP > MaxWorld || s.PP > MaxWorld || s.World() > MaxWorld {
		bad("layout %v: more than %d ranks", s.Layout, MaxWorld)
	} else if s.DP%s.EP != 0 {
		bad("layout %v: ep %d does not divide dp %d", s.Layout, s.EP, s.DP)
	}
	if _, err := orderOf(s.Order); err != nil {
		bad("%v", err)
	}
	if s.MicroBatches < 1 || s.MicroBatches > 1<<20 {
		bad("micro_batches %d: want 1 to %d", s.MicroBatches, 1<<20)
	}
	chunks := s.chunks()
	if s.Schedule == Interleaved && s.PP > 1 {
		if s.Chunks < 2 {
			bad("the interleaved schedule needs at least 2 chunks a stage, not %d", s.Chunks)
		}
		if s.MicroBatches%s.PP != 0 {
			bad("the interleaved schedule needs micro_batches (%d) a multiple of pp (%d), as Megatron's does", s.MicroBatches, s.PP)
		}
	}
	if n := s.splitLayers(); n > 0 && n < s.PP*chunks {
		bad("%d layers to split (edge layers aside) cannot fill %d pipeline stages of %d chunks", n, s.PP, chunks)
	}
	if n := len(device.DTypes()); int(s.GradDType) >= n || int(s.ParamDType) >= n {
		bad("unknown gradient or parameter element type")
	}
	if s.ZeRO < 0 || s.ZeRO > 3 {
		bad("zero %d: want 0, 1, 2 or 3", s.ZeRO)
	}
	if s.Prefetch < 0 {
		bad("prefetch %d: want 0 or more", s.Prefetch)
	}
	if s.Bucket < 0 || s.FirstBucket < 0 {
		bad("bucket sizes must not be negative")
	}
	if s.Skew < 0 || math.IsNaN(s.Skew) {
		bad("skew %g: want 0 or more", s.Skew)
	}
	if s.Stragglers < 0 || s.Stragglers > s.World() {
		bad("stragglers %d: want 0 to the world's %d ranks", s.Stragglers, s.World())
	}
	if s.Stragglers > 0 && !(s.Slowdown >= 1) {
		bad("slowdown %g: stragglers need a slowdown of at least 1", s.Slowdown)
	}
	for i, l := range s.Layers {
		if l.Params < 0 || l.ExpertParams < 0 || l.ExpertParams > l.Params || l.Activation < 0 || l.Alltoall < 0 || l.TPCollectives < 0 || l.Alltoalls < 0 {
			bad("layer %d (%s): sizes and counts must not be negative, expert params at most params", i, l.Name)
		}
		if l.Forward.Time < 0 || l.Backward.Time < 0 || l.Forward.FLOPs < 0 || l.Backward.FLOPs < 0 {
			bad("layer %d (%s): negative compute", i, l.Name)
		}
	}
	return errors.Join(errs...)
}

// chunks is the number of model chunks a stage holds.
func (s *Spec) chunks() int {
	if s.Schedule == Interleaved && s.PP > 1 {
		return max(s.Chunks, 1)
	}
	return 1
}

// splitLayers counts the layers that are split among stages.
func (s *Spec) splitLayers() int {
	n := 0
	for _, l := range s.Layers {
		if !l.Edge {
			n++
		}
	}
	return n
}

// orderOf reads a rank order: the position, fastest first, of tp, dp and
// pp.
func orderOf(order string) ([3]int, error) {
	if order == "" {
		order = "tp-dp-pp"
	}
	parts := strings.Split(order, "-")
	var pos [3]int // by dimension: tp, dp, pp
	seen := map[string]bool{}
	if len(parts) != 3 {
		return pos, fmt.Errorf("order %q: want tp, dp and pp in some order, such as \"tp-dp-pp\"", order)
	}
	for i, p := range parts {
		d := map[string]int{"tp": 0, "dp": 1, "pp": 2}
		k, ok := d[p]
		if !ok || seen[p] {
			return pos, fmt.Errorf("order %q: want tp, dp and pp once each, such as \"tp-dp-pp\"", order)
		}
		seen[p] = true
		pos[k] = i
	}
	return pos, nil
}

// Transformer describes a decoder-only transformer (GPT) by the sizes
// its paper gives, from which Layers builds its layers.
type Transformer struct {
	Layers int // transformer blocks
	Hidden int // d_model
	Heads  int
	// FFN is the MLP's hidden size (4·Hidden when 0).
	FFN int
	// Seq is the sequence length; MicroBatch the sequences of a
	// micro-batch; Vocab the vocabulary.
	Seq, MicroBatch, Vocab int
	// DType is the type of activations (the zero value, f16, is two
	// bytes as bf16 is).
	DType device.DType
}

// LayerSet returns the model's layers: an embedding (an edge layer
// holding the token and position embeddings, its compute neglected),
// Layers transformer blocks, and the output head (an edge layer with the
// logits' compute, its weights tied to the embedding's). A block of
// hidden size h with an MLP of f, on micro-batches of b sequences of s
// tokens, has 4h² + 2hf + 9h + f parameters (12h² + 13h for f = 4h),
// and its forward takes 2bs(4h² + 2hf) + 4bs²h FLOPs (the matrix products
// and attention's scores and sums, as Narayanan et al., SC21, count
// them); backward twice that. Its output, bsh elements, is the size of
// its two tensor-parallel collectives in each pass.
func (t Transformer) LayerSet() []Layer {
	h, f := int64(t.Hidden), int64(t.FFN)
	if f == 0 {
		f = 4 * h
	}
	b, s, v := int64(max(t.MicroBatch, 1)), int64(t.Seq), int64(t.Vocab)
	act := b * s * h * int64(t.DType.Size())
	fwd := float64(2*b*s*(4*h*h+2*h*f)) + float64(4*b*s*s*h)
	layers := []Layer{{Name: "embedding", Params: v*h + s*h, Activation: act, Edge: true}}
	for i := range t.Layers {
		layers = append(layers, Layer{
			Name: fmt.Sprintf("block %d", i), Params: 4*h*h + 2*h*f + 9*h + f, Activation: act,
			Forward: Work{FLOPs: fwd}, Backward: Work{FLOPs: 2 * fwd}, TPCollectives: 2,
		})
	}
	head := float64(2 * b * s * h * v)
	layers = append(layers, Layer{Name: "head", Activation: act, Forward: Work{FLOPs: head}, Backward: Work{FLOPs: 2 * head}, Edge: true})
	return layers
}
