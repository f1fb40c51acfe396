package simtest_test

import (
	"fmt"

	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/simtest"
)

// A network for the examples: alpha-beta, with free reductions.
var net = simtest.MustParseNetwork(`
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
`)

// The ring allreduce on alpha-beta takes 2(p-1)(alpha + n/(p beta)) when
// reductions are free: in a test, simtest.AssertTime compares the two.
func ExampleNetwork_Simulate() {
	const p, n = 4, 1 << 20
	got, err := net.Simulate(simtest.Case{Collective: "allreduce", Algorithm: "ring", World: p, Bytes: n})
	if err != nil {
		fmt.Println(err)
		return
	}
	alpha := 5 * sim.Microsecond
	want := sim.Time(2*(p-1)) * (alpha + sim.Time(float64(n)/p/12.5e9*1e12))
	fmt.Println(got, want)
	// Output: 155.82912us 155.82912us
}

// Ratio says how far a variant is from a reference; in a test,
// AssertWithin bounds it.
func ExampleNetwork_Ratio() {
	c := simtest.Case{Collective: "allreduce", Algorithm: "recursive_doubling", World: 16, Bytes: 64 << 20}
	r, err := net.Ratio(c, "ring")
	fmt.Printf("%.2f %v\n", r, err)
	// Output: 2.10 <nil>
}

// LoadNetwork takes the network of a study's scenario file, here a 3:1
// fat tree, so that a test guards what the study found.
func ExampleLoadNetwork() {
	fatTree, err := simtest.LoadNetwork("../scenarios/oversubscribed-ethernet.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := simtest.Case{Collective: "allreduce", Algorithm: "pipelined_ring", World: 48, Bytes: 4 << 20}
	r, err := fatTree.Ratio(c, "halving_doubling")
	fmt.Printf("pipelined_ring / halving_doubling at 4 MiB on 48 ranks: %.2f %v\n", r, err)
	// Output: pipelined_ring / halving_doubling at 4 MiB on 48 ranks: 0.34 <nil>
}
