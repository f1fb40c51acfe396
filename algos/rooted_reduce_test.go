package algos_test

import (
	"bytes"
	"testing"

	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// checkReduceData reduces exact-reduction inputs of count elements on
// world ranks to every root of rootsOf(world), and checks the root's
// buffer.
func checkReduceData(t *testing.T, world, count int, dt device.DType, op device.Op) {
	t.Helper()
	want := algotest.Reduced(count, dt, op, world, rootedSeed)
	inputs := make([][]byte, world)
	for r := range inputs {
		inputs[r] = algotest.Input(count, dt, op, r, world, rootedSeed)
	}
	runRooted(t, "reduce", "binomial_tree", world, rootsOf(world), dt, op, nil, func(rank, root int) rootedCase {
		buf := bytes.Clone(inputs[rank])
		return rootedCase{buf: device.Host(buf), check: func() error {
			if rank != root {
				return nil // unspecified
			}
			return rootedCompare(buf, want, dt)
		}}
	})
}

func TestRootedReduceData(t *testing.T) {
	for _, p := range rootedWorlds() {
		for _, dt := range rootedTypes {
			for _, count := range []int{0, 1, p - 1, p, rootedLarge(dt)} {
				for _, op := range []device.Op{device.Sum, device.Max} {
					checkReduceData(t, p, count, dt, op)
				}
			}
		}
	}
}

// TestRootedReduceEveryTypeAndOp runs the reduce with every type and op on
// a few worlds, powers of two and not.
func TestRootedReduceEveryTypeAndOp(t *testing.T) {
	worlds := []int{2, 3, 8, 13, 33}
	if testing.Short() {
		worlds = []int{3, 8}
	}
	for _, p := range worlds {
		for _, dt := range device.DTypes() {
			for _, op := range device.Ops() {
				for _, count := range []int{1, p, 1009} {
					checkReduceData(t, p, count, dt, op)
				}
			}
		}
	}
}

// TestCheckRootedReduce checks the shared checker against the test's own
// expectation: a correct root buffer passes, a wrong one does not.
func TestCheckRootedReduce(t *testing.T) {
	const world, root, count = 5, 2, 17
	want := algotest.Reduced(count, device.I16, device.Sum, world, rootedSeed)
	if err := algotest.CheckRootedReduce(want, device.I16, device.Sum, root, root, world, rootedSeed); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(want)
	bad[3] ^= 1
	if err := algotest.CheckRootedReduce(bad, device.I16, device.Sum, root, root, world, rootedSeed); err == nil {
		t.Fatal("a wrong root buffer passed")
	}
	if err := algotest.CheckRootedReduce(bad, device.I16, device.Sum, root+1, root, world, rootedSeed); err != nil {
		t.Fatalf("a non-root buffer was checked: %v", err)
	}
}
