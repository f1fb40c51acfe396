package nccl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	_ "github.com/nexar-go/nexar-go/algos/nccl"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

var ab = sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9}

// abSwitch is ab with one ideal switch that reduces at 25 GB/s, for the
// in-network algorithms.
var abSwitch = sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, SwitchBandwidth: 25e9}

// inNetwork reports whether algo reduces in the network.
func inNetwork(algo string) bool {
	return strings.Contains(algo, "nvls") || strings.Contains(algo, "collnet")
}

// realLike is a link as real hardware's looks to an algorithm: it
// spawns and knows its machine, but is no model (no Delayer) and has no
// switch, so the in-network algorithms emulate theirs.
type realLike struct {
	algos.Link
	m *algos.Machine
}

func (r realLike) Machine() *algos.Machine { return r.m }

func (r realLike) Spawn(fn func(ctx context.Context) error) algos.Request {
	return r.Link.(algos.Spawner).Spawn(fn)
}

const seed = 3

// dataCount is the count of a data run's Case: count elements, or, for
// a collective whose buffers are world blocks of which a rank sends or
// receives one (allgather, reduce_scatter), count elements per block.
func dataCount(c *algos.Collective, p, count int) int {
	send, recv, used := c.Layout(1024*p, p)
	if min(send, recv) > 0 && min(send, recv) < used {
		return count * p
	}
	return count
}

// dataRun runs algorithm algo of coll on p ranks of cfg with real data,
// count elements (per block: see dataCount), and checks every rank's
// result against the collective's reference in algotest. With emulate the
// algorithm sees a realLike link.
func dataRun(cfg sim.Config, coll, algo string, p, count int, params map[string]int, dt device.DType, op device.Op) error {
	return dataRunOn(cfg, coll, algo, p, count, params, dt, op, false)
}

func dataRunOn(cfg sim.Config, coll, algo string, p, count int, params map[string]int, dt device.DType, op device.Op, emulate bool) error {
	c, err := algos.Lookup(coll)
	if err != nil {
		return err
	}
	a, err := c.Algorithm(algo)
	if err != nil {
		return err
	}
	ref, ok := algotest.LookupReference(coll)
	if !ok {
		return fmt.Errorf("collective %s has no reference", coll)
	}
	root := min(1, p-1)
	hasSend, _, _ := c.Layout(1024*p, p) // 0 for an in-place collective
	send, recv, used := c.Layout(dataCount(c, p, count), p)
	data := ref(algotest.Case{Algorithm: a, Params: params, DType: dt, Op: op, Root: root, World: p, Count: used, Seed: seed})
	cfg.World, cfg.HostData = p, true
	if cfg.Model == nil {
		cfg.Model = ab
		if inNetwork(algo) {
			cfg.Model = abSwitch
		}
	}
	_, err = sim.Run(cfg, func(ctx context.Context, l algos.Link) error {
		r := l.Rank()
		if emulate {
			l = realLike{l, cfg.Machine}
		}
		buf := make([]byte, recv*dt.Size())
		call := algos.Call{Buf: device.Host(buf), DType: dt, Op: op, Root: root, Params: params}
		var sendBuf []byte
		if hasSend > 0 {
			sendBuf = make([]byte, send*dt.Size())
			call.Send = device.Host(sendBuf)
		}
		want := data(r, sendBuf, buf)
		if err := a.Run(ctx, l, call); err != nil {
			return err
		}
		if err := algotest.Check(buf, want, dt); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		return nil
	})
	if err != nil {
		how := ""
		if emulate {
			how = " (switch emulated)"
		}
		return fmt.Errorf("%s %s%s p=%d count=%d %v %s nodes %v: %w", coll, algo, how, p, count, params, dt, cfg.Machine.Node, err)
	}
	return nil
}

// ncclAlgorithms lists the NCCL algorithms of coll.
func ncclAlgorithms(t *testing.T, coll string) []*algos.Algorithm {
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	var out []*algos.Algorithm
	for _, a := range c.Algorithms {
		if strings.HasPrefix(a.Name, "nccl_") {
			out = append(out, a)
		}
	}
	return out
}

