package algos_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// compressedCase is a compressed allreduce of the catalogue, with its
// parameters.
type compressedCase struct {
	name   string
	params map[string]int
}

func (c compressedCase) compression(t testing.TB) algos.Compression {
	t.Helper()
	coll, _ := algos.Lookup("allreduce")
	a, err := coll.Algorithm(c.name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := a.Compression(c.params)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (c compressedCase) String() string { return fmt.Sprintf("%s%v", c.name, c.params) }

// compressedCases send one element (ppm = 1), 1%, 30% and everything.
var compressedCases = []compressedCase{
	{"compressed_topk", map[string]int{"ppm": 1}},
	{"compressed_topk", map[string]int{"ppm": 10_000}},
	{"compressed_topk", map[string]int{"ppm": 300_000}},
	{"compressed_topk", map[string]int{"ppm": 1_000_000}},
	{"compressed_randomk", map[string]int{"ppm": 10_000, "seed": 3}},
	{"compressed_randomk", map[string]int{"ppm": 300_000, "seed": 4}},
	{"compressed_randomk", map[string]int{"ppm": 1_000_000}},
}

// compressedCombo is the combo of cc with the reference of cfg: the same
// compression of the same inputs (algotest.CompressedReducedOf).
func compressedCombo(cc *arComboCache, cfg algos.Compression, count int, dt device.DType, op device.Op) *arCombo {
	c := *cc.get(count, dt, op)
	c.want = algotest.CompressedReducedOf(cfg, c.inputs, dt, op)
	return &c
}

// compressedWorlds are the worlds of the data tests: one rank, primes,
// powers of two and their neighbours.
func compressedWorlds() []int {
	if testing.Short() {
		return []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17}
	}
	return []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16, 17, 31, 32, 33, 64}
}

// compressedCost is the closed form of a compressed allreduce on
// alpha-beta (see algos' package documentation): with n bytes of count
// elements of e bytes, k = K(count), m = k(4 + e) bytes per rank and
// K = ⌈lg p⌉,
//
//	c·nγ + Kα + (p-1)mβ + (p-1)Rγ
//
// where c = 2 for top-k (the error-feedback add and the selection pass)
// and 1 for random-k, and R = ke bytes reduced per block with Sum, n
// with other ops.
func compressedCost(m sim.AlphaBeta, cfg algos.Compression, p, count, e int, op device.Op) float64 {
	a, b, g := arTerms(m)
	n := float64(count * e)
	k := cfg.K(count)
	c := 2.0
	if cfg.Method == algos.RandomK {
		c = 1
	}
	R := float64(k * e)
	if op != device.Sum {
		R = n
	}
	K := float64(bits.Len(uint(p - 1)))
	return c*n*g + K*a + float64(p-1)*float64(k*(4+e))*b + float64(p-1)*R*g
}

