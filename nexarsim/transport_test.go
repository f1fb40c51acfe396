package nexarsim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// lone sweeps a single algorithm, so it has nothing to tune: only a
// [network.transport] makes the run write a tuning table.
const lone = `name = "lone"

[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
%s
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 4]
bytes = ["1KiB", "1MiB"]
`

const loneTransport = `
[network.transport]
quic_latency = "30us"
quic_bandwidth = "1.65Gbit/s"
bulk_latency = "16.5us"
bulk_bandwidth = "1.09GB/s"
`

// TestTransportThreshold checks that a run writes the bulk threshold the
// scenario's transport implies into tuning.toml, crossovers.csv and
// results.json, that merged shards write the same, and that a scenario
// without [network.transport] writes no [transport].
func TestTransportThreshold(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "lone.toml", fmt.Sprintf(lone, loneTransport))
	out := filepath.Join(dir, "out")
	runOK(t, "run", file, "--out", out, "--no-plots", "-q")

	want, err := derive.DeriveTransport(&scenario.Transport{QUICLatency: 30 * sim.Microsecond, QUICBandwidth: 1.65e9 / 8,
		BulkLatency: 16500 * sim.Nanosecond, BulkBandwidth: 1.09e9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	table, err := algos.LoadTuning(filepath.Join(out, tuningFile))
	if err != nil {
		t.Fatal(err)
	}
	if table.Transport == nil || table.Transport.Bulk != want.Threshold || len(table.Collectives) != 0 {
		t.Fatalf("tuning.toml: transport %+v, %d collectives; want bulk_threshold %d and none", table.Transport, len(table.Collectives), want.Threshold)
	}
	records, err := csv.NewReader(bytes.NewReader(readFile(t, filepath.Join(out, crossoversFile)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	row := []string{"transport", "", "2", "quic", "bulk", fmt.Sprintf("%.0f", want.Bytes), fmt.Sprint(want.Lo), fmt.Sprint(want.Hi)}
	if len(records) != 2 || strings.Join(records[1], ",") != strings.Join(row, ",") {
		t.Errorf("crossovers.csv: %q, want the header and %q", records, row)
	}
	var rep struct {
		Transport *derive.Transport `json:"transport"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, jsonFile)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Transport == nil || rep.Transport.Threshold != want.Threshold || len(rep.Transport.Points) != len(want.Points) {
		t.Errorf("results.json: transport %+v", rep.Transport)
	}

	// Shards keep the transport in their manifests, so merge derives it too.
	var shards []string
	for i := 1; i <= 2; i++ {
		s := filepath.Join(dir, fmt.Sprintf("shard%d", i))
		runOK(t, "run", file, "--out", s, "--shard", fmt.Sprintf("%d/2", i), "-q")
		shards = append(shards, s)
	}
	merged := filepath.Join(dir, "merged")
	runOK(t, append([]string{"merge", "--out", merged, "--no-plots", "-q"}, shards...)...)
	for _, name := range []string{tuningFile, crossoversFile, jsonFile} {
		if !bytes.Equal(readFile(t, filepath.Join(out, name)), readFile(t, filepath.Join(merged, name))) {
			t.Errorf("merged %s differs from the whole run's", name)
		}
	}

	// Without [network.transport]: nothing to tune, so no table at all;
	// with competing algorithms, a table without [transport].
	bare := writeFile(t, dir, "bare.toml", fmt.Sprintf(lone, ""))
	runOK(t, "run", bare, "--out", filepath.Join(dir, "bare"), "--no-plots", "-q")
	if _, err := os.Stat(filepath.Join(dir, "bare", tuningFile)); !os.IsNotExist(err) {
		t.Errorf("no transport, nothing to tune: tuning.toml exists (%v)", err)
	}
	if bytes.Contains(readFile(t, filepath.Join(dir, "bare", crossoversFile)), []byte("transport")) {
		t.Error("no transport: crossovers.csv has a transport row")
	}
	competing := writeFile(t, dir, "competing.toml", strings.Replace(fmt.Sprintf(lone, ""), `["ring"]`, `["ring", "recursive_doubling"]`, 1))
	runOK(t, "run", competing, "--out", filepath.Join(dir, "competing"), "--no-plots", "-q")
	table, err = algos.LoadTuning(filepath.Join(dir, "competing", tuningFile))
	if err != nil {
		t.Fatal(err)
	}
	if table.Transport != nil || len(table.Collectives) != 1 {
		t.Errorf("no transport: %+v", table)
	}
}

// TestTransportInScenarios checks that the study calibrated from realnet's
// measurements derives a threshold where realnet measured the crossover
// (between 4 and 8 KiB on loopback; realnet/doc.go).
func TestTransportInScenarios(t *testing.T) {
	s, err := scenario.Load("../scenarios/nexar-defaults-10gbe.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Network.Transport == nil {
		t.Fatal("nexar-defaults-10gbe.toml has no [network.transport]")
	}
	x, err := derive.DeriveTransport(s.Network.Transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.Threshold <= 4<<10 || x.Threshold > 16<<10 {
		t.Errorf("bulk threshold %d bytes, realnet measured 4-16 KiB", x.Threshold)
	}
	code, stdout, _ := nexarSim("list")
	for _, k := range []string{"[network.transport]", "quic_latency", "quic_bandwidth", "bulk_latency", "bulk_bandwidth"} {
		if code != 0 || !strings.Contains(stdout, k) {
			t.Errorf("list does not mention %s", k)
		}
	}
}
