package ladder

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
)

// emptyAlgorithm names the harness rung whose collective does nothing:
// its time is what the timing itself costs.
const emptyAlgorithm = "empty"

// harnessScenario is the scenario of the harness rungs.
const harnessScenario = `name = "ladder"
[network]
model = "alpha-beta"
latency = "10us"
bandwidth = "1GB/s"
[[sweep]]
collective = "allreduce"
algorithms = [%q]
world = [2]
bytes = [%d]
dtype = "f32"
op = "sum"
`

// harnessJob is the job of a harness rung: one allreduce point of c's
// algorithm and size, or the empty collective.
func harnessJob(c command) (*live.Job, error) {
	algo, n := c.Algorithm, c.Bytes
	if algo == emptyAlgorithm {
		algo, n = "ring", 0
	}
	s, err := scenario.Parse("ladder", fmt.Appendf(nil, harnessScenario, algo, n))
	if err != nil {
		return nil, err
	}
	job, err := live.NewJob(s, 2, live.Options{Warmup: c.Warmup, Iters: c.Rounds, Timing: c.Timing})
	if err != nil {
		return nil, err
	}
	if c.Algorithm == emptyAlgorithm {
		job.Points[0].Algorithm = &algos.Algorithm{Name: emptyAlgorithm, Run: func(context.Context, algos.Link, algos.Call) error { return nil }}
		job.Points[0].Name = emptyAlgorithm
	}
	return job, nil
}

// harness runs nexar-live's measuring loop (live.RunRank, as every worker
// of nexar-live run does) on the link and returns, on rank 0, the times of
// the timed iterations.
func harness(ctx context.Context, l *realnet.Link, c command) ([]float64, error) {
	job, err := harnessJob(c)
	if err != nil {
		return nil, err
	}
	res, err := live.RunRank(ctx, l, job, live.RankHooks{})
	if err != nil || l.Rank() != 0 {
		return nil, err
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("%d results, want 1", len(res))
	}
	if res[0].Wrong != 0 {
		return nil, fmt.Errorf("%d wrong elements", res[0].Wrong)
	}
	return res[0].Times, nil
}