// TestCompressedAllreduceCost checks the closed form against the
// simulator, phantom buffers, on three models, and that timing with real
// data costs the same (the cost depends on sizes only, so phantom timing
// runs and replays stand for data runs).
func TestCompressedAllreduceCost(t *testing.T) {
	models := []sim.AlphaBeta{
		worked,
		{Latency: 50 * sim.Microsecond, Bandwidth: 125e6, ReduceBandwidth: 10e9}, // 1 Gbit/s
		{Latency: sim.Microsecond, Bandwidth: 50e9, ReduceBandwidth: 5e9},        // reduction slower than the wire
	}
	for mi, m := range models {
		for _, cfg := range []algos.Compression{{Method: algos.TopK, Ratio: 0.01}, {Method: algos.RandomK, Ratio: 0.1}, {Method: algos.TopK, Ratio: 1}} {
			for _, p := range []int{1, 2, 3, 5, 8, 16, 64} {
				for _, count := range []int{1, 1000, 1 << 20} {
					for _, op := range []device.Op{device.Sum, device.Max} {
						comp := cfg
						var end sim.Time
						res, err := sim.Run(sim.Config{World: p, Model: m}, func(ctx context.Context, l algos.Link) error {
							c := algos.Compressor{Compression: comp}
							return c.AllReduce(ctx, l, l.Alloc(4*count), device.F32, op)
						})
						if err != nil {
							t.Fatal(err)
						}
						end = res.End
						want := compressedCost(m, cfg, p, count, 4, op)
						if e := relErr(end.Seconds(), want); e > 1e-6 {
							t.Errorf("model %d %s ratio %v p=%d count=%d %s: simulated %.6g s, closed form %.6g s (relative error %.2g)",
								mi, cfg.Method, cfg.Ratio, p, count, op, end.Seconds(), want, e)
						}
					}
				}
			}
		}
	}
	// With data: the same time to the picosecond.
	cfg := algos.Compression{Method: algos.TopK, Ratio: 0.05}
	for _, p := range []int{3, 8} {
		var ends []sim.Time
		for _, host := range []bool{false, true} {
			res, err := sim.Run(sim.Config{World: p, Model: worked, HostData: host}, func(ctx context.Context, l algos.Link) error {
				buf := l.Alloc(4 * 5003)
				if h, ok := device.HostBytes(buf); ok {
					algotest.Fill(h, device.F32, device.Sum, l.Rank(), p, 1)
				}
				c := algos.Compressor{Compression: cfg}
				return c.AllReduce(ctx, l, buf, device.F32, device.Sum)
			})
			if err != nil {
				t.Fatal(err)
			}
			ends = append(ends, res.End)
		}
		if ends[0] != ends[1] {
			t.Errorf("p=%d: phantom run %v, host data %v", p, ends[0], ends[1])
		}
	}
}

// TestCompressedAllreduceData checks every rank's result bit for bit
// against the same compression of the same inputs, reduced rank by rank
// (the reference selects top-k by a sort, independently of the
// algorithm's radix select), on many worlds, for counts 0, 1, p-1, p and a
// prime, f32, i32 and bf16 with an op that changes with the world; every
// type with every op on two and three ranks.
func TestCompressedAllreduceData(t *testing.T) {
	for _, p := range compressedWorlds() {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			large := 4099
			if testing.Short() || p > 17 {
				large = 1009
			}
			combos := arComboCache{world: p}
			types := []device.DType{device.F32, device.I32, device.BF16}
			if p == 2 || p == 3 {
				types = device.DTypes()
			}
			for _, c := range compressedCases {
				cfg := c.compression(t)
				var batch []*arCombo
				for i, dt := range types {
					ops := []device.Op{device.Ops()[(p+i)%len(device.Ops())]}
					if len(types) > 3 {
						ops = device.Ops()
					}
					for _, op := range ops {
						for _, count := range []int{0, 1, p - 1, p, large} {
							batch = append(batch, compressedCombo(&combos, cfg, count, dt, op))
						}
					}
				}
				arCheckBatch(t, c.String(), arCatalogue(t, c.name, c.params), p, batch)
			}
		})
	}
}

// TestCompressedAllreduceExactAtFullRatio: with k = n (ppm = 1000000)
// nothing is dropped, and both compressions compute the exact allreduce,
// equal bit for bit to the rank-by-rank reduction, for every type and op.
func TestCompressedAllreduceExactAtFullRatio(t *testing.T) {
	for _, name := range []string{"compressed_topk", "compressed_randomk"} {
		for _, p := range []int{1, 2, 3, 5, 8} {
			combos := arComboCache{world: p}
			var batch []*arCombo
			for _, dt := range device.DTypes() {
				for _, op := range device.Ops() {
					for _, count := range []int{1, p + 1, 1009} {
						batch = append(batch, combos.get(count, dt, op))
					}
				}
			}
			arCheckBatch(t, name, arCatalogue(t, name, map[string]int{"ppm": 1_000_000}), p, batch)
		}
	}
}

