package sweep_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// Test collectives, registered in this test binary only: an allreduce
// with broken algorithms, and a collective that is not in place and rounds
// its count down to a multiple of the world size.
func init() {
	ring, _ := mustLookup("allreduce").Algorithm("ring")
	algos.Register(&algos.Collective{
		Name:      "sweeptest-allreduce",
		BusFactor: func(p int) float64 { return 2 * float64(p-1) / float64(p) },
		Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
		Reduces:   true,
		Algorithms: []*algos.Algorithm{
			{Name: "ring", Run: ring.Run},
			{Name: "noop", Run: func(context.Context, algos.Link, algos.Call) error { return nil }},
			{Name: "hang", Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
				return algos.Recv(ctx, l, (l.Rank()+1)%l.Size(), 1, c.Buf)
			}},
			{Name: "fail", Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
				if l.Rank() == 1 {
					return errors.New("rank 1 gives up")
				}
				return nil
			}},
			algos.AutoAlgorithm("sweeptest-allreduce", func(_ int, c algos.Call) (int, int) { return c.Buf.Len(), c.Buf.Len() / c.DType.Size() }),
			{Name: "pow2", PowerOfTwo: true, Params: map[string]int{"segment": 1024}, Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
				if c.Param("segment", 1024) != 4096 {
					return fmt.Errorf("segment %d, want 4096", c.Param("segment", 1024))
				}
				return nil
			}},
		},
	})
	algos.Register(&algos.Collective{
		Name:      "sweeptest-scatter",
		BusFactor: func(p int) float64 { return float64(p-1) / float64(p) },
		Layout: func(count, p int) (int, int, int) {
			n := count / p
			return n * p, n, n * p
		},
		Reduces: true,
		Algorithms: []*algos.Algorithm{
			{Name: "check-buffers", Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
				if c.Send == nil || c.Send.Len() != c.Buf.Len()*l.Size() {
					return fmt.Errorf("send buffer %v for receive buffer of %d bytes", c.Send, c.Buf.Len())
				}
				return nil
			}},
		},
	})
}

// sweeptest-allreduce computes what allreduce does: its reference is
// allreduce's.
func init() {
	allreduce, _ := algotest.LookupReference("allreduce")
	algotest.RegisterReference("sweeptest-allreduce", allreduce)
}

func mustLookup(name string) *algos.Collective {
	c, err := algos.Lookup(name)
	if err != nil {
		panic(err)
	}
	return c
}

const network = `name = "test"
seed = 3

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"
`

// switchNetwork is network with a switch that reduces, which the
// catalogue's in-network algorithms (NVLS, CollNet) need.
const switchNetwork = network + `switch_reduce_bandwidth = "25GB/s"
`

func plan(t *testing.T, sweeps string) []sweep.Point {
	t.Helper()
	s, err := scenario.Parse("test.toml", []byte(network+sweeps))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	return points
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / want }

