package sim

import (
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// TestRecordAllocations checks that recording a rank whose program was
// met before allocates next to nothing a message: the million-rank
// replayed runs record every rank, and what the recording allocates is
// garbage the collector then chases. A message used to cost three
// allocations (Wait's argument list, the phantom slice boxed in a
// Buffer, the algorithm's round lists); what is left is a block of
// request records every 256 requests and the round lists, once a rank.
func TestRecordAllocations(t *testing.T) {
	body := func(run func(context.Context, algos.Link, device.Buffer, device.DType, device.Op) error, scoped bool) Body {
		return func(ctx context.Context, l algos.Link) error {
			if scoped {
				l = algos.Scoped(l, 1, 2)
			}
			return run(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
		}
	}
	// The most allocations a message may cost: 0.01 for the request
	// blocks, the rest for what is allocated once a rank.
	const maxPerMsg = 0.05
	for _, c := range []struct {
		name  string
		world int
		body  Body
	}{
		{"halving_doubling", 1024, body(algos.HalvingDoublingAllreduce, false)},
		{"recursive_doubling", 1024, body(algos.RecursiveDoublingAllreduce, false)},
		{"ring", 64, body(algos.RingAllreduce, false)},
		{"ring scoped", 64, body(algos.RingAllreduce, true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := newInterner()
			rec := &recorder{world: c.world, info: newRunInfo(Config{World: c.world})}
			var sends int
			recordAll := func() {
				sends = 0
				for r := range c.world {
					if _, err := rec.record(r, c.body, in); err != nil {
						t.Fatal(err)
					}
					for _, op := range rec.recorded() {
						if op.kind == opSend {
							sends++
						}
					}
				}
			}
			allocs := testing.AllocsPerRun(2, recordAll)
			if sends < 10*c.world {
				t.Fatalf("%d messages from %d ranks: the body sends too few to tell", sends, c.world)
			}
			per := allocs / float64(sends)
			t.Logf("%.0f allocations recording %d messages: %.4f a message", allocs, sends, per)
			if per > maxPerMsg {
				t.Errorf("%.4f allocations a message, want at most %g", per, maxPerMsg)
			}
		})
	}
}
