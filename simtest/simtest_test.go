package simtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sim"
)

var alphaBeta = MustParseNetwork(`[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
`)

// fatTree is the 3:1 two-tier fat tree of scenarios/oversubscribed-ethernet.toml.
func fatTree(t *testing.T) *Network {
	n, err := LoadNetwork("../scenarios/oversubscribed-ethernet.toml")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fakeTB records failures instead of failing the test, to test the
// assertions themselves.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper()                      {}
func (f *fakeTB) Errorf(string, ...any)        { f.failed = true }
func (f *fakeTB) Fatalf(string, ...any)        { f.failed = true; panic(f) }
func (f *fakeTB) Fatal(...any)                 { f.failed = true; panic(f) }
func (f *fakeTB) Logf(format string, _ ...any) { f.msg = format }

// fails reports whether fn failed tb.
func fails(fn func(tb testing.TB)) (failed bool) {
	f := &fakeTB{}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
		failed = f.failed
	}()
	fn(f)
	return f.failed
}

func TestAssertions(t *testing.T) {
	c := Case{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 1 << 20}
	got := alphaBeta.Time(t, c)
	want := 6 * (5*sim.Microsecond + sim.Time(float64(1<<18)/12.5e9*1e12))
	AssertTime(t, "ring", got, want, 0)
	if !fails(func(tb testing.TB) { AssertTime(tb, "ring", got, want+1, 0) }) {
		t.Error("AssertTime passed a time a picosecond off")
	}
	if fails(func(tb testing.TB) { AssertTime(tb, "ring", got, want+1, 1) }) {
		t.Error("AssertTime failed within the tolerance")
	}
	alphaBeta.AssertWithin(t, c, "ring", 1)
	big := Case{Collective: "allreduce", Algorithm: "recursive_doubling", World: 16, Bytes: 64 << 20}
	if !fails(func(tb testing.TB) { alphaBeta.AssertWithin(tb, big, "ring", 1.5) }) {
		t.Error("AssertWithin passed recursive doubling at 64 MiB within 1.5 of the ring")
	}
	for _, bad := range []Case{
		{Collective: "allreduce", Algorithm: "nosuch", World: 4},
		{Collective: "nosuch", Algorithm: "ring", World: 4},
		{Collective: "allreduce", Algorithm: "ring", World: 0},
		{Collective: "allreduce", Algorithm: "ring", World: 4, DType: "f128"},
		{Collective: "allreduce", Algorithm: "halving_doubling", World: 6, Bytes: 1024, Data: true, Op: "prod"},
	} {
		if bad.Algorithm == "halving_doubling" {
			// Runs on any world; with real data the result is checked.
			if fails(func(tb testing.TB) { alphaBeta.Time(tb, bad) }) {
				t.Errorf("%v failed", bad)
			}
			continue
		}
		if !fails(func(tb testing.TB) { alphaBeta.Time(tb, bad) }) {
			t.Errorf("%v: no failure", bad)
		}
	}
}

// A wrong algorithm fails the run when the case checks its data.
func TestWrongDataFails(t *testing.T) {
	algos.MustRegisterAlgorithm("allreduce", &algos.Algorithm{Name: "simtest_wrong", Summary: "does nothing",
		Run: func(context.Context, algos.Link, algos.Call) error { return nil }})
	c := Case{Collective: "allreduce", Algorithm: "simtest_wrong", World: 3, Bytes: 96, Data: true}
	if _, err := alphaBeta.Simulate(c); err == nil || !strings.Contains(err.Error(), "rank") {
		t.Errorf("a wrong allreduce: %v", err)
	}
	c.Data = false
	if _, err := alphaBeta.Simulate(c); err != nil {
		t.Errorf("phantom: %v", err)
	}
}

func TestRunBody(t *testing.T) {
	res := fatTree(t).Run(t, 12, false, func(ctx context.Context, l algos.Link) error {
		buf := l.Alloc(1<<20 - 4)
		if err := algos.RingAllreduce(ctx, l, buf, device.F32, device.Sum); err != nil {
			return err
		}
		return algos.RingAllreduce(ctx, l, buf, device.F32, device.Sum)
	})
	one := fatTree(t).Time(t, Case{Collective: "allreduce", Algorithm: "ring", World: 12, Bytes: 1 << 20})
	if res.End < 2*one*9/10 {
		t.Errorf("two ring allreduces took %v, one %v", res.End, one)
	}
}

func TestGolden(t *testing.T) {
	cases := []Case{
		{Collective: "allreduce", Algorithm: "ring", World: 12, Bytes: 1 << 20},
		{Collective: "allreduce", Algorithm: "halving_doubling", World: 12, Bytes: 1 << 20},
		{Collective: "alltoall", Algorithm: "pairwise", World: 24, Bytes: 96 << 10},
	}
	fatTree(t).Golden(t, "testdata/fat-tree.csv", cases)
	// It is a results.csv, which results.csv's readers read.
	if tab, err := results.ReadFile("testdata/fat-tree.csv", results.ColDType, results.ColMessages); err != nil || len(tab.Rows) != len(cases) {
		t.Errorf("the golden file as a results.csv: %v", err)
	}

	// A golden file that no longer matches fails, and the update writes it.
	path := filepath.Join(t.TempDir(), "golden.csv")
	if !fails(func(tb testing.TB) { alphaBeta.Golden(tb, path, cases[:1]) }) {
		t.Error("a missing golden file passed")
	}
	t.Setenv(UpdateEnv, "1")
	alphaBeta.Golden(t, path, cases[:1])
	t.Setenv(UpdateEnv, "")
	alphaBeta.Golden(t, path, cases[:1])
	if !fails(func(tb testing.TB) { alphaBeta.Golden(tb, path, cases[:2]) }) {
		t.Error("a golden file with a row less passed")
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "collective,algorithm,world,bytes,dtype,time_s,messages\nallreduce,ring,12,1048576,f32,") {
		t.Errorf("golden file:\n%s", data)
	}
}
