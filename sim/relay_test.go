package sim_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/mesh"
	"github.com/nexar-go/nexar-go/sim"
)

func mustSpec(t *testing.T, s string) mesh.Spec {
	t.Helper()
	spec, err := mesh.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// oneMessage is a body in which rank src sends n bytes to rank dst.
func oneMessage(src, dst, n int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		switch l.Rank() {
		case src:
			return algos.Send(ctx, l, dst, 1, l.Alloc(n))
		case dst:
			return algos.Recv(ctx, l, src, 1, l.Alloc(n))
		}
		return nil
	}
}

// TestRelayedClosedForms: on alpha-beta a message over h hops takes
// h(α + nβ), store and forward, and the sender is free once the first
// relay holds it.
func TestRelayedClosedForms(t *testing.T) {
	ab := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e9}
	const n = 1 << 20
	hop := ab.Latency + sim.TransferTime(n, ab.Bandwidth)
	for _, c := range []struct {
		mesh          string
		world         int
		src, dst, hop int
	}{
		{"hypercube", 8, 0, 1, 1},
		{"hypercube", 8, 0, 3, 2},
		{"hypercube", 8, 0, 7, 3},
		{"hypercube", 8, 5, 2, 3},
		{"hypercube", 6, 5, 2, 3}, // 5 → 4 → 0 → 2 or 5 → 1 → 0 → 2: 6 and 7 are missing
		{"kregular:3", 8, 0, 4, 1},
		{"kregular:3", 8, 0, 2, 2},
		{"kregular:3", 8, 0, 3, 2},
		{"kregular:4", 9, 0, 4, 2},
		{"full", 8, 0, 7, 1},
	} {
		spec := mustSpec(t, c.mesh)
		m, err := mesh.New(spec, c.world)
		if err != nil {
			t.Fatal(err)
		}
		h := m.Hops(c.src, c.dst)
		if h != c.hop {
			t.Fatalf("%s on %d: %d hops from %d to %d, want %d", c.mesh, c.world, h, c.src, c.dst, c.hop)
		}
		res, err := sim.Run(sim.Config{World: c.world, Model: sim.Relayed{Model: ab, Mesh: spec}, Replay: true}, oneMessage(c.src, c.dst, n))
		if err != nil {
			t.Fatal(err)
		}
		if want := sim.Time(h) * hop; res.Finish[c.dst] != want || res.End != want {
			t.Errorf("%s on %d, %d→%d (%d hops): arrives at %v, ends %v, want h(α+nβ) = %v", c.mesh, c.world, c.src, c.dst, h, res.Finish[c.dst], res.End, want)
		}
		if res.Finish[c.src] != hop {
			t.Errorf("%s on %d, %d→%d: sender free at %v, want α+nβ = %v", c.mesh, c.world, c.src, c.dst, res.Finish[c.src], hop)
		}
		if !res.Replayed {
			t.Errorf("%s: not replayed", c.mesh)
		}
	}
}

