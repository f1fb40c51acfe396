package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// reducingCrossbar is a crossbar of p ports (bandwidth bw, latency lat on
// the uplinks) whose switch reduces at r.
func reducingCrossbar(p int, bw float64, lat sim.Time, r float64) *sim.Topology {
	t, err := sim.Crossbar{Bandwidth: bw, Latency: lat}.Build(p)
	if err != nil {
		panic(err)
	}
	sw, _ := t.Node("switch")
	t.SetReduce(sw, r)
	return t
}

// The two-level tree's links: devices to their leaf, leaves to the spine.
var (
	treeDown = sim.LinkParams{Bandwidth: 10e9, Latency: 100 * sim.Nanosecond}
	treeUp   = sim.LinkParams{Bandwidth: 4e9, Latency: 300 * sim.Nanosecond}
)

// reducingTree is a two-level tree: leaves of per devices each (device i
// on leaf i/per, in domain i/per), every leaf joined to the spine (or to
// each of spines). The first spine reduces at spineR, every leaf at
// leafR (0: not).
func reducingTree(leaves, per, spines int, spineR, leafR float64) *sim.Topology {
	t := sim.NewTopology(fmt.Sprintf("tree(%dx%d)", leaves, per))
	devs := make([]int, leaves*per)
	for i := range devs {
		devs[i] = t.AddNode(sim.NodeDevice, fmt.Sprintf("dev%d", i))
		t.SetDomain(i, i/per)
	}
	top := make([]int, spines)
	for s := range top {
		top[s] = t.AddNode(sim.NodeSwitch, fmt.Sprintf("spine%d", s))
	}
	t.SetReduce(top[0], spineR)
	for l := range leaves {
		leaf := t.AddNode(sim.NodeSwitch, fmt.Sprintf("leaf%d", l))
		t.SetReduce(leaf, leafR)
		for _, s := range top {
			t.Connect(leaf, s, treeUp)
		}
		for j := range per {
			t.Connect(devs[l*per+j], leaf, treeDown)
		}
	}
	return t
}

// TestSwitchFlowCrossbar checks the flow model's switch operations on a
// crossbar whose switch reduces, against their closed form: the
// contributions go up as one flow, alone on every uplink, in s/B, and
// reach the switch after the uplinks' latency L; the switch reduces c
// contributions in (c-1)s/R; the result comes down as one flow in s/B
// (the downlinks have no latency). So receivers finish at
// L + 2s/B + (c-1)s/R, members that only contribute at L + s/B.
func TestSwitchFlowCrossbar(t *testing.T) {
	const bw, lat = 12.5e9, 5 * sim.Microsecond
	for _, r := range []float64{40e9, math.Inf(1)} {
		for _, p := range []int{1, 2, 3, 5, 8} {
			model := sim.Flow{Topology: reducingCrossbar(p, bw, lat, r)}
			for _, n := range []int{0, 1, 4099, 1 << 16} {
				for _, k := range []switchKind{allreduce, multicast, ldReduce} {
					root := p / 2
					res, err := sim.Run(sim.Config{World: p, Model: model, HostData: true}, switchOp(k, root, n))
					if err != nil {
						t.Fatalf("R=%g p=%d n=%d %v: %v", r, p, n, k, err)
					}
					c := p
					if k == multicast {
						c = 1
					}
					up := lat + sim.TransferTime(n, bw)
					for q, got := range res.Finish {
						want := up + sim.TransferTime((c-1)*n, r) + sim.TransferTime(n, bw)
						if !k.receives(q, root) {
							want = up
						}
						if got != want {
							t.Errorf("R=%g p=%d n=%d %v: rank %d finished at %v (%d ps), want %d ps", r, p, n, k, q, got, int64(got), int64(want))
						}
					}
				}
			}
		}
	}
}

