package sim_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// catalogueBody is a run of algorithm a of collective c over count
// elements of f32 at world p.
func catalogueBody(c *algos.Collective, a *algos.Algorithm, p, count int) sim.Body {
	send, recv, _ := c.Layout(count, p)
	return func(ctx context.Context, l algos.Link) error {
		call := algos.Call{Buf: l.Alloc(recv * 4), DType: device.F32, Op: device.Sum, Root: p / 2}
		if send > 0 {
			call.Send = l.Alloc(send * 4)
		}
		return a.Run(ctx, l, call)
	}
}

// TestEstimateMessages compares the estimate of every algorithm of the
// catalogue with the run: exact up to 64 ranks, where every rank is
// recorded; within 10% (messages) and a factor of 1.6 (events) above,
// where about 80 ranks are.
func TestEstimateMessages(t *testing.T) {
	worlds := []int{7, 64, 130, 300}
	if testing.Short() {
		worlds = []int{7, 130}
	}
	for _, cname := range algos.CollectiveNames() {
		c, _ := algos.Lookup(cname)
		for _, a := range c.Algorithms {
			for _, p := range worlds {
				if a.PowerOfTwo && p&(p-1) != 0 {
					continue
				}
				for _, m := range []struct {
					name  string
					model sim.Model
				}{{"alpha-beta", worked}, {"flow", sim.FlowCrossbar(worked)}} {
					name := fmt.Sprintf("%s/%s/p=%d/%s", cname, a.Name, p, m.name)
					body := catalogueBody(c, a, p, p*64+3)
					cfg := sim.Config{World: p, Model: m.model, Replay: true}
					est, err := sim.EstimateRun(cfg, body)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					res, err := sim.Run(cfg, body)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					msgErr := float64(est.Messages)/float64(res.Messages) - 1
					evRatio := float64(est.Events) / float64(res.Events)
					t.Logf("%s: messages %d / %d (%+.1f%%), events %d / %d (x%.2f)", name, est.Messages, res.Messages, 100*msgErr, est.Events, res.Events, evRatio)
					switch {
					case p <= 64 && est.Messages != res.Messages:
						t.Errorf("%s: estimated %d messages, ran %d", name, est.Messages, res.Messages)
					case math.Abs(msgErr) > 0.1:
						t.Errorf("%s: estimated %d messages, ran %d", name, est.Messages, res.Messages)
					case evRatio > 1.6 || evRatio < 1/1.6:
						t.Errorf("%s: estimated %d events, ran %d", name, est.Events, res.Events)
					}
				}
			}
		}
	}
}