// TestRelayedHalvingDoublingOnHypercube: every partner of recursive
// halving and doubling on a power of two is a hypercube neighbour, so it
// takes what it takes on the full mesh; the ring's step to rank r+1 is not
// (r to r+1 crosses popcount(r xor (r+1)) links), so it takes longer.
func TestRelayedHalvingDoublingOnHypercube(t *testing.T) {
	ab := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e9, ReduceBandwidth: 10e9}
	cube := sim.Relayed{Model: ab, Mesh: mustSpec(t, "hypercube")}
	run := func(m sim.Model, body func(context.Context, algos.Link, device.Buffer, device.DType, device.Op) error) sim.Time {
		res, err := sim.Run(sim.Config{World: 8, Model: m, Replay: true}, func(ctx context.Context, l algos.Link) error {
			return body(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.End
	}
	if full, relayed := run(ab, algos.HalvingDoublingAllreduce), run(cube, algos.HalvingDoublingAllreduce); full != relayed {
		t.Errorf("halving-doubling: %v on the full mesh, %v on the hypercube; want equal", full, relayed)
	}
	if full, relayed := run(ab, algos.RingAllreduce), run(cube, algos.RingAllreduce); relayed <= full {
		t.Errorf("ring: %v on the full mesh, %v on the hypercube; want slower relayed", full, relayed)
	}
}

// TestRelayedMatchesCoroutines: the replay and the coroutines agree on
// relayed runs, message for message, also under a rendezvous protocol
// and on the flow model.
func TestRelayedMatchesCoroutines(t *testing.T) {
	for _, base := range goldenModels {
		if base.name == "flow-slow-link" || base.name == "noisy-overhead" {
			continue
		}
		for _, spec := range []string{"hypercube", "kregular:3"} {
			m := sim.Relayed{Model: base.model, Mesh: mustSpec(t, spec)}
			for _, name := range []string{"ring", "halving_doubling", "recursive_doubling", "compressed_topk"} {
				c, err := algos.Lookup("allreduce")
				if err != nil {
					t.Fatal(err)
				}
				a, err := c.Algorithm(name)
				if err != nil {
					t.Fatal(err)
				}
				body := func(ctx context.Context, l algos.Link) error {
					return a.Run(ctx, l, algos.Call{Buf: l.Alloc(4 * 8 * 257), DType: device.F32, Op: device.Sum})
				}
				compareReplay(t, base.name+"/"+spec+"/"+name, m, 8, body, true)
			}
		}
	}
}

func TestRelayedRefuses(t *testing.T) {
	body := oneMessage(0, 1, 8)
	for _, c := range []struct {
		model sim.Model
		world int
		want  string
	}{
		{sim.Relayed{Model: worked, Mesh: mustSpec(t, "kregular:3")}, 7, "odd"},
		{sim.Relayed{Model: sim.WithFaults(worked, 1, sim.RankFailure{Rank: 1}), Mesh: mustSpec(t, "hypercube")}, 8, "not modelled"},
		{sim.Relayed{Mesh: mustSpec(t, "hypercube")}, 8, "no model"},
	} {
		if _, err := sim.Run(sim.Config{World: c.world, Model: c.model}, body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v on %d: %v, want %q", c.model, c.world, err, c.want)
		}
	}
}

// TestRelayFails: a relay that fails loses the messages passing through
// it (their receives fail, nobody hangs), and a relayed world recovers by
// shrinking, the survivors joined as the same mesh of their size.
func TestRelayFails(t *testing.T) {
	cube := sim.Relayed{Model: worked, Mesh: mustSpec(t, "hypercube")}
	// 0 → 3 goes 0 → 1 → 3; rank 1 fails while it holds the message
	// (busy with a long reduction of its own: a rank that has returned
	// does not fail).
	hop := worked.Latency + sim.TransferTime(1<<20, worked.Bandwidth)
	body := func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 1 {
			return l.Reduce(device.Phantom(1<<30), device.Phantom(1<<30), device.F32, device.Sum)
		}
		return oneMessage(0, 3, 1<<20)(ctx, l)
	}
	_, err := sim.Run(sim.Config{World: 4, Model: sim.WithFaults(cube, 1, sim.RankFailure{Rank: 1, At: hop + 1})}, body)
	var cut *sim.PathCutError
	if !errors.As(err, &cut) || cut.Src != 0 || cut.Dst != 3 {
		t.Fatalf("%v, want rank 3's receive to fail with the path from 0 cut", err)
	}
	// The same with the relay failing while the first hop is under way.
	_, err = sim.Run(sim.Config{World: 4, Model: sim.WithFaults(cube, 1, sim.RankFailure{Rank: 1, At: hop / 2})}, body)
	if !errors.As(err, &cut) {
		t.Fatalf("%v, want a cut path", err)
	}
	got, err := sim.RunShrink(sim.Config{World: 8, Model: cube, HostData: true}, 5, 3*sim.Microsecond, sim.Recovery{}, ringSum(1000))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Hit || len(got.Result.Finish) != 7 {
		t.Fatalf("hit %v, %d ranks after", got.Hit, len(got.Result.Finish))
	}
	again, err := sim.Run(sim.Config{World: 7, Model: cube, HostData: true}, ringSum(1000))
	if err != nil {
		t.Fatal(err)
	}
	if again.End != got.Result.End {
		t.Errorf("the survivors' run took %v, a 7-rank hypercube's %v", got.Result.End, again.End)
	}
}
