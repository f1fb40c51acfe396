package algos_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
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

// TestRootedLayout checks the layouts of the rooted collectives: nccl-tests'
// n, count rounded down to a multiple of p for gather and scatter, and
// buffers of those sizes accepted by every algorithm.
func TestRootedLayout(t *testing.T) {
	cases := []struct {
		coll             string
		count, p         int
		send, recv, used int
		busFactor        float64
	}{
		{"broadcast", 100003, 7, 0, 100003, 100003, 1},
		{"reduce", 100003, 7, 0, 100003, 100003, 1},
		{"gather", 100003, 7, 14286, 100002, 100002, 6.0 / 7},
		{"scatter", 100003, 7, 100002, 14286, 100002, 6.0 / 7},
		{"gather", 5, 8, 0, 0, 0, 7.0 / 8},
		{"scatter", 16, 8, 16, 2, 16, 7.0 / 8},
	}
	for _, c := range cases {
		coll, err := algos.Lookup(c.coll)
		if err != nil {
			t.Fatal(err)
		}
		if !coll.Rooted {
			t.Errorf("%s is not marked rooted", c.coll)
		}
		send, recv, used := coll.Layout(c.count, c.p)
		if send != c.send || recv != c.recv || used != c.used {
			t.Errorf("%s Layout(%d, %d) = (%d, %d, %d), want (%d, %d, %d)", c.coll, c.count, c.p, send, recv, used, c.send, c.recv, c.used)
		}
		if got := coll.BusFactor(c.p); got != c.busFactor {
			t.Errorf("%s BusFactor(%d) = %g, want %g", c.coll, c.p, got, c.busFactor)
		}
		for _, a := range coll.Algorithms {
			if a.Summary == "" {
				t.Errorf("%s %s has no summary", c.coll, a.Name)
			}
			rootedTime(t, worked, c.coll, a.Name, c.p, c.count, c.p-1, nil) // fails the test on error
		}
	}
}

// TestGatherScatterBadArguments: buffers that do not fit are errors, not
// panics or hangs.
func TestGatherScatterBadArguments(t *testing.T) {
	const p = 4
	type fn func(ctx context.Context, l algos.Link, send, recv device.Buffer, dt device.DType, root int) error
	gathers := map[string]fn{"BinomialGather": algos.BinomialGather, "LinearGather": algos.LinearGather}
	scatters := map[string]fn{"BinomialScatter": algos.BinomialScatter, "LinearScatter": algos.LinearScatter}
	block := func() device.Buffer { return make(device.Host, 8) }
	full := func(n int) device.Buffer { return make(device.Host, n) }
	for name, f := range gathers {
		for what, args := range map[string][2]func() device.Buffer{
			"short root buffer": {block, func() device.Buffer { return full(8*p - 4) }},
			"no root buffer":    {block, func() device.Buffer { return nil }},
			"no block":          {func() device.Buffer { return nil }, func() device.Buffer { return full(8 * p) }},
			"partial element":   {func() device.Buffer { return full(7) }, func() device.Buffer { return full(7 * p) }},
		} {
			checkRootedError(t, name+", "+what, p, func(ctx context.Context, l algos.Link) error {
				return f(ctx, l, args[0](), args[1](), device.F32, 0)
			})
		}
	}
	for name, f := range scatters {
		for what, args := range map[string][2]func() device.Buffer{
			"long root buffer": {func() device.Buffer { return full(8*p + 4) }, block},
			"no root buffer":   {func() device.Buffer { return nil }, block},
			"no block":         {func() device.Buffer { return full(8 * p) }, func() device.Buffer { return nil }},
		} {
			checkRootedError(t, name+", "+what, p, func(ctx context.Context, l algos.Link) error {
				return f(ctx, l, args[0](), args[1](), device.F32, 0)
			})
		}
		checkRootedError(t, name+", root out of range", p, func(ctx context.Context, l algos.Link) error {
			return f(ctx, l, full(8*p), block(), device.F32, p)
		})
	}
}

// checkRootedError runs body on p ranks and fails the test unless it
// returns an error (on at least one rank) without deadlocking.
func checkRootedError(t *testing.T, what string, p int, body sim.Body) {
	t.Helper()
	_, err := sim.Run(sim.Config{World: p, Model: worked, HostData: true}, body)
	var dl *sim.DeadlockError
	switch {
	case err == nil:
		t.Errorf("%s: no error", what)
	case errors.As(err, &dl):
		t.Errorf("%s: deadlock instead of an error: %v", what, err)
	}
}
