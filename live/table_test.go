package live

import (
	"bytes"
	"strings"
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

// TestTableWidths: every line of a block has nccl-tests' widths, whatever
// the time (1 µs to 9.9 s), and the average bus bandwidth has C's %g's six
// significant digits.
func TestTableWidths(t *testing.T) {
	coll, _ := algos.Lookup("allreduce")
	alg, _ := coll.Algorithm("ring")
	var b bytes.Buffer
	tab := NewTable(&b)
	for _, s := range []float64{1.234e-6, 99.994e-6, 1.5e-4, 9.99e-3, 0.0123, 9.9} {
		p := sweep.Point{Collective: coll, Algorithm: alg, World: 3, Bytes: 3 << 10, DType: device.F32}
		tab.Add(p, makeResult(p, []float64{s}, 0, 1))
	}
	tab.Close()
	var data []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l != "" && l[0] != '#' {
			data = append(data, l)
		}
	}
	if len(data) != 6 {
		t.Fatalf("%d lines:\n%s", len(data), b.String())
	}
	for _, l := range data {
		if len(l) != 84 {
			t.Errorf("line of %d characters, want nccl-tests' 84: %q", len(l), l)
		}
	}
	for _, want := range []string{"   1.23 ", "  99.99 ", "  150.0 ", "  9990.0 ", "  12300 ", "9900000 ", "# Avg bus bandwidth    : "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	avg := b.String()[strings.Index(b.String(), "bandwidth    : ")+15:]
	avg = strings.TrimSpace(strings.Split(avg, "\n")[0])
	if digits := strings.Trim(strings.ReplaceAll(avg, ".", ""), "0"); len(digits) > 6 {
		t.Errorf("average %s has more than 6 significant digits", avg)
	}
}
