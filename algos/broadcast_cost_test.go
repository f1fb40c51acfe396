package algos_test

import (
	"context"
	"math"
	"math/bits"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// rootedTime runs algorithm alg of collective coll once on world phantom
// ranks, with the buffers its Layout gives for count elements of f32, from
// root, and returns the virtual time at which the last rank finished, in
// seconds.
func rootedTime(t *testing.T, model sim.Model, coll, alg string, world, count, root int, params map[string]int) float64 {
	t.Helper()
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Algorithm(alg)
	if err != nil {
		t.Fatal(err)
	}
	send, recv, _ := c.Layout(count, world)
	const dt = device.F32
	res, err := sim.Run(sim.Config{World: world, Model: model}, func(ctx context.Context, l algos.Link) error {
		call := algos.Call{Buf: l.Alloc(recv * dt.Size()), DType: dt, Op: device.Sum, Root: root, Params: params}
		if send > 0 {
			call.Send = l.Alloc(send * dt.Size())
		}
		return a.Run(ctx, l, call)
	})
	if err != nil {
		t.Fatalf("%s %s on %d ranks, %d elements, root %d: %v", coll, alg, world, count, root, err)
	}
	return res.End.Seconds()
}

// rootedCostCase is one row of a cost table test: an algorithm on p ranks over n
// bytes, with the closed form it must match.
type rootedCostCase struct {
	coll, alg string
	p, n      int // ranks, bytes (a multiple of 4: f32 elements)
	params    map[string]int
	want      func(m sim.AlphaBeta, p, n float64) float64
}

// checkRootedCosts runs every case from root 0 and from root p-1 on model and
// compares the simulated time with the closed form to 1e-6 relative.
func checkRootedCosts(t *testing.T, model sim.AlphaBeta, cases []rootedCostCase) {
	t.Helper()
	for _, c := range cases {
		want := c.want(model, float64(c.p), float64(c.n))
		for _, root := range []int{0, c.p - 1} {
			got := rootedTime(t, model, c.coll, c.alg, c.p, c.n/4, root, c.params)
			if e := relErr(got, want); e > 1e-6 {
				t.Errorf("%s %s, p=%d n=%d root=%d params=%v: simulated %.9g s, closed form %.9g s (relative error %.2g)",
					c.coll, c.alg, c.p, c.n, root, c.params, got, want, e)
			}
		}
	}
}

// rootedABG returns alpha, beta and gamma of m in seconds and seconds per
// byte.
func rootedABG(m sim.AlphaBeta) (a, b, g float64) {
	g = 0
	if m.ReduceBandwidth > 0 {
		g = 1 / m.ReduceBandwidth
	}
	return m.Latency.Seconds(), 1 / m.Bandwidth, g
}

// rootedLg is log2 of a power of two; rootedClg is ceil(lg p).
func rootedLg(p float64) float64  { return math.Log2(p) }
func rootedClg(p float64) float64 { return float64(bits.Len(uint(p) - 1)) }

// Rows of reference/cost-models.md.
func bcastBinomialCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, _ := rootedABG(m)
	return rootedClg(p) * (a + n*b) // broadcast | binomial_tree: ceil(lg p)(α + nβ)
}

func bcastScatterAllgatherCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, _ := rootedABG(m)
	return (rootedClg(p)+p-1)*a + 2*(p-1)/p*n*b // (lg p + p - 1)α + 2((p-1)/p)nβ, for p = 2^k; derived for all p
}

func bcastFlatCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, _ := rootedABG(m)
	return (p - 1) * (a + n*b) // broadcast | flat: (p-1)(α + nβ)
}

// bcastChainCost is the row pipelined_chain, (p + k - 2)(α + sβ), for k
// segments of s bytes, generalised to a short last segment s' (the
// proportionate flow shop): (k-1)T + T' + (p-2)T.
func bcastChainCost(s int) func(m sim.AlphaBeta, p, n float64) float64 {
	return func(m sim.AlphaBeta, p, n float64) float64 {
		a, b, _ := rootedABG(m)
		k := math.Ceil(n / float64(s))
		last := n - (k-1)*float64(s)
		T, Tl := a+float64(s)*b, a+last*b
		return (k-1)*T + Tl + (p-2)*T
	}
}

// binaryTreeDepth is the closed form of BinaryTreeBroadcast's doc: the
// number of message times until the last rank has the buffer.
func binaryTreeDepth(p int) int {
	if p <= 1 {
		return 0
	}
	D := bits.Len(uint(p+1)) - 1 // full levels: 2^D - 1 <= p
	depth := 2 * (D - 1)
	if m := p - (1<<D - 1); m > 0 {
		x := uint(m - 1)
		q := max(bits.OnesCount(x), bits.Len(x)-1)
		depth = max(depth, D+q)
	}
	return depth
}

