package live

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sweep"
)

// TestParseOwnTable: nexar-live's table reads back as an nccl-tests log
// (package calibrate), with its algorithm, parameters and world size.
func TestParseOwnTable(t *testing.T) {
	coll, _ := algos.Lookup("allreduce")
	alg, _ := coll.Algorithm("pipelined_ring")
	p := sweep.Point{Collective: coll, Algorithm: alg, Name: "pipelined_ring(segment=64KiB)", World: 3, Bytes: 1 << 20,
		DType: device.F32, Params: map[string]int{"segment": 65536}}
	var b bytes.Buffer
	tab := NewTable(&b, "preamble")
	r := makeResult(p, []float64{2e-3, 3e-3, 4e-3}, 0, 12)
	tab.Add(p, r)
	tab.Close()
	log, err := calibrate.ReadNCCLTests("table", &b, calibrate.LogOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	ss := log.Samples()
	if len(ss) != 1 || ss[0].Algorithm != p.Name || ss[0].World != 3 || ss[0].Params["segment"] != 65536 || ss[0].Time != 3e-3 || ss[0].Assumed {
		t.Errorf("read back %+v from\n%s", ss, b.String())
	}
}
