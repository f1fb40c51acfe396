package algos_test

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// rootedBlocks are the per-rank block sizes, in elements, of the gather
// and scatter data tests on p ranks: nothing, one element, p-1, p, and a
// large prime share (the root's buffer is p times that).
func rootedBlocks(p int, dt device.DType) []int {
	return []int{0, 1, p - 1, p, max(1, rootedLarge(dt)/p)}
}

// checkGatherData gathers Distinct blocks of block elements on world ranks
// to every root of rootsOf(world), and checks the root's buffer, whose
// every element starts as garbage.
func checkGatherData(t *testing.T, alg string, world, block int, dt device.DType) {
	t.Helper()
	want := algotest.Gathered(block, dt, world, rootedSeed)
	garbage := algotest.Garbage(want)
	runRooted(t, "gather", alg, world, rootsOf(world), dt, device.Sum, nil, func(rank, root int) rootedCase {
		send := want[rank*block*dt.Size() : (rank+1)*block*dt.Size()]
		var recv []byte
		if rank == root {
			recv = bytes.Clone(garbage)
		}
		return rootedCase{send: device.Host(send), buf: hostOrNil(recv), check: func() error {
			if rank != root {
				return nil
			}
			return rootedCompare(recv, want, dt)
		}}
	})
}

func TestGatherData(t *testing.T) {
	c, err := algos.Lookup("gather")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Algorithms {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			if a.Name == "flat" {
				// flat is linear under nexar's name; one run on a few
				// worlds shows that the name is wired up.
				for _, p := range []int{1, 2, 5, 16} {
					checkGatherData(t, a.Name, p, p+1, device.F32)
				}
				return
			}
			for _, p := range rootedWorlds() {
				for _, dt := range rootedTypes {
					for _, block := range rootedBlocks(p, dt) {
						checkGatherData(t, a.Name, p, block, dt)
					}
				}
			}
		})
	}
}

// TestGatherEveryType runs the gathers with every type on a few worlds.
func TestGatherEveryType(t *testing.T) {
	for _, alg := range []string{"binomial_tree", "linear"} {
		for _, p := range []int{3, 6, 13} {
			for _, dt := range device.DTypes() {
				checkGatherData(t, alg, p, 5, dt)
			}
		}
	}
}
