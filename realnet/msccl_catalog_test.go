package realnet

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/schedule"
)

// mscclEntries returns the schedules that run on p ranks: the catalogue's
// algorithms exported as MSCCL schedules and read back, and the files of
// schedule/testdata written for p GPUs.
func mscclEntries(t *testing.T, p int) (exported, files []catalogueEntry) {
	t.Helper()
	add := func(to *[]catalogueEntry, s *schedule.Schedule, name string) {
		coll, err := s.Collective()
		if err != nil {
			t.Fatal(err)
		}
		c, err := algos.Lookup(coll)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Algorithm(name)
		if err != nil {
			t.Fatal(err)
		}
		*to = append(*to, catalogueEntry{c, a})
	}
	for _, export := range []func(int) *schedule.Schedule{schedule.RingAllreduce, schedule.HalvingDoublingAllreduce,
		schedule.RecursiveDoublingAllreduce, schedule.RingAllgather, schedule.RingReduceScatter, schedule.PairwiseAlltoall} {
		s := export(p)
		add(&exported, s, s.Name)
	}
	paths, err := filepath.Glob(filepath.Join("..", "schedule", "testdata", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		s, err := schedule.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.NGPUs == p {
			add(&files, s, s.Name)
		}
	}
	return exported, files
}

// TestCatalogueMSCCL runs MSCCL schedules over real UDP on 127.0.0.1 with
// real data checked: the same interpreter as on the simulator, on a real
// transport.
func TestCatalogueMSCCL(t *testing.T) {
	checkGoroutines(t)
	for _, p := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			exported, files := mscclEntries(t, p)
			if len(files) == 0 {
				t.Fatalf("no schedule of schedule/testdata is for %d GPUs", p)
			}
			links := newWorld(t, p, Config{})
			defer closeWorld(t, links)
			// The files cut their buffers into up to 8 chunks; each set
			// runs apart, so that their operations' scopes never meet.
			for _, set := range []struct {
				entries []catalogueEntry
				counts  []int
			}{{exported, []int{1, 4099, 100003}}, {files, []int{24, 4104, 100008}}} {
				errs := run(links, func(ctx context.Context, l *Link) error {
					return rankEntries(ctx, l, set.entries, set.counts, func(string) {})
				})
				if err := firstErr(errs); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
