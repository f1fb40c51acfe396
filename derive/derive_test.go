package derive_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// The worked parameters of reference/cost-models.md.
const (
	alpha = 5e-6
	beta  = 1 / 12.5e9
	gamma = 1 / 25e9
)

const network = `name = "derive"
seed = 1

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"
`

// run parses and runs a scenario, returning its rows.
func run(t *testing.T, file, src string) []sweep.Row {
	t.Helper()
	s, err := scenario.Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	var rows []sweep.Row
	err = sweep.Run(context.Background(), points, sweep.Options{}, func(r sweep.Row) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// ringTime and hdTime are the closed forms of reference/cost-models.md:
// ring is 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ; halving-doubling at
// p' = 2^floor(lg p) is 2 lg p' α + 2((p'-1)/p')nβ + ((p'-1)/p')nγ, plus
// 2α + 2nβ + nγ for the fold when p is not a power of two.
func ringTime(p int, n float64) float64 {
	f := float64(p-1) / float64(p)
	return 2*float64(p-1)*alpha + 2*f*n*beta + f*n*gamma
}

func hdTime(p int, n float64) float64 {
	lg := bits.Len(uint(p)) - 1
	q := 1 << lg
	f := float64(q-1) / float64(q)
	t := 2*float64(lg)*alpha + 2*f*n*beta + f*n*gamma
	if q != p {
		t += 2*alpha + 2*n*beta + n*gamma
	}
	return t
}

// analyticCrossover solves ringTime(p, n) = hdTime(p, n) for n: both are
// a + b n, so n = (a_ring - a_hd) / (b_hd - b_ring).
func analyticCrossover(p int) float64 {
	aR, aH := ringTime(p, 0), hdTime(p, 0)
	bR, bH := ringTime(p, 1)-aR, hdTime(p, 1)-aH
	return (aR - aH) / (bH - bR)
}

// TestRingHalvingDoublingCrossover derives the ring vs halving-doubling
// crossover on alpha-beta and checks it against the analytic one, within
// one sweep step (a factor of 2). At powers of two halving-doubling always
// wins (the same bandwidth term, fewer latencies), so the crossover exists
// off them, where the fold's extra 2nβ + nγ overtakes the ring's extra
// latencies.
func TestRingHalvingDoublingCrossover(t *testing.T) {
	rows := run(t, "x.toml", network+`
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling"]
world = [5, 6, 8, 12]
bytes = "1KiB..16MiB x2"
`)
	res, err := derive.Derive(rows, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]derive.Crossover{}
	for _, x := range res.Crossovers {
		if x.Collective != "allreduce" || x.DType != "f32" {
			t.Errorf("crossover %+v", x)
		}
		if _, dup := found[x.World]; dup {
			t.Errorf("world %d: two crossovers", x.World)
		}
		found[x.World] = x
	}
	if _, ok := found[8]; ok {
		t.Errorf("world 8: a crossover %+v, but halving-doubling wins everywhere at powers of two", found[8])
	}
	for _, p := range []int{5, 6, 12} {
		x, ok := found[p]
		if !ok {
			t.Errorf("world %d: no crossover derived", p)
			continue
		}
		want := analyticCrossover(p)
		if x.Below != "halving_doubling" || x.Above != "ring" {
			t.Errorf("world %d: %s below and %s above, want halving_doubling below and ring above", p, x.Below, x.Above)
		}
		if r := x.Bytes / want; r < 0.5 || r > 2 {
			t.Errorf("world %d: derived crossover %.0f bytes, analytic %.0f: more than one sweep step (x2) apart", p, x.Bytes, want)
		}
		if float64(x.Lo) > want*2 || float64(x.Hi) < want/2 {
			t.Errorf("world %d: bracket [%d, %d] far from the analytic %.0f", p, x.Lo, x.Hi, want)
		}
		t.Logf("world %d: derived %.0f B, analytic %.0f B (ratio %.3f)", p, x.Bytes, want, x.Bytes/want)
	}
	// The tuning table switches at the same place.
	tc := res.Tuning.Collective("allreduce")
	if tc == nil {
		t.Fatal("no allreduce in the table")
	}
	for _, x := range tc.Crossovers {
		if x.MinWorld > 6 || (x.MaxWorld != 0 && x.MaxWorld < 6) {
			continue
		}
		if len(x.Steps) != 2 || x.Steps[0].Algorithm != "halving_doubling" || x.Steps[1].Algorithm != "ring" ||
			math.Abs(float64(x.Steps[1].FromBytes)-found[6].Bytes) > 1 {
			t.Errorf("world 6 steps %+v, want halving_doubling then ring from %.0f", x.Steps, found[6].Bytes)
		}
	}
}

// TestAutoWithDerivedTable runs a scenario, derives its table, runs auto
// with it on the same points, and checks that auto is within 5% of the
// best algorithm at every point (it picks the very algorithm, so it ties).
func TestAutoWithDerivedTable(t *testing.T) {
	dir := t.TempDir()
	sweeps := `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "recursive_doubling", "direct", "pipelined_ring", "auto"]
world = [2, 3, 4, 6, 8, 16]
bytes = [0, 4, 1024, "16KiB..16MiB x4"]
params = { segment = ["256KiB", "2MiB"] }
`
	file := filepath.Join(dir, "s.toml")
	rows := run(t, file, network+sweeps)
	res, err := derive.Derive(rows, derive.Options{Description: "test", Source: "derive_test"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := res.Tuning.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := algos.ParseTuning("tuning.toml", buf.Bytes()); err != nil {
		t.Fatalf("the derived table does not read back: %v\n%s", err, buf.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "tuning.toml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tuned := run(t, file, strings.Replace(network, "seed = 1\n", "seed = 1\ntuning = \"tuning.toml\"\n", 1)+sweeps)

	best := map[string]float64{}
	key := func(r sweep.Row) string { return fmt.Sprint(r.Collective, r.World, r.Bytes) }
	for _, r := range rows {
		if r.Algorithm == "auto" {
			continue
		}
		if b, ok := best[key(r)]; !ok || r.Time < b {
			best[key(r)] = r.Time
		}
	}
	n, worseDefault := 0, 0
	for i, r := range tuned {
		if r.Algorithm != "auto" {
			continue
		}
		n++
		b := best[key(r)]
		if r.Time > b*1.05 {
			t.Errorf("world %d, %d bytes: auto with the derived table takes %g s, the best %g s (+%.1f%%)", r.World, r.Bytes, r.Time, b, 100*(r.Time/b-1))
		}
		if rows[i].Time > b*1.05 {
			worseDefault++
		}
	}
	if n != 6*9 {
		t.Errorf("%d auto points, want 54", n)
	}
	t.Logf("nexar's default table is more than 5%% off the best at %d of %d points; the derived one at none", worseDefault, n)
	// The best segment is reported for the pipelined ring.
	segs := 0
	for _, b := range res.BestParams {
		if b.Algorithm != "pipelined_ring" || (b.Params["segment"] != 256<<10 && b.Params["segment"] != 2<<20) || b.Time > b.Slowest {
			t.Errorf("best params %+v", b)
		}
		segs++
	}
	if segs != 6*8 { // every point but those of 0 bytes, which take no time
		t.Errorf("%d best-segment entries, want one per point of a positive size (48)", segs)
	}
}

func row(coll, alg string, world, bytes int, time float64) sweep.Row {
	return sweep.Row{Row: results.Row{Collective: coll, Algorithm: alg, World: world, Bytes: bytes, DType: "f32", Time: time}}
}

// TestInterpolation checks the log-scale interpolation on curves that are
// straight lines on log-log axes: t = c·n^k, whose crossover is exact.
func TestInterpolation(t *testing.T) {
	// a = 1e-6 n^0.5, b = 1e-8 n: equal at n = 10^4.
	var rows []sweep.Row
	for _, n := range []int{1000, 8000, 64000} {
		rows = append(rows,
			row("allreduce", "ring", 4, n, 1e-6*math.Sqrt(float64(n))),
			row("allreduce", "direct", 4, n, 1e-8*float64(n)))
	}
	res, err := derive.Derive(rows, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Crossovers) != 1 {
		t.Fatalf("crossovers %+v", res.Crossovers)
	}
	x := res.Crossovers[0]
	// On log-log axes ln(ta/tb) = ln(100) - 0.5 ln n, linear in ln n, so
	// the interpolation is exact: n = 10^4.
	if x.Below != "direct" || x.Above != "ring" || math.Abs(x.Bytes-1e4) > 1e-6 || x.Lo != 8000 || x.Hi != 64000 {
		t.Errorf("crossover %+v, want direct below 10000 and ring above", x)
	}
	steps := res.Tuning.Collective("allreduce").Crossovers[0].Steps
	if len(steps) != 2 || !reflect.DeepEqual(steps[0], algos.Step{FromBytes: 0, Algorithm: "direct"}) || !reflect.DeepEqual(steps[1], algos.Step{FromBytes: 10000, Algorithm: "ring"}) {
		t.Errorf("steps %+v", steps)
	}
}

// TestLossyNeverInTable: a compressed allreduce that is fastest from some
// size on has its crossover reported, but the table keeps to the exact
// algorithms (ring below, direct above), since it computes something else.
func TestLossyNeverInTable(t *testing.T) {
	var rows []sweep.Row
	for _, n := range []int{1000, 8000, 64000} {
		rows = append(rows,
			row("allreduce", "ring", 4, n, 1e-6*math.Sqrt(float64(n))),
			row("allreduce", "direct", 4, n, 1e-8*float64(n)),
			row("allreduce", "compressed_topk(ppm=1000)", 4, n, 3e-5))
	}
	res, err := derive.Derive(rows, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lossy := 0
	for _, x := range res.Crossovers {
		if strings.HasPrefix(x.Below, "compressed") || strings.HasPrefix(x.Above, "compressed") {
			lossy++
		}
	}
	if lossy == 0 {
		t.Errorf("no crossover of the compressed allreduce in %+v", res.Crossovers)
	}
	tc := res.Tuning.Collective("allreduce")
	for _, x := range tc.Crossovers {
		for _, st := range x.Steps {
			if st.Algorithm == "compressed_topk" {
				t.Errorf("the table picks the lossy algorithm: %+v", x)
			}
		}
	}
	for _, r := range tc.Rules {
		if r.Algorithm == "compressed_topk" {
			t.Errorf("the table's rule picks the lossy algorithm: %+v", r)
		}
	}
}

func TestTableShape(t *testing.T) {
	var rows []sweep.Row
	for _, w := range []int{2, 4, 6} {
		for _, n := range []int{0, 100, 1000} {
			rows = append(rows,
				row("allreduce", "ring", w, n, 1+float64(n)/1000),
				// ties with ring everywhere: never a crossover, and ring,
				// the simpler (earlier in the catalogue), wins the ties.
				row("allreduce", "rs_ag", w, n, 1+float64(n)/1000))
			if w != 6 {
				// recursive_doubling is slower below 1000 bytes, faster at it:
				// ln(t_ring/t_rd) goes from ln(1.1/1.525) at 100 bytes to
				// ln(2/1.75) at 1000, crossing zero at ln n = ln 100 +
				// ln 10 · 0.70986, n = 512.6.
				rows = append(rows, row("allreduce", "recursive_doubling", w, n, 1.5+float64(n)/4000))
			}
			rows = append(rows, row("allreduce", "auto", w, n, 9), // ignored
				row("allreduce", "ring", w, n, 7)) // a second row of a point: ignored
		}
	}
	rows = append(rows, row("broadcast", "flat", 4, 1, 1))
	bf := row("allreduce", "ring", 2, 100, 5)
	bf.DType = "bf16"
	rows = append(rows, bf)
	res, err := derive.Derive(rows, derive.Options{Description: "d", Source: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	res.Tuning.WriteTo(&b)
	// Worlds 2 and 4 are powers of two: their entries cover only
	// themselves; 6's covers 5 too, a non-power like it; 3, between two
	// swept powers, takes the rule bounded to the swept range, and the
	// worlds outside it nexar's own rule.
	want := `# nexar-go tuning table (see algos.Tuning for the format).
version = 1
description = "d [allreduce from worlds 2-6 (nexar's rule elsewhere)]"
source = "s"

[[collective.allreduce.crossover]]
world = 2
[[collective.allreduce.crossover.step]]
from_bytes = 0
algorithm = "ring"
[[collective.allreduce.crossover.step]]
from_bytes = 513
algorithm = "recursive_doubling"

[[collective.allreduce.crossover]]
world = 4
[[collective.allreduce.crossover.step]]
from_bytes = 0
algorithm = "ring"
[[collective.allreduce.crossover.step]]
from_bytes = 513
algorithm = "recursive_doubling"

[[collective.allreduce.crossover]]
min_world = 5
max_world = 6
[[collective.allreduce.crossover.step]]
from_bytes = 0
algorithm = "ring"

[[collective.allreduce.rule]]
algorithm = "ring"
min_world = 2
max_world = 6

[[collective.allreduce.rule]]
algorithm = "pipelined_ring"
params = { segment = 2097152 }
min_bytes = 8388608

[[collective.allreduce.rule]]
algorithm = "ring"
max_world = 8

[[collective.allreduce.rule]]
algorithm = "ring"
count_below_world = true

[[collective.allreduce.rule]]
algorithm = "halving_doubling"
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, w := range []string{"allreduce: derived from dtype f32; rows of [bf16] were left out", "broadcast: only one algorithm variant (flat) ran"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q do not say %q", notes, w)
		}
	}
	// ring and rs_ag vs recursive_doubling at 100..1000 bytes, at worlds 2
	// and 4.
	if len(res.Crossovers) != 4 || res.Crossovers[0].Bytes != res.Crossovers[3].Bytes || math.Ceil(res.Crossovers[0].Bytes) != 513 {
		t.Errorf("crossovers %+v", res.Crossovers)
	}
	if _, err := derive.Derive([]sweep.Row{row("allreduce", "nope", 2, 1, 1)}, derive.Options{}); err == nil {
		t.Error("no error for an unknown algorithm")
	}
}

// TestTiesGoToTheSimpler: where the pipelined ring pipelines nothing it
// takes the ring's time, and the ring, which declares no parameter, wins
// the tie whatever the names' order (a segment of "2MiB" sorts before
// "ring"); where the two tie at one swept size and the pipelined ring is
// faster at the next, it starts just above the tie, not at the next size.
func TestTiesGoToTheSimpler(t *testing.T) {
	const pr2, pr8 = "pipelined_ring(segment=2MiB)", "pipelined_ring(segment=8MiB)"
	var rows []sweep.Row
	for _, tc := range []struct {
		n             int
		ring, pr, pr8 float64
	}{
		{1 << 20, 1e-3, 1e-3, 1e-3},
		{4 << 20, 4e-3, 4e-3, 4e-3},
		{16 << 20, 16e-3, 12e-3, 12e-3},
	} {
		rows = append(rows,
			row("allreduce", pr8, 8, tc.n, tc.pr8),
			row("allreduce", pr2, 8, tc.n, tc.pr),
			row("allreduce", "ring", 8, tc.n, tc.ring))
	}
	for i := range rows {
		if p, ok := strings.CutPrefix(rows[i].Algorithm, "pipelined_ring(segment="); ok {
			rows[i].Params = "segment=" + map[string]string{"2MiB)": "2097152", "8MiB)": "8388608"}[p]
		}
	}
	res, err := derive.Derive(rows, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := res.Tuning.Collective("allreduce").Crossovers[0].Steps
	want := []algos.Step{
		{FromBytes: 0, Algorithm: "ring"},
		{FromBytes: 4<<20 + 1, Algorithm: "pipelined_ring", Params: map[string]int{"segment": 2 << 20}},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("steps %+v, want %+v", steps, want)
	}
	for _, b := range res.BestParams {
		if b.Bytes == 16<<20 && b.Variant != pr2 {
			t.Errorf("best segment at 16 MiB %s, want the smaller of two that tie (%s)", b.Variant, pr2)
		}
	}
}

// TestTableRange: a table swept on worlds 4, 8, 12 and 16 says so; the
// entry of 8, a power of two, where halving-doubling folds on the
// non-powers above, does not pass to 9-11, which take 12's, a non-power's
// (12's covers 9-15); 5-7, between two swept powers, take the rule bounded
// to 4-16, and 2 and 32 nexar's rule.
func TestTableRange(t *testing.T) {
	var rows []sweep.Row
	for _, w := range []int{4, 8, 12, 16} {
		for _, n := range []int{1000, 100000} {
			hd := 1e-6 * float64(n) / 1000
			if w == 8 || w == 16 {
				hd /= 2
			}
			if w == 12 && n == 1000 {
				hd /= 3 // 12's entry: halving-doubling below 100 KB, ring above
			}
			rows = append(rows,
				row("allreduce", "ring", w, n, 1e-6*float64(n)/1000),
				row("allreduce", "halving_doubling", w, n, hd))
		}
	}
	res, err := derive.Derive(rows, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tun := res.Tuning
	if ch, err := tun.Select("allreduce", 9, 1000, 250); err != nil || ch.Algorithm != "halving_doubling" {
		t.Errorf("world 9, 1000 bytes: %+v, %v: want 12's entry, halving_doubling", ch, err)
	}
	if !strings.Contains(tun.Description, "allreduce from worlds 4-16") {
		t.Errorf("description %q does not state the worlds", tun.Description)
	}
	def := algos.DefaultTuning()
	for _, tc := range []struct {
		world int
		want  string
	}{
		{4, "ring"}, {5, "halving_doubling"}, {7, "halving_doubling"}, {8, "halving_doubling"},
		{9, "ring"}, {11, "ring"}, {12, "ring"}, {15, "ring"}, {16, "halving_doubling"},
		{2, "default"}, {17, "default"}, {64, "default"},
	} {
		ch, err := tun.Select("allreduce", tc.world, 100000, 25000)
		if err != nil {
			t.Fatalf("world %d: %v", tc.world, err)
		}
		want := tc.want
		if want == "default" {
			d, err := def.Select("allreduce", tc.world, 100000, 25000)
			if err != nil {
				t.Fatal(err)
			}
			want = d.Algorithm
		}
		if ch.Algorithm != want {
			t.Errorf("world %d: %s (%s), want %s", tc.world, ch.Algorithm, ch.From, want)
		}
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "worlds outside the swept 4-16 take nexar's built-in rule") {
		t.Errorf("notes %q do not say what happens outside the swept worlds", notes)
	}
}
