package nexarsim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/report"
	"github.com/nexar-go/nexar-go/results"
)

// TestRunJSONReport: results.json decodes into report.JSON (the schema of
// docs/results-json.md, nexar-live's too) with results.csv's rows, and
// report.html stands beside the outputs with one image per figure, the
// crossovers and the command; both the same bytes for the same run.
func TestRunJSONReport(t *testing.T) {
	dir := t.TempDir()
	var pages [2][]byte
	for i := range pages {
		out := filepath.Join(dir, "out")
		code, _, stderr := nexarSim("run", "-b", "1K", "-e", "1M", "-f", "4", "--world", "4", "--algorithms", "ring,recursive_doubling", "--out", out, "-q")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data := readFile(t, filepath.Join(out, report.JSONFile))
		j, err := report.ReadJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("results.json: %v", err)
		}
		tab, err := results.ReadFile(filepath.Join(out, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if j.Tool != report.ToolSim || len(j.Rows) != len(tab.Rows) || len(j.Rows) == 0 || len(j.Crossovers) == 0 || !j.Tuning {
			t.Errorf("results.json: tool %q, %d rows (results.csv %d), %d crossovers, tuning %t", j.Tool, len(j.Rows), len(tab.Rows), len(j.Crossovers), j.Tuning)
		}
		for k, r := range j.Rows {
			if c := tab.Rows[k]; r.Algorithm != c.Algorithm || r.Bytes != c.Bytes || r.Time != c.Time || r.Wrong != nil {
				t.Errorf("row %d: %+v, results.csv %+v", k, r, c)
			}
			// Phantom data on plain alpha-beta: the ring is proven cyclic and
			// recursive doubling xor-symmetric, and each row says so.
			if want := map[string]string{"ring": "cyclic", "recursive_doubling": "xor"}[r.Algorithm]; r.Symmetry != want {
				t.Errorf("row %d (%s): symmetry %q, want %q", k, r.Algorithm, r.Symmetry, want)
			}
		}
		pages[i] = readFile(t, filepath.Join(out, report.File))
		entries, _ := os.ReadDir(out)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		page := string(pages[i])
		if n, want := strings.Count(page, "<img "), len(report.Figures(names)); n != want || want < 3 {
			t.Errorf("report.html: %d images, %d figures in %v", n, want, names)
		}
		for _, want := range []string{"<h1>nexar-sim run: allreduce", "nexar-sim run -b 1K -e 1M", "<h2>Crossovers and tuning table</h2>", "allreduce · ring · 4 ranks"} {
			if !strings.Contains(page, want) {
				t.Errorf("report.html lacks %q", want)
			}
		}
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Error("report.html differs between two runs of the same command")
	}
}

// TestStepReport: nexar-sim step writes report.html beside its outputs,
// with step.csv as a table and one image per figure.
func TestStepReport(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.toml", strings.Replace(strings.Replace(stepScenario, "%s", "fast", 1), "%s", "2us", 1))
	out := filepath.Join(dir, "out")
	if code, _, stderr := nexarSim("step", a, "--out", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page := string(readFile(t, filepath.Join(out, report.File)))
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if n, want := strings.Count(page, "<img "), len(report.Figures(names)); n != want || want == 0 {
		t.Errorf("report.html: %d images, %d figures in %v", n, want, names)
	}
	for _, want := range []string{"<h1>nexar-sim step</h1>", "<h2>Training step (step.csv)</h2>", "<h2>Best bucket size (best_bucket.csv)</h2>", "nexar-sim step "} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestRunInfiniteLink: a network whose ports never bind (bandwidth
// "inf", as the loopback model nexar-live ships) runs and writes its
// outputs: no link bandwidth, which JSON cannot hold, in results.json or
// manifest.json. (It failed before with "json: unsupported value: +Inf".)
func TestRunInfiniteLink(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "loopback.toml", `name = "loopback"
seed = 1

[network]
model = "flow"
topology = "crossbar"
latency = "143.8us"
bandwidth = "inf"
backplane_bandwidth = "238MB/s"
reduce_bandwidth = "inf"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling"]
world = [4]
bytes = "1KiB..64KiB x8"
`)
	out := filepath.Join(dir, "out")
	if code, _, stderr := nexarSim("run", file, "--out", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{report.JSONFile, "manifest.json"} {
		if data := readFile(t, filepath.Join(out, name)); bytes.Contains(data, []byte("link_bandwidth")) {
			t.Errorf("%s has a link bandwidth", name)
		}
	}
}
