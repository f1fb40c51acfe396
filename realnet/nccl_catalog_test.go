package realnet

import (
	"context"
	"fmt"
	"testing"

	_ "github.com/nexar-go/nexar-go/algos/nccl"
)

// TestCatalogueNCCL runs NCCL's algorithms (package algos/nccl) over real
// UDP on 127.0.0.1, every collective, with real data checked: their
// channels as goroutines of the rank, their protocols' lines and flags on
// the wire, and the in-network ones with a rank standing in for the
// switch (a real link has none).
func TestCatalogueNCCL(t *testing.T) {
	checkGoroutines(t)
	counts := []int{1, 4099, 100003}
	if testing.Short() {
		counts = []int{1, 4099}
	}
	entries := catalogueOf("nccl")
	if len(entries) == 0 {
		t.Fatal("no NCCL algorithms in the catalogue")
	}
	for _, p := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			links := newWorld(t, p, Config{})
			defer closeWorld(t, links)
			errs := run(links, func(ctx context.Context, l *Link) error {
				return rankEntries(ctx, l, entries, counts, func(string) {})
			})
			if err := firstErr(errs); err != nil {
				t.Fatal(err)
			}
		})
	}
}
