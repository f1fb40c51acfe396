package sim_test

import (
	"context"
	"flag"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The scale benchmarks time the simulator per simulated message and state
// each figure as a ratio to its floor, measured in the same run: one
// operation of a typed binary heap holding as many pending events as the
// world has ranks, plus one coroutine switch (what a discrete-event
// simulator that drives ranks as coroutines cannot avoid per message).
// They also report the peak memory the Go runtime held during the run,
// and the garbage collections the run caused (gcs/op).
//
// Each point also reports its peak per rank, and how EstimateRun's
// figures for it compare with the run's (est-mem-x, est-time-x: the
// estimate over the measured peak memory and wall time).
//
//	go test ./sim -run '^$' -bench 'Scale' -benchtime 1x
//	go test ./sim -run '^$' -bench 'Scale/halving_doubling/p=1048576' -benchtime 1x -sim.big -timeout 60m
//	go test ./sim -run '^$' -bench 'Scale/halving_doubling/p=16777216/replay' -benchtime 1x -sim.huge -timeout 180m
//
// The million-rank points run only with -sim.big: they take minutes and
// gigabytes; the 2^24-rank one only with -sim.huge: measured on a 2-core
// machine, 31 min of CPU and 6.45 GiB at its peak (413 bytes a rank;
// 6.95 GiB resident), and after recording stopped allocating a message,
// 22 min of CPU (20.5 of wall, 1.57x the floor) and 6.44 GiB.
var (
	scaleBig  = flag.Bool("sim.big", false, "run the million-rank scale benchmarks")
	scaleHuge = flag.Bool("sim.huge", false, "run the 2^24-rank scale benchmark")
)

// scaleCase is one benchmark point.
type scaleCase struct {
	name   string
	world  int
	big    bool
	huge   bool
	model  sim.Model
	body   sim.Body
	replay bool
}

func scaleBody(run func(context.Context, algos.Link, device.Buffer, device.DType, device.Op) error, bytes int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		return run(ctx, l, l.Alloc(bytes), device.F32, device.Sum)
	}
}

// BenchmarkScale is alpha-beta (model) with phantom data, each point
// simulated with coroutines and replayed (Config.Replay).
func BenchmarkScale(b *testing.B) {
	cases := []scaleCase{
		{name: "ring/p=1024", world: 1024, model: model, body: scaleBody(algos.RingAllreduce, 64<<20)},
		{name: "halving_doubling/p=65536", world: 1 << 16, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 1<<20)},
		{name: "halving_doubling/p=262144", world: 1 << 18, big: true, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 1<<20)},
		{name: "halving_doubling/p=1048576", world: 1 << 20, big: true, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 1<<20)},
		{name: "halving_doubling/p=16777216", world: 1 << 24, huge: true, model: model, body: scaleBody(algos.HalvingDoublingAllreduce, 1<<20)},
	}
	for _, c := range cases {
		for _, replay := range []bool{false, true} {
			c.replay = replay
			b.Run(c.name+"/"+engineName(replay), func(b *testing.B) {
				if c.big && !*scaleBig {
					b.Skip("a million-rank point: run with -sim.big")
				}
				if c.huge && (!*scaleHuge || !replay) {
					b.Skip("the 2^24-rank point: run its replay with -sim.huge")
				}
				benchScale(b, c)
			})
		}
	}
}

func engineName(replay bool) string {
	if replay {
		return "replay"
	}
	return "coroutines"
}

// scaleTree is a non-blocking 3-tier fat tree of radix 26 (4394 hosts),
// 100 Gbit/s links with 500 ns per hop; scaleTreeAB is alpha-beta with
// the tree's end-to-end figures.
var (
	scaleTree   = sim.FatTree{Tiers: 3, Radix: 26, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}}
	scaleTreeAB = sim.AlphaBeta{Latency: 3 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 100e9}
)

