package sim_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

func ringBody(bytes int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(bytes), device.F32, device.Sum)
	}
}

func TestNoiseIsSeeded(t *testing.T) {
	// The same seed gives bit-identical results; another seed different
	// ones; and noise only ever delays.
	faults := []sim.Fault{
		sim.Jitter{Dist: "lognormal", Mean: 2 * sim.Microsecond, Stddev: sim.Microsecond},
		sim.Stragglers{Count: 2, Factor: 3},
	}
	for _, base := range []sim.Model{worked, sim.FlowCrossbar(worked)} {
		const p, n = 16, 1 << 20
		clean := runModel(t, base, p, ringBody(n))
		a := runModel(t, sim.WithFaults(base, 42, faults...), p, ringBody(n))
		b := runModel(t, sim.WithFaults(base, 42, faults...), p, ringBody(n))
		c := runModel(t, sim.WithFaults(base, 43, faults...), p, ringBody(n))
		if !slices.Equal(a.Finish, b.Finish) || a.Events != b.Events {
			t.Fatalf("%T: seed 42 twice: %v then %v", base, a.Finish, b.Finish)
		}
		if slices.Equal(a.Finish, c.Finish) {
			t.Fatalf("%T: seeds 42 and 43 gave the same finishes %v", base, a.Finish)
		}
		if a.End <= clean.End || c.End <= clean.End {
			t.Fatalf("%T: noisy runs took %v and %v, the clean one %v", base, a.End, c.End, clean.End)
		}
	}
}

func TestJitterConstantDelaysEachMessage(t *testing.T) {
	// A constant jitter of 3 us delays a lone message by 3 us. Two
	// messages from one sender keep their order: the second waits for the
	// first (one port), so it ends 3 us + 2(alpha + m beta) after the start.
	m := sim.WithFaults(model, 1, sim.Jitter{Dist: "constant", Mean: 3 * sim.Microsecond})
	res := runModel(t, m, 3, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return l.Wait(ctx, l.Isend(1, 0, l.Alloc(1000)), l.Isend(2, 0, l.Alloc(1000)))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
	})
	if res.Finish[1] != us(5) || res.Finish[2] != us(7) {
		t.Fatalf("finish %v, want rank 1 at 5us and rank 2 at 7us", res.Finish)
	}
}

func TestStragglerComputesSlower(t *testing.T) {
	// Rank 1 reduces 1000 bytes at 0.5 GB/s (2 us), 4x slower: 8 us.
	m := sim.WithFaults(model, 1, sim.Straggler{Rank: 1, Factor: 4})
	res := runModel(t, m, 2, func(ctx context.Context, l algos.Link) error {
		return l.Reduce(l.Alloc(1000), l.Alloc(1000), device.U8, device.Sum)
	})
	if res.Finish[0] != us(2) || res.Finish[1] != us(8) {
		t.Fatalf("finish %v, want [2us 8us]", res.Finish)
	}
}

// checkFailure checks that err reports rank failed as the root cause of
// every listed rank's error and of nobody else's, with no deadlock.
func checkFailure(t *testing.T, err error, failed int, mustFail []int) {
	t.Helper()
	var d *sim.DeadlockError
	if errors.As(err, &d) {
		t.Fatalf("deadlock instead of errors: %v", err)
	}
	var re *sim.RankErrors
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want *sim.RankErrors", err)
	}
	byRank := map[int]error{}
	for _, x := range *re {
		byRank[x.Rank] = x.Err
		var rf *sim.RankFailedError
		if !errors.As(x.Err, &rf) || rf.Rank != failed {
			t.Errorf("rank %d's error does not name rank %d as failed: %v", x.Rank, failed, x.Err)
		}
	}
	for _, r := range mustFail {
		if byRank[r] == nil {
			t.Errorf("rank %d returned no error", r)
		}
	}
	if c := re.Crashed(); len(c) != 1 || c[0].Rank != failed || !strings.Contains(c[0].Cause, fmt.Sprintf("rank %d fails", failed)) {
		t.Errorf("crashed ranks %v, want rank %d with its cause", c, failed)
	}
}

