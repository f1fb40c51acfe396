package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

const joinSweep = `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling"]
world = [3]
bytes = [4096, 65536, 1048576]
data = "host"
`

// TestJoinMidSweep: an elastic world of 3 ranks (2..5) gains 2 before
// the third point of six; that point and the later ones run on 5 ranks
// with their data checked, the growth (agreement, rebuild) is on the
// third row, and the row is the point's run at 5 ranks.
func TestJoinMidSweep(t *testing.T) {
	s, err := scenario.Parse("s.toml", []byte(network+`
[[fault]]
kind = "rank_join"
point = 2
ranks = 2
min_world = 2
max_world = 5
rebuild = "1ms"
`+joinSweep))
	if err != nil {
		t.Fatal(err)
	}
	if s.Join == nil || len(s.Network.Faults) != 0 {
		t.Fatalf("join %v, faults of every run %v", s.Join, s.Network.Faults)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	rows := runAll(t, points)
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		want := 3
		if i >= 2 {
			want = 5
		}
		if r.World != want {
			t.Errorf("row %d (%s %d bytes): world %d, want %d", i+1, r.Algorithm, r.Bytes, r.World, want)
		}
		if (r.Join != nil) != (i == 2) || r.Recovery != nil {
			t.Errorf("row %d: join %v, recovery %v", i+1, r.Join, r.Recovery)
		}
	}
	g := rows[2].Join
	if g.World != 3 || g.Joined != 2 || g.Rebuilt < g.Agreed+sim.Millisecond || g.End != g.Rebuilt+g.Result.End {
		t.Fatalf("growth %v", g)
	}
	again := points[2]
	again.Join = nil
	want, err := sweep.RunPoint(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[2]; got.Time != want.Time || got.Messages != want.Messages || got.World != 5 {
		t.Errorf("row 3: %v s, %d messages; the point at 5 ranks: %v s, %d", got.Time, got.Messages, want.Time, want.Messages)
	}
}

// TestJoinCapped: joining ranks never take the world above max_world.
func TestJoinCapped(t *testing.T) {
	s, err := scenario.Parse("s.toml", []byte(network+`
[[fault]]
kind = "rank_join"
point = 0
ranks = 4
max_world = 4
`+strings.Replace(joinSweep, "world = [3]", "world = [2, 3]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		if p.World != 4 {
			t.Errorf("%v: want world 4", p)
		}
	}
	if points[0].JoinFrom != 2 {
		t.Errorf("joined from %d, want 2", points[0].JoinFrom)
	}
}

// TestJoinErrors: bad values are refused with the file, the fault's line
// and the key that decides.
func TestJoinErrors(t *testing.T) {
	line := strings.Count(network, "\n") + 2 // the first [[fault]] header
	for _, c := range []struct{ fault, sweep, key, want string }{
		{"max_world = 5", joinSweep, "fault[0].point", "missing required key"},
		{"point = 0", joinSweep, "fault[0].max_world", "missing required key"},
		{"point = 0\nmax_world = 5\nmin_world = 6", joinSweep, "fault[0].min_world", "min_world 6 is above max_world 5"},
		{"point = 0\nmax_world = 5\nranks = 0", joinSweep, "fault[0].ranks", "out of range"},
		{"point = 0\nmax_world = 5\nrebuild = \"-1s\"", joinSweep, "fault[0].rebuild", ""},
		{"point = 6\nmax_world = 5", joinSweep, "fault[0].point", "the scenario has 6 points"},
		{"point = 0\nmax_world = 3", joinSweep, "fault[0].max_world", "already runs on max_world ranks"},
		{"point = 0\nmax_world = 2", joinSweep, "fault[0].max_world", "runs on 3 ranks, above max_world"},
		{"point = 0\nmax_world = 8\nmin_world = 4", joinSweep, "fault[0].min_world", "runs on 3 rank(s), below min_world"},
		{"point = 0\nmax_world = 8\n[[fault]]\nkind = \"rank_join\"\npoint = 1\nmax_world = 8", joinSweep, "fault[1]", "a second [[fault]] of kind rank_join"},
	} {
		s, err := scenario.Parse("s.toml", []byte(network+"\n[[fault]]\nkind = \"rank_join\"\n"+c.fault+"\n"+c.sweep))
		if err == nil {
			_, err = sweep.Plan(s)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.fault, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf(": %s: ", c.key)) || !strings.HasPrefix(err.Error(), "s.toml:") {
			t.Errorf("%s: %v: want the key %s", c.fault, err, c.key)
		}
		var at int
		if _, serr := fmt.Sscanf(err.Error(), "s.toml:%d:", &at); serr != nil || at < line || at > line+6 {
			t.Errorf("%s: %v: want a line of the fault (from %d)", c.fault, err, line)
		}
	}
}

// runAll runs points, two at a time, and returns their rows in order.
func runAll(t *testing.T, points []sweep.Point) []sweep.Row {
	t.Helper()
	var rows []sweep.Row
	if err := sweep.Run(context.Background(), points, sweep.Options{Jobs: 2}, func(r sweep.Row) error {
		rows = append(rows, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}
