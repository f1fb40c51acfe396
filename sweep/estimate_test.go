package sweep_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestEstimatePoints compares the estimates of a sweep's points with
// their runs: messages exactly up to 64 ranks, within 10% above.
func TestEstimatePoints(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling", "binomial_tree", "auto"]
world = [3, 8, 64, 96, 256]
bytes = [0, "1KiB", "1MiB"]

[[sweep]]
collective = "broadcast"
algorithms = ["binomial_tree", "flat"]
world = [5, 200]
bytes = ["4KiB"]
root = 3
data = "host"
`)
	ests, errs := sweep.EstimatePoints(points, 2)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, p := range points {
		row, err := sweep.RunPoint(p)
		if err != nil {
			t.Fatal(err)
		}
		e := ests[i]
		off := math.Abs(float64(e.Messages)/float64(row.Messages) - 1)
		if e.Runs != max(p.Repeat, 1) || e.Memory <= e.HostBytes || (p.World <= 64 && e.Messages != row.Messages) ||
			(row.Messages == 0) != (e.Messages == 0) || off > 0.1 {
			t.Errorf("%v: estimate %+v, row %+v", p, e, row)
		}
	}
	tot := sweep.Sum(ests)
	var msgs int64
	for _, e := range ests {
		msgs += e.Messages * int64(e.Runs)
	}
	if tot.Messages != msgs || tot.Memory != ests[tot.Point].Memory {
		t.Errorf("totals %+v", tot)
	}
}

// TestRunStopsInsidePoint cancels a sweep while its one long point runs:
// Run returns within a second with the context's cause, emitting nothing,
// and the point's progress reports went forward until then.
func TestRunStopsInsidePoint(t *testing.T) {
	points := plan(t, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 1024]
bytes = ["64MiB"]
symmetry = "off"
`)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("interrupted")
	var mu sync.Mutex
	var stoppedAt time.Time
	var last sweep.PointProgress
	var rows []sweep.Row
	err := sweep.Run(ctx, points, sweep.Options{Jobs: 2, Progress: func(i int, pr sweep.PointProgress) {
		mu.Lock()
		defer mu.Unlock()
		if i != 1 {
			return
		}
		if pr.Messages < last.Messages {
			t.Errorf("progress went back: %+v after %+v", pr, last)
		}
		last = pr
		if pr.Messages > 50000 && stoppedAt.IsZero() {
			stoppedAt = time.Now()
			cancel(stop)
		}
	}}, func(r sweep.Row) error {
		rows = append(rows, r)
		return nil
	})
	if !errors.Is(err, stop) || stoppedAt.IsZero() {
		t.Fatalf("Run: %v (stopped at %v)", err, stoppedAt)
	}
	if d := time.Since(stoppedAt); d > time.Second {
		t.Errorf("Run returned %v after the cancellation", d)
	}
	if len(rows) != 1 || rows[0].World != 2 {
		t.Errorf("rows %+v, want the first point's", rows)
	}
}

// TestCostFollowsTime weighs points by their estimated time over all
// their runs, and by their events where there is no time.
func TestCostFollowsTime(t *testing.T) {
	for _, c := range []struct {
		name string
		e    sweep.Estimate
		want float64
	}{
		{"timed", sweep.Estimate{Estimate: sim.Estimate{Events: 100, Seconds: 2}, Runs: 3}, 6},
		{"timed, runs unset", sweep.Estimate{Estimate: sim.Estimate{Events: 100, Seconds: 2}}, 2},
		{"untimed", sweep.Estimate{Estimate: sim.Estimate{Events: 100}, Runs: 3}, 300},
	} {
		if got := c.e.Cost(); got != c.want {
			t.Errorf("%s: Cost() = %g, want %g", c.name, got, c.want)
		}
	}
}