func TestRankFailureMidAllreduce(t *testing.T) {
	// Rank 3 fails half-way through a ring or halving-doubling allreduce:
	// every other rank's call must return an error naming rank 3, on a
	// network that drops the failed rank's messages (flow) and on one that
	// does not (alpha-beta, which loses them on delivery).
	const p, n = 8, 1 << 20
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	for _, name := range []string{"ring", "halving_doubling"} {
		for _, base := range []sim.Model{worked, sim.FlowCrossbar(worked)} {
			body := allreduceBody(t, name, n)
			clean := runModel(t, base, p, body)
			res, err := sim.Run(sim.Config{World: p, Model: sim.WithFaults(base, 0, sim.RankFailure{Rank: 3, At: clean.End / 2})}, body)
			t.Run(fmt.Sprintf("%s/%T", name, base), func(t *testing.T) {
				checkFailure(t, err, 3, all)
				if res.Finish[3] != clean.End/2 {
					t.Errorf("failed rank finished at %v, want %v", res.Finish[3], clean.End/2)
				}
			})
		}
	}
}

func TestRankFailureNeverHangs(t *testing.T) {
	// Every allreduce of the catalogue, rank 5 failing at a third of the
	// clean run: no deadlock, and a rank that does not finish cleanly
	// names rank 5 (ranks that already had all they needed may finish).
	const p, n = 8, 1 << 16
	c, err := algos.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Algorithms {
		for _, base := range []sim.Model{worked, sim.FlowCrossbar(worked)} {
			t.Run(fmt.Sprintf("%s/%T", a.Name, base), func(t *testing.T) {
				body := allreduceBody(t, a.Name, n)
				clean := runModel(t, base, p, body)
				_, err := sim.Run(sim.Config{World: p, Model: sim.WithFaults(base, 0, sim.RankFailure{Rank: 5, At: clean.End / 3})}, body)
				checkFailure(t, err, 5, nil)
			})
		}
	}
}

// smallTree is a two-tier fat tree of radix 4: 4 leaves of 2 hosts, 2
// spines, all links 1 GB/s without latency, routed D-mod-k.
var smallTree = sim.FatTree{Radix: 4, Link: sim.LinkParams{Bandwidth: 1e9}, Routing: sim.RouteDestMod}

func TestLinkFailureReroutes(t *testing.T) {
	// Host 0 sends 10 kB to host 2 (leaf 1): D-mod-k sends it up to spine
	// 0. The leaf0-spine0 link fails at 4 us, 4000 bytes in; the flow
	// moves to spine 1 with its 6000 bytes left, at the same rate, so it
	// still ends at 10 us, and the links account 4000 and 6000 bytes.
	m := sim.WithFaults(sim.Flow{Topology: smallTree}, 0, sim.LinkFailure{Link: "leaf0<->spine0", At: 4 * sim.Microsecond})
	res := runModel(t, m, 4, func(ctx context.Context, l algos.Link) error {
		switch l.Rank() {
		case 0:
			return algos.Send(ctx, l, 2, 0, l.Alloc(10_000))
		case 2:
			return algos.Recv(ctx, l, 0, 0, l.Alloc(10_000))
		}
		return nil
	})
	if res.End != 10*sim.Microsecond {
		t.Fatalf("rerouted message ended at %v, want 10us", res.End)
	}
	got := map[string]sim.LinkUsage{}
	for _, u := range res.Links {
		got[u.Link] = u
	}
	if u := got["leaf0->spine0"]; u.Bytes != 4000 || !u.Failed {
		t.Errorf("failed uplink: %+v, want 4000 bytes and failed", u)
	}
	if u := got["leaf0->spine1"]; u.Bytes != 6000 {
		t.Errorf("other uplink: %+v, want 6000 bytes", u)
	}
	if u := got["host0->leaf0"]; u.Bytes != 10_000 || u.Messages != 1 {
		t.Errorf("host link: %+v, want 10000 bytes of 1 message", u)
	}
}

