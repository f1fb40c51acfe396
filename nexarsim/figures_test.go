package nexarsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFiguresNameTheirNetwork runs a small study and redraws its figures:
// every figure says which scenario and network it is of, the manifest
// keeps the network's summary for plot, --subtitle replaces it, and plot
// reads a results.csv of an earlier version (busbw_gbps).
func TestFiguresNameTheirNetwork(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", `name = "fat-study"

[network]
model = "flow"
topology = "fat_tree"
tiers = 2
radix = 4
oversubscription = 3
link_bandwidth = "25Gbit/s"
link_latency = "1us"

[[sweep]]
collective = "allreduce"
algorithms = ["ring", "recursive_doubling"]
world = [2, 4]
bytes = "1KiB..64KiB x8"
`)
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "-q")
	want := "scenario fat-study · network flow: topology fat_tree, tiers 2, radix 4, oversubscription 3, link_bandwidth 25Gbit/s, link_latency 1us"
	m, err := readManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.subtitle(); got != want {
		t.Errorf("subtitle %q\nwant     %q", got, want)
	}
	// The SVG's text is the subtitle's, wrapped.
	hasSubtitle := func(path string) bool {
		data := string(readFile(t, path))
		return strings.Contains(data, "scenario fat-study") && strings.Contains(data, "link_latency 1us")
	}
	for _, name := range []string{"latency_allreduce.svg", "busbw_allreduce.svg", "crossover_allreduce.svg"} {
		if !hasSubtitle(filepath.Join(out, name)) {
			t.Errorf("%s does not name its scenario and network", name)
		}
	}

	// plot, from the manifest beside the results, and with --subtitle.
	figs := filepath.Join(dir, "figs")
	runOK(t, "plot", filepath.Join(out, "results.csv"), "--out", figs, "-q")
	if !hasSubtitle(filepath.Join(figs, "latency_allreduce.svg")) {
		t.Error("plot drew no subtitle from the manifest")
	}
	runOK(t, "plot", filepath.Join(out, "results.csv"), "--out", figs, "-q", "--subtitle", "my own words")
	if data := string(readFile(t, filepath.Join(figs, "latency_allreduce.svg"))); !strings.Contains(data, "my own words") {
		t.Error("--subtitle is not drawn")
	}

	// A results.csv of an earlier version, with no manifest beside it.
	old := filepath.Join(dir, "old", "results.csv")
	os.MkdirAll(filepath.Dir(old), 0o777)
	csv := strings.Replace(string(readFile(t, filepath.Join(out, "results.csv"))), "algbw_GB_per_s,busbw_GB_per_s", "algbw_gbps,busbw_gbps", 1)
	if err := os.WriteFile(old, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "plot", old, "--out", filepath.Join(dir, "oldfigs"), "-q")
	if _, err := os.Stat(filepath.Join(dir, "oldfigs", "busbw_allreduce.png")); err != nil {
		t.Errorf("no busbw figure from busbw_gbps: %v", err)
	}
}
