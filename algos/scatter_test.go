package algos_test

import (
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// checkScatterData scatters the Distinct blocks of block elements from
// every root of rootsOf(world) and checks every rank's block, which starts
// as garbage. Only the root gets a send buffer.
func checkScatterData(t *testing.T, alg string, world, block int, dt device.DType) {
	t.Helper()
	full := algotest.Gathered(block, dt, world, rootedSeed)
	runRooted(t, "scatter", alg, world, rootsOf(world), dt, device.Sum, nil, func(rank, root int) rootedCase {
		mine := full[rank*block*dt.Size() : (rank+1)*block*dt.Size()]
		recv := algotest.Garbage(mine)
		var send []byte
		if rank == root {
			send = full
		}
		return rootedCase{send: hostOrNil(send), buf: device.Host(recv), check: func() error {
			return rootedCompare(recv, algotest.Scattered(block, dt, rank, rootedSeed), dt)
		}}
	})
}

func TestScatterData(t *testing.T) {
	c, err := algos.Lookup("scatter")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Algorithms {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			if a.Name == "flat" {
				// flat is linear under nexar's name.
				for _, p := range []int{1, 2, 5, 16} {
					checkScatterData(t, a.Name, p, p+1, device.F32)
				}
				return
			}
			for _, p := range rootedWorlds() {
				for _, dt := range rootedTypes {
					for _, block := range rootedBlocks(p, dt) {
						checkScatterData(t, a.Name, p, block, dt)
					}
				}
			}
		})
	}
}

// TestScatterEveryType runs the scatters with every type on a few worlds.
func TestScatterEveryType(t *testing.T) {
	for _, alg := range []string{"binomial_tree", "linear"} {
		for _, p := range []int{3, 6, 13} {
			for _, dt := range device.DTypes() {
				checkScatterData(t, alg, p, 5, dt)
			}
		}
	}
}
