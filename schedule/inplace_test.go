package schedule_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/simtest"
)

// TestInPlace runs schedules whose steps name one memory by two letters,
// in place: an allreduce whose steps read i and write o (RCCL's unit-test
// ring has this shape; it gave wrong data when an rrcs received straight
// into o, which is i, and added the received data to itself), a
// reduce-scatter whose output is the rank's block of its input, and an
// allgather whose input is the rank's block of its output. Each runs
// with its data checked on the simulator (threadblocks as processes) and
// on a link that cannot spawn (rounds), at counts that cut evenly and
// not, with chunks moved whole and in slices.
func TestInPlace(t *testing.T) {
	n := network(t)
	for _, c := range []struct {
		name, file string
		old, new   string // an edit of the file, none where old is ""
		world      int
		counts     []int
	}{
		{"allreduce i to o in place", "allreduce_ring_io_3gpu.xml", "", "", 3, []int{3, 7, 999, 3000}},
		{"allreduce i to o out of place", "allreduce_ring_io_3gpu.xml", `inplace="1" outofplace="1"`, `inplace="0" outofplace="1"`, 3, []int{3, 7, 999}},
		{"reducescatter in place", "reducescatter_ring_inplace_3gpu.xml", "", "", 3, []int{3, 9, 999, 3000}},
		{"reducescatter out of place", "reducescatter_ring_inplace_3gpu.xml", `inplace="1" outofplace="0"`, `inplace="0" outofplace="1"`, 3, []int{3, 999}},
		{"allgather in place", "allgather_direct_ll128_3gpu.xml", `inplace="0" outofplace="1"`, `inplace="1" outofplace="0"`, 3, []int{3, 6, 999, 3000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if c.old != "" {
				if text = strings.Replace(text, c.old, c.new, 1); text == string(data) {
					t.Fatalf("%q is not in %s", c.old, c.file)
				}
			}
			s, err := schedule.Parse(c.file, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			name := "inplace_" + strings.NewReplacer(" ", "_").Replace(c.name)
			register(t, s, name)
			coll, _ := s.Collective()
			for _, count := range c.counts {
				for _, slice := range []int{0, 8} {
					cs := simtest.Case{Collective: coll, Algorithm: name, World: c.world, Bytes: 4 * count,
						Params: map[string]int{"slice": slice}, Data: true}
					if _, err := n.Simulate(cs); err != nil {
						t.Errorf("count %d slice %d: %v", count, slice, err)
					}
				}
				runRounds(t, n, s, coll, c.world, count)
			}
		})
	}
}

// runRounds runs s as a call of coll on count elements (the whole
// buffer, as nccl-tests counts it) on links that cannot spawn, so that
// the interpreter advances the threadblocks in rounds, and checks every
// rank's data against the reference.
func runRounds(t *testing.T, n *simtest.Network, s *schedule.Schedule, coll string, world, count int) {
	t.Helper()
	ref, ok := algotest.LookupReference(coll)
	if !ok {
		t.Fatalf("no reference for %s", coll)
	}
	fill := ref(algotest.Case{DType: device.F32, Op: device.Sum, World: world, Count: count, Seed: 3})
	es := device.F32.Size()
	n.Run(t, world, true, func(ctx context.Context, l algos.Link) error {
		sendLen, bufLen := count*es, count*es
		switch coll {
		case "allreduce":
			sendLen = 0
		case "allgather":
			sendLen = count / world * es
		case "reduce_scatter":
			bufLen = count / world * es
		}
		send, buf := make([]byte, sendLen), make([]byte, bufLen)
		want := fill(l.Rank(), send, buf)
		call := algos.Call{Buf: device.Host(buf), DType: device.F32, Op: device.Sum}
		if sendLen > 0 {
			call.Send = device.Host(send)
		}
		if err := s.Run(ctx, plainLink{l}, call); err != nil {
			return err
		}
		if err := algotest.Compare(buf[:len(want)], want, device.F32); err != nil {
			return fmt.Errorf("rounds, count %d: %w", count, err)
		}
		return nil
	})
}
