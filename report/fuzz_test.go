package report

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadJSON: any input reads or fails, never panics; what reads,
// encoded again, reads back to the same encoding.
func FuzzReadJSON(f *testing.F) {
	f.Add(`{"tool":"nexar-sim","scenario":{"scenario":"s","file":"s.toml","hash":"h","network":"alpha-beta","shard":1,"shards":1,"points":1,"rows":1},` +
		`"rows":[{"collective":"allreduce","algorithm":"ring","base_algorithm":"ring","world":2,"bytes":8,"dtype":"f32","time_s":1e-6,` +
		`"algbw_GB_per_s":0.008,"busbw_GB_per_s":0.008,"repeats":1,"time_min_s":1e-6,"time_max_s":1e-6,"spread_s":0,"messages":2,"wrong":0}],` +
		`"crossovers":[],"best_params":[],"tuning_table":false,"model_error":{"points":1,"median_rel_err":0.1,"max_rel_err":0.1}}`)
	f.Add(`{"tool":"nexar-live","scenario":{"transport":{"quic_latency_ps":1}},"rows":null}`)
	f.Add(`{"colour":"red"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		j, err := ReadJSON(strings.NewReader(in))
		if err != nil {
			return
		}
		var a, b bytes.Buffer
		if err := j.Encode(&a); err != nil {
			return // a number JSON reads that it cannot write: NaN never reads
		}
		k, err := ReadJSON(bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatalf("its own encoding does not read: %v\n%s", err, a.String())
		}
		if err := k.Encode(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("encoded again differs (%v):\n%s\n%s", err, a.String(), b.String())
		}
	})
}
