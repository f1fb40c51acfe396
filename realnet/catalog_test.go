package realnet

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// The catalogue tests run every algorithm of every collective that algos
// registers, so that algorithms added later are covered without touching
// this file. Each collective's inputs and reference results come from
// algotest; a collective this file does not know yet still runs (with
// Input data in the buffers its Layout asks for) and must not fail, and
// the test says that its results went unchecked.

const (
	catSeed = 7
	catDT   = device.F32
	catOp   = device.Sum
)

// collCase builds one rank's buffers for a collective over count
// elements (the collective's count, as Layout takes it) and checks them
// afterwards.
type collCase struct {
	inputs func(rank, p, send, recv, root int) (sendBuf, buf []byte)
	check  func(rank, p, send, recv, root int, buf []byte) error
}

func cmp(got, want []byte) error { return algotest.Compare(got, want, catDT) }

var collCases = map[string]collCase{
	"allreduce": {
		inputs: func(rank, p, _, n, _ int) ([]byte, []byte) {
			return nil, algotest.Input(n, catDT, catOp, rank, p, catSeed)
		},
		check: func(_, p, _, n, _ int, buf []byte) error {
			return cmp(buf, algotest.Reduced(n, catDT, catOp, p, catSeed))
		},
	},
	"allgather": {
		inputs: func(rank, p, s, n, _ int) ([]byte, []byte) {
			return algotest.AllgatherInput(s, catDT, rank, catSeed), algotest.Garbage(algotest.Allgathered(s, catDT, p, catSeed))
		},
		check: func(_, p, s, _, _ int, buf []byte) error {
			return cmp(buf, algotest.Allgathered(s, catDT, p, catSeed))
		},
	},
	"alltoall": {
		inputs: func(rank, p, s, n, _ int) ([]byte, []byte) {
			return algotest.AlltoallInput(s/p, catDT, rank, p, catSeed), algotest.Garbage(algotest.AlltoallOutput(s/p, catDT, rank, p, catSeed))
		},
		check: func(rank, p, s, _, _ int, buf []byte) error {
			return cmp(buf, algotest.AlltoallOutput(s/p, catDT, rank, p, catSeed))
		},
	},
	"broadcast": {
		inputs: func(rank, p, _, n, root int) ([]byte, []byte) {
			return nil, algotest.BroadcastInput(n, catDT, rank, root, catSeed)
		},
		check: func(_, _, _, n, root int, buf []byte) error {
			return cmp(buf, algotest.Broadcasted(n, catDT, root, catSeed))
		},
	},
	"gather": {
		inputs: func(rank, p, s, n, root int) ([]byte, []byte) {
			var buf []byte
			if rank == root {
				buf = algotest.Garbage(algotest.Gathered(s, catDT, p, catSeed))
			}
			return algotest.Distinct(s, catDT, rank, catSeed), buf
		},
		check: func(rank, p, s, _, root int, buf []byte) error {
			if rank != root {
				return nil
			}
			return cmp(buf, algotest.Gathered(s, catDT, p, catSeed))
		},
	},
	"scatter": {
		inputs: func(rank, p, s, n, root int) ([]byte, []byte) {
			return algotest.ScatterInput(n, catDT, rank, root, p, catSeed), algotest.Garbage(algotest.Scattered(n, catDT, rank, catSeed))
		},
		check: func(rank, _, _, n, _ int, buf []byte) error {
			return cmp(buf, algotest.Scattered(n, catDT, rank, catSeed))
		},
	},
	"reduce_scatter": {
		inputs: func(rank, p, s, n, _ int) ([]byte, []byte) {
			return algotest.ReduceScatterInput(n, catDT, catOp, rank, p, catSeed), algotest.Garbage(make([]byte, n*catDT.Size()))
		},
		check: func(rank, p, _, n, _ int, buf []byte) error {
			return cmp(buf, algotest.ReduceScattered(n, catDT, catOp, p, catSeed)[rank])
		},
	},
	"reduce": {
		inputs: func(rank, p, _, n, _ int) ([]byte, []byte) {
			return nil, algotest.Input(n, catDT, catOp, rank, p, catSeed)
		},
		check: func(rank, p, _, _, root int, buf []byte) error {
			return algotest.CheckRootedReduce(buf, catDT, catOp, rank, root, p, catSeed)
		},
	},
	"scan": {
		inputs: func(rank, p, _, n, _ int) ([]byte, []byte) {
			return nil, algotest.Input(n, catDT, catOp, rank, p, catSeed)
		},
		check: func(rank, p, _, n, _ int, buf []byte) error {
			return cmp(buf, algotest.Scanned(n, catDT, catOp, p, catSeed, false)[rank])
		},
	},
	"barrier": {
		inputs: func(int, int, int, int, int) ([]byte, []byte) { return nil, nil },
		check:  func(int, int, int, int, int, []byte) error { return nil },
	},
	// Rank 0's message reaches rank 1 (and comes back to rank 0 in the
	// ping-pong, which the check cannot tell from no message: the data
	// test of algos covers it); other ranks' buffers stay as they were.
	"sendrecv": {
		inputs: func(rank, _, s, n, _ int) ([]byte, []byte) {
			return algotest.Distinct(s, catDT, 0, catSeed), algotest.Garbage(algotest.Distinct(n, catDT, 0, catSeed))
		},
		check: func(rank, p, _, n, _ int, buf []byte) error {
			msg := algotest.Distinct(n, catDT, 0, catSeed)
			if rank == 1 || p == 1 {
				return cmp(buf, msg)
			}
			if rank > 1 {
				return cmp(buf, algotest.Garbage(msg))
			}
			return nil
		},
	},
}

