package schedule_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/simtest"
)

const alphaBeta = `[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "50GB/s"
`

var (
	netOnce sync.Once
	net     *simtest.Network
	netErr  error
	regMu   sync.Mutex
)

func network(t *testing.T) *simtest.Network {
	t.Helper()
	netOnce.Do(func() { net, netErr = simtest.ParseNetwork(alphaBeta) })
	if netErr != nil {
		t.Fatal(netErr)
	}
	return net
}

// register exports s, reads it back and registers it under its collective
// as name, once.
func register(t *testing.T, s *schedule.Schedule, name string) {
	t.Helper()
	regMu.Lock()
	defer regMu.Unlock()
	coll, err := s.Collective()
	if err != nil {
		t.Fatal(err)
	}
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Algorithm(name); err == nil {
		return
	}
	var xml bytes.Buffer
	if err := s.WriteXML(&xml); err != nil {
		t.Fatal(err)
	}
	back, err := schedule.Parse(name+".xml", xml.Bytes())
	if err != nil {
		t.Fatalf("reading back the export: %v\n%s", err, xml.String())
	}
	a, err := back.Algorithm(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := algos.RegisterAlgorithm(coll, a); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTrip exports catalogue algorithms as MSCCL XML, reads them
// back and simulates them on alpha-beta: the same time as the native
// algorithm to the picosecond, and every rank's data right.
func TestRoundTrip(t *testing.T) {
	n := network(t)
	for _, c := range []struct {
		coll, native string
		export       func(p int) *schedule.Schedule
		// uneven, where set, says a count the schedule's whole chunks
		// time differently from the native algorithm's elements.
		uneven func(p, count int) bool
	}{
		{"allreduce", "halving_doubling", schedule.HalvingDoublingAllreduce, func(p, count int) bool {
			p2 := 1
			for p2*2 <= p {
				p2 *= 2
			}
			return count%p2 != 0
		}},
		{"allreduce", "ring", schedule.RingAllreduce, nil},
		{"allreduce", "recursive_doubling", schedule.RecursiveDoublingAllreduce, nil},
		{"allgather", "ring", schedule.RingAllgather, nil},
		{"reduce_scatter", "ring", schedule.RingReduceScatter, nil},
		{"alltoall", "pairwise", schedule.PairwiseAlltoall, nil},
	} {
		for _, p := range []int{1, 2, 3, 4, 5, 8} {
			name := fmt.Sprintf("rt_%s_%s_%d", c.coll, c.native, p)
			register(t, c.export(p), name)
			for _, count := range []int{0, 1, p - 1, p, 3*p + 2, 8 * p, 1000, 1 << 16} {
				for _, data := range []bool{false, true} {
					if data && count > 1000 {
						continue
					}
					bytes := 4 * count
					nat := n.Time(t, simtest.Case{Collective: c.coll, Algorithm: c.native, World: p, Bytes: bytes, Data: data})
					got := n.Time(t, simtest.Case{Collective: c.coll, Algorithm: name, World: p, Bytes: bytes, Data: data})
					if c.uneven != nil && c.uneven(p, count) {
						continue // data checked, time not exact
					}
					simtest.AssertTime(t, fmt.Sprintf("%s p=%d count=%d data=%v", name, p, count, data), got, nat, 0)
					if count == 1000 && data {
						t.Logf("%s p=%d count=%d: %v, native %v", name, p, count, got, nat)
					}
				}
			}
		}
	}
}
