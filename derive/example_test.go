package derive_test

import (
	"fmt"
	"os"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/sweep"
)

// Derive the crossover of two allreduce algorithms from four measured
// points and write the tuning table that encodes it. ln(t_rd/t_ring) is
// ln(20/75) at 1 KiB and ln(400/250) at 1 MiB; the straight line between
// them on the log scale crosses zero at e^12.045 = 170199 bytes.
func ExampleDerive() {
	rows := []sweep.Row{
		{Collective: "allreduce", Algorithm: "recursive_doubling", World: 8, Bytes: 1 << 10, DType: "f32", Time: 20e-6},
		{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1 << 10, DType: "f32", Time: 75e-6},
		{Collective: "allreduce", Algorithm: "recursive_doubling", World: 8, Bytes: 1 << 20, DType: "f32", Time: 400e-6},
		{Collective: "allreduce", Algorithm: "ring", World: 8, Bytes: 1 << 20, DType: "f32", Time: 250e-6},
	}
	res, err := derive.Derive(rows, derive.Options{Description: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, x := range res.Crossovers {
		fmt.Printf("world %d: %s below %.0f bytes, %s above\n", x.World, x.Below, x.Bytes, x.Above)
	}
	res.Tuning.WriteTo(os.Stdout)
	// Output:
	// world 8: recursive_doubling below 170199 bytes, ring above
	// # nexar-go tuning table (see algos.Tuning for the format).
	// version = 1
	// description = "example"
	//
	// [[collective.allreduce.crossover]]
	// min_world = 1
	// [[collective.allreduce.crossover.step]]
	// from_bytes = 0
	// algorithm = "recursive_doubling"
	// [[collective.allreduce.crossover.step]]
	// from_bytes = 170199
	// algorithm = "ring"
	//
	// [[collective.allreduce.rule]]
	// algorithm = "recursive_doubling"
}
