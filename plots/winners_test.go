package plots

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// formatWinners renders a winners table one line per world, the way the
// hand-made expectations below are written.
func formatWinners(rows []WinnerRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "p=%d:", r.World)
		for _, c := range r.Cells {
			fmt.Fprintf(&b, " %d=%s", c.Bytes, c.Algorithm)
			if c.RunnerUp != "" {
				fmt.Fprintf(&b, ">%s", c.RunnerUp)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestWinnersHandMade(t *testing.T) {
	pt := func(alg string, world int, bytes int64, us float64) Point {
		return Point{Collective: "allreduce", Algorithm: alg, World: world, Bytes: bytes, Time: us * 1e-6}
	}
	points := []Point{
		// p = 4: tree wins small, ring wins large.
		pt("ring", 4, 1024, 30), pt("tree", 4, 1024, 10),
		pt("ring", 4, 1<<20, 300), pt("tree", 4, 1<<20, 500),
		// p = 2: a tie goes to the first name; auto is faster but never a
		// candidate.
		pt("tree", 2, 1024, 7), pt("ring", 2, 1024, 7), pt(Auto, 2, 1024, 1),
		// Only one algorithm ran here: no runner-up.
		pt("ring", 2, 4096, 9),
		// A duplicate key (a parameter sweep): the fastest counts.
		pt("tree", 2, 1<<20, 900), pt("tree", 2, 1<<20, 100), pt("ring", 2, 1<<20, 200),
		// Another collective is ignored.
		{Collective: "broadcast", Algorithm: "x", World: 4, Bytes: 1024, Time: 1e-9},
	}
	rows, err := Winners(points, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	want := "p=2: 1024=ring>tree 4096=ring 1048576=tree>ring\n" +
		"p=4: 1024=tree>ring 1048576=ring>tree\n"
	if got := formatWinners(rows); got != want {
		t.Errorf("Winners:\n%s\nwant:\n%s", got, want)
	}
	tie := rows[0].Cells[0]
	if !tie.Tie() || tie.Margin() != 0 {
		t.Errorf("equal times: Tie() = %v, Margin() = %v; want true, 0", tie.Tie(), tie.Margin())
	}
	// tree at p=4, 1 KiB: ring takes 30 µs against 10 µs, 200% slower.
	if m := rows[1].Cells[0].Margin(); m < 1.999999 || m > 2.000001 {
		t.Errorf("margin = %v, want 2", m)
	}
	if want := pt("tree", 2, 1<<20, 100).Time; rows[0].Cells[2].Time != want {
		t.Errorf("duplicate key: winner time %v, want the fastest, %v", rows[0].Cells[2].Time, want)
	}

	// The input order does not matter.
	rng := rand.New(rand.NewPCG(7, 7))
	for range 10 {
		rng.Shuffle(len(points), func(i, j int) { points[i], points[j] = points[j], points[i] })
		again, err := Winners(points, "allreduce")
		if err != nil {
			t.Fatal(err)
		}
		if got := formatWinners(again); got != want {
			t.Fatalf("after shuffling: %s", got)
		}
	}
}

// Winners agrees with a naive argmin on random sweeps (seeded).
func TestWinnersMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	algs := []string{"a", "b", "c", "d", Auto}
	for trial := range 50 {
		var pts []Point
		for _, w := range []int{2, 3, 8} {
			for _, n := range []int64{0, 8, 1024, 1 << 20} {
				for _, alg := range algs {
					if rng.IntN(4) == 0 {
						continue // not every algorithm runs everywhere
					}
					// Few distinct times, so ties happen.
					pts = append(pts, Point{Collective: "c", Algorithm: alg, World: w, Bytes: n, Time: float64(1 + rng.IntN(4))})
				}
			}
		}
		got, err := Winners(pts, "c")
		if errors.Is(err, ErrNoData) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// Naive: for each (world, bytes) scan every point.
		var want []WinnerRow
		for _, w := range []int{2, 3, 8} {
			row := WinnerRow{World: w}
			for _, n := range []int64{0, 8, 1024, 1 << 20} {
				var times []Point
				for _, p := range pts {
					if p.World == w && p.Bytes == n && p.Algorithm != Auto {
						times = append(times, p)
					}
				}
				if len(times) == 0 {
					continue
				}
				best := times[0]
				for _, p := range times[1:] {
					if p.Time < best.Time || p.Time == best.Time && p.Algorithm < best.Algorithm {
						best = p
					}
				}
				row.Cells = append(row.Cells, Winner{Bytes: n, Algorithm: best.Algorithm, Time: best.Time})
			}
			if len(row.Cells) > 0 {
				want = append(want, row)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d rows, want %d", trial, len(got), len(want))
		}
		for i := range want {
			g := slices.Clone(got[i].Cells)
			for j := range g {
				g[j].RunnerUp, g[j].RunnerUpTime = "", 0
			}
			if got[i].World != want[i].World || !slices.Equal(g, want[i].Cells) {
				t.Errorf("trial %d, world %d:\n got %+v\nwant %+v", trial, want[i].World, g, want[i].Cells)
			}
		}
	}
}

// The synthetic sweep's crossovers where the closed forms put them: at
// p = 64, halving-doubling until the ring's extra latency, 114 α = 570 µs,
// is repaid by halving-doubling's oversubscribed steps, 1.75 n β: n = 4.07
// MB, so the last HD win is 2 MiB and ring wins from 4 MiB.
func TestWinnersSynthetic(t *testing.T) {
	rows, err := Winners(synthSweep(), "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(synthWorlds) {
		t.Fatalf("%d rows, want %d", len(rows), len(synthWorlds))
	}
	last := rows[len(rows)-1]
	if last.World != 64 {
		t.Fatalf("last row is world %d", last.World)
	}
	for _, c := range last.Cells {
		switch c.Bytes {
		case 2 << 20:
			if c.Algorithm != "halving_doubling" {
				t.Errorf("p=64, 2 MiB: %s wins, want halving_doubling", c.Algorithm)
			}
		case 4 << 20:
			if c.Algorithm != "ring" {
				t.Errorf("p=64, 4 MiB: %s wins, want ring", c.Algorithm)
			}
		}
	}
	// At p = 2 ring and halving-doubling cost the same (2α + ...): ties,
	// won by ring, the first in the catalogue (by name it was
	// halving_doubling).
	if c := rows[0].Cells[0]; !c.Tie() || c.Algorithm != "ring" {
		t.Errorf("p=2, 1 KiB: %+v, want a tie won by ring", c)
	}
}

// TestWinnersNeverLossy: a compressed allreduce, fastest everywhere, and
// auto are never the winner, nor the runner-up; the pipelined ring that
// ties the ring loses the tie to it (fewer parameters), whatever its
// segment's name sorts as.
func TestWinnersNeverLossy(t *testing.T) {
	pts := []Point{
		{Collective: "allreduce", Algorithm: "compressed_randomk", World: 8, Bytes: 1024, Time: 1},
		{Collective: "allreduce", Algorithm: "auto", World: 8, Bytes: 1024, Time: 2},
		{Collective: "allreduce", Algorithm: "pipelined_ring(segment=2MiB)", World: 8, Bytes: 1024, Time: 5},
		{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1024, Time: 5},
		{Collective: "allreduce", Algorithm: "direct", World: 8, Bytes: 1024, Time: 6},
	}
	rows, err := Winners(pts, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	c := rows[0].Cells[0]
	if c.Algorithm != "ring" || c.RunnerUp != "pipelined_ring(segment=2MiB)" || !c.Tie() {
		t.Errorf("winner %+v, want ring tied with the pipelined ring", c)
	}
	sd, err := AutoSlowdowns(pts, "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	if sd[0].Best != "ring" || sd[0].Pct() >= 0 {
		t.Errorf("auto %+v: want it compared with ring, and faster", sd[0])
	}
	if _, err := Winners(pts[:2], "allreduce"); !errors.Is(err, ErrNoData) {
		t.Errorf("only lossy and auto: %v, want ErrNoData", err)
	}
}

func TestWinnersErrors(t *testing.T) {
	if _, err := Winners([]Point{{Collective: "c", Algorithm: Auto, World: 2, Bytes: 1, Time: 1}}, "c"); !errors.Is(err, ErrNoData) {
		t.Errorf("only auto: %v, want ErrNoData", err)
	}
	mixed := []Point{
		{Collective: "c", Algorithm: "a", DType: "f32", World: 2, Bytes: 1, Time: 1},
		{Collective: "c", Algorithm: "a", DType: "f16", World: 2, Bytes: 1, Time: 1},
	}
	if _, err := Winners(mixed, "c"); !errors.Is(err, ErrMixedDTypes) {
		t.Errorf("mixed dtypes: %v, want ErrMixedDTypes", err)
	}
	var ip *InvalidPointError
	if _, err := Winners([]Point{{Collective: "c", Algorithm: "a", World: 0, Bytes: 1, Time: 1}}, "c"); !errors.As(err, &ip) {
		t.Errorf("world 0: %v, want *InvalidPointError", err)
	}
}

func TestAutoSlowdowns(t *testing.T) {
	pts := []Point{
		{Collective: "c", Algorithm: "a", World: 2, Bytes: 8, Time: 10},
		{Collective: "c", Algorithm: "b", World: 2, Bytes: 8, Time: 20},
		{Collective: "c", Algorithm: Auto, World: 2, Bytes: 8, Time: 11},
		{Collective: "c", Algorithm: Auto, World: 2, Bytes: 16, Time: 11}, // nothing to compare with
		{Collective: "c", Algorithm: "b", World: 4, Bytes: 8, Time: 20},
		{Collective: "c", Algorithm: Auto, World: 4, Bytes: 8, Time: 20},
	}
	got, err := AutoSlowdowns(pts, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %+v, want 2 slowdowns", got)
	}
	// 11/10 - 1 = 10%; then auto picked the only algorithm: 0%.
	if p := got[0].Pct(); got[0].Best != "a" || p < 9.999 || p > 10.001 {
		t.Errorf("p=2: %+v (%v%%), want best a, 10%%", got[0], p)
	}
	if got[1].World != 4 || got[1].Pct() != 0 {
		t.Errorf("p=4: %+v, want 0%%", got[1])
	}
}
