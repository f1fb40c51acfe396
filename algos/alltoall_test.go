package algos_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestAlltoallData checks that every alltoall algorithm delivers block j
// of rank i's send buffer to block i of rank j's receive buffer. Every
// (source, destination) pair has its own random bytes
// (algotest.Tagged), so a block sent to the wrong rank, or put in the
// wrong place, is caught.
func TestAlltoallData(t *testing.T) {
	t.Parallel()
	algs := algorithms(t, "alltoall")
	for _, p := range dataWorlds() {
		for _, dt := range dataTypes(p) {
			for ci, block := range blockCounts(p, dt) {
				for _, alg := range algs {
					skewed := (p+ci)%2 == 1
					err := runHost(p, skewed, func(ctx context.Context, l algos.Link) error {
						r := l.Rank()
						in := algotest.AlltoallInput(block, dt, r, p, dataSeed)
						send := device.Host(append([]byte(nil), in...))
						recv := device.Host(make([]byte, len(in)))
						if err := alg.Run(ctx, l, algos.Call{Send: send, Buf: recv, DType: dt}); err != nil {
							return err
						}
						if err := algotest.Compare(recv, algotest.AlltoallOutput(block, dt, r, p, dataSeed), dt); err != nil {
							return fmt.Errorf("result: %w", err)
						}
						if err := algotest.Compare(send, in, dt); err != nil {
							return fmt.Errorf("send buffer changed: %w", err)
						}
						return nil
					})
					if err != nil {
						t.Fatalf("alltoall %s: world %d, block %d, %s, skewed %v (seed %d): %v", alg.Name, p, block, dt, skewed, dataSeed, err)
					}
				}
			}
		}
	}
}

// bruckMovedBlocks is c_k of AlltoallBruck's doc comment: the number of j
// in [0, p) with bit k (of value d = 2^k) set.
func bruckMovedBlocks(p, d int) int {
	return p/(2*d)*d + max(0, p%(2*d)-d)
}

// TestBruckMovedBlocks checks the closed form of c_k against counting.
func TestBruckMovedBlocks(t *testing.T) {
	for p := 1; p <= 200; p++ {
		for d := 1; d < p; d *= 2 {
			n := 0
			for j := range p {
				if j&d != 0 {
					n++
				}
			}
			if got := bruckMovedBlocks(p, d); got != n {
				t.Fatalf("p=%d d=%d: closed form %d, count %d", p, d, got, n)
			}
		}
	}
}

// TestAlltoallCost checks each algorithm's simulated time on alpha-beta
// against its closed form: the rows of reference/cost-models.md for
// pairwise and bruck (powers of two), and the derived ones of the doc
// comments for linear and for bruck at other p.
func TestAlltoallCost(t *testing.T) {
	t.Parallel()
	pairwise := func(m sim.AlphaBeta, p int, n float64) float64 {
		a, b, _ := abg(m)
		return float64(p-1) * (a + n/float64(p)*b)
	}
	rows := []costRow{
		{alg: "pairwise", time: pairwise},
		{alg: "linear", time: pairwise},
		// Row "alltoall | bruck (p = 2^k)": lg p (α + (n/2)β).
		{alg: "bruck", holds: func(p int, _ sim.AlphaBeta, _ float64) bool { return p&(p-1) == 0 },
			time: func(m sim.AlphaBeta, p int, n float64) float64 {
				a, b, _ := abg(m)
				return lgCeil(p) * (a + n/2*b)
			}},
		// Any p: the sum over rounds of α + c_k (n/p)β.
		{alg: "bruck", time: func(m sim.AlphaBeta, p int, n float64) float64 {
			a, b, _ := abg(m)
			s := 0.0
			for d := 1; d < p; d *= 2 {
				s += a + float64(bruckMovedBlocks(p, d))*n/float64(p)*b
			}
			return s
		}},
	}
	checkCostTable(t, "alltoall", rows, []int{4, 4096, 1 << 20}, func(p, b int) (int, int, int) {
		return p * b, p * b, p * b
	})
}

func TestAlltoallBadBuffers(t *testing.T) {
	for _, alg := range algorithms(t, "alltoall") {
		_, err := sim.Run(sim.Config{World: 4, Model: dataModel}, func(ctx context.Context, l algos.Link) error {
			return alg.Run(ctx, l, algos.Call{Send: l.Alloc(4 * 8), Buf: l.Alloc(4*8 + 4), DType: device.F32})
		})
		if err == nil {
			t.Errorf("%s: receive buffer larger than send buffer: no error", alg.Name)
		}
		_, err = sim.Run(sim.Config{World: 4, Model: dataModel}, func(ctx context.Context, l algos.Link) error {
			return alg.Run(ctx, l, algos.Call{Send: l.Alloc(12), Buf: l.Alloc(12), DType: device.F32})
		})
		if err == nil {
			t.Errorf("%s: 3 elements for 4 ranks: no error", alg.Name)
		}
	}
}
