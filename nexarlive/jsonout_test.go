package nexarlive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/report"
	"github.com/nexar-go/nexar-go/results"
)

// TestRunMinMaxJSONReport: a run with --minmax prints min, avg and max in
// its table and writes time_avg_s into results.csv, between the fastest
// and slowest iteration; results.json decodes into report.JSON (the
// schema of docs/results-json.md, nexar-sim's too) with the same rows, in
// rank processes and over the emulated network; report.html is beside
// them with the model's error. Without --minmax the table and
// results.csv are nccl-tests' and nexar-live's as before.
func TestRunMinMaxJSONReport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tt := range []struct {
		name   string
		args   []string
		minmax bool
	}{
		{"emulated", []string{"--emulate", "latency=5us,bandwidth=1GB/s", "--minmax"}, true},
		{"processes", []string{"--minmax"}, true},
		{"plain", []string{"--emulate", "latency=5us,bandwidth=1GB/s"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "--np", "2", "-b", "1K", "-e", "4K", "-f", "4", "--algorithms", "ring,direct", "--out", out,
				"--warmup", "1", "--iters", "3", "--timeout", "30s"}, tt.args...)
			code, stdout, stderr := runCLI(args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if got := strings.Contains(stdout, "#wrong     min      avg      max"); got != tt.minmax {
				t.Errorf("min/avg/max columns %t, want %t:\n%s", got, tt.minmax, stdout)
			}
			tab, err := results.ReadFile(filepath.Join(out, live.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			if tab.Has(results.ColTimeAvg) != tt.minmax {
				t.Errorf("results.csv columns %v", tab.Columns)
			}
			f, err := os.Open(filepath.Join(out, report.JSONFile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			j, err := report.ReadJSON(f)
			if err != nil {
				t.Fatalf("results.json: %v", err)
			}
			if j.Tool != report.ToolLive || j.Timing != "start" || len(j.Rows) != len(tab.Rows) || len(j.Rows) != 4 || j.Scenario.Rows != 4 {
				t.Fatalf("results.json: tool %q, timing %q, %d rows; results.csv %d", j.Tool, j.Timing, len(j.Rows), len(tab.Rows))
			}
			for i, r := range j.Rows {
				c := tab.Rows[i]
				if r.Algorithm != c.Algorithm || r.Bytes != c.Bytes || r.Time != c.Time || r.Wrong == nil || *r.Wrong != 0 || r.BulkThreshold == 0 {
					t.Errorf("row %d: %+v, results.csv %+v", i, r, c)
				}
				if tt.minmax && !(r.TimeMin <= r.TimeAvg && r.TimeAvg <= r.TimeMax && r.TimeAvg == c.TimeAvg && r.TimeAvg > 0) {
					t.Errorf("row %d: min %g, avg %g, max %g", i, r.TimeMin, r.TimeAvg, r.TimeMax)
				}
			}
			if j.Model == nil || j.Model.Points != 4 {
				t.Errorf("results.json: model error %+v", j.Model)
			}
			page, err := os.ReadFile(filepath.Join(out, report.File))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"<h1>nexar-live run: ", "<h2>Model error</h2>", "allreduce · direct · 2 ranks", "<dd>start</dd>"} {
				if !strings.Contains(string(page), want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
		})
	}
}
