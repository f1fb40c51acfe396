package algos_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestAllgatherData checks that every allgather algorithm leaves rank i's
// block at block i on every rank. Each rank's block is different random
// bytes (algotest.Tagged), so a block put in the wrong place is caught.
func TestAllgatherData(t *testing.T) {
	t.Parallel()
	algs := algorithms(t, "allgather")
	for _, p := range dataWorlds() {
		for _, dt := range dataTypes(p) {
			for ci, block := range blockCounts(p, dt) {
				want := algotest.Allgathered(block, dt, p, dataSeed)
				for _, alg := range algs {
					skewed := (p+ci)%2 == 1
					err := runHost(p, skewed, func(ctx context.Context, l algos.Link) error {
						in := algotest.AllgatherInput(block, dt, l.Rank(), dataSeed)
						send := device.Host(append([]byte(nil), in...))
						recv := device.Host(make([]byte, p*len(in)))
						if err := alg.Run(ctx, l, algos.Call{Send: send, Buf: recv, DType: dt}); err != nil {
							return err
						}
						if err := algotest.Compare(recv, want, dt); err != nil {
							return fmt.Errorf("result: %w", err)
						}
						if err := algotest.Compare(send, in, dt); err != nil {
							return fmt.Errorf("send buffer changed: %w", err)
						}
						return nil
					})
					if err != nil {
						t.Fatalf("allgather %s: world %d, block %d, %s, skewed %v (seed %d): %v", alg.Name, p, block, dt, skewed, dataSeed, err)
					}
				}
			}
		}
	}
}

// TestAllgatherCost checks each algorithm's simulated time on alpha-beta
// against its row of reference/cost-models.md. recursive_doubling's row
// is for powers of two; TestAllgatherRecursiveDoublingBounds covers the
// rest.
func TestAllgatherCost(t *testing.T) {
	t.Parallel()
	logRounds := func(m sim.AlphaBeta, p int, n float64) float64 {
		a, b, _ := abg(m)
		return lgCeil(p)*a + float64(p-1)/float64(p)*n*b
	}
	rows := []costRow{
		{alg: "ring", time: func(m sim.AlphaBeta, p int, n float64) float64 {
			a, b, _ := abg(m)
			return float64(p-1)*a + float64(p-1)/float64(p)*n*b
		}},
		{alg: "recursive_doubling", time: logRounds, holds: func(p int, _ sim.AlphaBeta, _ float64) bool { return isPow2(p) }},
		{alg: "bruck", time: logRounds},
	}
	checkCostTable(t, "allgather", rows, []int{4, 4096, 1 << 20}, func(p, b int) (int, int, int) {
		return b, p * b, p * b
	})
}

// TestAllgatherRecursiveDoublingBounds: off powers of two MPICH's
// recursive doubling forwards the short groups' blocks inside groups
// (AllgatherRecursiveDoubling): never faster than Bruck's
// ceil(lg p)α + ((p-1)/p)nβ, and at most two messages a round and three
// times the buffer, 2 ceil(lg p)α + 3nβ.
func TestAllgatherRecursiveDoublingBounds(t *testing.T) {
	t.Parallel()
	alg := algorithm(t, "allgather", "recursive_doubling")
	for _, cm := range costModels {
		a, b, _ := abg(cm.m)
		for _, p := range costWorlds() {
			if isPow2(p) {
				continue
			}
			for _, blk := range []int{4, 4096, 1 << 20} {
				n := float64(p * blk)
				lo := lgCeil(p)*a + float64(p-1)/float64(p)*n*b
				hi := 2*lgCeil(p)*a + 3*n*b
				got := phantomTime(t, cm.m, p, alg, blk, p*blk, nil)
				if got < lo*(1-1e-9) || got > hi*(1+1e-9) {
					t.Errorf("%s model, p=%d, n=%g: %.6f us outside [%.6f, %.6f] us", cm.name, p, n, got*1e6, lo*1e6, hi*1e6)
				}
			}
		}
	}
}

func TestAllgatherBadBuffers(t *testing.T) {
	for _, alg := range algorithms(t, "allgather") {
		_, err := sim.Run(sim.Config{World: 4, Model: dataModel}, func(ctx context.Context, l algos.Link) error {
			return alg.Run(ctx, l, algos.Call{Send: l.Alloc(8), Buf: l.Alloc(3 * 8), DType: device.F32})
		})
		if err == nil {
			t.Errorf("%s: receive buffer of 3 blocks at p=4: no error", alg.Name)
		}
	}
}

// Four simulated ranks each contribute one int32, their rank times ten,
// and every rank ends with all four in rank order.
func ExampleAllgatherRing() {
	const world = 4
	results := make([][]int32, world)
	_, err := sim.Run(sim.Config{World: world, Model: sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9}, HostData: true},
		func(ctx context.Context, l algos.Link) error {
			send := make(device.Host, 4)
			binary.LittleEndian.PutUint32(send, uint32(10*l.Rank()))
			recv := make(device.Host, 4*world)
			if err := algos.AllgatherRing(ctx, l, send, recv, device.I32); err != nil {
				return err
			}
			for i := range world {
				results[l.Rank()] = append(results[l.Rank()], int32(binary.LittleEndian.Uint32(recv[4*i:])))
			}
			return nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	for r, got := range results {
		fmt.Printf("rank %d: %v\n", r, got)
	}
	// Output:
	// rank 0: [0 10 20 30]
	// rank 1: [0 10 20 30]
	// rank 2: [0 10 20 30]
	// rank 3: [0 10 20 30]
}
