package nexarsim

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecoveryShrinkScenario is issue 17's "must show" in the simulator:
// 4 ranks, one killed mid-sweep; the run exits 0, the later points run on 3
// ranks with their data checked, and the failure, detection and rebuild
// are reported on stderr and in results.json.
func TestRecoveryShrinkScenario(t *testing.T) {
	out := t.TempDir()
	stderr := runOK(t, "run", "../scenarios/recovery-shrink.toml", "--out", out, "--no-plots")
	if !strings.Contains(stderr, "rank 2 of 4 failed at 20us; detected after 4.99998s") || !strings.Contains(stderr, "later points run on 3 ranks") {
		t.Errorf("stderr does not report the recovery:\n%s", stderr)
	}
	if got := worldsOf(t, out); got != "4,4,4,4,3,3,3" {
		t.Errorf("worlds %s, want 4,4,4,4,3,3,3", got)
	}
	var rep struct {
		Rows []struct {
			World    int `json:"world"`
			Recovery *struct {
				FailedRank int     `json:"failed_rank"`
				Before     int     `json:"world_before"`
				After      int     `json:"world_after"`
				Lost       bool    `json:"work_lost"`
				FailedAt   float64 `json:"failed_at_s"`
				Detected   float64 `json:"detected_at_s"`
				Agreed     float64 `json:"agreed_at_s"`
				Rebuilt    float64 `json:"rebuilt_at_s"`
			} `json:"recovery"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "results.json")), &rep); err != nil {
		t.Fatal(err)
	}
	for i, r := range rep.Rows {
		if (r.Recovery != nil) != (i == 4) {
			t.Errorf("row %d: recovery %+v", i, r.Recovery)
		}
	}
	if r := rep.Rows[4].Recovery; r == nil || r.FailedRank != 2 || r.Before != 4 || r.After != 3 || !r.Lost ||
		r.FailedAt != 20e-6 || r.Detected != 5 || !(r.Agreed > r.Detected && r.Rebuilt > r.Agreed) {
		t.Errorf("row 4's recovery: %+v", r)
	}
}
