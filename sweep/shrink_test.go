package sweep_test

import (
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/sweep"
)

const shrinkSweep = `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling_nearest"]
world = [4]
bytes = [4096, 65536, 1048576]
data = "host"
`

// TestShrinkMidSweep is the "must show" in the simulator: 4 ranks,
// rank 2 killed during the fourth point of six (point = 3); the survivors detect it,
// agree and rebuild, and that point and the later ones run on 3 ranks
// with their data checked; the recovery is on the fourth row.
func TestShrinkMidSweep(t *testing.T) {
	s, err := scenario.Parse("s.toml", []byte(network+`
[[fault]]
kind = "rank_failure"
rank = 2
at = "5us"
recovery = "shrink"
point = 3
heartbeat = "100ms"
timeout = "300ms"
`+shrinkSweep))
	if err != nil {
		t.Fatal(err)
	}
	if s.Shrink == nil || len(s.Network.Faults) != 0 {
		t.Fatalf("shrink %v, faults of every run %v", s.Shrink, s.Network.Faults)
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
		want := 4
		if i >= 3 {
			want = 3
		}
		if r.World != want {
			t.Errorf("row %d (%s %d bytes): world %d, want %d", i+1, r.Algorithm, r.Bytes, r.World, want)
		}
		if (r.Recovery != nil) != (i == 3) {
			t.Errorf("row %d: recovery %v", i+1, r.Recovery)
		}
	}
	rec := rows[3].Recovery
	if !rec.Hit || rec.Failed != 2 || rec.World != 4 || rec.FailedAt != 5*sim.Microsecond || rec.Detected != 300*sim.Millisecond {
		t.Fatalf("recovery %v", rec)
	}
	if rec.Rebuilt <= rec.Agreed || rec.Agreed <= rec.Detected || rec.End != rec.Rebuilt+rec.Result.End {
		t.Errorf("recovery times: %v", rec)
	}
	// The row reports the run on the survivors, which is the same point
	// run on 3 ranks from the start.
	again := points[3]
	again.World, again.Shrink = 3, nil
	want, err := sweep.RunPoint(again)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[3]; got.Time != want.Time || got.Messages != want.Messages || got.Bytes != want.Bytes {
		t.Errorf("row 4: %v s, %d messages, %d bytes; the point at 3 ranks: %v s, %d, %d", got.Time, got.Messages, got.Bytes, want.Time, want.Messages, want.Bytes)
	}
}

func TestShrinkErrors(t *testing.T) {
	for _, c := range []struct{ fault, sweep, want string }{
		{`rank = 2
recovery = "shrink"`, shrinkSweep, "missing required key"},
		{`rank = 2
recovery = "grow"
point = 0`, shrinkSweep, `unknown recovery "grow"`},
		{`rank = 2
point = 2`, shrinkSweep, `point applies to recovery = "shrink" only`},
		{`rank = 2
recovery = "shrink"
point = 0
heartbeat = "2s"
timeout = "1s"`, shrinkSweep, "shorter than the heartbeat interval"},
		{`rank = 2
recovery = "shrink"
point = 6`, shrinkSweep, "the scenario has 6 points"},
		{`rank = 5
recovery = "shrink"
point = 0`, shrinkSweep, "runs on 4 rank(s): it needs at least 2, and rank 5 among them"},
		{`rank = 0
recovery = "shrink"
point = 0`, strings.Replace(shrinkSweep, "world = [4]", "world = [2, 1]", 1), "runs on one rank, which cannot lose one"},
	} {
		s, err := scenario.Parse("s.toml", []byte(network+"\n[[fault]]\nkind = \"rank_failure\"\n"+c.fault+"\n"+c.sweep))
		if err == nil {
			_, err = sweep.Plan(s)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.fault, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "s.toml:1") {
			t.Errorf("%s: %v: want the fault's line", c.fault, err)
		}
	}
}
