package workload_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/workload"
)

// The closed forms of a training step on the reference cost model
// (reference/cost-models.md): alpha-beta with α = 1 µs, β = 1 ns a byte
// and free reductions, so that every time is a whole number of
// nanoseconds and the stream records read it exactly.
var abModel = sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}

const alpha = time.Microsecond

// ring is the ring allreduce of n bytes on p ranks: 2(p-1)α + 2((p-1)/p)nβ.
func ring(p int, n int64) time.Duration {
	return time.Duration(2*(p-1))*alpha + time.Duration(2*int64(p-1)*n/int64(p))
}

// half is the ring reduce-scatter or allgather of n bytes (the whole
// buffer) on p ranks: (p-1)α + ((p-1)/p)nβ.
func half(p int, n int64) time.Duration {
	return time.Duration(p-1)*alpha + time.Duration(int64(p-1)*n/int64(p))
}

func ns(seconds float64) time.Duration { return time.Duration(math.Round(seconds * 1e9)) }

// dense returns n layers of params parameters each (bf16 gradients: 2
// bytes a parameter), with forward and backward times.
func dense(n int, params int64, fwd, bwd time.Duration) []workload.Layer {
	out := make([]workload.Layer, n)
	for i := range out {
		out[i] = workload.Layer{Name: fmt.Sprint("layer ", i), Params: params, Forward: workload.Work{Time: fwd}, Backward: workload.Work{Time: bwd}}
	}
	return out
}

func simulate(t *testing.T, s workload.Spec) *workload.Result {
	t.Helper()
	p, err := workload.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := workload.Simulate(p, workload.SimConfig{Model: abModel})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var ringDP = map[workload.Group]map[string]string{workload.DP: {"allreduce": "ring", "reduce_scatter": "ring", "allgather": "ring"}}

// Without overlap the step is its compute plus its communication: L
// layers of forward F and backward B, then each layer's bucket reduced in
// turn, step = L(F + B) + L·ring(G).
func TestStepNoOverlap(t *testing.T) {
	const L, p = 4, 4
	const params = 1 << 20 // 2 MiB of bf16 gradients a layer
	F, B := 100*time.Microsecond, 200*time.Microsecond
	G := int64(2 * params)
	res := simulate(t, workload.Spec{Layers: dense(L, params, F, B), Layout: workload.Layout{DP: p},
		Bucket: G, FirstBucket: G, Algorithms: ringDP})
	want := L*(F+B) + L*ring(p, G)
	if got := ns(res.Step); got != want {
		t.Errorf("step %v, want L(F+B) + L·ring = %v", got, want)
	}
	if got, w := ns(res.ExposedOf(workload.DP, "allreduce")), L*ring(p, G); got != w {
		t.Errorf("exposed DP allreduce %v, want all of it, %v", got, w)
	}
	if got := ns(res.Compute); got != L*(F+B) {
		t.Errorf("compute %v, want %v", got, L*(F+B))
	}
}

// With overlap, bucket k is reduced while layer k+1's backward runs.
// When a bucket's allreduce A fits in a layer's backward B the step is
// the compute plus the last bucket's allreduce, max(compute, comm) + A;
// when it does not, the communication is the critical path after the
// first layer's backward: L·F + B + L·A.
func TestStepFullOverlap(t *testing.T) {
	const L, p = 4, 4
	F, B := 100*time.Microsecond, 200*time.Microsecond
	for _, tc := range []struct {
		name   string
		params int64
		want   func(A time.Duration) time.Duration
	}{
		{"compute-bound", 32 << 10, func(A time.Duration) time.Duration { return L*(F+B) + A }},
		{"comm-bound", 1 << 20, func(A time.Duration) time.Duration { return L*F + B + L*A }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			G := 2 * tc.params
			A := ring(p, G)
			res := simulate(t, workload.Spec{Layers: dense(L, tc.params, F, B), Layout: workload.Layout{DP: p},
				Bucket: G, FirstBucket: G, Overlap: true, Algorithms: ringDP})
			want := tc.want(A)
			if got := ns(res.Step); got != want {
				t.Errorf("A = %v: step %v, want %v", A, got, want)
			}
			comm := L * A
			if tc.name == "compute-bound" && want != max(L*(F+B), comm)+A {
				t.Errorf("compute-bound case is not max(compute, comm) + A")
			}
			if got := ns(res.ExposedTotal); got != want-L*(F+B) {
				t.Errorf("exposed %v, want step - compute = %v", got, want-L*(F+B))
			}
		})
	}
}

