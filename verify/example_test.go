package verify_test

import (
	"fmt"
	"log"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/verify"
)

// Predict holds measured rows (as nexar-live's results.csv holds them)
// against a scenario's network model.
func ExamplePredict() {
	s, err := scenario.Parse("ab.toml", []byte(`name = "ab"
[network]
model = "alpha-beta"
latency = "10us"
bandwidth = "1GB/s"

[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [4]
bytes = [4096, "1MiB"]
`))
	if err != nil {
		log.Fatal(err)
	}
	measured := []results.Row{
		{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 4096, DType: "f32", Op: "sum", Time: 80e-6},
		{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 1 << 20, DType: "f32", Op: "sum", Time: 2e-3},
	}
	cs, err := verify.Predict(s, measured)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range cs {
		fmt.Printf("%d B: predicted %.1f us, measured %.1f us, ratio %.2f\n", c.Bytes, c.Predicted*1e6, c.Time*1e6, c.Ratio())
	}
	fmt.Println(verify.Summarize(cs))
	// Output:
	// 4096 B: predicted 66.1 us, measured 80.0 us, ratio 0.83
	// 1048576 B: predicted 1632.9 us, measured 2000.0 us, ratio 0.82
	// 2 points: median |predicted/measured - 1| = 17.8%, mean 17.8%
}

// Crossovers reads where a tuning table's crossover really lies from both
// variants' times at sizes around it (derive.MeasuredCrossover's rule).
func ExampleCrossovers() {
	target := verify.Target{Collective: "allreduce", World: 4, Predicted: 6000,
		Below: verify.Variant{Algorithm: "recursive_doubling"}, Above: verify.Variant{Algorithm: "ring"},
		Sizes: []int{1024, 2048, 4096, 8192, 16384}}
	var cs []verify.Comparison
	for i, n := range target.Sizes {
		below := []float64{20e-6, 24e-6, 33e-6, 50e-6, 85e-6}[i]
		above := []float64{40e-6, 41e-6, 43e-6, 47e-6, 55e-6}[i]
		cs = append(cs,
			verify.Comparison{Row: results.Row{Collective: "allreduce", Algorithm: "recursive_doubling", World: 4, Bytes: n, Time: below}},
			verify.Comparison{Row: results.Row{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: n, Time: above}})
	}
	checks, err := verify.Crossovers([]verify.Target{target}, cs, false)
	if err != nil {
		log.Fatal(err)
	}
	m := checks[0].Measured
	fmt.Printf("measured between %d and %d bytes: %.0f (table: %d), %d sizes disagree\n", m.Lo, m.Hi, m.Bytes, target.Predicted, m.Disagree)
	// Output:
	// measured between 4096 and 8192 bytes: 7184 (table: 6000), 0 sizes disagree
}