func TestWorkedExample(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [8]
bytes = ["8MiB"]
`)
	if len(points) != 1 {
		t.Fatalf("%d points, want 1", len(points))
	}
	row, err := sweep.RunPoint(points[0])
	if err != nil {
		t.Fatal(err)
	}
	// reference/cost-models.md: p = 8, n = 8 MiB: ring = 1538.0064 us.
	if want := 1538.0064e-6; relErr(row.Time, want) > 1e-7 {
		t.Errorf("time %.10g s, want %.10g s", row.Time, want)
	}
	algbw := float64(8<<20) / row.Time / 1e9
	if row.Bytes != 8<<20 || row.AlgBW != algbw || row.BusBW != algbw*2*7/8 {
		t.Errorf("row %+v, want algbw %g, busbw %g", row, algbw, algbw*2*7/8)
	}
	want := sweep.Row{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 8 << 20, DType: "f32", Time: row.Time, AlgBW: algbw, BusBW: row.BusBW,
		Op: "sum", Repeats: 1, TimeMin: row.Time, TimeMax: row.Time, Messages: 2 * 7 * 8}, Symmetry: "cyclic"}
	if row != want {
		t.Errorf("row %+v, want %+v", row, want)
	}
}

func TestPlanOrder(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["noop", "ring"]
world = [4, 2]
bytes = [8, 0]

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [3]
bytes = [16]
dtype = "u8"
op = "max"
data = "host"
`)
	var got []string
	for _, p := range points {
		got = append(got, fmt.Sprintf("%d %s", p.Sweep, p))
	}
	want := []string{
		"0 sweeptest-allreduce/noop world=4 bytes=8 f32 sum phantom",
		"0 sweeptest-allreduce/noop world=4 bytes=0 f32 sum phantom",
		"0 sweeptest-allreduce/noop world=2 bytes=8 f32 sum phantom",
		"0 sweeptest-allreduce/noop world=2 bytes=0 f32 sum phantom",
		"0 sweeptest-allreduce/ring world=4 bytes=8 f32 sum phantom",
		"0 sweeptest-allreduce/ring world=4 bytes=0 f32 sum phantom",
		"0 sweeptest-allreduce/ring world=2 bytes=8 f32 sum phantom",
		"0 sweeptest-allreduce/ring world=2 bytes=0 f32 sum phantom",
		"1 allreduce/ring world=3 bytes=16 u8 max host",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := points[8]; p.Seed != 3 || p.Model(p.Seed) != (sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}) {
		t.Errorf("point seed %d model %+v", p.Seed, p.Model(p.Seed))
	}
	for i, p := range points {
		if p.Index != i {
			t.Errorf("point %d has index %d", i, p.Index)
		}
	}
}

