package realnet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// TestStreams: algos' streams on real QUIC ranks, as a training step uses
// them (run with -race): a wait on an event not yet recorded waits for
// nothing; each gradient bucket's allreduce, on the dp stream, starts
// after the compute that wrote it and after the bucket before it; a
// second communication stream (tp) runs beside it; the compute stream
// waits for both before the optimizer; and the data is right.
func TestStreams(t *testing.T) {
	checkGoroutines(t)
	const p, buckets, count = 3, 4, 1000
	links := newWorld(t, p, Config{})
	defer closeWorld(t, links)
	log := &algotest.StreamLog{}
	errs := run(links, func(ctx context.Context, l *Link) error {
		ss := algos.NewStreams(l, algos.WithStreamObserver(log), algos.WithCompute(func(ctx context.Context, d time.Duration) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
		c, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
		if err != nil {
			return err
		}
		cs, dp, tp := ss.NewStream("compute"), ss.NewStream("dp"), ss.NewStream("tp")
		var early algos.Event
		dp.WaitEvent(&early) // never recorded before: waits for nothing
		tpBuf := make(device.Host, 4*count)
		tp.Do(ctx, "tp fill", func(context.Context) error {
			for k := range count {
				tpBuf[4*k] = byte(2 * l.Rank())
			}
			return nil
		})
		tp.Collective(ctx, c, "allreduce", algos.Call{Buf: tpBuf, DType: device.I32, Op: device.Sum}, "tp allreduce")
		bufs := make([]device.Host, buckets)
		for i := range buckets {
			bufs[i] = make(device.Host, 4*count)
			cs.Compute(ctx, 2*time.Millisecond, fmt.Sprint("backward ", i))
			cs.Do(ctx, fmt.Sprint("grad ", i), func(context.Context) error {
				for k := range count {
					bufs[i][4*k] = byte(l.Rank() + i)
				}
				return nil
			})
			var ev algos.Event
			cs.Record(&ev)
			dp.WaitEvent(&ev)
			dp.Collective(ctx, c, "allreduce", algos.Call{Buf: bufs[i], DType: device.I32, Op: device.Sum}, fmt.Sprint("bucket ", i))
		}
		var dpDone, tpDone algos.Event
		dp.Record(&dpDone)
		tp.Record(&tpDone)
		cs.WaitEvent(&dpDone)
		cs.WaitEvent(&tpDone)
		cs.Compute(ctx, time.Millisecond, "optimizer")
		if err := ss.Synchronize(ctx); err != nil {
			return err
		}
		for i := range buckets {
			want := byte(p*(p-1)/2 + p*i)
			for k := range count {
				if got := bufs[i][4*k]; got != want {
					return fmt.Errorf("bucket %d element %d: %d, want %d", i, k, got, want)
				}
			}
		}
		for k := range count {
			if got, want := tpBuf[4*k], byte(p*(p-1)); got != want {
				return fmt.Errorf("tp element %d: %d, want %d", k, got, want)
			}
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
	for r := range p {
		for i := range buckets {
			grad, bucket := log.Find(t, r, fmt.Sprint("grad ", i)), log.Find(t, r, fmt.Sprint("bucket ", i))
			if bucket.Start < grad.End {
				t.Errorf("rank %d: bucket %d started at %v, before its gradients were written (%v)", r, i, bucket.Start, grad.End)
			}
			if i > 0 {
				if prev := log.Find(t, r, fmt.Sprint("bucket ", i-1)); bucket.Start < prev.End {
					t.Errorf("rank %d: bucket %d started at %v, before bucket %d ended (%v)", r, i, bucket.Start, i-1, prev.End)
				}
			}
		}
		opt := log.Find(t, r, "optimizer")
		if last := log.Find(t, r, fmt.Sprint("bucket ", buckets-1)); opt.Start < last.End {
			t.Errorf("rank %d: the optimizer started at %v, before the last bucket ended (%v)", r, opt.Start, last.End)
		}
		if tpr := log.Find(t, r, "tp allreduce"); opt.Start < tpr.End {
			t.Errorf("rank %d: the optimizer started at %v, before tp's allreduce ended (%v)", r, opt.Start, tpr.End)
		}
		if b0 := log.Find(t, r, "bucket 0"); b0.Start < log.Find(t, r, "backward 0").End {
			t.Errorf("rank %d: bucket 0 started before the compute it waits for", r)
		}
	}
}
