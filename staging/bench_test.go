package staging

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda"
)

// benchBytes is the message size of the benchmarks.
const benchBytes = 64 << 20

// BenchmarkAllreduceBusbw runs allreduce of 64 MiB of f32 over realnet on
// loopback with p ranks in this process, on GPU buffers through the
// staging Link and on CPU buffers, and reports nccl-tests' bus bandwidth
// 2(p-1)/p * bytes / time. Loopback in one process is not a network: the
// figure compares the two buffer kinds on the same transport, it is not a
// cluster's busbw. The CPU variants run without a GPU.
func BenchmarkAllreduceBusbw(b *testing.B) {
	coll, err := algos.Lookup("allreduce")
	if err != nil {
		b.Fatal(err)
	}
	count := benchBytes / 4
	for _, p := range []int{2, 4} {
		for _, name := range []string{"ring", "pipelined_ring"} {
			a, err := coll.Algorithm(name)
			if err != nil {
				b.Fatal(err)
			}
			for _, kind := range []string{"gpu", "cpu"} {
				b.Run(fmt.Sprintf("p=%d/%s/%s/%dMiB", p, name, kind, benchBytes>>20), func(b *testing.B) {
					var d *cuda.Device
					if kind == "gpu" {
						d = gpuOrSkip(b)
					}
					links := loopbackWorld(b, p)
					type rank struct {
						l   algos.Link
						buf device.Buffer
					}
					ranks := make([]rank, p)
					for r, inner := range links {
						in := algotest.Input(count, device.F32, device.Sum, r, p, 1)
						ranks[r] = rank{l: inner, buf: device.Host(in)}
						if d != nil {
							sl, err := NewLink(inner, d)
							if err != nil {
								b.Fatal(err)
							}
							b.Cleanup(func() { sl.Close() })
							buf := sl.Alloc(len(in))
							if err := d.CopyFromHost(buf, in); err != nil {
								b.Fatal(err)
							}
							ranks[r] = rank{l: sl, buf: buf}
						}
					}
					seq := uint64(0)
					allreduce := func() error {
						seq++
						errs := make([]error, p)
						var wg sync.WaitGroup
						for r := range ranks {
							wg.Go(func() {
								ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
								defer cancel()
								errs[r] = a.Run(ctx, algos.Scoped(ranks[r].l, 0, seq), algos.Call{Buf: ranks[r].buf, DType: device.F32, Op: device.Sum})
							})
						}
						wg.Wait()
						for r, err := range errs {
							if err != nil {
								return fmt.Errorf("rank %d: %w", r, err)
							}
						}
						return nil
					}
					if err := allreduce(); err != nil { // warm up: connections, pinned memory, JIT
						b.Fatal(err)
					}
					start := time.Now()
					n := 0
					for b.Loop() {
						if err := allreduce(); err != nil {
							b.Fatal(err)
						}
						n++
					}
					per := time.Since(start).Seconds() / float64(n)
					b.ReportMetric(coll.BusFactor(p)*benchBytes/per/1e9, "busbw-GB/s")
				})
			}
		}
	}
}