func TestHostDataPasses(t *testing.T) {
	var sweeps strings.Builder
	for _, dt := range []string{"f32", "bf16", "i8", "u64", "f64"} {
		for _, op := range []string{"sum", "prod", "min", "max"} {
			fmt.Fprintf(&sweeps, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [1, 2, 3, 5, 8]
bytes = [0, 8, 1000, "8KiB"]
dtype = %q
op = %q
data = "host"
`, dt, op)
		}
	}
	points := plan(t, sweeps.String())
	if len(points) != 5*4*5*4 {
		t.Fatalf("%d points", len(points))
	}
	for _, p := range points {
		row, err := sweep.RunPoint(p)
		if err != nil {
			t.Fatal(err)
		}
		if row.Bytes != p.Bytes {
			t.Fatalf("%v: ran %d bytes", p, row.Bytes)
		}
	}
}

func TestHostDataMismatch(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["noop"]
world = [3]
bytes = [64]
data = "host"
`)
	_, err := sweep.RunPoint(points[0])
	if err == nil {
		t.Fatal("no error for an algorithm that does nothing")
	}
	var de *sweep.DataError
	var re *sim.RankErrors
	if !errors.As(err, &de) || !errors.As(err, &re) || len(*re) != 3 {
		t.Fatalf("error %v: want *sweep.DataError in *sim.RankErrors for 3 ranks", err)
	}
	msg := err.Error()
	for _, want := range []string{"sweeptest-allreduce/noop world=3 bytes=64 f32 sum host", "rank 0: wrong data:", "rank 2: wrong data:", "elements wrong"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func TestFailedRuns(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["hang", "fail"]
world = [4]
bytes = [64]
`)
	_, err := sweep.RunPoint(points[0])
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) || !strings.HasPrefix(err.Error(), "sweeptest-allreduce/hang world=4 bytes=64") {
		t.Errorf("hang: error %v, want a deadlock naming the point", err)
	}
	_, err = sweep.RunPoint(points[1])
	var re *sim.RankErrors
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "rank 1: rank 1 gives up") {
		t.Errorf("fail: error %v, want rank 1's error", err)
	}
}

func TestLayoutRounding(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "sweeptest-scatter"
algorithms = ["check-buffers"]
world = [3]
bytes = [40, 8, 0]
`)
	var got []int
	for _, p := range points {
		if p.InPlace() {
			t.Errorf("%v: in place", p)
		}
		row, err := sweep.RunPoint(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row.Bytes)
		if row.Bytes == 0 && (row.AlgBW != 0 || row.BusBW != 0) {
			t.Errorf("%v: bandwidths %g, %g for 0 bytes", p, row.AlgBW, row.BusBW)
		}
	}
	// 10 f32 elements round down to 9 (a multiple of 3), 2 to 0.
	if fmt.Sprint(got) != "[36 0 0]" {
		t.Errorf("bytes run %v, want [36 0 0]", got)
	}
}

func TestParams(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["pow2", "noop"]
world = [4]
bytes = [64]
params = { segment = "4KiB" }
`)
	if len(points[0].Params) != 1 || len(points[1].Params) != 0 {
		t.Errorf("params %v and %v: each algorithm gets only its own", points[0].Params, points[1].Params)
	}
	for _, p := range points {
		if _, err := sweep.RunPoint(p); err != nil {
			t.Error(err)
		}
	}
	_, err := scenario.Parse("t.toml", []byte(network+`
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["pow2"]
world = [4, 6]
bytes = [64]
`))
	if err == nil || !strings.Contains(err.Error(), `t.toml:13: sweep[0].world: world size 6: algorithm "pow2" needs a power of two`) {
		t.Errorf("power-of-two check: %v", err)
	}
}

func TestPlanErrors(t *testing.T) {
	s, err := scenario.Parse("p.toml", []byte(network+`
[[sweep]]
collective = "sweeptest-scatter"
algorithms = ["check-buffers"]
world = [2]
bytes = [64]
data = "host"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [1024]
bytes = ["1GiB"]
data = "host"
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sweep.Plan(s)
	var errs scenario.Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("Plan: %v, want 2 errors", err)
	}
	if !strings.HasPrefix(errs[0].Error(), `p.toml:15: sweep[0].data: collective "sweeptest-scatter" has no host-data check`) {
		t.Errorf("error 0: %v", errs[0])
	}
	if !strings.HasPrefix(errs[1].Error(), `p.toml:22: sweep[1].data: data = "host" at world 1024 and 1073741824 bytes needs about`) {
		t.Errorf("error 1: %v", errs[1])
	}
}

// TestReadCSV: ReadCSV reads nexar-sim's results.csv (results.Read with
// its columns) and checks each row's params; a file without nexar-sim's
// columns is an error naming the first missing.
func TestReadCSV(t *testing.T) {
	head := strings.Join(results.SimColumns, ",") + "\n"
	rows, err := sweep.ReadCSV(strings.NewReader(head + "allreduce,pipelined_ring(segment=2MiB),8,4,f32,1e-9,1,1,segment=2097152,sum,5,0,0,0,3\n"))
	want := []sweep.Row{{Row: results.Row{Collective: "allreduce", Algorithm: "pipelined_ring(segment=2MiB)", World: 8, Bytes: 4, DType: "f32",
		Time: 1e-9, AlgBW: 1, BusBW: 1, Params: "segment=2097152", Op: "sum", Repeats: 5, Messages: 3}}}
	if err != nil || !slices.Equal(rows, want) {
		t.Errorf("ReadCSV = %+v, %v; want %+v", rows, err, want)
	}
	for _, c := range []struct{ in, want string }{
		{head + "allreduce,ring,8,4,f32,1e-9,1,1,segment,sum,5,0,0,0,3\n", `2: column "params": `},
		{"collective,algorithm,world,bytes,time_s\nallreduce,ring,8,4,1e-9\n", `1: the header has no "dtype" column`},
	} {
		var e *results.Error
		if _, err := sweep.ReadCSV(strings.NewReader(c.in)); !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want a *results.Error %q...", c.in, err, c.want)
		}
	}
}

// TestNewRowRounds checks that a row's times are whole picoseconds, the
// simulator's clock, however the median and spread fall: the CSV record
// prints them without floating-point noise and reads back to the row.
func TestNewRowRounds(t *testing.T) {
	p := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = [1024]
`)[0]
	// 1477713 ns and 1477714 ns + 1 ps as a sum of doubles gives them;
	// the median is half-way between two ticks, as is the spread.
	times := []float64{0.0014777129999999999, 0.001477714 + 1e-12}
	row := sweep.NewRow(p, times, 4)
	var b bytes.Buffer
	w := results.NewWriter(&b, results.SimColumns, results.SimDecimals)
	w.Write(row.Row)
	w.Flush()
	rec := strings.Split(strings.Split(b.String(), "\n")[1], ",")
	// Half a tick rounds either way, as floating point has it.
	if rec[11] != "0.001477713000" || rec[12] != "0.001477714001" ||
		!slices.Contains([]string{"0.001477713500", "0.001477713501"}, rec[5]) ||
		!slices.Contains([]string{"0.000000000500", "0.000000000501"}, rec[13]) {
		t.Errorf("time_s, time_min_s, time_max_s, spread_s = %s, %s, %s, %s", rec[5], rec[11], rec[12], rec[13])
	}
	back, err := sweep.ReadCSV(&b)
	if err != nil || len(back) != 1 || back[0] != row {
		t.Errorf("ReadCSV = %+v, %v; want %+v", back, err, row)
	}
}

func TestRun(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 4]
bytes = [0, 1024, 4096]

[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["ring", "noop"]
world = [2]
bytes = [64]
`)
	var progress []string
	var rows []sweep.Row
	opt := sweep.Options{Jobs: 1, Sweep: func(i int, pts []sweep.Point) {
		progress = append(progress, fmt.Sprintf("%d:%d", i, len(pts)))
	}}
	err := sweep.Run(context.Background(), points, opt, func(r sweep.Row) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(progress) != "[0:6 1:2]" || len(rows) != 8 {
		t.Errorf("progress %v, %d rows", progress, len(rows))
	}
	// Rows match RunPoint's, in order.
	for i, p := range points {
		if r, _ := sweep.RunPoint(p); r != rows[i] {
			t.Errorf("row %d = %+v, RunPoint gives %+v", i, rows[i], r)
		}
	}

	stop := errors.New("stop")
	n := 0
	err = sweep.Run(context.Background(), points, sweep.Options{}, func(sweep.Row) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("Run with failing emit: %v after %d rows", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sweep.Run(ctx, points, sweep.Options{}, func(sweep.Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with cancelled context: %v", err)
	}
}

func TestPointString(t *testing.T) {
	coll := mustLookup("sweeptest-scatter")
	p := sweep.Point{Collective: coll, Algorithm: coll.Algorithms[0], World: 4, Bytes: 64, DType: device.I32, Op: device.Min,
		Params: map[string]int{"b": 2, "a": 1}, Data: scenario.Host}
	if got, want := p.String(), "sweeptest-scatter/check-buffers world=4 bytes=64 i32 min a=1 b=2 host"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s, r, u := p.Layout(); s != 16 || r != 4 || u != 16 || p.UsedBytes() != 64 {
		t.Errorf("Layout() = %d, %d, %d", s, r, u)
	}
}

// TestJobsDeterministic checks that any number of jobs gives the rows of
// one job, in the same order.
func TestJobsDeterministic(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "pipelined_ring", "auto"]
world = [2, 3, 8, 17]
bytes = [0, 4, "1KiB..4MiB x16"]
params = { segment = ["64KiB", "1MiB"] }

[[sweep]]
collective = "broadcast"
algorithms = ["binomial_tree", "pipelined_chain"]
world = [5]
bytes = ["1KiB", "1MiB"]
dtype = ["f32", "u8"]
root = 2
data = "host"
`)
	collect := func(jobs int) []sweep.Row {
		var rows []sweep.Row
		var dones []int
		err := sweep.Run(context.Background(), points, sweep.Options{Jobs: jobs, Done: func(done, total int) {
			if total != len(points) {
				t.Errorf("total %d", total)
			}
			dones = append(dones, done)
		}}, func(r sweep.Row) error {
			rows = append(rows, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range dones {
			if d != i+1 {
				t.Fatalf("jobs %d: done %v, want 1, 2, 3...", jobs, dones)
			}
		}
		return rows
	}
	one := collect(1)
	if len(one) != len(points) {
		t.Fatalf("%d rows for %d points", len(one), len(points))
	}
	for _, jobs := range []int{2, 8, 0} {
		if got := collect(jobs); !slices.Equal(got, one) {
			t.Errorf("jobs %d: rows differ from one job's", jobs)
		}
	}
	// Variant names, parameters and dtypes reach the rows.
	names := map[string]string{}
	for _, r := range one {
		names[r.Algorithm] = r.Params
	}
	if names["pipelined_ring(segment=64KiB)"] != "segment=65536" || names["pipelined_ring(segment=1MiB)"] != "segment=1048576" || names["ring"] != "" {
		t.Errorf("variants %v", names)
	}
	if last := one[len(one)-1]; last.DType != "u8" || last.Collective != "broadcast" || last.Op != "" {
		t.Errorf("last row %+v", last)
	}
}

// TestRunStops checks which rows Run emits when a point fails or the
// context is cancelled, with several jobs.
func TestRunStops(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["ring", "fail", "noop"]
world = [4]
bytes = [64, 128, 256]
`)
	// Points 3..5 fail; the rows before come out, those after do not.
	var rows []sweep.Row
	err := sweep.Run(context.Background(), points, sweep.Options{Jobs: 4}, func(r sweep.Row) error {
		rows = append(rows, r)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "sweeptest-allreduce/fail world=4 bytes=64 ") || len(rows) != 3 {
		t.Errorf("Run: %v after %d rows, want the failure of point 3 after 3 rows", err, len(rows))
	}
	// Cancelling after the second row: the rows of the points under way
	// still come out, in order, and Run returns the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	rows = nil
	all := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 128]
bytes = "1KiB..64MiB x2"
`)
	err = sweep.Run(ctx, all, sweep.Options{Jobs: 2}, func(r sweep.Row) error {
		rows = append(rows, r)
		if len(rows) == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || len(rows) < 2 || len(rows) >= len(all) {
		t.Errorf("cancelled Run: %v after %d of %d rows", err, len(rows), len(all))
	}
	for i, r := range rows[:min(4, len(rows))] {
		if want, _ := sweep.RunPoint(all[i]); r != want {
			t.Errorf("row %d out of order after cancelling", i)
		}
	}
}

// TestHostChecksEveryCollective runs every algorithm of every collective
// of the catalogue with host data, checked against its reference in
// algotest, at awkward worlds and sizes and a non-zero root, and checks
// that a wrong algorithm fails where the collective moves data.
func TestHostChecksEveryCollective(t *testing.T) {
	var src strings.Builder
	for _, name := range []string{"allgather", "alltoall", "barrier", "broadcast", "gather", "reduce_scatter", "reduce", "scan", "scatter", "sendrecv", "allreduce"} {
		c := mustLookup(name)
		if !sweep.HasCheck(c) {
			t.Errorf("%s has no host-data check", name)
			continue
		}
		var algs []string
		for _, a := range c.Algorithms {
			if !a.PowerOfTwo {
				algs = append(algs, fmt.Sprintf("%q", a.Name))
			}
		}
		root := ""
		if c.Rooted {
			root = "root = 2"
		}
		op := ""
		if c.Reduces {
			op = `op = "max"`
		}
		fmt.Fprintf(&src, `
[[sweep]]
collective = %q
algorithms = [%s]
world = [3, 5, 8]
bytes = [0, 8, 120, 1000, "64KiB"]
dtype = ["i32", "f16"]
data = "host"
%s
%s
`, name, strings.Join(algs, ", "), root, op)
	}
	src.WriteString(`
[[sweep]]
collective = "scan"
algorithms = ["recursive_doubling"]
world = [1, 6]
bytes = [24, "4KiB"]
data = "host"
params = { exclusive = [0, 1] }
`)
	points := planOn(t, switchNetwork, src.String())
	err := sweep.Run(context.Background(), points, sweep.Options{}, func(sweep.Row) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d host-data points checked", len(points))

	// An algorithm that does nothing fails every check.
	noop := &algos.Algorithm{Name: "noop", Run: func(context.Context, algos.Link, algos.Call) error { return nil }}
	checked := map[string]bool{}
	for _, p := range points {
		if p.World != 5 || p.Bytes != 120 || checked[p.Collective.Name] || p.Collective.Name == "barrier" {
			continue
		}
		checked[p.Collective.Name] = true
		p.Algorithm, p.Name = noop, ""
		_, err := sweep.RunPoint(p)
		var de *sweep.DataError
		if !errors.As(err, &de) {
			t.Errorf("%v: error %v, want wrong data", p, err)
		}
	}
	if len(checked) != 10 {
		t.Errorf("checked %d collectives with a broken algorithm, want 10", len(checked))
	}
}

func TestPlanNetworkAndTuningErrors(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t.toml")
	if err := os.WriteFile(table, []byte(`version = 1
[[collective.sweeptest-allreduce.rule]]
algorithm = "pow2"
max_bytes = 1000
[[collective.sweeptest-allreduce.rule]]
algorithm = "ring"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `name = "t"
tuning = "t.toml"

[network]
model = "flow"
latency = "1us"
bandwidth = "1GB/s"
ports = 8

[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["ring", "auto"]
world = [4, 6, 8, 16]
bytes = [64, 4096]
`
	s, err := scenario.Parse(filepath.Join(dir, "s.toml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sweep.Plan(s)
	var errs scenario.Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("Plan: %v, want 2 errors", err)
	}
	if !strings.HasSuffix(errs[1].File, "s.toml") || errs[1].Line != 13 || !strings.Contains(errs[1].Msg, "world size 16: the network cannot run it: ") {
		t.Errorf("error 1: %v", errs[1])
	}
	if errs[0].Key != "tuning" || errs[0].Line != 2 ||
		!strings.Contains(errs[0].Msg, "auto at world 6 and 64 bytes: the tuning table's rule 1 selects pow2, which needs a power-of-two world") {
		t.Errorf("error 0: %v (line %d)", errs[0], errs[0].Line)
	}
	// auto with that table runs where it can.
	s, err = scenario.Parse(filepath.Join(dir, "s.toml"), []byte(strings.Replace(src, "[4, 6, 8, 16]", "[4, 8]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		if p.Tuning == nil {
			t.Errorf("%v: no tuning table", p)
		}
		row, err := sweep.RunPoint(p)
		// pow2 fails unless its segment is 4096: the table's choice ran.
		if p.Algorithm.Name == "auto" && p.Bytes == 64 {
			if err == nil || !strings.Contains(err.Error(), "segment 1024, want 4096") {
				t.Errorf("%v: %v, want pow2's complaint", p, err)
			}
			continue
		}
		if err != nil || row.Time <= 0 {
			t.Errorf("%v: %+v %v", p, row, err)
		}
	}
}

// TestRepeat checks that a point with noise runs once per seed and
// reports the median and the spread, reproducibly.
func TestRepeat(t *testing.T) {
	src := strings.Replace(network, "[network]", `[[fault]]
kind = "jitter"
dist = "exponential"
mean = "2us"

[network]`, 1) + `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [8]
bytes = ["64KiB"]
repeat = 5
`
	s, err := scenario.Parse("r.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	p := points[0]
	row, err := sweep.RunPoint(p)
	if err != nil {
		t.Fatal(err)
	}
	var times []float64
	for k := range 5 {
		res, err := sweep.RunOnce(p, p.Seed+uint64(k), nil)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, res.End.Seconds())
	}
	slices.Sort(times)
	if row.Repeats != 5 || row.Time != times[2] || row.TimeMin != times[0] || row.TimeMax != times[4] || math.Abs(row.Spread-(times[4]-times[0])/2) > 0.5e-12 {
		t.Errorf("row %+v, times %v", row, times)
	}
	if times[0] == times[4] {
		t.Errorf("five seeds gave one time %g: no noise", times[0])
	}
	// Without noise: 2(p-1) alpha and the bandwidth terms; jitter only adds.
	if quiet := 2*7*5e-6 + 2*7.0/8*65536/12.5e9 + 7.0/8*65536/25e9; row.TimeMin < quiet {
		t.Errorf("noisy time %g below the noiseless %g", row.TimeMin, quiet)
	}
	again, _ := sweep.RunPoint(p)
	if again != row {
		t.Error("the same point and seeds gave another row")
	}
	if !strings.Contains(p.String(), "repeat=5") {
		t.Errorf("point %q does not say it repeats", p)
	}
}