// TestSwitchFlowTree checks a two-level tree with SHARP at the spine:
// the contributions of the four devices go up as one flow that carries
// s once on every edge, the leaves' uplinks (4 GB/s) included, so an
// allreduce takes 2(L1 + L2) + 2s/min(B1, B2) + 3s/R, where a reduction
// by messages would carry each leaf's data twice up its uplink. And the
// switch of a group is the nearest that reduces: a leaf that reduces
// serves its own devices, the spine the devices of two leaves.
func TestSwitchFlowTree(t *testing.T) {
	const n = 1 << 20
	const spineR, leafR = 20e9, 50e9
	lat := treeDown.Latency + treeUp.Latency
	bw := min(treeDown.Bandwidth, treeUp.Bandwidth)
	t.Run("spine", func(t *testing.T) {
		res, err := sim.Run(sim.Config{World: 4, Model: sim.Flow{Topology: reducingTree(2, 2, 1, spineR, 0)}, HostData: true}, switchOp(allreduce, 0, n))
		if err != nil {
			t.Fatal(err)
		}
		want := 2*lat + 2*sim.TransferTime(n, bw) + sim.TransferTime(3*n, spineR)
		for q, got := range res.Finish {
			if got != want {
				t.Errorf("rank %d finished at %v (%d ps), want %d ps", q, got, int64(got), int64(want))
			}
		}
		for _, u := range res.Links {
			if strings.HasPrefix(u.Link, "leaf") && strings.Contains(u.Link, "spine") || strings.HasPrefix(u.Link, "spine") {
				if u.Bytes != n || u.Messages != 1 {
					t.Errorf("%s carried %d bytes in %d flows, want %d in 1", u.Link, u.Bytes, u.Messages, n)
				}
			}
		}
	})
	for _, tc := range []struct {
		name   string
		leafR  float64
		group  []int
		lat    sim.Time
		bw, rr float64
	}{
		{"one leaf, spine reduces", 0, []int{0, 1}, lat, bw, spineR},
		{"one leaf, leaf reduces", leafR, []int{0, 1}, treeDown.Latency, treeDown.Bandwidth, leafR},
		{"two leaves, leaves reduce", leafR, []int{1, 2}, lat, bw, spineR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := sim.Flow{Topology: reducingTree(2, 2, 1, spineR, tc.leafR)}
			res, err := sim.Run(sim.Config{World: 4, Model: model}, func(ctx context.Context, l algos.Link) error {
				if _, ok := slicesIndex(tc.group, l.Rank()); !ok {
					return nil
				}
				return l.Wait(ctx, l.(algos.SwitchReducer).ISwitchReduce(tc.group, 0, l.Alloc(n), l.Alloc(n), device.F32, device.Sum))
			})
			if err != nil {
				t.Fatal(err)
			}
			want := 2*tc.lat + 2*sim.TransferTime(n, tc.bw) + sim.TransferTime(n, tc.rr)
			if got := res.Finish[tc.group[0]]; got != want {
				t.Errorf("finished at %v (%d ps), want %d ps", got, int64(got), int64(want))
			}
		})
	}
}

func slicesIndex(s []int, x int) (int, bool) {
	for i, y := range s {
		if y == x {
			return i, true
		}
	}
	return -1, false
}