func TestLinkFailureCutsPath(t *testing.T) {
	// Host 0's only link fails in the middle of a ring allreduce: the
	// message under way is lost, its send and its receive fail with a
	// *PathCutError, and the error reaches every rank; nobody hangs.
	const p = 8
	model := sim.Flow{Topology: smallTree}
	clean := runModel(t, model, p, ringBody(1<<16))
	_, err := sim.Run(sim.Config{World: p, Model: sim.WithFaults(model, 0, sim.LinkFailure{Link: "host0<->leaf0", At: clean.End / 2})}, ringBody(1<<16))
	var re *sim.RankErrors
	if !errors.As(err, &re) || len(*re) != p {
		t.Fatalf("got %v, want every rank to fail", err)
	}
	for _, x := range *re {
		var pc *sim.PathCutError
		if !errors.As(x.Err, &pc) || (pc.Src != 0 && pc.Dst != 0) {
			t.Errorf("rank %d: %v, want a cut path to or from rank 0", x.Rank, x.Err)
		}
	}
}

func TestSlowLink(t *testing.T) {
	// 1000 bytes at 1 GB/s from rank 0 to 1 on a crossbar (alpha 1 us).
	// Rank 0's port drops to half speed at 400 ns: 400 bytes went at full
	// speed, 600 take 1200 ns more: the bytes are out at 1.6 us and
	// arrive at 2.6 us.
	m := sim.WithFaults(sim.FlowCrossbar(model), 0, sim.SlowLink{Link: "dev0->switch", Factor: 0.5, At: 400 * sim.Nanosecond})
	res := runModel(t, m, 2, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 0, l.Alloc(1000))
		}
		return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
	})
	if res.End != 2600*sim.Nanosecond {
		t.Fatalf("slowed message ended at %v, want 2.6us", res.End)
	}
}

func TestFaultsDescribeThemselves(t *testing.T) {
	for _, c := range []struct {
		f    sim.Fault
		want string
	}{
		{sim.Jitter{Dist: "normal", Mean: sim.Microsecond, Stddev: 200 * sim.Nanosecond}, "latency jitter normal(mean 1us, stddev 200ns)"},
		{sim.Straggler{Rank: 3, Factor: 2}, "rank 3 computes 2x slower"},
		{sim.Stragglers{Count: 4, Factor: 1.5}, "4 random ranks compute 1.5x slower"},
		{sim.SlowLink{Link: "leaf0<->spine1", Factor: 0.25}, "link leaf0<->spine1 at 0.25x bandwidth from 0s"},
		{sim.LinkFailure{Link: "leaf0->spine1", At: 10 * sim.Microsecond}, "link leaf0->spine1 fails at 10us"},
		{sim.RankFailure{Rank: 7, At: sim.Millisecond}, "rank 7 fails at 1ms"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.f, got, c.want)
		}
	}
	f := sim.WithFaults(worked, 9, sim.RankFailure{Rank: 1, At: 0}, sim.Straggler{Rank: 0, Factor: 2})
	if got, want := f.String(), "sim.AlphaBeta with seed 9: rank 1 fails at 0s; rank 0 computes 2x slower"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestFaultValidation(t *testing.T) {
	flow := sim.Flow{Topology: smallTree}
	for _, c := range []struct {
		model sim.Model
		want  string
	}{
		{sim.WithFaults(worked, 0, sim.RankFailure{Rank: 4, At: 0}), "rank 4 outside world of 4 ranks"},
		{sim.WithFaults(worked, 0, sim.LinkFailure{Link: "a->b"}), "has no links"},
		{sim.WithFaults(flow, 0, sim.LinkFailure{Link: "leaf0->leaf1"}), "are not connected"},
		{sim.WithFaults(flow, 0, sim.SlowLink{Link: "nowhere->leaf1", Factor: 2}), "no such nodes"},
		{sim.WithFaults(flow, 0, sim.SlowLink{Link: "leaf0->spine0", Factor: 0}), "factor must be positive"},
		{sim.WithFaults(flow, 0, sim.Jitter{Dist: "cauchy"}), "want constant, exponential"},
		{sim.WithFaults(flow, 0, sim.Stragglers{Count: 5, Factor: 2}), "count must be between 0 and the world size 4"},
		{sim.Flow{Topology: smallTree, Placement: sim.Placement{0, 1, 1, 2}}, "two ranks on device 1"},
		{sim.Flow{Topology: sim.FatTree{Radix: 4}}, "fat tree link bandwidth 0 B/s must be positive"},
	} {
		_, err := sim.Run(sim.Config{World: 4, Model: c.model}, func(context.Context, algos.Link) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error containing %q", c.model, err, c.want)
		}
	}
}

