package results_test

import (
	"os"

	"github.com/nexar-go/nexar-go/results"
)

// An NCCLTable prints rows as nccl-tests prints its results, here with
// the fastest, mean and slowest iteration (MinMax, OSU's -f).
func ExampleNCCLTable() {
	t := results.NewNCCLTable(os.Stdout)
	t.MinMax = true
	row := results.Row{Collective: "allreduce", Algorithm: "ring", World: 4, Bytes: 4096, DType: "f32",
		Time: 20e-6, AlgBW: 0.2048, BusBW: 0.3072}
	t.Add(results.TableLine{Row: row, Count: 1024, Redop: "sum", Root: -1, Times: []float64{18e-6, 20e-6, 25e-6}})
	t.Close()
	// Output:
	// #
	// # Collective test starting: allreduce (algorithm ring, 4 ranks)
	// #
	// #       size         count      type   redop    root     time   algbw   busbw  #wrong     min      avg      max
	// #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)     (us)     (us)
	//         4096          1024     float     sum      -1    20.00    0.20    0.31      0    18.00    21.00    25.00
	// #
	// # Out of bounds values : 0 OK
	// # Avg bus bandwidth    : 0.3072
	// #
}
