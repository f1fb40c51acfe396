package plots_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/plots"
)

// Plots of a small allreduce sweep, as `nexar-sim plot` draws them from a
// results.csv: ring against recursive doubling on the alpha-beta closed
// forms of shared/reference/cost-models.md (α = 5 µs, β = 1/12.5 GB/s,
// γ = 1/25 GB/s), p = 4 and 8.
func ExampleWriteAll() {
	const csv = `collective,algorithm,world,bytes,time_s,busbw_GB_per_s
allreduce,ring,4,1024,3.0154e-05,0.05094
allreduce,ring,4,1048576,0.00018729,8.398
allreduce,ring,4,67108864,0.010096,9.97
allreduce,recursive_doubling,4,1024,1.0246e-05,0.1499
allreduce,recursive_doubling,4,1048576,0.00026166,6.011
allreduce,recursive_doubling,4,67108864,0.016116,6.246
allreduce,ring,8,1024,7.0179e-05,0.02553
allreduce,ring,8,1048576,0.0002535,7.239
allreduce,ring,8,67108864,0.011814,9.941
allreduce,recursive_doubling,8,1024,1.5369e-05,0.1166
allreduce,recursive_doubling,8,1048576,0.00039249,4.675
allreduce,recursive_doubling,8,67108864,0.024174,4.858
`
	points, err := plots.ReadCSV(strings.NewReader(csv))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "plots-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	paths, err := plots.WriteAll(dir, points, plots.Options{CeilingGBps: 12.5})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range paths {
		fmt.Println(filepath.Base(p))
	}

	rows, err := plots.Winners(points, "allreduce")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("p=%d:", r.World)
		for _, c := range r.Cells {
			fmt.Printf(" %s %s;", plots.FormatBytes(float64(c.Bytes)), c.Algorithm)
		}
		fmt.Println()
	}
	// Output:
	// latency_allreduce.png
	// latency_allreduce.svg
	// busbw_allreduce.png
	// busbw_allreduce.svg
	// crossover_allreduce.png
	// crossover_allreduce.svg
	// p=4: 1 KiB recursive_doubling; 1 MiB ring; 64 MiB ring;
	// p=8: 1 KiB recursive_doubling; 1 MiB ring; 64 MiB ring;
}