func bcastBinaryTreeCost(m sim.AlphaBeta, p, n float64) float64 {
	a, b, _ := rootedABG(m)
	return float64(binaryTreeDepth(int(p))) * (a + n*b)
}

// TestBinaryTreeDepth checks the closed form against the definition:
// c(0) = 0, c(2v+1) = c(v) + 1, c(2v+2) = c(v) + 2, depth = max c, and
// against the reference's 2(k-1) for p = 2^k - 1.
func TestBinaryTreeDepth(t *testing.T) {
	c := []int{0}
	for p := 1; p <= 1100; p++ {
		if p > 1 {
			v := p - 1
			c = append(c, c[(v-1)/2]+1+(1-v%2)) // odd v is a left child
		}
		want := 0
		for _, x := range c {
			want = max(want, x)
		}
		if got := binaryTreeDepth(p); got != want {
			t.Fatalf("p=%d: closed form %d, definition %d", p, got, want)
		}
		if k := bits.Len(uint(p)); p == 1<<k-1 && binaryTreeDepth(p) != 2*(k-1) {
			t.Fatalf("p=2^%d-1: depth %d, reference 2(k-1) = %d", k, binaryTreeDepth(p), 2*(k-1))
		}
	}
}

func TestBroadcastCost(t *testing.T) {
	var cases []rootedCostCase
	for _, p := range []int{2, 3, 4, 5, 7, 8, 13, 16, 31, 33, 64} {
		for _, per := range []int{1, 256, 1 << 16} { // f32 elements per rank
			n := 4 * p * per // divides into p blocks of whole elements
			cases = append(cases,
				rootedCostCase{coll: "broadcast", alg: "binomial_tree", p: p, n: n, want: bcastBinomialCost},
				rootedCostCase{coll: "broadcast", alg: "binomial_tree_nearest", p: p, n: n, want: bcastBinomialCost},
				rootedCostCase{coll: "broadcast", alg: "scatter_allgather", p: p, n: n, want: bcastScatterAllgatherCost},
				rootedCostCase{coll: "broadcast", alg: "flat", p: p, n: n, want: bcastFlatCost},
				rootedCostCase{coll: "broadcast", alg: "binary_tree", p: p, n: n, want: bcastBinaryTreeCost},
			)
			nexar := bcastBinaryTreeCost
			if p < algos.NexarBroadcastThreshold {
				nexar = bcastFlatCost
			}
			cases = append(cases, rootedCostCase{coll: "broadcast", alg: "nexar", p: p, n: n, want: nexar})
		}
		// The chain: segments that divide n (k = 1, 8, 64) and a short
		// last one.
		n := 1 << 20
		for _, s := range []int{n, n / 8, n / 64, 100000} {
			cases = append(cases, rootedCostCase{coll: "broadcast", alg: "pipelined_chain", p: p, n: n,
				params: map[string]int{"segment": s}, want: bcastChainCost(s)})
		}
	}
	checkRootedCosts(t, worked, cases)
}

// TestBroadcastDefaultSegment checks that the chain uses its documented
// default segment when none is given.
func TestBroadcastDefaultSegment(t *testing.T) {
	n := 3*algos.DefaultChainSegment + 4096
	checkRootedCosts(t, worked, []rootedCostCase{{coll: "broadcast", alg: "pipelined_chain", p: 6, n: n,
		want: bcastChainCost(algos.DefaultChainSegment)}})
}

// TestBroadcastScatterAllgatherUneven: when n does not divide into p
// blocks, the blocks differ by one element, and the time lies between
// the even closed form for the bytes used and the one for p blocks of
// the largest size.
func TestBroadcastScatterAllgatherUneven(t *testing.T) {
	for _, p := range []int{3, 6, 8, 13} {
		count := 1000*p + p/2
		got := rootedTime(t, worked, "broadcast", "scatter_allgather", p, count, p/2, nil)
		lo := bcastScatterAllgatherCost(worked, float64(p), float64(4*count))
		hi := bcastScatterAllgatherCost(worked, float64(p), float64(4*(count+p)))
		if got < lo*(1-1e-9) || got > hi*(1+1e-9) {
			t.Errorf("p=%d count=%d: %.9g s outside [%.9g, %.9g]", p, count, got, lo, hi)
		}
	}
}
