package workload_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/workload"
)

// GPT-3 13B as its paper gives it (Brown et al. 2020, table 2.1): 40
// layers, d_model 5140, 40 heads, 2048 tokens; the GPT-2 vocabulary.
var gpt13B = workload.Transformer{Layers: 40, Hidden: 5140, Heads: 40, Seq: 2048, MicroBatch: 1, Vocab: 50257}

func TestTransformerSizes(t *testing.T) {
	layers := gpt13B.LayerSet()
	if len(layers) != 42 || !layers[0].Edge || !layers[41].Edge {
		t.Fatalf("%d layers, want embedding, 40 blocks, head", len(layers))
	}
	var params int64
	for _, l := range layers {
		params += l.Params
	}
	// 12h² + 13h a block, V·h + s·h of embeddings: 12.95e9.
	h := int64(5140)
	if want := 40*(12*h*h+13*h) + 50257*h + 2048*h; params != want || math.Abs(float64(params)/13e9-1) > 0.01 {
		t.Errorf("%d parameters, want %d, about 13e9", params, want)
	}
	b := layers[1]
	// 24bsh² + 4bs²h forward FLOPs (Narayanan et al., SC21).
	if want := 24*2048*float64(h*h) + 4*2048*2048*float64(h); b.Forward.FLOPs != want || b.Backward.FLOPs != 2*want {
		t.Errorf("block FLOPs %g/%g, want %g and twice", b.Forward.FLOPs, b.Backward.FLOPs, want)
	}
	if b.Activation != 2048*h*2 || b.TPCollectives != 2 {
		t.Errorf("block activation %d, %d TP collectives", b.Activation, b.TPCollectives)
	}
}

// Skew and stragglers are drawn from the seed: the same seed gives the
// same ranks the same speeds, and the straggler holds up the step by its
// slowdown of the compute (the DP allreduce waits for it).
func TestSkewAndStragglers(t *testing.T) {
	spec := workload.Spec{Layers: dense(2, 1<<10, 100*time.Microsecond, 200*time.Microsecond), Layout: workload.Layout{DP: 8},
		Stragglers: 1, Slowdown: 1.5, Seed: 7, Skew: 0.01, Overlap: true, Algorithms: ringDP}
	a, err := workload.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := workload.NewPlan(spec)
	slow, fastest := -1, math.Inf(1)
	for r := range 8 {
		if a.Speed(r) != b.Speed(r) {
			t.Fatalf("rank %d: speeds %g and %g from one seed", r, a.Speed(r), b.Speed(r))
		}
		if a.Speed(r) > 1.3 {
			slow = r
		}
		fastest = math.Min(fastest, a.Speed(r))
	}
	if slow < 0 || fastest > 1.05 {
		t.Fatalf("no straggler among speeds %v", a)
	}
	res, _, err := workload.Simulate(a, workload.SimConfig{Model: abModel})
	if err != nil {
		t.Fatal(err)
	}
	compute := 600e-6 * a.Speed(slow)
	if res.Step < compute {
		t.Errorf("step %g s, shorter than the straggler's compute %g s", res.Step, compute)
	}
	// The others wait for the straggler in the allreduce: their exposed
	// DP time includes it.
	for _, r := range res.Ranks {
		if r.Rank != slow && r.Exposed < compute-r.Compute-1e-9 {
			t.Errorf("rank %d exposed %g s, less than its wait for the straggler, %g s", r.Rank, r.Exposed, compute-r.Compute)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	good := workload.Spec{Layers: dense(4, 1, time.Microsecond, 0), Layout: workload.Layout{DP: 4, PP: 2, EP: 2}, MicroBatches: 4}
	if _, err := workload.NewPlan(good); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*workload.Spec)
	}{
		{"ep", func(s *workload.Spec) { s.EP = 3 }},
		{"stages", func(s *workload.Spec) { s.PP = 8 }},
		{"interleaved chunks", func(s *workload.Spec) { s.Schedule = workload.Interleaved; s.Chunks = 1 }},
		{"interleaved m", func(s *workload.Spec) { s.Schedule = workload.Interleaved; s.Chunks = 2; s.MicroBatches = 3 }},
		{"zero", func(s *workload.Spec) { s.ZeRO = 4 }},
		{"order", func(s *workload.Spec) { s.Order = "tp-tp-pp" }},
		{"stragglers", func(s *workload.Spec) { s.Stragglers = 9 }},
		{"dtype", func(s *workload.Spec) { s.GradDType = device.DType(99) }},
	} {
		s := good
		tc.mod(&s)
		if _, err := workload.NewPlan(s); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// A step is deterministic: the same plan gives the same result, rank by
// rank, run after run.
func TestStepDeterministic(t *testing.T) {
	layers := dense(4, 1<<16, 50*time.Microsecond, 100*time.Microsecond)
	for i := range layers {
		layers[i].Activation, layers[i].TPCollectives = 1<<16, 2
	}
	spec := workload.Spec{Layers: layers, Layout: workload.Layout{DP: 2, TP: 2, PP: 2}, MicroBatches: 4, Schedule: workload.OneFOneB,
		Bucket: 1 << 16, FirstBucket: 1 << 15, Overlap: true, ZeRO: 1, Skew: 0.05, Seed: 9}
	p, err := workload.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	var first *workload.Result
	for range 3 {
		res, _, err := workload.Simulate(p, workload.SimConfig{Model: abModel})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
			continue
		}
		if !reflect.DeepEqual(res, first) {
			t.Fatalf("two runs differ:\n%+v\n%+v", res, first)
		}
	}
}