// TestCompressedAllreduceSpecialValues checks top-k's order of magnitudes
// where it is easy to get wrong, on one rank, whose result is its own
// compressed input: NaN above infinities, -0 equal to +0, the most
// negative integer, ties to the lower index; against the reference's sort.
func TestCompressedAllreduceSpecialValues(t *testing.T) {
	f32 := func(vs ...float32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	i16 := func(vs ...int16) []byte {
		b := make([]byte, 2*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		return b
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		dt   device.DType
		in   []byte
		k    int
		want []int // the indices kept
	}{
		{device.F32, f32(1, -inf, 3, nan, -2, 3), 2, []int{1, 3}},
		{device.F32, f32(1, -inf, 3, nan, -2, 3), 3, []int{1, 2, 3}},
		{device.F32, f32(negZero, 0, negZero, 0), 2, []int{0, 1}},
		{device.F32, f32(-2, 2, -2, 2, 1), 3, []int{0, 1, 2}},
		{device.I16, i16(-32768, 32767, -1, 5), 1, []int{0}},
		{device.I16, i16(-32768, 32767, -1, 5), 3, []int{0, 1, 3}},
	} {
		count := len(c.in) / c.dt.Size()
		cfg := algos.Compression{Method: algos.TopK, Ratio: float64(c.k) / float64(count)}
		if got := algotest.SparseIndices(cfg, c.in, c.dt, 0); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s %x k=%d: reference keeps %v, want %v", c.dt, c.in, c.k, got, c.want)
		}
		// The elements as sent: the input plus the zero residual, which
		// turns -0 into +0.
		acc := make([]byte, len(c.in))
		device.ReduceHost(acc, c.in, c.dt, device.Sum)
		want := algotest.SparseReduced(cfg, [][]byte{acc}, c.dt, device.Sum, 0)
		_, err := sim.Run(sim.Config{World: 1, Model: worked, HostData: true}, func(ctx context.Context, l algos.Link) error {
			buf := device.Host(append([]byte(nil), c.in...))
			comp := algos.Compressor{Compression: cfg}
			if err := comp.AllReduce(ctx, l, buf, c.dt, device.Sum); err != nil {
				return err
			}
			// What was not sent stays in the residual, exactly.
			res := comp.Residual().(device.Host)
			for i := range count {
				kept := false
				for _, j := range c.want {
					kept = kept || i == j
				}
				sz := c.dt.Size()
				got, in, r := buf[i*sz:(i+1)*sz], acc[i*sz:(i+1)*sz], res[i*sz:(i+1)*sz]
				if kept && (string(got) != string(in) || string(r) != string(make([]byte, sz))) {
					return fmt.Errorf("element %d kept: result %x, residual %x, input %x", i, got, r, in)
				}
				if !kept && (string(got) != string(make([]byte, sz)) || string(r) != string(in)) {
					return fmt.Errorf("element %d dropped: result %x, residual %x, input %x", i, got, r, in)
				}
			}
			return algotest.Compare(buf, want, c.dt)
		})
		if err != nil {
			t.Errorf("%s %x k=%d: %v", c.dt, c.in, c.k, err)
		}
	}
}

// efRun runs steps compressed allreduces of f64 with error feedback on
// world simulated ranks, each rank keeping one Compressor; input(r, t)
// is rank r's input at step t. With fresh set, every step uses a new
// Compressor instead (no error feedback). It returns rank 0's results
// and, at every step, every rank's residual; it fails if the ranks'
// results differ in any bit.
func efRun(t *testing.T, cfg algos.Compression, world, steps int, fresh bool, input func(r, s int) []float64) (results [][]float64, residuals [][][]float64) {
	t.Helper()
	results = make([][]float64, steps)
	residuals = make([][][]float64, steps)
	for s := range residuals {
		residuals[s] = make([][]float64, world)
	}
	var got [][][]byte // [step][rank]
	for range steps {
		got = append(got, make([][]byte, world))
	}
	_, err := sim.Run(sim.Config{World: world, Model: worked, HostData: true}, func(ctx context.Context, l algos.Link) error {
		comp := &algos.Compressor{Compression: cfg}
		for s := range steps {
			if fresh {
				comp = &algos.Compressor{Compression: cfg}
			}
			buf := f64Bytes(input(l.Rank(), s))
			if err := comp.AllReduce(ctx, algos.Scoped(l, 0, uint64(s)), buf, device.F64, device.Sum); err != nil {
				return err
			}
			got[s][l.Rank()] = buf
			residuals[s][l.Rank()] = f64s(comp.Residual().(device.Host))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for s := range steps {
		for r := 1; r < world; r++ {
			if string(got[s][r]) != string(got[s][0]) {
				t.Fatalf("step %d: rank %d's result differs from rank 0's", s, r)
			}
		}
		results[s] = f64s(got[s][0])
	}
	return results, residuals
}

func f64Bytes(v []float64) device.Host {
	b := make(device.Host, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func f64s(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

func norm2(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// TestCompressedErrorFeedbackTracksSum checks that with error feedback the
// sum of the results over steps tracks the sum of the uncompressed
// allreduces, within a bound that does not grow with the steps.
//
// The bound. Rank r at step t sends c_r^t = a_r^t - e_r^t, where
// a_r^t = x_r^t + e_r^(t-1) is its input plus its residual (e_r^0 = 0)
// and e_r^t the new residual; the result is y^t = Σ_r c_r^t. Summing over
// the steps, the residuals telescope:
//
//	Σ_{s<=t} y^s = Σ_{s<=t} Σ_r x_r^s - Σ_r e_r^t,
//
// an identity (exact here: the inputs are multiples of 1/64 and every sum
// stays far inside f64's integers of that unit). Top-k keeps the k
// largest of the n squares, so ||a - topk(a)||² <= (1 - δ)||a||² with
// δ = k/n, and with q = √(1 - δ) and G the largest ||x_r^t||,
// ||e_r^t|| <= q(G + ||e_r^(t-1)||) <= qG/(1 - q) for every t. So the gap
// between the two sums is at most p·qG/(1 - q) at every step: bounded,
// however many steps. (Random-k keeps a uniform k of the n elements, so
// the same holds for root-mean-square norms, E||a - randk(a)||² =
// (1 - δ)||a||²: a bound in expectation, checked here on one seeded run.)
//
// Without error feedback the dropped parts are lost, and with inputs that
// lean one way, as gradients do, the gap grows with every step: the test
// checks that it passes the bound, so the bound is not vacuous.
func TestCompressedErrorFeedbackTracksSum(t *testing.T) {
	const world, n, steps = 5, 200, 60
	const ratio = 0.1 // k = 20: δ = 0.1, q/(1-q) = 18.5
	input := func(r, s int) []float64 {
		rng := rand.New(rand.NewPCG(uint64(r), uint64(s)))
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(32+rng.IntN(65)) / 64 // in [0.5, 1.5], multiples of 1/64
		}
		return x
	}
	G := 0.0
	exact := make([][]float64, steps) // Σ_r x_r^s
	for s := range steps {
		exact[s] = make([]float64, n)
		for r := range world {
			x := input(r, s)
			G = max(G, norm2(x))
			for i, v := range x {
				exact[s][i] += v
			}
		}
	}
	q := math.Sqrt(1 - ratio)
	bound := world * q * G / (1 - q)
	for _, method := range []algos.Sparsifier{algos.TopK, algos.RandomK} {
		t.Run(method.String(), func(t *testing.T) {
			cfg := algos.Compression{Method: method, Ratio: ratio, Seed: 11}
			results, residuals := efRun(t, cfg, world, steps, false, input)
			gap := make([]float64, n) // Σ_s (y^s - Σ_r x_r^s)
			worst := 0.0
			for s := range steps {
				for i := range gap {
					gap[i] += results[s][i] - exact[s][i]
				}
				// The identity: the gap is minus the sum of the residuals.
				for i := range gap {
					sum := 0.0
					for r := range world {
						sum += residuals[s][r][i]
					}
					if gap[i] != -sum {
						t.Fatalf("step %d element %d: Σ results - Σ exact = %v, -Σ residuals = %v", s, i, gap[i], -sum)
					}
				}
				worst = max(worst, norm2(gap))
				if norm2(gap) > bound {
					t.Fatalf("step %d: ||Σ results - Σ exact|| = %.1f above the bound %.1f", s, norm2(gap), bound)
				}
			}
			t.Logf("%s, δ = %.2f, %d ranks, %d steps: largest gap %.1f, bound p·qG/(1-q) = %.1f (G = %.2f)", method, ratio, world, steps, worst, bound, G)

			results, _ = efRun(t, cfg, world, steps, true, input)
			clear(gap)
			for s := range steps {
				for i := range gap {
					gap[i] += results[s][i] - exact[s][i]
				}
			}
			if norm2(gap) <= bound {
				t.Errorf("without error feedback the gap after %d steps is %.1f, within the bound %.1f: the test would not see feedback missing", steps, norm2(gap), bound)
			}
			t.Logf("without error feedback: gap %.1f after %d steps", norm2(gap), steps)
		})
	}
}

// TestCompressedRandomKSameDraws: random-k draws the same indices on every
// rank (whatever the data), new ones at every step of a Compressor, and
// distinct, increasing indices in range.
func TestCompressedRandomKSameDraws(t *testing.T) {
	const count, k = 1000, 37
	draw := func(seed, step uint64) []uint32 {
		idx := make([]uint32, k)
		algos.RandomKIndices(seed, step, count, idx)
		for j, i := range idx {
			if int(i) >= count || (j > 0 && i <= idx[j-1]) {
				t.Fatalf("seed %d step %d: indices %v not increasing below %d", seed, step, idx, count)
			}
		}
		return idx
	}
	first := fmt.Sprint(draw(5, 0))
	if again := fmt.Sprint(draw(5, 0)); again != first {
		t.Error("the same seed and step draw different indices")
	}
	if fmt.Sprint(draw(5, 1)) == first || fmt.Sprint(draw(6, 0)) == first {
		t.Error("another step or seed draws the same indices")
	}
	// Uniform: over 2000 draws every index comes up about 2000·k/count =
	// 74 times; a chi-square statistic over 1000 cells (999 degrees of
	// freedom, mean 999 and standard deviation 45 for uniform draws) far
	// above that would mean a biased draw.
	hits := make([]float64, count)
	const draws = 2000
	for s := range uint64(draws) {
		for _, i := range draw(9, s) {
			hits[i]++
		}
	}
	exp := float64(draws*k) / count
	chi := 0.0
	for _, h := range hits {
		chi += (h - exp) * (h - exp) / exp
	}
	if chi > 999+6*45 {
		t.Errorf("chi-square %.0f over %d cells: random-k's draws are not uniform", chi, count)
	}
}

// TestCompressedAllreduceBadArguments: misuse is an error naming it.
func TestCompressedAllreduceBadArguments(t *testing.T) {
	for _, c := range []struct {
		name   string
		params map[string]int
	}{
		{"compressed_topk", map[string]int{"ppm": 0}},
		{"compressed_topk", map[string]int{"ppm": 1_000_001}},
		{"compressed_randomk", map[string]int{"seed": -1}},
	} {
		fn := arCatalogue(t, c.name, c.params)
		err := arRunPhantom(t, 2, func(ctx context.Context, l algos.Link) error {
			return fn(ctx, l, l.Alloc(64), device.F32, device.Sum)
		})
		if err == nil {
			t.Errorf("%s %v: no error", c.name, c.params)
		}
	}
	for _, cfg := range []algos.Compression{{Ratio: 0}, {Ratio: 1.5}, {Ratio: math.NaN()}, {Method: 7, Ratio: 0.5}} {
		if cfg.Validate() == nil {
			t.Errorf("%+v: valid", cfg)
		}
	}
	// A Compressor is for one tensor: another size is refused, not
	// silently given the other's residual.
	err := arRunPhantom(t, 2, func(ctx context.Context, l algos.Link) error {
		c := algos.Compressor{Compression: algos.Compression{Method: algos.TopK, Ratio: 0.5}}
		if err := c.AllReduce(ctx, l, l.Alloc(64), device.F32, device.Sum); err != nil {
			return fmt.Errorf("first call: %w", err)
		}
		return c.AllReduce(ctx, l, l.Alloc(128), device.F32, device.Sum)
	})
	if err == nil {
		t.Error("a Compressor took buffers of two sizes")
	}
	// Memory it cannot read.
	err = arRunPhantom(t, 2, func(ctx context.Context, l algos.Link) error {
		c := algos.Compressor{Compression: algos.Compression{Method: algos.TopK, Ratio: 0.5}}
		return c.AllReduce(ctx, l, opaque(64), device.F32, device.Sum)
	})
	if err == nil {
		t.Error("a buffer that is neither host memory nor phantom was accepted")
	}
}

// opaque is memory the host cannot read, as a GPU's.
type opaque int

func (o opaque) Len() int                       { return int(o) }
func (o opaque) Slice(off, n int) device.Buffer { return opaque(n) }

func TestCompressionK(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		count int
		want  int
	}{
		{0.01, 0, 0}, {0.01, 1, 1}, {0.01, 99, 1}, {0.01, 100, 1}, {0.01, 101, 2},
		{0.01, 300, 3}, {0.1, 30, 3}, {1, 7, 7}, {1e-6, 1 << 30, 1074}, {0.5, 3, 2},
	} {
		if got := (algos.Compression{Ratio: c.ratio}).K(c.count); got != c.want {
			t.Errorf("K(%d) at ratio %v = %d, want %d", c.count, c.ratio, got, c.want)
		}
	}
}

// TestCommAllReduceCompressed runs a training loop's pattern through a
// Comm: two tensors, each with its own Compressor, reduced blocking and
// non-blocking (spawned, and deferred on a link that cannot spawn) between
// plain allreduces, for several steps; each result must be the same
// compression of the same inputs plus residuals (algotest.SparseReduced
// over what the ranks hold), and the plain allreduces exact.
func TestCommAllReduceCompressed(t *testing.T) {
	const world, steps = 3, 4
	cfgs := []algos.Compression{{Method: algos.TopK, Ratio: 0.1}, {Method: algos.RandomK, Ratio: 0.2, Seed: 5}}
	counts := []int{97, 40}
	input := func(tensor, r, s int) []byte {
		return algotest.Input(counts[tensor], device.F32, device.Sum, r, world, uint64(100*tensor+s))
	}
	for _, deferred := range []bool{false, true} {
		// What every rank must hold: the reference over each rank's input
		// plus residual, the residuals followed step by step.
		res := make([][][]byte, len(cfgs)) // [tensor][rank]
		for i := range res {
			res[i] = make([][]byte, world)
			for r := range res[i] {
				res[i][r] = make([]byte, 4*counts[i])
			}
		}
		want := make([][][]byte, len(cfgs)) // [tensor][step]
		for i, cfg := range cfgs {
			for s := range steps {
				accs := make([][]byte, world)
				for r := range accs {
					accs[r] = input(i, r, s)
					device.ReduceHost(accs[r], res[i][r], device.F32, device.Sum)
					idx := algotest.SparseIndices(cfg, accs[r], device.F32, uint64(s))
					copy(res[i][r], accs[r])
					for _, j := range idx {
						clear(res[i][r][4*j : 4*j+4])
					}
				}
				want[i] = append(want[i], algotest.SparseReduced(cfg, accs, device.F32, device.Sum, uint64(s)))
			}
		}
		runComm(t, world, deferred, nil, func(ctx context.Context, c *algos.Comm) error {
			comps := []*algos.Compressor{{Compression: cfgs[0]}, {Compression: cfgs[1]}}
			for s := range steps {
				a, b := device.Host(input(0, c.Rank(), s)), device.Host(input(1, c.Rank(), s))
				h := c.IAllReduceCompressed(ctx, comps[1], b, device.F32, device.Sum)
				plain := device.Host(algotest.Input(10, device.I32, device.Sum, c.Rank(), world, 9))
				if err := c.AllReduce(ctx, plain, device.I32, device.Sum); err != nil {
					return err
				}
				if err := algotest.Compare(plain, algotest.Reduced(10, device.I32, device.Sum, world, 9), device.I32); err != nil {
					return fmt.Errorf("step %d: plain allreduce: %w", s, err)
				}
				if err := c.AllReduceCompressed(ctx, comps[0], a, device.F32, device.Sum); err != nil {
					return err
				}
				if err := h.Wait(ctx); err != nil {
					return err
				}
				for i, buf := range []device.Host{a, b} {
					if err := algotest.Compare(buf, want[i][s], device.F32); err != nil {
						return fmt.Errorf("step %d tensor %d: %w", s, i, err)
					}
				}
			}
			if comps[0].Steps() != steps {
				return fmt.Errorf("compressor counted %d steps, want %d", comps[0].Steps(), steps)
			}
			return nil
		})
	}
}