// GPipe and 1F1B leave the same bubble: with p stages of equal forward F
// and backward B a micro-batch and free point-to-point messages, the
// step is (m + p - 1)(F + B) and every stage waits (p - 1)(F + B) of it,
// (p-1)/(m+p-1); the interleaved schedule with v chunks a stage cuts the
// bubble to (p-1)/v of a micro-batch's time: (m + (p-1)/v)(F + B).
func TestStepPipelineBubble(t *testing.T) {
	free := sim.AlphaBeta{Bandwidth: 1e12}
	F, B := 12*time.Microsecond, 24*time.Microsecond
	for _, tc := range []struct {
		sched   workload.Schedule
		p, m, v int
	}{
		{workload.GPipe, 4, 8, 1}, {workload.GPipe, 3, 5, 1}, {workload.OneFOneB, 4, 8, 1}, {workload.OneFOneB, 4, 2, 1},
		{workload.OneFOneB, 8, 16, 1}, {workload.Interleaved, 4, 8, 2}, {workload.Interleaved, 2, 4, 3},
	} {
		t.Run(fmt.Sprintf("%v/p=%d/m=%d/v=%d", tc.sched, tc.p, tc.m, tc.v), func(t *testing.T) {
			// One layer per chunk, each a stage's share of F and B.
			n := tc.p * tc.v
			layers := dense(n, 0, F/time.Duration(tc.v), B/time.Duration(tc.v))
			s := workload.Spec{Layers: layers, Layout: workload.Layout{PP: tc.p}, MicroBatches: tc.m, Schedule: tc.sched, Chunks: tc.v}
			pl, err := workload.NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := workload.Simulate(pl, workload.SimConfig{Model: free})
			if err != nil {
				t.Fatal(err)
			}
			unit := F + B
			want := time.Duration(tc.m)*unit + time.Duration(tc.p-1)*unit/time.Duration(tc.v)
			if got := ns(res.Step); got != want {
				t.Errorf("step %v, want (m + (p-1)/v)(F+B) = %v", got, want)
			}
			bubble := float64(tc.p-1) / float64(tc.v*tc.m+tc.p-1)
			if math.Abs(res.BubbleFraction-bubble) > 1e-12 {
				t.Errorf("bubble %.6f of the step, want (p-1)/(vm+p-1) = %.6f", res.BubbleFraction, bubble)
			}
			for _, r := range res.Ranks {
				if got := ns(r.Bubble); got != want-time.Duration(tc.m)*unit {
					t.Errorf("stage %d waited %v, want %v", r.Stage, got, want-time.Duration(tc.m)*unit)
				}
			}
		})
	}
}

// ZeRO-3 gathers each layer's parameters before its forward and again
// before its backward, where ZeRO-2 gathers them once a step: without
// overlap, with m micro-batches of L layers, ZeRO-3's step is ZeRO-2's
// plus (2m - 1)·L allgathers of a layer's parameters.
func TestStepZeRO3ExtraAllgathers(t *testing.T) {
	const L, p = 3, 4
	const params = 1 << 16
	F, B := 50*time.Microsecond, 100*time.Microsecond
	G := int64(2 * params)
	for _, m := range []int{1, 2} {
		spec := func(zero int) workload.Spec {
			return workload.Spec{Layers: dense(L, params, F, B), Layout: workload.Layout{DP: p}, MicroBatches: m,
				Bucket: G, FirstBucket: G, ZeRO: zero, Algorithms: ringDP}
		}
		z2, z3 := simulate(t, spec(2)), simulate(t, spec(3))
		compute := time.Duration(m*L) * (F + B)
		if got, want := ns(z2.Step), compute+L*half(p, G)+L*half(p, G); got != want {
			t.Errorf("m=%d: ZeRO-2 step %v, want compute + L gathers + L reduce-scatters = %v", m, got, want)
		}
		extra := time.Duration((2*m-1)*L) * half(p, G)
		if got := ns(z3.Step) - ns(z2.Step); got != extra {
			t.Errorf("m=%d: ZeRO-3 - ZeRO-2 = %v, want (2m-1)L allgathers = %v", m, got, extra)
		}
		if got, want := ns(z3.ExposedOf(workload.DP, "allgather")), time.Duration(2*m*L)*half(p, G); got != want {
			t.Errorf("m=%d: ZeRO-3's exposed allgathers %v, want 2mL of them, %v", m, got, want)
		}
	}
}

// Tensor and expert parallelism are on the critical path: each layer's
// compute is split TP ways and its collectives add up, exposed whole.
// With m micro-batches of L layers, c TP allreduces of A bytes a pass and
// two alltoalls of E bytes over EP a pass: step = m·L(F + B)/TP +
// 2m·L·(c·ring(TP, A) + 2·pairwise(EP, E)); sequence parallelism's
// reduce-scatter and allgather take what the allreduce did.
func TestStepTensorExpertCriticalPath(t *testing.T) {
	const L, tp, ep, m = 2, 4, 2, 2
	F, B := 400*time.Microsecond, 800*time.Microsecond
	const A, E = 1 << 20, 1 << 18
	pairwise := time.Duration(ep-1) * (alpha + time.Duration(E/ep))
	for _, sp := range []bool{false, true} {
		layers := dense(L, 0, F, B)
		for i := range layers {
			layers[i].Activation, layers[i].TPCollectives = A, 2
			layers[i].Alltoall, layers[i].Alltoalls = E, 2
		}
		res := simulate(t, workload.Spec{Layers: layers, Layout: workload.Layout{TP: tp, DP: ep, EP: ep}, MicroBatches: m, SequenceParallel: sp,
			Algorithms: map[workload.Group]map[string]string{
				workload.TP: {"allreduce": "ring", "reduce_scatter": "ring", "allgather": "ring"},
				workload.EP: {"alltoall": "pairwise"},
			}})
		tpComm := time.Duration(2*m*L*2) * ring(tp, A)
		epComm := time.Duration(2*m*L*2) * pairwise
		want := time.Duration(m*L)*(F+B)/tp + tpComm + epComm
		if got := ns(res.Step); got != want {
			t.Errorf("sequence parallel %v: step %v, want %v", sp, got, want)
		}
		if got := ns(res.ExposedOf(workload.TP, "")); got != tpComm {
			t.Errorf("sequence parallel %v: exposed TP %v, want all of it, %v", sp, got, tpComm)
		}
		if got := ns(res.ExposedOf(workload.EP, "alltoall")); got != epComm {
			t.Errorf("exposed EP %v, want %v", got, epComm)
		}
	}
}
