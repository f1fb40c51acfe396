package nexarsim

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestElasticJoinScenario runs scenarios/elastic-join.toml end to end: the
// run exits 0, the rows from the join on run on 4 ranks with their data
// checked, and the growth (agreement, rebuild) is on stderr and in
// results.json, in alpha-beta's closed form: agreement 3(α + 4β) plus
// two 4-byte reductions, rebuild 2α + 2 ms.
func TestElasticJoinScenario(t *testing.T) {
	out := t.TempDir()
	stderr := runOK(t, "run", "../scenarios/elastic-join.toml", "--out", out, "--no-plots")
	if !strings.Contains(stderr, "1 rank(s) joined the world of 3; agreed in 90.0104us, rebuilt in 2.06ms") {
		t.Errorf("stderr does not report the join:\n%s", stderr)
	}
	if got := worldsOf(t, out); got != "3,3,3,3,4,4,4" {
		t.Errorf("worlds %s, want 3,3,3,3,4,4,4", got)
	}
	var rep struct {
		Rows []struct {
			Time float64 `json:"time_s"`
			Join *struct {
				Joined  int     `json:"joined"`
				Before  int     `json:"world_before"`
				After   int     `json:"world_after"`
				Agreed  float64 `json:"agreed_at_s"`
				Rebuilt float64 `json:"rebuilt_at_s"`
				End     float64 `json:"end_s"`
			} `json:"join"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "results.json")), &rep); err != nil {
		t.Fatal(err)
	}
	for i, r := range rep.Rows {
		if (r.Join != nil) != (i == 4) {
			t.Errorf("row %d: join %+v", i, r.Join)
		}
	}
	if j := rep.Rows[4].Join; j == nil || j.Joined != 1 || j.Before != 3 || j.After != 4 ||
		!near(j.Agreed, 90.0104e-6) || !near(j.Rebuilt, 2150.0104e-6) || !near(j.End, j.Rebuilt+rep.Rows[4].Time) {
		t.Errorf("row 4's join: %+v", j)
	}
}

// near compares times in seconds to a picosecond, the simulator's clock.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// worldsOf returns the world column of out's results.csv, joined by
// commas.
func worldsOf(t *testing.T, out string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(string(readFile(t, filepath.Join(out, "results.csv"))))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var worlds []string
	for _, r := range recs[1:] {
		worlds = append(worlds, r[2])
	}
	return strings.Join(worlds, ",")
}
