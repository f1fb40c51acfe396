package sim_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The flow model's results on random scenarios are pinned in
// testdata/flow_random_golden.txt, a hash per scenario of its result,
// its error and everything an observer was told (goldenHash), as the
// flow model gave them before its shortcuts for flows alone, batched
// ends and shared routes: every change to its speed must keep them.
// Where the catalogue's golden file runs fixed algorithms on two flow
// networks, these draw topologies, slots, sharing, sizes (empty
// messages among them), permutations, algorithms and faults (failed and
// slowed links, a failed rank, jitter) from a seed. Rewrite them only
// for a change meant to change results:
//
//	go test ./sim -run TestFlowRandomGolden -sim.update-flow-golden

var updateFlowGolden = flag.Bool("sim.update-flow-golden", false, "rewrite testdata/flow_random_golden.txt")

const flowGoldenFile = "testdata/flow_random_golden.txt"

// flowScenarios is how many scenarios of each family are pinned.
const flowScenarios = 250

// splitmix is a generator of its own, so that no change to a library's
// generator moves the scenarios.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix) intn(n int) int { return int(s.next() % uint64(n)) }

func (s *splitmix) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := s.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

type flowScenario struct {
	world int
	model sim.Model
	body  sim.Body
}

// exchangeScenario is rounds of random permutations on a small world,
// every rank sending to and receiving from one peer a round, of a size
// drawn per round (often empty), waiting every second round.
func exchangeScenario(seed uint64) flowScenario {
	rng := splitmix(seed)
	lat := []sim.Time{0, 0, 300 * sim.Nanosecond}[rng.intn(3)]
	link := sim.LinkParams{Bandwidth: 10e9, Latency: lat}
	tops := []sim.TopologySpec{
		sim.Crossbar{Bandwidth: 10e9, Latency: lat},
		sim.FatTree{Radix: 4, Link: link},
		sim.FatTree{Tiers: 3, Radix: 4, Oversubscription: 1, Link: link},
	}
	spec := tops[rng.intn(len(tops))]
	world := 4 + rng.intn(5)
	slots := []int{1, 2, -1}
	flow := sim.Flow{Topology: spec, SendSlots: slots[rng.intn(3)], RecvSlots: slots[rng.intn(3)], ReduceBandwidth: 20e9, Sharing: sim.Sharing(rng.intn(2))}
	rounds := 3 + rng.intn(5)
	perms, sizes := make([][]int, rounds), make([]int, rounds)
	for i := range perms {
		perms[i] = rng.perm(world)
		sizes[i] = []int{0, 0, 1 << 10, 1 << 16, rng.intn(1 << 20)}[rng.intn(5)]
	}
	body := func(ctx context.Context, l algos.Link) error {
		r := l.Rank()
		var reqs []algos.Request
		for i, p := range perms {
			src := 0
			for p[src] != r {
				src++
			}
			reqs = append(reqs, l.Irecv(src, algos.Tag(i), l.Alloc(sizes[i])), l.Isend(p[r], algos.Tag(i), l.Alloc(sizes[i])))
			if i%2 == 1 {
				if err := l.Wait(ctx, reqs...); err != nil {
					return err
				}
				reqs = reqs[:0]
			}
		}
		return l.Wait(ctx, reqs...)
	}
	var model sim.Model = flow
	if seed%4 == 3 {
		top, _ := spec.Build(world)
		e := top.Edges()[rng.intn(len(top.Edges()))]
		model = sim.WithFaults(flow, seed, sim.SlowLink{Link: e.Name, Factor: 0.5, At: sim.Time(rng.intn(100)) * sim.Microsecond})
	}
	return flowScenario{world, model, body}
}

