package algos_test

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestScanData checks the inclusive and the exclusive scan bit for bit
// against the rank-by-rank reference. algotest.Input makes every partial
// result exact in every type, whatever the order of reduction.
func TestScanData(t *testing.T) {
	t.Parallel()
	alg := algorithm(t, "scan", "recursive_doubling")
	for _, p := range dataWorlds() {
		for _, dt := range dataTypes(p) {
			counts := []int{0, 1, p - 1, p, largeCount(p, dt)}
			for ci, count := range counts {
				for oi, op := range device.Ops() {
					if (ci == 4 || p > 33) && oi != int(dt)%4 {
						continue // as in TestReduceScatterData
					}
					inputs := make([][]byte, p)
					for r := range inputs {
						inputs[r] = algotest.Input(count, dt, op, r, p, dataSeed)
					}
					for _, exclusive := range []bool{false, true} {
						want := algotest.Scanned(count, dt, op, p, dataSeed, exclusive)
						params := map[string]int{"exclusive": 0}
						if exclusive {
							params["exclusive"] = 1
						}
						skewed := (p+ci)%2 == 1
						err := runHost(p, skewed, func(ctx context.Context, l algos.Link) error {
							buf := device.Host(append([]byte(nil), inputs[l.Rank()]...))
							if err := alg.Run(ctx, l, algos.Call{Buf: buf, DType: dt, Op: op, Params: params}); err != nil {
								return err
							}
							return algotest.Compare(buf, want[l.Rank()], dt)
						})
						if err != nil {
							t.Fatalf("scan (exclusive %v): world %d, count %d, %s %s, skewed %v (seed %d): %v",
								exclusive, p, count, dt, op, skewed, dataSeed, err)
						}
					}
				}
			}
		}
	}
}

// scanShortRound reports whether the scan at p ranks finishes one
// reduction early: when 2^(K-1) < p <= 3·2^(K-2), K = ceil(lg p), the
// rank that feeds the last rank in the last round stopped receiving a
// round before, so the last message leaves one reduction sooner.
func scanShortRound(p int) bool {
	k := int(lgCeil(p))
	return k >= 2 && 4*p <= 3<<k
}

// TestScanCost checks the scan's simulated time on alpha-beta. The row
// "scan | recursive_doubling" of reference/cost-models.md,
// ceil(lg p)(α + nβ + nγ), holds where no round is short (powers of two
// among them); where one is, the time is one nγ less; an exclusive scan
// over 2 ranks is α + nβ. All of it holds while nγ < α + nβ, when a
// reduction hides behind a transfer (see doc_collectives_b.go).
func TestScanCost(t *testing.T) {
	t.Parallel()
	fast := func(p int, m sim.AlphaBeta, n float64) bool {
		a, b, g := abg(m)
		return n*g < a+n*b
	}
	scan := func(exclusive bool) func(m sim.AlphaBeta, p int, n float64) float64 {
		return func(m sim.AlphaBeta, p int, n float64) float64 {
			a, b, g := abg(m)
			k := lgCeil(p)
			switch {
			case exclusive && p == 2:
				return a + n*b
			case scanShortRound(p):
				return k*(a+n*b) + (k-1)*n*g
			}
			return k * (a + n*b + n*g)
		}
	}
	rows := []costRow{
		{alg: "recursive_doubling", holds: fast, time: scan(false)},
		{alg: "recursive_doubling", params: map[string]int{"exclusive": 1}, holds: fast, time: scan(true)},
	}
	checkCostTable(t, "scan", rows, []int{4, 4096, 1 << 20}, func(_, b int) (int, int, int) {
		return 0, b, b
	})
}

// TestScanCostRow checks that the reference row itself is met where the
// derived formula says so: at powers of two, on the worked example.
func TestScanCostRow(t *testing.T) {
	alg := algorithm(t, "scan", "recursive_doubling")
	for _, p := range []int{2, 4, 8, 16, 32, 64, 128} {
		n := 8 << 20
		got := phantomTime(t, worked, p, alg, 0, n, nil)
		a, b, g := abg(worked)
		if want := lgCeil(p) * (a + float64(n)*(b+g)); relErr(got, want) > 1e-6 {
			t.Errorf("p=%d: simulated %.4f us, row %.4f us", p, got*1e6, want*1e6)
		}
	}
}

func TestScanBadBuffer(t *testing.T) {
	alg := algorithm(t, "scan", "recursive_doubling")
	_, err := sim.Run(sim.Config{World: 3, Model: dataModel}, func(ctx context.Context, l algos.Link) error {
		return alg.Run(ctx, l, algos.Call{Buf: l.Alloc(6), DType: device.F32, Op: device.Sum})
	})
	if err == nil {
		t.Error("scan over 6 bytes of f32: no error")
	}
}
