package algos_test

// Helpers shared by the tests of reduce_scatter, allgather, alltoall,
// barrier and scan: they run catalogue algorithms by name, so the tests
// also check that every algorithm is registered where scenarios find it.

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// dataSeed seeds every input of the data tests; failures print it.
const dataSeed = 7

// dataModel is the network of the data tests. Its parameters only change
// timing, but they make ranks that reduce more fall behind the others.
var dataModel = sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}

// dataWorlds are the world sizes of the data tests: 1..33, 64, 127 and
// 128, or a sample of them under -short.
func dataWorlds() []int {
	if testing.Short() {
		return []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33}
	}
	w := make([]int, 0, 36)
	for p := 1; p <= 33; p++ {
		w = append(w, p)
	}
	return append(w, 64, 127, 128)
}

// allTypeWorlds are the world sizes at which every type (and op) is
// tested; f32, i32 and bf16 are tested at every size.
var allTypeWorlds = map[int]bool{1: true, 2: true, 3: true, 5: true, 8: true, 13: true}

// largeCount is the large prime count of elements of the data tests at
// world p for type dt: nccl-tests' count of the whole buffer, rounded down
// per collective, so blocks are large and odd. 100003 where it is cheap
// enough (small worlds, the three types tested everywhere), 10007
// elsewhere and 1009 under -short, so the tests stay fast on two cores.
func largeCount(p int, dt device.DType) int {
	switch {
	case testing.Short():
		return 1009
	case p <= 8 && (dt == device.F32 || dt == device.I32 || dt == device.BF16):
		return 100003
	}
	return 10007
}

// dataTypes returns the types to test at world p.
func dataTypes(p int) []device.DType {
	if allTypeWorlds[p] {
		return device.DTypes()
	}
	return []device.DType{device.F32, device.I32, device.BF16}
}

// algorithms returns the catalogue's algorithms of collective name.
func algorithms(t testing.TB, name string) []*algos.Algorithm {
	t.Helper()
	c, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Algorithms) == 0 {
		t.Fatalf("collective %s has no algorithms", name)
	}
	return c.Algorithms
}

// algorithm returns algorithm alg of collective coll from the catalogue.
func algorithm(t testing.TB, coll, alg string) *algos.Algorithm {
	t.Helper()
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Algorithm(alg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// skew delays a rank by a seeded amount of compute (up to about three
// latencies of dataModel) before it enters a collective, so that ranks
// arrive at different times and early messages must wait for their
// receives.
func skew(l algos.Link, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, uint64(l.Rank())))
	scratch := l.Alloc(rng.IntN(64 << 10))
	return l.Reduce(scratch, scratch, device.U8, device.Max)
}

// runHost runs body on p ranks with real data, entering through skew when
// skewed.
func runHost(p int, skewed bool, body func(ctx context.Context, l algos.Link) error) error {
	_, err := sim.Run(sim.Config{World: p, Model: dataModel, HostData: true}, func(ctx context.Context, l algos.Link) error {
		if skewed {
			if err := skew(l, dataSeed+uint64(p)); err != nil {
				return err
			}
		}
		return body(ctx, l)
	})
	return err
}

// phantomTime runs alg on p phantom ranks with send and recv buffers of
// the given sizes and returns the simulated time in seconds.
func phantomTime(t *testing.T, m sim.Model, p int, alg *algos.Algorithm, send, recv int, params map[string]int) float64 {
	t.Helper()
	res, err := sim.Run(sim.Config{World: p, Model: m}, func(ctx context.Context, l algos.Link) error {
		c := algos.Call{Buf: l.Alloc(recv), DType: device.F32, Op: device.Sum, Params: params}
		if send > 0 {
			c.Send = l.Alloc(send)
		}
		return alg.Run(ctx, l, c)
	})
	if err != nil {
		t.Fatalf("%s, p=%d: %v", alg.Name, p, err)
	}
	return res.End.Seconds()
}

// lgCeil is ceil(lg p), the number of rounds of the logarithmic algorithms.
func lgCeil(p int) float64 { return float64(bits.Len(uint(p - 1))) }

// isPow2 reports whether p is a power of two.
func isPow2(p int) bool { return p > 0 && p&(p-1) == 0 }

// costWorlds are the world sizes of the cost tests.
func costWorlds() []int {
	w := make([]int, 0, 36)
	for p := 1; p <= 33; p++ {
		w = append(w, p)
	}
	return append(w, 64, 127, 128)
}

// costModels are the networks of the cost tests: the worked example of
// reference/cost-models.md, where reductions are fast (nγ < α + nβ for
// every size), and one where reducing is slower than sending.
var costModels = []struct {
	name string
	m    sim.AlphaBeta
}{
	{"worked", worked},
	{"slow-reduce", sim.AlphaBeta{Latency: 2 * sim.Microsecond, Bandwidth: 50e9, ReduceBandwidth: 5e9}},
}

// abg returns α, β and γ of m in seconds and seconds per byte.
func abg(m sim.AlphaBeta) (a, b, g float64) {
	g = 0
	if m.ReduceBandwidth > 0 {
		g = 1 / m.ReduceBandwidth
	}
	return m.Latency.Seconds(), 1 / m.Bandwidth, g
}

// costRow is one row of a cost table: an algorithm, the world sizes its
// formula covers, and the formula.
type costRow struct {
	alg    string
	params map[string]int
	// holds says whether the formula holds at p ranks and n bytes under
	// model m; nil means always.
	holds func(p int, m sim.AlphaBeta, n float64) bool
	// time is the closed form in seconds at p ranks and n bytes (n as
	// nccl-tests counts it for the collective).
	time func(m sim.AlphaBeta, p int, n float64) float64
}

// checkCostTable checks every row of collective coll at every world size
// and model, with blocks of each of blockBytes; layout gives the send and
// receive bytes and n for p ranks and a block of b bytes.
func checkCostTable(t *testing.T, coll string, rows []costRow, blockBytes []int, layout func(p, b int) (send, recv, n int)) {
	t.Helper()
	for _, row := range rows {
		alg := algorithm(t, coll, row.alg)
		checked := 0
		for _, cm := range costModels {
			for _, p := range costWorlds() {
				for _, b := range blockBytes {
					send, recv, n := layout(p, b)
					if row.holds != nil && !row.holds(p, cm.m, float64(n)) {
						continue
					}
					got := phantomTime(t, cm.m, p, alg, send, recv, row.params)
					want := row.time(cm.m, p, float64(n))
					if e := relErr(got, want); e > 1e-6 {
						t.Errorf("%s %s %v, %s model, p=%d, n=%d: simulated %.6f us, formula %.6f us (relative error %.2g)",
							coll, row.alg, row.params, cm.name, p, n, got*1e6, want*1e6, e)
					}
					checked++
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s %s: no world size checked", coll, row.alg)
		}
	}
}