// BenchmarkScaleFlow is the flow model's message (flow) rate on a fat tree
// of 4096 ranks beside alpha-beta's in the same run (the ring, 33 million
// messages, only with -sim.big):
//
//	go test ./sim -run '^$' -bench 'ScaleFlow' -benchtime 3x
//
// "flow-unshared" is the flow model with every flow started and ended as
// if alone on its edges (SetFlowUnshared): its rates are wrong where flows
// share an edge, and its point is what the run costs without the max-min
// work, the bookkeeping of routes, edges and events alone.
func BenchmarkScaleFlow(b *testing.B) {
	const p = 4096
	flow := sim.Flow{Topology: scaleTree, ReduceBandwidth: 100e9}
	for _, alg := range []struct {
		name string
		big  bool
		run  func(context.Context, algos.Link, device.Buffer, device.DType, device.Op) error
	}{{"halving_doubling", false, algos.HalvingDoublingAllreduce}, {"ring", true, algos.RingAllreduce}} {
		for _, replay := range []bool{false, true} {
			for _, m := range []struct {
				name     string
				model    sim.Model
				unshared bool
			}{{"alpha-beta", scaleTreeAB, false}, {"flow", flow, false}, {"flow-unshared", flow, true}} {
				b.Run(alg.name+"/"+engineName(replay)+"/"+m.name+"/p="+strconv.Itoa(p), func(b *testing.B) {
					if alg.big && !*scaleBig {
						b.Skip("33 million messages: run with -sim.big")
					}
					if m.unshared && alg.name == "ring" {
						b.Skip("every ring flow starts alone: the same run as flow")
					}
					defer sim.SetFlowUnshared(m.unshared)()
					benchScale(b, scaleCase{world: p, model: m.model, body: scaleBody(alg.run, 64<<20), replay: replay})
				})
			}
		}
	}
}

// benchScale runs c and reports its time per message in wall time and in
// the CPU time of the process (every thread: the garbage collector's
// too), each beside the floor measured the same way just before and just
// after the run, so that a shared machine's load moves both alike.
func benchScale(b *testing.B, c scaleCase) {
	b.StopTimer()
	cfg := sim.Config{World: c.world, Model: c.model, Replay: c.replay}
	est, err := sim.EstimateRun(cfg, c.body)
	if err != nil {
		b.Fatal(err)
	}
	floorBefore, floorCPUBefore := floorNs(c.world)
	runtime.GC()
	peak := watchMemory()
	cpu0, gc0 := cpuTime(), gcCycles()
	b.StartTimer()
	var msgs int64
	replayed := true
	for b.Loop() {
		res, err := sim.Run(cfg, c.body)
		if err != nil {
			b.Fatal(err)
		}
		msgs += res.Messages
		replayed = replayed && res.Replayed
	}
	b.StopTimer()
	cpu, gcs := cpuTime()-cpu0, gcCycles()-gc0
	elapsed := b.Elapsed()
	mem := peak()
	if c.replay && !replayed {
		b.Fatal("the run was not replayed")
	}
	floorAfter, floorCPUAfter := floorNs(c.world)
	floor, floorCPU := (floorBefore+floorAfter)/2, (floorCPUBefore+floorCPUAfter)/2
	perMsg := elapsed.Seconds() * 1e9 / float64(msgs)
	perMsgCPU := cpu.Seconds() * 1e9 / float64(msgs)
	b.ReportMetric(float64(msgs)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(perMsg, "ns/msg")
	b.ReportMetric(floor, "floor-ns")
	b.ReportMetric(perMsg/floor, "x-floor")
	b.ReportMetric(perMsgCPU/floorCPU, "cpu-x-floor")
	b.ReportMetric(perMsgCPU, "cpu-ns/msg")
	b.ReportMetric(float64(mem)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(mem)/float64(c.world), "peak-B/rank")
	b.ReportMetric(float64(gcs)/float64(b.N), "gcs/op")
	b.ReportMetric(float64(est.Memory)/float64(mem), "est-mem-x")
	b.ReportMetric(est.Seconds/(elapsed.Seconds()/float64(b.N)), "est-time-x")
}

// gcCycles is the number of garbage collections the process has
// completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchMemory samples the memory the Go runtime holds from the OS (less
// what it gave back) until the returned function is called, which returns
// the peak.
func watchMemory() func() uint64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var peak uint64
	read := func() {
		metrics.Read(samples)
		peak = max(peak, samples[0].Value.Uint64()-samples[1].Value.Uint64())
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(stop)
		wg.Wait()
		read()
		return peak
	}
}

// floorNs is the floor per message at a world of n ranks, in ns: with n
// events pending, pop the earliest and push one a pseudo-random time
// later, and switch to a coroutine and back. It runs for about half a
// second and returns the mean in wall time and in CPU time.
func floorNs(n int) (wall, cpu float64) {
	next, stop := sim.Switcher()
	defer stop()
	f := sim.NewFloor(n)
	ops := 0
	cpu0 := cpuTime()
	start := time.Now()
	for time.Since(start) < 500*time.Millisecond {
		f.Run(1024, next)
		ops += 1024
	}
	wall = float64(time.Since(start).Nanoseconds()) / float64(ops)
	cpu = float64((cpuTime() - cpu0).Nanoseconds()) / float64(ops)
	return wall, cpu
}
