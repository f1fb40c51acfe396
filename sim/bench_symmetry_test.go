package sim_test

import (
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// BenchmarkSymmetry runs each point in full (replayed) and with the
// shortcut of Config.Symmetry, one after the other in each iteration,
// and reports both wall times and peak memories and their ratios (full
// over shortcut), so that a shared machine's load moves both alike, and
// how EstimateRun's time and memory compare with each run's (est-time-x,
// est-mem-x: the estimate over the measured):
//
//	go test ./sim -run '^$' -bench Symmetry -benchtime 1x
//	go test ./sim -run '^$' -bench 'Symmetry/halving_doubling/p=1048576' -benchtime 1x -sim.big -timeout 60m
func BenchmarkSymmetry(b *testing.B) {
	for _, c := range []scaleCase{
		{name: "ring/p=1024", world: 1024, model: model, body: scaleBody(algos.RingAllreduce, 64<<20)},
		{name: "ring/p=4096", world: 4096, big: true, model: model, body: scaleBody(algos.RingAllreduce, 64<<20)},
		{name: "halving_doubling/p=65536", world: 1 << 16, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 1<<20)},
		// 4 MiB: one f32 per rank. (BenchmarkScale's 1 MiB gives most of
		// the 2^20 ranks no element and some one: not symmetric, so it
		// runs in full.)
		// 1 MiB on 2^18 ranks: one f32 per rank.
		{name: "halving_doubling/p=262144", world: 1 << 18, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 1<<20)},
		{name: "halving_doubling/p=1048576", world: 1 << 20, big: true, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 4<<20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.big && !*scaleBig {
				b.Skip("a big point: run with -sim.big")
			}
			var wall [2]time.Duration
			var peak [2]uint64
			var res [2]*sim.Result
			var est [2]sim.Estimate
			for i, sym := range []sim.Symmetry{sim.SymmetryOff, sim.SymmetryAuto} {
				e, err := sim.EstimateRun(sim.Config{World: c.world, Model: c.model, Replay: true, Symmetry: sym}, c.body)
				if err != nil {
					b.Fatal(err)
				}
				est[i] = e
			}
			if est[0].Symmetry != "" || est[1].Symmetry == "" {
				b.Fatalf("estimates say symmetry %q (off) and %q (auto)", est[0].Symmetry, est[1].Symmetry)
			}
			for b.Loop() {
				for i, sym := range []sim.Symmetry{sim.SymmetryOff, sim.SymmetryAuto} {
					b.StopTimer()
					res[i] = nil
					debug.FreeOSMemory()
					watch := watchMemory()
					b.StartTimer()
					start := time.Now()
					r, err := sim.Run(sim.Config{World: c.world, Model: c.model, Replay: true, Symmetry: sym}, c.body)
					wall[i] += time.Since(start)
					b.StopTimer()
					peak[i] = max(peak[i], watch())
					if err != nil {
						b.Fatal(err)
					}
					res[i] = r
					b.StartTimer()
				}
			}
			full, short := res[0], res[1]
			if short.SymmetryGroup == "" {
				b.Fatal("the shortcut was not taken")
			}
			if full.End != short.End || full.Messages != short.Messages || !slices.Equal(full.Finish, short.Finish) {
				b.Fatalf("the shortcut differs from the full run: end %v, %v", full.End, short.End)
			}
			n := float64(b.N)
			b.ReportMetric(wall[0].Seconds()/n, "full-s")
			b.ReportMetric(wall[1].Seconds()/n, "sym-s")
			b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "x-faster")
			b.ReportMetric(float64(peak[0])/(1<<20), "full-peak-MiB")
			b.ReportMetric(float64(peak[1])/(1<<20), "sym-peak-MiB")
			b.ReportMetric(float64(peak[0])/float64(peak[1]), "x-smaller")
			// EstimateRun's figures over the measured ones, each run's.
			b.ReportMetric(est[0].Seconds/(wall[0].Seconds()/n), "full-est-time-x")
			b.ReportMetric(est[1].Seconds/(wall[1].Seconds()/n), "sym-est-time-x")
			b.ReportMetric(float64(est[0].Memory)/float64(peak[0]), "full-est-mem-x")
			b.ReportMetric(float64(est[1].Memory)/float64(peak[1]), "sym-est-mem-x")
		})
	}
}
