package nccl_test

import (
	"context"
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The closed forms of the package documentation, on alpha-beta (α = 5 µs,
// 12.5 GB/s, free reductions), to the picosecond: each term is a message
// of the simulator, α + m/bandwidth rounded as the simulator rounds one
// message.

func msg(m int) sim.Time { return ab.MessageTime(m) }

// simTime is the time of one call of coll's algo over bytes (the
// collective's n) on p ranks of cfg.
func simTime(t *testing.T, cfg sim.Config, coll, algo string, p, bytes int, params map[string]int) sim.Time {
	t.Helper()
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Algorithm(algo)
	if err != nil {
		t.Fatal(err)
	}
	send, recv, _ := c.Layout(bytes/4, p)
	cfg.World = p
	if cfg.Model == nil {
		cfg.Model = ab
	}
	res, err := sim.Run(cfg, func(ctx context.Context, l algos.Link) error {
		call := algos.Call{Buf: l.Alloc(recv * 4), DType: device.F32, Op: device.Sum, Root: min(1, p-1), Params: params}
		if send > 0 {
			call.Send = l.Alloc(send * 4)
		}
		return a.Run(ctx, l, call)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.End
}

func wireLL(c int) int    { return (c + 7) / 8 * 16 }
func wireLL128(c int) int { return (c + 119) / 120 * 128 }

// flagMsg is Simple's flag: a message of 8 bytes.
var flagMsg = msg(8)

// times returns k copies of x summed.
func times(k int, x sim.Time) sim.Time { return sim.Time(k) * x }

// TestRingClosedForms holds the rings to their closed forms with one
// channel: in the regime where a step is one slice (a chunk of c bytes
// per rank, at most one LL slot or 32 KiB under Simple) and in the
// bandwidth regime (whole slots and slices), and the pipelined broadcast
// and reduce.
func TestRingClosedForms(t *testing.T) {
	one := map[string]int{"channels": 1}
	type tc struct {
		coll, algo string
		p, n       int
		want       sim.Time
	}
	var cases []tc
	for _, p := range []int{2, 3, 4, 7, 8, 16} {
		c := 4096 // bytes per rank's chunk
		n := p * c
		// allreduce: 2(p-1) steps of one message (LL, LL128) or a data
		// message and its flag, which also flags the empty second slice
		// (Simple).
		cases = append(cases,
			tc{"allreduce", "nccl_ring_ll", p, n, times(2*(p-1), msg(wireLL(c)))},
			tc{"allreduce", "nccl_ring_ll128", p, n, times(2*(p-1), msg(wireLL128(c)))},
			tc{"allreduce", "nccl_ring_simple", p, n, times(2*(p-1), msg(c)+flagMsg)},
			// allgather and reduce_scatter: p-1 steps of a block.
			tc{"allgather", "nccl_ring_ll", p, n, times(p-1, msg(wireLL(c)))},
			tc{"allgather", "nccl_ring_simple", p, n, times(p-1, msg(c)+flagMsg)},
			tc{"reduce_scatter", "nccl_ring_ll128", p, n, times(p-1, msg(wireLL128(c)))},
			tc{"reduce_scatter", "nccl_ring_simple", p, n, times(p-1, msg(c)+flagMsg)},
		)
		// The bandwidth regime: each rank sends 2(p-1)/p n bytes in
		// slots of 32 KiB of data (LL), 576000 bytes (LL128), or slices
		// of 1 MiB each followed by its flag (Simple).
		cases = append(cases,
			tc{"allreduce", "nccl_ring_ll", p, p * 64 << 10, times(2*(p-1)*2, msg(64<<10))},
			tc{"allreduce", "nccl_ring_ll128", p, p * 2 * 576000, times(2*(p-1)*2, msg(614400))},
			tc{"allreduce", "nccl_ring_simple", p, p * 4 << 20, times(2*(p-1)*4, msg(1<<20)+flagMsg)},
		)
		// broadcast and reduce: k chunks pipelined over p-1 hops,
		// (p-2+k) steps of a slot (LL) or of a 512 KiB chunk and its
		// flag (Simple).
		for _, coll := range []string{"broadcast", "reduce"} {
			cases = append(cases,
				tc{coll, "nccl_ring_ll", p, 1 << 20, times(p-2+32, msg(64<<10))},
				tc{coll, "nccl_ring_simple", p, 2 << 20, times(p-2+4, msg(512<<10)+flagMsg)},
			)
		}
	}
	for _, c := range cases {
		if got := simTime(t, sim.Config{}, c.coll, c.algo, c.p, c.n, one); got != c.want {
			t.Errorf("%s %s p=%d n=%d: %v, closed form %v", c.coll, c.algo, c.p, c.n, got, c.want)
		}
	}
}

// TestRingChannelsClosedForm: with several channels on alpha-beta's one
// port, a step puts every channel's message on the port in turn: the
// small regime's time is 2(p-1) x nc messages of the channel's chunk.
// NCCL gives a channel at least 32 KiB of traffic (an 8 KiB cell of an
// LL allreduce's data), so 4 channels of 8 KiB each.
func TestRingChannelsClosedForm(t *testing.T) {
	for _, p := range []int{2, 4, 8} {
		n := 4 * 8192
		c := 8192 / p
		want := times(2*(p-1)*4, msg(wireLL(c)))
		if got := simTime(t, sim.Config{}, "allreduce", "nccl_ring_ll", p, n, map[string]int{"channels": 4}); got != want {
			t.Errorf("p=%d: %v, closed form %v", p, got, want)
		}
	}
}

// TestTreeClosedForms: inside one node the tree is a chain, so an
// allreduce of one chunk goes up and down it, 2(p-1) messages; with k
// Simple chunks the way up and the way down overlap, (2(p-1)+k-1)
// chunks and flags while the chain's ports are not shared (k <= 2).
// Across nodes of one rank each, a single LL chunk goes up NCCL's binary
// tree of p = 2^K ranks and down again in (4K-2) messages: two children
// send to one port in turn and a parent sends to its two children in
// turn, and the root has one child.
func TestTreeClosedForms(t *testing.T) {
	one := map[string]int{"channels": 1}
	for _, p := range []int{2, 3, 4, 8, 16} {
		c := 4096
		for _, x := range []struct {
			algo string
			m    sim.Time
		}{{"nccl_tree_ll", msg(wireLL(c))}, {"nccl_tree_ll128", msg(wireLL128(c))}, {"nccl_tree_simple", msg(c) + flagMsg}} {
			if got, want := simTime(t, sim.Config{}, "allreduce", x.algo, p, c, one), times(2*(p-1), x.m); got != want {
				t.Errorf("allreduce %s p=%d: %v, closed form %v", x.algo, p, got, want)
			}
			for _, coll := range []string{"broadcast", "reduce"} {
				if got, want := simTime(t, sim.Config{}, coll, x.algo, p, c, one), times(p-1, x.m); got != want {
					t.Errorf("%s %s p=%d: %v, closed form %v", coll, x.algo, p, got, want)
				}
			}
		}
		if got, want := simTime(t, sim.Config{}, "allreduce", "nccl_tree_simple", p, 1<<20, one), times(2*(p-1)+1, msg(512<<10)+flagMsg); got != want {
			t.Errorf("allreduce nccl_tree_simple p=%d, 2 chunks: %v, closed form %v", p, got, want)
		}
	}
	for _, k := range []int{1, 2, 3, 4} {
		p := 1 << k
		m := &algos.Machine{Node: make([]int, p)}
		for r := range m.Node {
			m.Node[r] = r
		}
		want := times(4*k-2, msg(wireLL(4096)))
		if got := simTime(t, sim.Config{Machine: m}, "allreduce", "nccl_tree_ll", p, 4096, one); got != want {
			t.Errorf("binary tree over %d nodes: %v, closed form %v", p, got, want)
		}
	}
}

// TestPATClosedForm: PAT's allgather and reduce-scatter of small blocks
// of b bytes take K = ceil(lg p) steps, the step at distance 2^d carrying
// the blocks at offsets 2^d + s (s a multiple of 2^(d+1), below p) in one
// message and its flag; in the bandwidth regime, chunks of 256 KiB (2
// ranks, 8 MiB: NCCL halves a 512 KiB chunk while 32 chunks exceed the
// channel's bytes) each one step.
func TestPATClosedForm(t *testing.T) {
	one := map[string]int{"channels": 1}
	for _, p := range []int{2, 3, 4, 5, 8, 13, 16} {
		count := 1024 / p * p // f32 elements, as the layout rounds them
		b := count / p * 4
		var want sim.Time
		for d := 0; 1<<d < p; d++ {
			blocks := 0
			for s := 0; (1<<d)+s < p; s += 2 << d {
				blocks++
			}
			want += msg(blocks*b) + flagMsg
		}
		for _, coll := range []string{"allgather", "reduce_scatter"} {
			if got := simTime(t, sim.Config{}, coll, "nccl_pat", p, 4096, one); got != want {
				t.Errorf("%s p=%d: %v, closed form %v", coll, p, got, want)
			}
		}
	}
	if got, want := simTime(t, sim.Config{}, "allgather", "nccl_pat", 2, 8<<20, one), times(16, msg(256<<10)+flagMsg); got != want {
		t.Errorf("allgather p=2 8 MiB: %v, closed form %v", got, want)
	}
}

// TestInNetworkClosedForms holds the in-network allreduces to their
// closed forms on alpha-beta with one ideal switch that reduces at R
// (package sim: a contribution holds its sender's port for α + sβ, the
// switch reduces c contributions in (c-1)s/R once all are in, a result
// holds its receiver's port for α + sβ). With one rank a node, NVLS and
// CollNet direct are SHARP alone: each chunk of s bytes (at most 32 KiB
// across nodes) one allreduce in the switch, 2(α + sβ) + (p-1)s/R, the
// chunks one after the other. Inside one node of p >= 3 ranks, with a
// switch that reduces for free, one chunk of n bytes takes 2p(α + (n/p)β):
// each rank's p contributions leave its port in turn (ld_reduce), the
// last owner's result comes at (p+1)(α + sβ), and then each rank's port
// takes the p-1 shards multicast to it.
func TestInNetworkClosedForms(t *testing.T) {
	one := map[string]int{"channels": 1}
	const R = 25e9
	sw := sim.AlphaBeta{Latency: ab.Latency, Bandwidth: ab.Bandwidth, SwitchBandwidth: R}
	for _, p := range []int{2, 3, 4, 8} {
		m := &algos.Machine{Node: make([]int, p)}
		for r := range m.Node {
			m.Node[r] = r
		}
		for _, algo := range []string{"nccl_nvls", "nccl_collnet_direct"} {
			for _, c := range []struct{ n, chunk int }{{4096, 4096}, {256 << 10, 32 << 10}} {
				want := times(c.n/c.chunk, 2*msg(c.chunk)+sim.TransferTime((p-1)*c.chunk, R))
				if got := simTime(t, sim.Config{Model: sw, Machine: m}, "allreduce", algo, p, c.n, one); got != want {
					t.Errorf("%s over %d nodes, %d B: %v, closed form %v", algo, p, c.n, got, want)
				}
			}
		}
	}
	// NVLS tree over two nodes of one rank: the tree is a chain, one
	// Simple chunk goes up with its flag and comes down with its flag.
	two := &algos.Machine{Node: []int{0, 1}}
	if got, want := simTime(t, sim.Config{Model: sw, Machine: two}, "allreduce", "nccl_nvls_tree", 2, 4096, one), 2*(msg(4096)+flagMsg); got != want {
		t.Errorf("nccl_nvls_tree over 2 nodes: %v, closed form %v", got, want)
	}
	free := sim.AlphaBeta{Latency: ab.Latency, Bandwidth: ab.Bandwidth, SwitchBandwidth: math.Inf(1)}
	// NVLS allgather and reduce-scatter inside one node, blocks of b
	// bytes: p multicasts, each rank's port taking the p-1 others'
	// blocks, p(α + bβ); p ld_reduces, each rank's p contributions
	// leaving its port in turn and the last owner's result after them,
	// (p+1)(α + bβ) + (p-1)b/R.
	for _, p := range []int{2, 3, 5, 8} {
		b := 1024
		if got, want := simTime(t, sim.Config{Model: sw}, "allgather", "nccl_nvls", p, p*b, one), times(p, msg(b)); got != want {
			t.Errorf("nccl_nvls allgather p=%d: %v, closed form %v", p, got, want)
		}
		if got, want := simTime(t, sim.Config{Model: sw}, "reduce_scatter", "nccl_nvls", p, p*b, one), times(p+1, msg(b))+sim.TransferTime((p-1)*b, R); got != want {
			t.Errorf("nccl_nvls reduce_scatter p=%d: %v, closed form %v", p, got, want)
		}
	}
	for _, p := range []int{3, 4, 8} {
		n := p * 1024
		want := times(2*p, msg(n/p))
		if got := simTime(t, sim.Config{Model: free}, "allreduce", "nccl_nvls", p, n, one); got != want {
			t.Errorf("nccl_nvls in one node of %d: %v, closed form %v", p, got, want)
		}
	}
}