// TestLinkFailureReplays: a run whose links fail but leave every host
// reachable is replayed (the flow model reroutes what each failure meets,
// so no message fails and the programs do not change), with the same
// result and observations as on coroutines, at failures before the first
// message and in the middle of the run, on ECMP and D-mod-k routing; a
// failure that cuts a host off is not replayed, and fails the same way
// both ways.
func TestLinkFailureReplays(t *testing.T) {
	const p = 8
	for _, routing := range []sim.Routing{sim.RouteDestMod, sim.RouteECMP} {
		tree := smallTree
		tree.Routing = routing
		base := sim.Flow{Topology: tree}
		for _, a := range []string{"ring", "halving_doubling", "binomial_tree"} {
			body := allreduceBody(t, a, 1<<14)
			clean := runModel(t, base, p, body)
			for _, f := range []sim.LinkFailure{
				{Link: "leaf0<->spine0", At: 0},
				{Link: "leaf1->spine1", At: clean.End / 2},
			} {
				compareReplay(t, fmt.Sprintf("%v/%s/%v", routing, a, f), sim.WithFaults(base, 0, f), p, body, true)
			}
			cut := sim.WithFaults(base, 0, sim.LinkFailure{Link: "host0<->leaf0", At: clean.End / 2})
			compareReplay(t, fmt.Sprintf("%v/%s/cut", routing, a), cut, p, body, false)
			if res, _ := sim.Run(sim.Config{World: p, Model: cut, Replay: true}, body); res != nil && res.Replayed {
				t.Errorf("%v/%s: a failure that cuts host 0 off was replayed", routing, a)
			}
		}
	}
}

// TestLinkFailureReplaysOnGPUs: on a GPU cluster, whose GPUs send first
// into their node's NVSwitch (which no other node reaches), a failed
// spine link is replayed too, with the same result and observations as
// on coroutines; a failed NIC link, which cuts a GPU off the fabric, is
// not.
func TestLinkFailureReplaysOnGPUs(t *testing.T) {
	c := dgx(4)
	c.Fabric = sim.RailFatTree{Rails: 8, Radix: 4, NIC: c.NIC, Link: sim.LinkParams{Bandwidth: 50e9, Latency: 200 * sim.Nanosecond}}
	base := sim.Flow{Topology: c}
	const p = 32
	for _, a := range []string{"ring", "binomial_tree"} {
		body := allreduceBody(t, a, 1<<16)
		compareReplay(t, a+"/spine link", sim.WithFaults(base, 0, sim.LinkFailure{Link: "inter.rail7.leaf0<->inter.spine1", At: 0}), p, body, true)
		cut := sim.WithFaults(base, 0, sim.LinkFailure{Link: "inter.rail0.leaf0<->nic0.0", At: 0})
		compareReplay(t, a+"/cut", cut, p, body, false)
		if res, _ := sim.Run(sim.Config{World: p, Model: cut, Replay: true}, body); res != nil && res.Replayed {
			t.Errorf("%s: a failure that cuts a GPU off the fabric was replayed", a)
		}
	}
}