// TestSwitchFlowNoSwitch checks that a topology without a reducing
// switch, or whose reducing switch a member cannot reach, has none for
// the group.
func TestSwitchFlowNoSwitch(t *testing.T) {
	// Two crossbars side by side: devices 0-1 on a reducing switch,
	// devices 2-3 on a plain one, not joined.
	split := sim.NewTopology("split")
	for i := range 4 {
		split.AddNode(sim.NodeDevice, fmt.Sprintf("dev%d", i))
	}
	for s := range 2 {
		sw := split.AddNode(sim.NodeSwitch, fmt.Sprintf("switch%d", s))
		if s == 0 {
			split.SetReduce(sw, 1e9)
		}
		for j := range 2 {
			split.Connect(2*s+j, sw, sim.LinkParams{Bandwidth: 1e9})
		}
	}
	_, err := sim.Run(sim.Config{World: 4, Model: sim.Flow{Topology: split}}, func(ctx context.Context, l algos.Link) error {
		sr := l.(algos.SwitchReducer)
		r := l.Rank()
		for _, g := range [][]int{{0, 1}, {2, 3}, {0, 1, 2, 3}} {
			if _, in := slicesIndex(g, r); !in {
				continue
			}
			if got, want := sr.CanSwitchReduce(g), r < 2 && len(g) == 2; got != want {
				return fmt.Errorf("rank %d: CanSwitchReduce(%v) = %v, want %v", r, g, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSwitchFlowSharesLinks checks that a switch operation's flow shares
// links max-min with an ordinary message: rank 0 sends 1000 bytes to
// rank 1 while all four post an allreduce of 1000 bytes, on a crossbar of
// 1 GB/s ports and 1 us uplinks whose switch reduces at 10 GB/s. Both
// flows cross rank 0's uplink at 0.5 GB/s and end their bytes at 2 us;
// the message arrives at 3 us, the contributions reach the switch at
// 3 us, the switch reduces 3000 bytes in 0.3 us, and the result comes
// down alone in 1 us: 4.3 us.
func TestSwitchFlowSharesLinks(t *testing.T) {
	model := sim.Flow{Topology: reducingCrossbar(4, 1e9, sim.Microsecond, 10e9)}
	var msg sim.Time
	res, err := sim.Run(sim.Config{World: 4, Model: model}, func(ctx context.Context, l algos.Link) error {
		var reqs []algos.Request
		switch l.Rank() {
		case 0:
			reqs = append(reqs, l.Isend(1, 0, l.Alloc(1000)))
		case 1:
			rq := l.Irecv(0, 0, l.Alloc(1000))
			sw := l.(algos.SwitchReducer).ISwitchReduce([]int{0, 1, 2, 3}, 0, l.Alloc(1000), l.Alloc(1000), device.U8, device.Sum)
			if err := l.Wait(ctx, rq); err != nil {
				return err
			}
			msg = sim.Time(l.Now())
			return l.Wait(ctx, sw)
		}
		reqs = append(reqs, l.(algos.SwitchReducer).ISwitchReduce([]int{0, 1, 2, 3}, 0, l.Alloc(1000), l.Alloc(1000), device.U8, device.Sum))
		return l.Wait(ctx, reqs...)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * sim.Microsecond; msg*sim.Nanosecond != want {
		t.Errorf("the message arrived at %v, want %v", msg*sim.Nanosecond, want)
	}
	for q, got := range res.Finish {
		if want := 4300 * sim.Nanosecond; got != want {
			t.Errorf("rank %d finished at %v, want %v", q, got, want)
		}
	}
}

// TestSwitchFlowLinkFails checks that a switch operation whose members
// lose their path to the switch fails, naming the link, rather than
// hanging; and that one that has another path moves to it.
func TestSwitchFlowLinkFails(t *testing.T) {
	body := switchOp(allreduce, 0, 1<<20)
	t.Run("cut", func(t *testing.T) {
		model := sim.WithFaults(sim.Flow{Topology: reducingTree(2, 2, 1, 20e9, 0)}, 1, sim.LinkFailure{Link: "leaf0<->spine0", At: 10 * sim.Microsecond})
		_, err := sim.Run(sim.Config{World: 4, Model: model}, body)
		var re *sim.RankErrors
		if !errors.As(err, &re) || len(*re) != 4 || !strings.Contains(err.Error(), "no path left from the contributors to switch spine0 (link leaf0->spine0 failed)") {
			t.Fatalf("got %v, want every rank to fail, naming the link", err)
		}
	})
	t.Run("rerouted", func(t *testing.T) {
		plain, err := sim.Run(sim.Config{World: 4, Model: sim.Flow{Topology: reducingTree(2, 2, 2, 20e9, 0)}}, body)
		if err != nil {
			t.Fatal(err)
		}
		model := sim.WithFaults(sim.Flow{Topology: reducingTree(2, 2, 2, 20e9, 0)}, 1, sim.LinkFailure{Link: "leaf0<->spine0", At: 10 * sim.Microsecond})
		res, err := sim.Run(sim.Config{World: 4, Model: model, HostData: true}, body)
		if err != nil {
			t.Fatal(err)
		}
		if res.End <= plain.End {
			t.Errorf("rerouted in %v, no later than %v without the failure", res.End, plain.End)
		}
	})
}

// flowSwitchModels are flow networks with reducing switches, for the
// tests that run on every network with switches.
func flowSwitchModels() []namedModel {
	return []namedModel{
		{"flow crossbar", sim.Flow{Topology: reducingCrossbar(8, 12.5e9, sim.Microsecond, 40e9)}},
		{"flow tree", sim.Flow{Topology: reducingTree(2, 4, 2, 20e9, 50e9), ReduceBandwidth: 25e9}},
		{"flow tree latency-weighted slots", sim.Flow{Topology: reducingTree(4, 2, 1, math.Inf(1), 0), Sharing: sim.LatencyWeighted, SendSlots: 2, RecvSlots: -1}},
	}
}
