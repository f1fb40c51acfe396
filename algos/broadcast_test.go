package algos_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// rootedSeed seeds the data of the tests of rooted collectives; failures
// print it.
const rootedSeed = 11

// rootedWorlds are the world sizes the rooted collectives are tested on:
// 1..33, and 64, 127 and 128 (1..17 and 64 under -short).
func rootedWorlds() []int {
	last, big := 33, []int{64, 127, 128}
	if testing.Short() {
		last, big = 17, []int{64}
	}
	var ws []int
	for p := 1; p <= last; p++ {
		ws = append(ws, p)
	}
	return append(ws, big...)
}

// rootedLarge is the large element count of the data tests for dt: a
// prime, so that blocks and segments come out uneven. f32 gets 100003
// elements, more than one default chain segment; the other types a
// tenth, to keep the tests fast; everything a tenth under -short.
func rootedLarge(dt device.DType) int {
	switch {
	case dt == device.F32 && !testing.Short():
		return 100003
	case dt == device.F32 || !testing.Short():
		return 10007
	}
	return 1009
}

// rootsOf returns the roots tested on p ranks: 0, p/2 and p-1, without
// repeats.
func rootsOf(p int) []int {
	roots := []int{0}
	for _, r := range []int{p / 2, p - 1} {
		if r != roots[len(roots)-1] {
			roots = append(roots, r)
		}
	}
	return roots
}

// rootedTypes are the types every rooted collective is tested with on every
// world: one of each size class that matters (4-byte float, 4-byte
// integer, 2-byte float).
var rootedTypes = []device.DType{device.F32, device.I32, device.BF16}

// rootedCase is one rank's part in one operation of a data test.
type rootedCase struct {
	send, buf device.Buffer
	// check returns an error if the rank's buffers are wrong afterwards.
	check func() error
}

// runRooted runs alg of coll on world simulated ranks with host data, once
// per root in roots (one operation after another, each scoped by its
// index, as Comm does), with buffers from mk, and fails the test on any
// error or wrong result.
func runRooted(t *testing.T, coll, alg string, world int, roots []int, dt device.DType, op device.Op, params map[string]int,
	mk func(rank, root int) rootedCase) {
	t.Helper()
	c, err := algos.Lookup(coll)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Algorithm(alg)
	if err != nil {
		t.Fatal(err)
	}
	model := sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 10e9, ReduceBandwidth: 20e9}
	_, err = sim.Run(sim.Config{World: world, Model: model, HostData: true}, func(ctx context.Context, l algos.Link) error {
		for i, root := range roots {
			rc := mk(l.Rank(), root)
			call := algos.Call{Send: rc.send, Buf: rc.buf, DType: dt, Op: op, Root: root, Params: params}
			if err := a.Run(ctx, algos.Scoped(l, 0, uint64(i)), call); err != nil {
				return fmt.Errorf("root %d: %w", root, err)
			}
			if err := rc.check(); err != nil {
				return fmt.Errorf("root %d: %w", root, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s %s, world %d, roots %v, %s %s (seed %d): %v", coll, alg, world, roots, dt, op, rootedSeed, err)
	}
}

// hostOrNil returns b as a host buffer, or nil for a nil slice.
func hostOrNil(b []byte) device.Buffer {
	if b == nil {
		return nil
	}
	return device.Host(b)
}

// rootedCompare is algotest.Compare with a fast path for equal buffers, which
// is most of the data the tests check.
func rootedCompare(got, want []byte, dt device.DType) error {
	if bytes.Equal(got, want) {
		return nil
	}
	return algotest.Compare(got, want, dt)
}

// perRoot returns fn(root) for every root of roots, computed once: the
// data tests share one expected result among all ranks.
func perRoot(roots []int, fn func(root int) []byte) func(root int) []byte {
	m := make([][]byte, len(roots))
	for i, r := range roots {
		m[i] = fn(r)
	}
	return func(root int) []byte {
		for i, r := range roots {
			if r == root {
				return m[i]
			}
		}
		panic("root not prepared")
	}
}

func checkBroadcastData(t *testing.T, alg string, params map[string]int, world, count int, dt device.DType) {
	t.Helper()
	roots := rootsOf(world)
	want := perRoot(roots, func(root int) []byte { return algotest.Broadcasted(count, dt, root, rootedSeed) })
	runRooted(t, "broadcast", alg, world, roots, dt, device.Sum, params, func(rank, root int) rootedCase {
		buf := algotest.Garbage(want(root))
		if rank == root {
			buf = bytes.Clone(want(root))
		}
		return rootedCase{buf: device.Host(buf), check: func() error { return rootedCompare(buf, want(root), dt) }}
	})
}

func TestBroadcastData(t *testing.T) {
	c, err := algos.Lookup("broadcast")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Algorithms {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			for _, p := range rootedWorlds() {
				for _, dt := range rootedTypes {
					for _, count := range []int{0, 1, p - 1, p, rootedLarge(dt)} {
						checkBroadcastData(t, a.Name, nil, p, count, dt)
					}
				}
			}
		})
	}
}

// TestBroadcastEveryType runs every broadcast with every type on a few
// worlds: broadcasts look at the type only for its size, which the three
// types of TestBroadcastData do not all cover.
func TestBroadcastEveryType(t *testing.T) {
	c, err := algos.Lookup("broadcast")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Algorithms {
		for _, p := range []int{2, 7, 12} {
			for _, dt := range device.DTypes() {
				checkBroadcastData(t, a.Name, nil, p, 3*p+1, dt)
			}
		}
	}
}

// TestPipelinedChainSegments runs the chain with segments that divide the
// buffer, that do not, that are not whole elements, and that exceed it.
func TestPipelinedChainSegments(t *testing.T) {
	for _, seg := range []int{1, 4, 6, 12, 1000, 4096, 1 << 30} {
		for _, p := range []int{2, 3, 9} {
			for _, count := range []int{1, 999, 1024} {
				checkBroadcastData(t, "pipelined_chain", map[string]int{"segment": seg}, p, count, device.F32)
			}
		}
	}
}

func TestBroadcastBadArguments(t *testing.T) {
	bad := []struct {
		name  string
		buf   device.Buffer
		root  int
		seg   int
		world int
	}{
		{"root too large", device.Host(make([]byte, 8)), 4, 16, 4},
		{"negative root", device.Host(make([]byte, 8)), -1, 16, 4},
		{"partial element", device.Host(make([]byte, 7)), 0, 16, 4},
		{"zero segment", device.Host(make([]byte, 8)), 0, 0, 4},
	}
	for _, b := range bad {
		_, err := sim.Run(sim.Config{World: b.world, Model: sim.AlphaBeta{Bandwidth: 1e9}, HostData: true},
			func(ctx context.Context, l algos.Link) error {
				return algos.PipelinedChainBroadcast(ctx, l, b.buf, device.F32, b.root, b.seg)
			})
		if err == nil {
			t.Errorf("%s: no error", b.name)
		}
	}
}
