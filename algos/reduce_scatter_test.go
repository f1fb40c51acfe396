package algos_test

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// blockCounts are the per-rank block sizes, in elements, that the data
// tests of reduce_scatter, allgather and alltoall use at world p for type
// dt: 0, 1, p-1, p, and the large prime total rounded down to p blocks
// (as nccl-tests rounds). The large one is last.
func blockCounts(p int, dt device.DType) []int {
	return []int{0, 1, p - 1, p, largeCount(p, dt) / p}
}

// checkReduceScatterData runs alg on p host ranks and checks that rank r
// ends with block r of the reduction and its send buffer unchanged.
func checkReduceScatterData(t *testing.T, alg *algos.Algorithm, p, block int, dt device.DType, op device.Op, inputs, want [][]byte, skewed bool) {
	t.Helper()
	err := runHost(p, skewed, func(ctx context.Context, l algos.Link) error {
		r := l.Rank()
		send := device.Host(append([]byte(nil), inputs[r]...))
		recv := device.Host(make([]byte, block*dt.Size()))
		if err := alg.Run(ctx, l, algos.Call{Send: send, Buf: recv, DType: dt, Op: op}); err != nil {
			return err
		}
		if err := algotest.Compare(recv, want[r], dt); err != nil {
			return fmt.Errorf("result: %w", err)
		}
		if err := algotest.Compare(send, inputs[r], dt); err != nil {
			return fmt.Errorf("send buffer changed: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reduce_scatter %s: world %d, block %d, %s %s, skewed %v (seed %d): %v", alg.Name, p, block, dt, op, skewed, dataSeed, err)
	}
}

// TestReduceScatterData checks every reduce_scatter algorithm's result
// bit for bit. algotest.Input chooses values so that every partial result
// is exact in every type, whatever the order of reduction, so the
// algorithms must agree exactly with the rank-by-rank reference.
func TestReduceScatterData(t *testing.T) {
	t.Parallel()
	algs := algorithms(t, "reduce_scatter")
	for _, p := range dataWorlds() {
		for _, dt := range dataTypes(p) {
			for ci, block := range blockCounts(p, dt) {
				for oi, op := range device.Ops() {
					// The large block, and every block beyond 33
					// ranks, costs the most: they get one op per
					// type, rotating, so every op still meets them.
					if (ci == 4 || p > 33) && oi != int(dt)%4 {
						continue
					}
					inputs := make([][]byte, p)
					for r := range inputs {
						inputs[r] = algotest.ReduceScatterInput(block, dt, op, r, p, dataSeed)
					}
					want := algotest.ReduceScattered(block, dt, op, p, dataSeed)
					for _, alg := range algs {
						checkReduceScatterData(t, alg, p, block, dt, op, inputs, want, (p+ci)%2 == 1)
					}
				}
			}
		}
	}
}

// TestReduceScatterCost checks each algorithm's simulated time on
// alpha-beta against its closed form (rows "reduce_scatter" of
// reference/cost-models.md; recursive_halving's covers every p, see its
// doc comment).
func TestReduceScatterCost(t *testing.T) {
	t.Parallel()
	logRounds := func(m sim.AlphaBeta, p int, n float64) float64 {
		a, b, g := abg(m)
		return lgCeil(p)*a + float64(p-1)/float64(p)*n*(b+g)
	}
	pipelined := func(m sim.AlphaBeta, p int, n float64) float64 {
		a, b, g := abg(m)
		return float64(p-1)*a + float64(p-1)/float64(p)*n*(b+g)
	}
	rows := []costRow{
		{alg: "ring", time: pipelined},
		{alg: "pairwise", time: pipelined},
		{alg: "recursive_halving", time: logRounds, holds: func(p int, _ sim.AlphaBeta, _ float64) bool { return isPow2(p) }},
		{alg: "dissemination", time: logRounds},
	}
	checkCostTable(t, "reduce_scatter", rows, []int{4, 4096, 1 << 20}, func(p, b int) (int, int, int) {
		return p * b, b, p * b
	})
}

// reduceScatterFoldCost is recursive_halving's time off powers of two
// (ReduceScatterRecursiveHalving) along the rank that keeps the lowest,
// double, blocks: p' = 2^floor(lg p), e = p - p', m = n/p,
//
//	(lg p' + 2)α + n(β + γ) + (p' - 1 + Σ_{d = 1, 2, ..., p'/2} min(e, d))m(β + γ) + mβ
//
// the fold, the halving rounds and the block sent back. It is the time
// with free reductions when at least p'/2 ranks fold; with fewer, ranks
// that did not fold run ahead and can hold a folded partner's port, up to
// (lg p' - 1)α later (as in HalvingDoublingAllreduce); with reductions it
// is an upper bound.
func reduceScatterFoldCost(m sim.AlphaBeta, p int, n float64) float64 {
	a, b, g := abg(m)
	p2 := 1 << (bits.Len(uint(p)) - 1)
	e := p - p2
	blocks := p2 - 1
	for d := 1; d < p2; d *= 2 {
		blocks += min(e, d)
	}
	mb := n / float64(p)
	return float64(bits.Len(uint(p))+1)*a + n*(b+g) + float64(blocks)*mb*(b+g) + mb*b
}

func TestReduceScatterFoldCost(t *testing.T) {
	t.Parallel()
	alg := algorithm(t, "reduce_scatter", "recursive_halving")
	free := sim.AlphaBeta{Latency: 7 * sim.Microsecond, Bandwidth: 5e9}
	models := append([]struct {
		name string
		m    sim.AlphaBeta
	}{{"free-reduce", free}}, costModels...)
	for _, cm := range models {
		a, b, g := abg(cm.m)
		for _, p := range []int{3, 5, 6, 7, 9, 12, 13, 24, 33} {
			p2 := 1 << (bits.Len(uint(p)) - 1)
			for _, blk := range []int{4, 4096, 1 << 20} {
				n := float64(p * blk)
				got := phantomTime(t, cm.m, p, alg, p*blk, blk, nil)
				want := reduceScatterFoldCost(cm.m, p, n)
				if cm.name == "free-reduce" && 2*(p-p2) >= p2 {
					if e := relErr(got, want); e > 1e-6 {
						t.Errorf("free reductions, p=%d, n=%g: simulated %.6f us, formula %.6f us", p, n, got*1e6, want*1e6)
					}
					continue
				}
				lo := lgCeil(p)*a + float64(p-1)/float64(p)*n*(b+g)
				hi := want + float64(bits.Len(uint(p))-2)*a
				if got < lo*(1-1e-9) || got > hi*(1+1e-9) {
					t.Errorf("%s model, p=%d, n=%g: %.6f us outside [%.6f, %.6f] us", cm.name, p, n, got*1e6, lo*1e6, hi*1e6)
				}
			}
		}
	}
}

// TestReduceScatterBadBuffers checks that mismatched buffers are errors,
// not panics or silent truncation.
func TestReduceScatterBadBuffers(t *testing.T) {
	for _, alg := range algorithms(t, "reduce_scatter") {
		_, err := sim.Run(sim.Config{World: 3, Model: dataModel}, func(ctx context.Context, l algos.Link) error {
			return alg.Run(ctx, l, algos.Call{Send: l.Alloc(3*8 + 4), Buf: l.Alloc(8), DType: device.F32, Op: device.Sum})
		})
		if err == nil || !strings.Contains(err.Error(), "reduce_scatter") {
			t.Errorf("%s: send of 28 bytes for blocks of 8 at p=3: got error %v, want one naming reduce_scatter", alg.Name, err)
		}
	}
}

func TestCollectivesBLayout(t *testing.T) {
	tests := []struct {
		coll             string
		count, p         int
		send, recv, used int
		busFactorAt4     float64
	}{
		{"reduce_scatter", 10, 4, 8, 2, 8, 0.75},
		{"reduce_scatter", 3, 4, 0, 0, 0, 0.75},
		{"allgather", 10, 4, 2, 8, 8, 0.75},
		{"allgather", 12, 4, 3, 12, 12, 0.75},
		{"alltoall", 10, 4, 8, 8, 8, 0.75},
		{"barrier", 10, 4, 0, 0, 0, 0},
		{"scan", 10, 4, 0, 10, 10, 1},
	}
	for _, tt := range tests {
		c, err := algos.Lookup(tt.coll)
		if err != nil {
			t.Fatal(err)
		}
		send, recv, used := c.Layout(tt.count, tt.p)
		if send != tt.send || recv != tt.recv || used != tt.used {
			t.Errorf("%s Layout(%d, %d) = (%d, %d, %d), want (%d, %d, %d)", tt.coll, tt.count, tt.p, send, recv, used, tt.send, tt.recv, tt.used)
		}
		if f := c.BusFactor(4); f != tt.busFactorAt4 {
			t.Errorf("%s BusFactor(4) = %g, want %g", tt.coll, f, tt.busFactorAt4)
		}
		if want := tt.coll == "reduce_scatter" || tt.coll == "scan"; c.Reduces != want {
			t.Errorf("%s Reduces = %v, want %v", tt.coll, c.Reduces, want)
		}
	}
}

// TestCollectivesBEmpty checks that every algorithm of reduce_scatter,
// allgather, alltoall, barrier and scan accepts empty buffers, nil ones
// included (Layout gives zero sizes below p elements), and sends nothing
// for them but a barrier's signals.
func TestCollectivesBEmpty(t *testing.T) {
	for _, coll := range []string{"reduce_scatter", "allgather", "alltoall", "barrier", "scan"} {
		for _, alg := range algorithms(t, coll) {
			for _, p := range []int{1, 3, 4} {
				for _, nilBufs := range []bool{false, true} {
					res, err := sim.Run(sim.Config{World: p, Model: dataModel, HostData: true}, func(ctx context.Context, l algos.Link) error {
						c := algos.Call{DType: device.F32, Op: device.Sum}
						if !nilBufs {
							c.Send, c.Buf = l.Alloc(0), l.Alloc(0)
						}
						return alg.Run(ctx, l, c)
					})
					if err != nil {
						t.Errorf("%s %s, p=%d, nil buffers %v: %v", coll, alg.Name, p, nilBufs, err)
						continue
					}
					if coll != "barrier" && res.Messages != 0 {
						t.Errorf("%s %s, p=%d: %d messages for an empty buffer", coll, alg.Name, p, res.Messages)
					}
				}
			}
		}
	}
}