// faultScenario is a ring, halving-doubling or pairwise alltoall on up to
// 16 ranks of a fat tree or a torus, with up to three failed or slowed
// links, sometimes a failed rank, sometimes jitter.
func faultScenario(seed uint64) flowScenario {
	rng := splitmix(seed ^ 0x5eed)
	lat := []sim.Time{0, 300 * sim.Nanosecond}[rng.intn(2)]
	link := sim.LinkParams{Bandwidth: 10e9, Latency: lat}
	tops := []sim.TopologySpec{
		sim.FatTree{Tiers: 2, Radix: 6, Oversubscription: 2, Link: link},
		sim.FatTree{Tiers: 3, Radix: 4, Oversubscription: 1, Link: link},
		sim.Torus{Dims: []int{4, 4}, Link: link, NIC: sim.LinkParams{Bandwidth: 20e9}},
	}
	spec := tops[rng.intn(len(tops))]
	top, _ := spec.Build(16)
	world := 9 + rng.intn(8)
	slots := []int{1, 2, -1}
	flow := sim.Flow{Topology: spec, SendSlots: slots[rng.intn(3)], RecvSlots: slots[rng.intn(3)], ReduceBandwidth: 20e9, Sharing: sim.Sharing(rng.intn(2))}
	size := []int{4 << 10, 1 << 20, 3<<20 + 20}[rng.intn(3)]
	alg := rng.intn(3)
	body := func(ctx context.Context, l algos.Link) error {
		switch alg {
		case 0:
			return algos.RingAllreduce(ctx, l, l.Alloc(size), device.F32, device.Sum)
		case 1:
			return algos.HalvingDoublingAllreduce(ctx, l, l.Alloc(size), device.F32, device.Sum)
		}
		b := size / 4 / l.Size() * 4 * l.Size()
		return algos.AlltoallPairwise(ctx, l, l.Alloc(b), l.Alloc(b), device.F32)
	}
	var faults []sim.Fault
	for range rng.intn(4) {
		e := top.Edges()[rng.intn(len(top.Edges()))]
		at := sim.Time(rng.intn(300)) * sim.Microsecond
		if rng.intn(2) == 0 {
			faults = append(faults, sim.LinkFailure{Link: e.Name, At: at})
		} else {
			faults = append(faults, sim.SlowLink{Link: e.Name, Factor: 0.1 + float64(rng.intn(1000))/1000, At: at})
		}
	}
	if rng.intn(4) == 0 {
		faults = append(faults, sim.RankFailure{Rank: rng.intn(world), At: sim.Time(rng.intn(300)) * sim.Microsecond})
	}
	if rng.intn(2) == 0 {
		faults = append(faults, sim.Jitter{Dist: "exponential", Mean: sim.Microsecond})
	}
	return flowScenario{world, sim.WithFaults(flow, seed, faults...), body}
}

// flowGolden is the pinned lines: a name and a hash per scenario.
func flowGolden() []byte {
	var b bytes.Buffer
	b.WriteString("# scenario hash: see flow_random_golden_test.go\n")
	n := flowScenarios
	for _, fam := range []struct {
		name string
		make func(uint64) flowScenario
	}{{"exchange", exchangeScenario}, {"faults", faultScenario}} {
		for seed := range uint64(n) {
			s := fam.make(seed)
			var log logObserver
			res, err := sim.Run(sim.Config{World: s.world, Model: s.model, Observer: &log}, s.body)
			fmt.Fprintf(&b, "%s/%d %s\n", fam.name, seed, goldenHash(res, err, log.Bytes()))
		}
	}
	return b.Bytes()
}

func TestFlowRandomGolden(t *testing.T) {
	if *updateFlowGolden {
		if err := os.WriteFile(flowGoldenFile, flowGolden(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(flowGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]string{}
	for _, line := range strings.Split(string(want), "\n") {
		if name, hash, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(name, "#") {
			pinned[name] = hash
		}
	}
	got := strings.Split(strings.TrimSpace(string(flowGolden())), "\n")[1:]
	if len(got) != len(pinned) {
		t.Errorf("%d scenarios, %d pinned", len(got), len(pinned))
	}
	for _, line := range got {
		name, hash, _ := strings.Cut(line, " ")
		if pinned[name] != hash {
			t.Errorf("scenario %s: hash %s, pinned %q", name, hash, pinned[name])
		}
	}
}