// TestData checks every NCCL algorithm with real data on worlds 1-17
// (primes, powers of two) and counts 0, 1, fewer than the ranks, not
// divisible by the channels, and past one chunk, with one channel in one
// node and three channels in nodes of four ranks (an in-network algorithm
// also with its switch emulated, as on real links).
func TestData(t *testing.T) {
	worlds := []int{1, 2, 3, 4, 5, 7, 8, 11, 16, 17}
	if testing.Short() {
		worlds = []int{1, 2, 3, 5, 8}
	}
	for _, coll := range algos.CollectiveNames() {
		for _, a := range ncclAlgorithms(t, coll) {
			t.Run(coll+"/"+a.Name, func(t *testing.T) {
				for _, p := range worlds {
					for _, count := range []int{0, 1, max(p-1, 0), 1001, 70001} {
						// One channel in one node; three channels (so
						// counts that do not divide by them, and
						// channels on both trees) in nodes of four.
						for _, cfgc := range []struct{ ch, perNode int }{{1, 0}, {3, 4}} {
							cfg := sim.Config{}
							if cfgc.perNode > 0 {
								m := &algos.Machine{Node: make([]int, p)}
								for r := range m.Node {
									m.Node[r] = r / cfgc.perNode
								}
								cfg.Machine = m
							}
							if singleDomain(coll, a.Name) && cfgc.perNode > 0 && p > cfgc.perNode {
								continue
							}
							params := map[string]int{"channels": cfgc.ch}
							if err := dataRun(cfg, coll, a.Name, p, count, params, device.F32, device.Sum); err != nil {
								t.Fatal(err)
							}
							if inNetwork(a.Name) {
								if err := dataRunOn(cfg, coll, a.Name, p, count, params, device.F32, device.Sum, true); err != nil {
									t.Fatal(err)
								}
							}
						}
					}
				}
			})
		}
	}
}

// singleDomain reports whether algo runs inside one NVLink domain only on
// a model.
func singleDomain(coll, algo string) bool {
	return algo == "nccl_nvls" && coll != "allreduce"
}

// TestDataTypes runs each algorithm once on every dtype and op.
func TestDataTypes(t *testing.T) {
	for _, coll := range algos.CollectiveNames() {
		for _, a := range ncclAlgorithms(t, coll) {
			for _, dt := range device.DTypes() {
				for _, op := range device.Ops() {
					if err := dataRun(sim.Config{}, coll, a.Name, 5, 777, map[string]int{"channels": 2}, dt, op); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// The two Simple slices of a step across nodes are late sends: a second,
// smaller slice must not leave before the first, which it would (and land
// in its receive) when it is sent later than the first was, by the first's
// lag or a clock reading's truncation to the nanosecond, or when the first
// waited for a free slot after its lag was set. Rings whose last loop
// splits a chunk unevenly hit both: 6006154 bf16 elements on 8 nodes of one
// GPU, 21026330 on 2 nodes of 2.
func TestSimpleSlicesAcrossNodesStayInOrder(t *testing.T) {
	model := sim.AlphaBeta{Latency: 2 * sim.Microsecond, Bandwidth: 50e9}
	coll, err := algos.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	a, err := coll.Algorithm("nccl_ring_simple")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		nodes []int
		bytes int
	}{
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, 12012308},
		{[]int{0, 0, 1, 1}, 42052660},
	} {
		m := &algos.Machine{GPU: "hopper", Channels: 16, Node: tc.nodes}
		_, err := sim.Run(sim.Config{World: len(tc.nodes), Model: model, Machine: m}, func(ctx context.Context, l algos.Link) error {
			return a.Run(ctx, l, algos.Call{Buf: l.Alloc(tc.bytes), DType: device.BF16, Op: device.Sum})
		})
		if err != nil {
			t.Errorf("nodes %v, %d bytes: %v", tc.nodes, tc.bytes, err)
		}
	}
	// On two DGX H100 nodes, the ring of GPUs 0, 4, 8 and 12 crosses each
	// node twice; its first slices wait for free slots.
	s, err := scenario.Parse("dgx", []byte("name = \"dgx\"\n[network]\npreset = \"dgx-h100\"\nnodes = 2\n"+
		"[[sweep]]\ncollective = \"barrier\"\nalgorithms = [\"dissemination\"]\nworld = [1]\nbytes = [0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sim.Run(sim.Config{World: 16, Model: s.Network.Sim, Machine: s.Network.MachineFor(16)}, func(ctx context.Context, l algos.Link) error {
		sub, err := algos.Sub(l, []int{l.Rank() % 4, l.Rank()%4 + 4, l.Rank()%4 + 8, l.Rank()%4 + 12}, 2)
		if err != nil {
			return err
		}
		return a.Run(ctx, sub, algos.Call{Buf: l.Alloc(42052660), DType: device.BF16, Op: device.Sum})
	})
	if err != nil {
		t.Errorf("4 of 16 GPUs on 2 DGX H100: %v", err)
	}
}
