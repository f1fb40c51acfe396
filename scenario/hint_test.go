package scenario

import (
	"os"
	"strings"
	"testing"
)

// TestUnknownAlgorithmHint: a scenario naming an algorithm the catalogue
// does not know (one a user's program registers, run with the stock
// binary) is refused with the algorithm's name and how to get the binary
// that knows it, in a sweep and in a workload.
func TestUnknownAlgorithmHint(t *testing.T) {
	for _, c := range []struct{ name, src, says string }{
		{"sweep", `name = "s"
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
[[sweep]]
collective = "allreduce"
algorithms = ["chain", "ring"]
world = [2]
bytes = [8]
`, `s.toml:8: sweep[0].algorithms: unknown allreduce algorithm "chain" (want one of ring,`},
		{"workload", string(must(os.ReadFile("../live/examples/loopback-step.toml"))), `workload.algorithms.dp: no collective of the dp group (allreduce, reduce_scatter, allgather) has an algorithm "chain"`},
	} {
		src := strings.Replace(c.src, `dp = "ring"`, `dp = "chain"`, 1)
		_, err := Parse("s.toml", []byte(src))
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		msg := err.Error()
		for _, want := range []string{c.says, UnknownAlgorithmHint} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", c.name, msg, want)
			}
		}
	}
	if !strings.Contains(UnknownAlgorithmHint, "docs/adding-an-algorithm.md") {
		t.Error("the hint names no guide")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
