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
// algotest's reference registry, as the simulator's and nexar-live's do;
// a collective without a reference there still runs (with Input data in
// the buffers its Layout asks for) and must not fail, and the test says
// that its results went unchecked.

const (
	catSeed = 7
	catDT   = device.F32
	catOp   = device.Sum
)

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
		ref, known := algotest.LookupReference(e.coll.Name)
		if !known {
			unchecked(e.coll.Name)
		}
		// An in-place collective has no send buffer at any size; the
		// others get one, empty where the count rounds down to nothing.
		send1024, _, _ := e.coll.Layout(1024*p, p)
		for _, count := range counts {
			send, recv, used := e.coll.Layout(count, p)
			seq++
			var sendBuf []byte
			if send1024 > 0 {
				sendBuf = make([]byte, send*catDT.Size())
			}
			buf := make([]byte, recv*catDT.Size())
			var want []byte
			if known {
				data := ref(algotest.Case{Algorithm: e.algo, DType: catDT, Op: catOp, Root: root, World: p, Count: used, Seed: catSeed})
				want = data(r, sendBuf, buf)
			} else {
				algotest.Fill(sendBuf, catDT, catOp, r, p, catSeed)
				algotest.Fill(buf, catDT, catOp, r, p, catSeed)
			}
			call := algos.Call{DType: catDT, Op: catOp, Root: root, Buf: device.Host(buf)}
			if sendBuf != nil {
				call.Send = device.Host(sendBuf)
			}
			err := e.algo.Run(ctx, algos.Scoped(l, 0, seq), call)
			if err == nil {
				if err = algotest.Check(buf, want, catDT); err != nil {
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
		t.Logf("collective %q ran without a reference check: register its reference (algotest.RegisterReference)", name)
	}
}
