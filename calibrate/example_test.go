package calibrate_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/calibrate"
)

// An nccl-tests log as it was pasted into a ticket: under Slurm's
// --label, with NCCL's lines among the rows and a prompt after them.
const ticket = `$ srun -N 2 --ntasks-per-node=4 ./build/all_reduce_perf -b 1K -e 1G -f 8
 0: # nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 8(factor) warmup iters: 5 iters: 20
 0: #       size         count      type   redop    root     time   algbw   busbw #wrong
 0:         1024           256     float     sum      -1    16.00    0.06    0.11      0
 0: node01:3321:3340 [0] NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7
 0:         8192          2048     float     sum      -1    16.15    0.51    0.89      0
 0:        65536         16384     float     sum      -1    17.15    3.82    6.69      0
 0:       524288        131072     float     sum      -1    25.18   20.82   36.44      0
 0:      4194304       1048576     float     sum      -1    89.40   46.92   82.10      0
 0:     33554432       8388608     float     sum      -1   603.0    55.65   97.38      0
 0:    268435456      67108864     float     sum      -1   4713.4   56.95   99.67      0
 0:   2147483648     536870912     float     sum      -1   37596    57.12   99.96      0
user@login1:~/nccl-tests$
`

func Example() {
	log, err := calibrate.Read("ticket.log", []byte(ticket), "", calibrate.LogOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range log.Runs {
		fmt.Printf("%s on %d ranks, %d samples; the ranks from %s\n", r.Collective, r.World, len(r.Samples), r.WorldFrom)
	}
	fit, err := calibrate.Calibrate(log.Samples(), "alpha-beta", calibrate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fit.Describe())
	for _, e := range fit.Estimates {
		if e.Held {
			fmt.Printf("%s held: %s\n", e.Name, e.Why)
		}
	}
	// Output:
	// allreduce on 8 ranks, 8 samples; the ranks from 8 processes (line 1: $ srun -N 2 --ntasks-per-node=4 ./build/all_reduce_perf -...) x nThread 1 x nGpus 1
	// latency 1.14 µs, bandwidth 100 GB/s, reduce_bandwidth inf
	// reduce_bandwidth held: beta and gamma change every prediction alike on these samples, so only a combination of them is determined: beta carries it (add algorithms or sizes that weigh them differently)
}

// A fit the samples cannot determine is refused, with the reason.
func ExampleRefusedError() {
	small := `# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid 1 on a device 0 [0000:18:00] GPU
#  Rank  1 Group  0 Pid 2 on a device 1 [0000:38:00] GPU
#       size         count      type   redop    root     time   algbw   busbw #wrong
           8             2     float     sum      -1    12.10    0.00    0.00      0
          64            16     float     sum      -1    12.06    0.01    0.01      0
         512           128     float     sum      -1    12.21    0.04    0.04      0
`
	log, err := calibrate.Read("small.log", []byte(small), "", calibrate.LogOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = calibrate.Calibrate(log.Samples(), "alpha-beta", calibrate.Options{})
	var refused *calibrate.RefusedError
	if errors.As(err, &refused) {
		fmt.Println(strings.SplitN(refused.Reason, ";", 2)[0])
	}
	// Output:
	// bandwidth (beta) accounts for at most 1.1% of any sample's time: the samples (8 B to 512 B) all lie where latency dominates, so they do not determine it
}

// Which model follows realnet's runs: the points (made here on realnet's
// two paths, QUIC and TCP) are predicted by each candidate fitted without
// them, and the candidates ranked by that error.
func ExampleSelectModel() {
	results := `collective,algorithm,world,bytes,dtype,time_s
allreduce,ring,2,64,f32,8.0656e-05
allreduce,ring,2,1024,f32,9.0496e-05
allreduce,ring,2,16384,f32,0.000247936
allreduce,ring,2,262144,f32,0.00046768
allreduce,ring,2,4194304,f32,0.00538288
allreduce,recursive_doubling,2,64,f32,4.0672e-05
allreduce,recursive_doubling,2,1024,f32,5.0752e-05
allreduce,recursive_doubling,2,16384,f32,0.000212032
allreduce,recursive_doubling,2,262144,f32,0.000463216
allreduce,recursive_doubling,2,4194304,f32,0.006361456
allreduce,ring,4,64,f32,0.000240984
allreduce,ring,4,1024,f32,0.000255744
allreduce,ring,4,16384,f32,0.000491904
allreduce,ring,4,262144,f32,0.00091152
allreduce,ring,4,4194304,f32,0.00828432
allreduce,recursive_doubling,4,64,f32,8.1344e-05
allreduce,recursive_doubling,4,1024,f32,0.000101504
allreduce,recursive_doubling,4,16384,f32,0.000424064
allreduce,recursive_doubling,4,262144,f32,0.000926432
allreduce,recursive_doubling,4,4194304,f32,0.012722912
`
	log, err := calibrate.Read("results.csv", []byte(results), "", calibrate.LogOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cs, err := calibrate.SelectModel(log.Samples(), []string{"alpha-beta", "realnet"}, calibrate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cs {
		if c.Err != nil {
			fmt.Printf("%s: %v\n", c.Model, c.Err)
			continue
		}
		fmt.Printf("%s: held-out median error %.0f%%\n", c.Model, 100*c.HeldOut)
	}
	for _, st := range cs[0].Fit.Settings {
		fmt.Printf("%s held at %s (given: %v)\n", st.Name, st.Size(), st.Given)
	}
	// Output:
	// realnet: held-out median error 0%
	// alpha-beta: held-out median error 16%
	// bulk_threshold held at 64 KiB (given: false)
	// eager_threshold held at 0 (off) (given: false)
}

// A fit held against what hardware can do: the log's 100 GB/s is above
// a memory of 50 GB/s, which no link outruns. DefaultModels are the
// models calibrate ranks when none is named: for another library's log,
// those that assume neither realnet nor ranks sharing one machine.
func ExampleFit_Implausible() {
	log, err := calibrate.Read("ticket.log", []byte(ticket), "", calibrate.LogOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(calibrate.DefaultModels(log.Samples()))
	fit, err := calibrate.Calibrate(log.Samples(), "alpha-beta", calibrate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	warnings, err := fit.Implausible(calibrate.Bounds{MaxBandwidth: 50e9, MaxWhy: "50 GB/s, given"}, calibrate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warnings {
		fmt.Println(w[:strings.Index(w, ":")])
	}
	// Output:
	// [alpha-beta alpha-beta-protocol loggp]
	// bandwidth (beta) = 100 GB/s is above the memory's bandwidth, 50 GB/s, given
}
