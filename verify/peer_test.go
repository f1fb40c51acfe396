package verify

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/results"
)

// TestComparePeer sets results beside the log scripts/ompi-allreduce's
// program prints (Open MPI's figures of machine-figures.md, 4 ranks).
func TestComparePeer(t *testing.T) {
	f, err := os.Open("testdata/ompi-allreduce.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := calibrate.ReadNCCLTests("ompi.log", f, calibrate.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	peer := log.Samples()
	res := func(alg string, bytes int, time float64) results.Row {
		return results.Row{Collective: "allreduce", Algorithm: alg, World: 4, Bytes: bytes, DType: "f32", Time: time,
			BusBW: float64(bytes) / time / 1e9 * 1.5}
	}
	rs := []results.Row{
		res("ring", 8, 400e-6), res("binomial_tree", 8, 200e-6), res("auto", 8, 420e-6),
		res("ring", 1<<20, 4.82e-3), res("auto", 1<<20, 5e-3),
		res("ring", 1<<20, 1e-3), // another world's would not count; this one is the same point twice
	}
	rs[5].World = 2
	rows, err := ComparePeer(rs, peer)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (no result at 64 KiB)", len(rows))
	}
	if rows[0].Best.Algorithm != "binomial_tree" || rows[0].Auto == nil || rows[1].Best.Algorithm != "ring" {
		t.Errorf("rows %+v", rows)
	}
	// Open MPI's 1 MiB: 0.65 GB/s; nexar's ring at 4.82 ms is half of it.
	if r := rows[1].Ratio(); math.Abs(r-0.5) > 0.01 {
		t.Errorf("1 MiB ratio %.3f, want 0.5", r)
	}
	var b strings.Builder
	WritePeerTable(&b, rows, "ompi")
	if !strings.Contains(b.String(), "ompi time") || !strings.Contains(b.String(), "binomial_tree") {
		t.Errorf("table:\n%s", b.String())
	}
	if _, err := ComparePeer(rs[5:], peer); err == nil {
		t.Error("no common point: no error")
	}
}
