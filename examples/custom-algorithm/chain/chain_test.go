package chain

import (
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/simtest"
)

// alphaBeta is the network of the closed form: α = 5 us, 1/β = 12.5 GB/s,
// 1/γ = 25 GB/s.
var alphaBeta = simtest.MustParseNetwork(`
[network]
model = "alpha-beta"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"
`)

// The first test of an algorithm: its simulated time is its closed form,
// to the picosecond, at every world size and size tried.
func TestClosedForm(t *testing.T) {
	alpha := 5 * sim.Microsecond
	for _, p := range []int{2, 3, 7, 16} {
		for _, n := range []int{4, 4096, 1 << 20} {
			got := alphaBeta.Time(t, simtest.Case{Collective: "allreduce", Algorithm: "chain", World: p, Bytes: n})
			beta := sim.Time(float64(n) / 12.5e9 * 1e12)
			gamma := sim.Time(float64(n) / 25e9 * 1e12)
			want := sim.Time(2*(p-1))*(alpha+beta) + sim.Time(p-1)*gamma
			simtest.AssertTime(t, fmt.Sprintf("chain p=%d n=%d", p, n), got, want, 0)
		}
	}
}

// The second: real data, checked on every rank against the reference,
// for world sizes that are primes, powers of two and 1, and awkward counts:
// 0, 1, fewer elements than ranks.
func TestData(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5, 8, 13} {
		for _, count := range []int{0, 1, p - 1, p + 1, 1000} {
			for _, dt := range []string{"f32", "i64", "bf16"} {
				for _, op := range []string{"sum", "max"} {
					c := simtest.Case{Collective: "allreduce", Algorithm: "chain", World: p, Bytes: count * size(dt), DType: dt, Op: op, Data: true}
					alphaBeta.Time(t, c)
				}
			}
		}
	}
}

func size(dt string) int { return map[string]int{"f32": 4, "i64": 8, "bf16": 2}[dt] }

// A bound against a reference: on 8-byte messages the chain costs what
// the ring does (both are 2(p-1) latencies deep), and never more than 1%
// above it; a change that made it slower there fails here.
func TestWithinRingOnTinyMessages(t *testing.T) {
	for _, p := range []int{2, 4, 8} {
		alphaBeta.AssertWithin(t, simtest.Case{Collective: "allreduce", Algorithm: "chain", World: p, Bytes: 8}, "ring", 1.01)
	}
}

// Golden results on a 3:1 fat tree, kept in testdata: a change of the
// algorithm or of the simulator that moves them shows here, as a diff
// to review (NEXAR_UPDATE_GOLDEN=1 go test ./... accepts it).
func TestGoldenFatTree(t *testing.T) {
	fatTree, err := simtest.LoadNetwork("testdata/oversubscribed-ethernet.toml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []simtest.Case
	for _, alg := range []string{"chain", "ring"} {
		for _, n := range []int{1 << 10, 1 << 20} {
			cases = append(cases, simtest.Case{Collective: "allreduce", Algorithm: alg, World: 12, Bytes: n})
		}
	}
	fatTree.Golden(t, "testdata/fat-tree.csv", cases)
}