// catalogueEntry is one algorithm of one collective.
type catalogueEntry struct {
	coll *algos.Collective
	algo *algos.Algorithm
}

// catalogue lists every algorithm of every collective, in a fixed order
// (collectives by name, algorithms as registered), so that every rank,
// every process, walks it the same way.
// catalogue lists the catalogue's own algorithms: another library's
// (NCCL's, Family "nccl") have tests of their own (nccl_catalog_test.go).
func catalogue() []catalogueEntry { return catalogueOf("") }

// catalogueOf lists the algorithms of family.
func catalogueOf(family string) []catalogueEntry {
	var out []catalogueEntry
	for _, name := range algos.CollectiveNames() {
		c, err := algos.Lookup(name)
		if err != nil {
			panic(err)
		}
		for _, a := range c.Algorithms {
			if a.Family == family {
				out = append(out, catalogueEntry{c, a})
			}
		}
	}
	return out
}

// rankCatalogue is one rank's part of running every algorithm of the
// catalogue once for each count, one after the other, each scoped to its
// own operation sequence number as a communicator would, checking the
// rank's results. Ranks do not wait for each other between operations:
// the scoping keeps a fast rank's next operation apart from a slow rank's
// current one. It reports the collectives it has no reference for.
func rankCatalogue(ctx context.Context, l *Link, counts []int, unchecked func(name string)) error {
	return rankEntries(ctx, l, catalogue(), counts, unchecked)
}

// rankEntries runs entries on one rank and checks their results.
func rankEntries(ctx context.Context, l *Link, entries []catalogueEntry, counts []int, unchecked func(name string)) error {
	p, r := l.Size(), l.Rank()
	root := 1 % p
	var seq uint64
	for _, e := range entries {
		if e.algo.PowerOfTwo && p&(p-1) != 0 {
			continue
		}
		cc, known := collCases[e.coll.Name]
		if !known {
			unchecked(e.coll.Name)
		}
		for _, count := range counts {
			send, recv, _ := e.coll.Layout(count, p)
			seq++
			var sendBuf, buf []byte
			if known {
				sendBuf, buf = cc.inputs(r, p, send, recv, root)
			} else {
				if send > 0 {
					sendBuf = algotest.Input(send, catDT, catOp, r, p, catSeed)
				}
				buf = algotest.Input(recv, catDT, catOp, r, p, catSeed)
			}
			call := algos.Call{DType: catDT, Op: catOp, Root: root}
			if sendBuf != nil {
				call.Send = device.Host(sendBuf)
			}
			if buf != nil {
				call.Buf = device.Host(buf)
			}
			err := e.algo.Run(ctx, algos.Scoped(l, 0, seq), call)
			if err == nil && e.algo.Lossy() {
				// A compressed allreduce: the same compression of the
				// same inputs, exactly.
				if err = cmp(buf, algotest.AllreduceExpected(e.algo, nil, recv, catDT, catOp, p, catSeed)); err != nil {
					err = fmt.Errorf("result: %w", err)
				}
			} else if err == nil && known {
				if err = cc.check(r, p, send, recv, root, buf); err != nil {
					err = fmt.Errorf("result: %w", err)
				}
			}
			if err != nil {
				return fmt.Errorf("%s/%s, p=%d, count %d (seed %d): %w", e.coll.Name, e.algo.Name, p, count, catSeed, err)
			}
		}
	}
	return nil
}

// runCatalogue runs rankCatalogue on every rank of links.
func runCatalogue(t *testing.T, links []*Link, counts []int, unchecked map[string]bool) {
	t.Helper()
	var mu sync.Mutex
	errs := run(links, func(ctx context.Context, l *Link) error {
		return rankCatalogue(ctx, l, counts, func(name string) {
			mu.Lock()
			unchecked[name] = true
			mu.Unlock()
		})
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}

// TestCatalogueUDP runs the whole catalogue over real UDP on 127.0.0.1.
func TestCatalogueUDP(t *testing.T) {
	checkGoroutines(t)
	counts := []int{1, 4099, 100003}
	if testing.Short() {
		counts = []int{1, 4099}
	}
	unchecked := map[string]bool{}
	for _, p := range []int{2, 3, 4, 8} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			links := newWorld(t, p, Config{})
			defer closeWorld(t, links)
			runCatalogue(t, links, counts, unchecked)
		})
	}
	for name := range unchecked {
		t.Logf("collective %q ran without a reference check: add it to collCases", name)
	}
}
