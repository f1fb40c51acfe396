package results_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/nexar-go/nexar-go/results"
)

// A nexar-live results.csv of a run on GPUs, read by nexar-sim's columns
// as merge reads a file (here under an earlier version's name for busbw),
// and written back as nexar-sim writes its own: the columns nexar-sim
// does not write are nexar-live's, which the table says it has.
func Example() {
	const file = `collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_gbps,params,op,repeats,time_min_s,time_max_s,spread_s,messages,wrong,device,bulk_threshold,eager_threshold
allreduce,ring,4,1048576,f32,0.001500000,0.699,1.048,,sum,20,0.001400000,0.001900000,0.000250000,24,0,cuda,65536,0
`
	tab, err := results.Read(strings.NewReader(file), results.SimColumns...)
	if err != nil {
		log.Fatal(err)
	}
	r := tab.Rows[0]
	fmt.Printf("line %d: %s/%s on %d ranks, %d B: %g s, busbw %g GB/s\n", tab.Lines[0], r.Collective, r.Algorithm, r.World, r.Bytes, r.Time, r.BusBW)
	fmt.Printf("nexar-live's: wrong %v, device %v (%s), thresholds %v (bulk from %d B)\n",
		tab.Has(results.ColWrong), tab.Has(results.ColDevice), r.Device, r.HasThresholds(), r.BulkThreshold)

	w := results.NewWriter(os.Stdout, results.SimColumns, results.SimDecimals)
	if err := w.Write(r); err != nil {
		log.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}

	_, err = results.Read(strings.NewReader("collective,algorithm,world,bytes,time_s\nallreduce,ring,four,8,1e-5\n"))
	fmt.Println(err)
	// Output:
	// line 2: allreduce/ring on 4 ranks, 1048576 B: 0.0015 s, busbw 1.048 GB/s
	// nexar-live's: wrong true, device true (cuda), thresholds true (bulk from 65536 B)
	// collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s,params,op,repeats,time_min_s,time_max_s,spread_s,messages
	// allreduce,ring,4,1048576,f32,0.001500000000,0.699,1.048,,sum,20,0.001400000000,0.001900000000,0.000250000000,24
	// 2: column "world": "four" is not a whole number; want a number of ranks, 1 or more
}
