package verify

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
)

// realnetScenario is a scenario on realnet's two paths whose file says
// bulk_threshold (network is the rest of its [network] table).
func realnetScenario(t *testing.T, network string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("r.toml", []byte(`name = "r"
[network]
`+network+`

[network.transport]
quic_latency = "30us"
quic_bandwidth = "1.65Gbit/s"
bulk_latency = "10us"
bulk_bandwidth = "1.09GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = ["32KiB"]
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// predicted is compare.csv's predicted_s of the one row Predict makes of
// r on s.
func predicted(t *testing.T, s *scenario.Scenario, r results.Row) string {
	t.Helper()
	cs, err := Predict(s, []results.Row{r})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCompareCSV(&b, cs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][7] != "predicted_s" {
		t.Fatalf("compare.csv %q, %v", recs, err)
	}
	return recs[1][7]
}

// TestPredictRecordedThresholds: compare.csv predicts a row measured with
// --bulk-threshold 4KiB with the 4 KiB threshold its run recorded, not the
// 64 KiB of the scenario's realnet model: as a scenario that says 4 KiB
// predicts it, and not as the row of a run at 64 KiB. A model without
// realnet's thresholds predicts every row alike.
func TestPredictRecordedThresholds(t *testing.T) {
	// 2 ranks' ring allreduce of 32 KiB sends messages of 16 KiB: on the
	// bulk path from 4 KiB, on QUIC below 64 KiB.
	row := func(bulk int) results.Row {
		return results.Row{Collective: "allreduce", Algorithm: "ring", World: 2, Bytes: 32 << 10, DType: "f32", Op: "sum", Time: 1e-3,
			BulkThreshold: bulk}
	}
	file64 := realnetScenario(t, "model = \"realnet\"\nbulk_threshold = \"64KiB\"")
	file4 := realnetScenario(t, "model = \"realnet\"\nbulk_threshold = \"4KiB\"")
	at4 := predicted(t, file64, row(4<<10))
	at64 := predicted(t, file64, row(64<<10))
	if direct := predicted(t, file4, row(0)); at4 != direct {
		t.Errorf("a row recorded at 4 KiB is predicted %s s, a scenario at 4 KiB predicts it %s s", at4, direct)
	}
	if at4 == at64 {
		t.Errorf("rows recorded at 4 and at 64 KiB are both predicted %s s", at4)
	}
	if unrecorded := predicted(t, file64, row(0)); unrecorded != at64 {
		t.Errorf("a row that records no thresholds is predicted %s s, want the file's 64 KiB (%s s)", unrecorded, at64)
	}
	if never := predicted(t, file4, row(-1)); never != predicted(t, file64, row(0)) {
		t.Errorf("a row recorded with the bulk path never is predicted %s s, want QUIC's", never)
	}
	ab := realnetScenario(t, "model = \"alpha-beta\"\nlatency = \"30us\"\nbandwidth = \"1GB/s\"")
	if a, b := predicted(t, ab, row(4<<10)), predicted(t, ab, row(64<<10)); a != b {
		t.Errorf("alpha-beta predicts rows of 4 and 64 KiB thresholds %s and %s s", a, b)
	}
}