// TestEstimateSymmetry checks that the estimate names the group under
// which the run then simulates one rank for all, exactly where the run
// does (Result.SymmetryGroup), in worlds the estimate samples and in
// worlds it records whole; and that it sizes that run, not the full one.
func TestEstimateSymmetry(t *testing.T) {
	ab := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9, ReduceBandwidth: 1e9}
	ring := func(bytes int) sim.Body {
		return func(ctx context.Context, l algos.Link) error {
			return algos.RingAllreduce(ctx, l, l.Alloc(bytes), device.F32, device.Sum)
		}
	}
	hd := func(bytes int) sim.Body {
		return func(ctx context.Context, l algos.Link) error {
			return algos.HalvingDoublingAllreduce(ctx, l, l.Alloc(bytes), device.F32, device.Sum)
		}
	}
	tree := func(bytes int) sim.Body {
		return func(ctx context.Context, l algos.Link) error {
			return algos.BinomialBroadcast(ctx, l, l.Alloc(bytes), device.F32, 0)
		}
	}
	for _, c := range []struct {
		name  string
		world int
		body  sim.Body
		model sim.Model
		sym   sim.Symmetry
		want  string
	}{
		{"ring", 8, ring(8 << 10), ab, sim.SymmetryAuto, "cyclic"},
		{"ring/off", 8, ring(8 << 10), ab, sim.SymmetryOff, ""},
		{"ring/uneven", 8, ring(8<<10 + 4), ab, sim.SymmetryAuto, ""},
		{"halving-doubling", 1024, hd(4 << 10), ab, sim.SymmetryAuto, "xor"},
		{"halving-doubling/empty-ranks", 1024, hd(1 << 10), ab, sim.SymmetryAuto, ""},
		{"halving-doubling/loggp", 1024, hd(4 << 10), sim.LogGP{Latency: sim.Microsecond, Bandwidth: 1e9}, sim.SymmetryAuto, ""},
		{"tree", 1024, tree(4 << 10), ab, sim.SymmetryAuto, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := sim.Config{World: c.world, Model: c.model, Replay: true, Symmetry: c.sym}
			est, err := sim.EstimateRun(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Run(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if est.Symmetry != c.want || res.SymmetryGroup != c.want {
				t.Fatalf("estimate says symmetry %q, the run took %q, want %q", est.Symmetry, res.SymmetryGroup, c.want)
			}
			if est.Messages != res.Messages {
				t.Errorf("estimate %d messages, the run %d", est.Messages, res.Messages)
			}
			if c.want == "" {
				return
			}
			// The shortcut's time is priced, not timed: the same on
			// every call.
			again, err := sim.EstimateRun(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if again.Seconds != est.Seconds || est.Seconds <= 0 {
				t.Errorf("estimates of %g s and %g s", est.Seconds, again.Seconds)
			}
			cfg.Symmetry = sim.SymmetryOff
			full, err := sim.EstimateRun(cfg, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if est.Memory >= full.Memory {
				t.Errorf("the shortcut's estimate %d B is not below the full run's %d B", est.Memory, full.Memory)
			}
		})
	}
}

// TestEstimateSecondsPriced checks the time estimate of phantom data's
// runs off the flow model: it prices the events and times nothing, so
// two estimates agree to the bit; an event costs more in a larger world
// and more on coroutines than replayed, within the range the scale
// benchmarks measured (about 70 ns to 2 µs) at this machine's speed.
func TestEstimateSecondsPriced(t *testing.T) {
	body := scaleBody(algos.HalvingDoublingAllreduce, 1<<16)
	perEvent := map[string]float64{}
	for _, c := range []struct {
		world  int
		replay bool
	}{{128, true}, {4096, true}, {128, false}, {4096, false}} {
		name := fmt.Sprintf("%d/%s", c.world, engineName(c.replay))
		cfg := sim.Config{World: c.world, Model: model, Replay: c.replay}
		e1, err := sim.EstimateRun(cfg, body)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := sim.EstimateRun(cfg, body)
		if err != nil {
			t.Fatal(err)
		}
		if e1.Seconds != e2.Seconds {
			t.Errorf("%s: estimates of %g s and %g s", name, e1.Seconds, e2.Seconds)
		}
		// The prices are the reference machine's, scaled by this
		// machine's speed (a build with the race detector is several
		// times slower).
		heap, coroutine := sim.MachineSpeed()
		lo, hi := heap, heap
		if !c.replay {
			lo, hi = min(heap, coroutine), max(heap, coroutine)
		}
		per := e1.Seconds / float64(e1.Events)
		if per < 50e-9*lo || per > 2e-6*hi {
			t.Errorf("%s: %g s an event, at speeds %g and %g", name, per, heap, coroutine)
		}
		perEvent[name] = per
	}
	for _, w := range []string{"128", "4096"} {
		if perEvent[w+"/replay"] >= perEvent[w+"/coroutines"] {
			t.Errorf("%s ranks: a replayed event (%g s) not cheaper than a coroutine's (%g s)", w, perEvent[w+"/replay"], perEvent[w+"/coroutines"])
		}
	}
	for _, e := range []string{"replay", "coroutines"} {
		if perEvent["4096/"+e] <= perEvent["128/"+e] {
			t.Errorf("%s: an event at 4096 ranks (%g s) not dearer than at 128 (%g s)", e, perEvent["4096/"+e], perEvent["128/"+e])
		}
	}
}
