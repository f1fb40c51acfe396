package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// A user's collective, registered in this test binary only, as a user's
// module registers one: every rank's buffer moves to the next rank around
// a ring. "ring" does it; "noop" leaves the data where it is, wrong on
// every rank. livetest-shift has its reference registered;
// livetest-unchecked, the same collective, has none.
func init() {
	shift := func(name string) *algos.Collective {
		return &algos.Collective{
			Name:      name,
			BusFactor: func(int) float64 { return 1 },
			Layout:    func(count, _ int) (int, int, int) { return 0, count, count },
			Algorithms: []*algos.Algorithm{
				{Name: "ring", Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
					r, p := l.Rank(), l.Size()
					prev := l.Alloc(c.Buf.Len())
					if err := algos.SendRecv(ctx, l, (r+1)%p, c.Buf, (r+p-1)%p, prev, 1); err != nil {
						return err
					}
					return l.Copy(c.Buf, prev)
				}},
				{Name: "noop", Run: func(context.Context, algos.Link, algos.Call) error { return nil }},
			},
		}
	}
	algos.Register(shift("livetest-shift"))
	algos.Register(shift("livetest-unchecked"))
	// Rank r starts with data of its own and must end with rank r-1's.
	algotest.RegisterReference("livetest-shift", func(c algotest.Case) algotest.Data {
		return func(rank int, _, buf []byte) []byte {
			copy(buf, algotest.Distinct(c.Count, c.DType, rank, c.Seed))
			return algotest.Distinct(c.Count, c.DType, (rank+c.World-1)%c.World, c.Seed)
		}
	})
}

const shiftScenario = `name = "shift"
[network]
model = "alpha-beta"
latency = "10us"
bandwidth = "1GB/s"
[[sweep]]
collective = "livetest-shift"
algorithms = ["ring", "noop"]
world = [3]
bytes = [8, "4KiB"]
data = "host"
`

// TestRegisteredCollectiveCheckedEverywhere: a collective a user
// registers, with its reference, is accepted and checked by the simulator
// (nexar-sim's host-data points) and by nexar-live (its job and its
// measurements on real ranks), from the one registration; without a
// reference both refuse it.
func TestRegisteredCollectiveCheckedEverywhere(t *testing.T) {
	s, err := scenario.Parse("shift.toml", []byte(shiftScenario))
	if err != nil {
		t.Fatal(err)
	}

	// The simulator: the ring's data is right, the noop's wrong.
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 4 {
		t.Fatalf("%d points, want 4", len(points))
	}
	for _, p := range points {
		_, err := sweep.RunPoint(p)
		var de *sweep.DataError
		switch {
		case p.Algorithm.Name == "ring" && err != nil:
			t.Errorf("simulator: %v: %v", p, err)
		case p.Algorithm.Name == "noop" && !errors.As(err, &de):
			t.Errorf("simulator: %v: error %v, want wrong data", p, err)
		}
	}

	// nexar-live: the same points measured on 3 ranks over an emulated
	// network; the noop's wrong elements are counted.
	job, err := NewJob(s, 3, Options{Warmup: 1, Iters: 2})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	rep, err := RunEmulated(context.Background(), Emulation{Latency: 100 * time.Microsecond, Bandwidth: 1e9}, job,
		Output{Table: &table, Scenario: s}, realnet.Config{Timeout: 20 * time.Second})
	var wde *WrongDataError
	if !errors.As(err, &wde) || wde.Points != 2 {
		t.Fatalf("nexar-live: error %v, want wrong data in the noop's 2 points\n%s", err, table.String())
	}
	if len(rep.Results) != 4 {
		t.Fatalf("nexar-live: %d results, want 4", len(rep.Results))
	}
	for _, r := range rep.Results {
		// The noop leaves every element of each of the 3 ranks wrong.
		if want := map[string]int64{"ring": 0, "noop": int64(3 * r.Bytes / 4)}[r.Algorithm]; r.Wrong != want {
			t.Errorf("nexar-live: %s %d B: %d wrong elements, want %d", r.Algorithm, r.Bytes, r.Wrong, want)
		}
	}

	// Without a reference, the simulator runs the collective on phantom
	// buffers only, and nexar-live, which always moves real data, refuses
	// it.
	src := strings.Replace(shiftScenario, "livetest-shift", "livetest-unchecked", 1)
	unchecked, err := scenario.Parse("unchecked.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Plan(unchecked); err == nil || !strings.Contains(err.Error(), "no host-data check") {
		t.Errorf("simulator: host data of a collective without a reference: %v", err)
	}
	phantom, err := scenario.Parse("phantom.toml", []byte(strings.Replace(src, `"host"`, `"phantom"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Plan(phantom); err != nil {
		t.Errorf("simulator: phantom data of a collective without a reference: %v", err)
	}
	if _, err := NewJob(phantom, 3, Options{}); err == nil || !strings.Contains(err.Error(), "no reference results") {
		t.Errorf("nexar-live: collective without a reference: %v", err)
	}
}
