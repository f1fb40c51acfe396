package derive

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/nexar-go/nexar-go/workload"
)

// BestBucket is the gradient bucket that gave the shortest training step
// on a network, for one layout, schedule, ZeRO stage, micro-batch count
// and choice of algorithms: what to set DDP's bucket_cap_mb (or
// Megatron's --ddp-bucket-size) to there.
type BestBucket struct {
	Network, Layout, Schedule string
	Micro, ZeRO               int
	Algorithms                string
	// Bucket is the best bucket and Step its step time (s); Worst and
	// WorstStep the slowest bucket swept and its step; Buckets how many
	// were swept.
	Bucket, Worst   int64
	Step, WorstStep float64
	Buckets         int
}

// BestBuckets returns the best bucket of every group of rows that differ
// in their bucket alone and swept at least two, in the order the groups
// first appear. A tie within TieTolerance goes to the smaller bucket.
// Rows without data parallelism (DP 1) or under ZeRO-3 (whose gradients
// are reduced layer by layer) have no buckets, and are left out.
func BestBuckets(rows []workload.Row) []BestBucket {
	type key struct {
		network, layout, schedule, algorithms string
		chunks, micro, zero                   int
	}
	var order []key
	groups := map[key][]workload.Row{}
	for _, r := range rows {
		if r.DP <= 1 || r.ZeRO == 3 {
			continue
		}
		k := key{r.Network, r.Layout, r.Schedule, r.Algorithms, r.Chunks, r.Micro, r.ZeRO}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []BestBucket
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		b := BestBucket{Network: k.network, Layout: k.layout, Schedule: k.schedule, Micro: k.micro, ZeRO: k.zero, Algorithms: k.algorithms, Buckets: len(g)}
		best, worst := g[0], g[0]
		for _, r := range g[1:] {
			switch {
			case r.Step < best.Step*(1-TieTolerance):
				best = r
			case r.Step <= best.Step*(1+TieTolerance) && r.Bucket < best.Bucket:
				best = r
			}
			if r.Step > worst.Step {
				worst = r
			}
		}
		b.Bucket, b.Step, b.Worst, b.WorstStep = best.Bucket, best.Step, worst.Bucket, worst.Step
		out = append(out, b)
	}
	return out
}

// BestBucketColumns are best_bucket.csv's columns.
var BestBucketColumns = []string{"network", "layout", "schedule", "micro_batches", "zero", "algorithms", "buckets",
	"best_bucket_bytes", "step_s", "worst_bucket_bytes", "worst_step_s"}

// WriteBestBuckets writes bs as best_bucket.csv.
func WriteBestBuckets(w io.Writer, bs []BestBucket) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(BestBucketColumns); err != nil {
		return err
	}
	for _, b := range bs {
		rec := []string{b.Network, b.Layout, b.Schedule, strconv.Itoa(b.Micro), strconv.Itoa(b.ZeRO), b.Algorithms, strconv.Itoa(b.Buckets),
			strconv.FormatInt(b.Bucket, 10), strconv.FormatFloat(b.Step, 'f', 12, 64), strconv.FormatInt(b.Worst, 10), strconv.FormatFloat(b.WorstStep, 'f', 12, 64)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
