package derive_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/workload"
)

func TestBestBuckets(t *testing.T) {
	row := func(net, alg string, bucket int64, step float64) workload.Row {
		return workload.Row{Network: net, Layout: "dp8-tp8-pp1", DP: 8, Algorithms: alg, Bucket: bucket, Step: step, Micro: 4}
	}
	rows := []workload.Row{
		row("ib", "dp=ring", 1<<20, 1.30), row("ib", "dp=ring", 16<<20, 1.10), row("ib", "dp=ring", 256<<20, 1.25),
		row("ib", "dp=tree", 1<<20, 1.20), row("ib", "dp=tree", 16<<20, 1.20), row("ib", "dp=tree", 256<<20, 1.21),
		row("eth", "dp=ring", 1<<20, 2.0), // one bucket: nothing to choose
	}
	noDP := row("ib", "dp=x", 1<<20, 1)
	noDP.DP = 1
	rows = append(rows, noDP, noDP) // no data parallelism: no buckets
	bs := derive.BestBuckets(rows)
	if len(bs) != 2 {
		t.Fatalf("%d groups, want 2: %+v", len(bs), bs)
	}
	if b := bs[0]; b.Algorithms != "dp=ring" || b.Bucket != 16<<20 || b.Step != 1.10 || b.Worst != 1<<20 || b.Buckets != 3 {
		t.Errorf("ring: %+v", b)
	}
	if b := bs[1]; b.Bucket != 1<<20 {
		t.Errorf("tree: a tie goes to the smaller bucket, got %+v", b)
	}
	var buf bytes.Buffer
	if err := derive.WriteBestBuckets(&buf, bs); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "ib,dp8-tp8-pp1,,4,0,dp=ring,3,16777216,1.1") {
		t.Errorf("best_bucket.csv:\n%s", buf.String())
	}
}
