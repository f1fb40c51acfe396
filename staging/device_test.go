package staging

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda"
	"github.com/nexar-go/nexar-go/device/cuda/cudamock"
	"github.com/nexar-go/nexar-go/sim"
)

// The Link on a GPU: the real one where there is one, and the mock driver
// of package cudamock (its kernel launches run device.ReduceHost) where
// there is a C compiler to build it.

// gpuOrSkip opens the first real GPU, or skips with the reason there is
// none.
func gpuOrSkip(t testing.TB) *cuda.Device {
	t.Helper()
	if err := cuda.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	return openOrFail(t, cuda.Open)
}

// mockOrSkip opens the mock driver's device, or skips.
func mockOrSkip(t testing.TB) (*cuda.Device, *cudamock.Mock) {
	t.Helper()
	path, m := cudamock.Start(t)
	return openOrFail(t, func(i int) (*cuda.Device, error) { return cuda.OpenLibrary(path, i) }), m
}

func openOrFail(t testing.TB, open func(int) (*cuda.Device, error)) *cuda.Device {
	t.Helper()
	d, err := open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// onDevices runs body on the real GPU (subtest "gpu", skipped without
// one) and on the mock driver (subtest "mock", skipped without a C
// compiler). large says whether to use large buffers.
func onDevices(t *testing.T, body func(t *testing.T, d *cuda.Device, large bool)) {
	t.Run("gpu", func(t *testing.T) { body(t, gpuOrSkip(t), true) })
	t.Run("mock", func(t *testing.T) {
		d, _ := mockOrSkip(t)
		body(t, d, false)
	})
}

// TestDeviceAllreduce runs every allreduce algorithm of the catalogue with
// p = 2 and 4 ranks in one process on one device, each rank with its own
// Link (its own streams, pinned and device memory) over the simulator with
// host data, and checks every rank's result exactly.
func TestDeviceAllreduce(t *testing.T) {
	onDevices(t, func(t *testing.T, d *cuda.Device, large bool) {
		coll, err := algos.Lookup("allreduce")
		if err != nil {
			t.Fatal(err)
		}
		counts := []int{0, 1, 1001}
		if large {
			counts = append(counts, 1<<20+5)
		}
		types := []device.DType{device.F32, device.BF16, device.F16, device.I32, device.U8, device.F64}
		params := map[string]int{"segment": 4096, "group": 2, "tensors": 3}
		run := 0
		for _, a := range coll.Algorithms {
			if a.Lossy() {
				continue // a compressed allreduce selects on the host: it refuses device memory
			}
			for _, p := range []int{2, 4} {
				for _, count := range counts {
					run++
					dt, op := types[run%len(types)], device.Ops()[run%4]
					seed := uint64(run)
					want := algotest.Reduced(count, dt, op, p, seed)
					_, err := sim.Run(sim.Config{World: p, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
						l, err := NewLink(inner, d, WithChunk(1<<16))
						if err != nil {
							return err
						}
						defer l.Close()
						buf := l.Alloc(count * dt.Size())
						if err := d.CopyFromHost(buf, algotest.Input(count, dt, op, l.Rank(), p, seed)); err != nil {
							return err
						}
						if err := a.Run(ctx, l, algos.Call{Buf: buf, DType: dt, Op: op, Params: params}); err != nil {
							return err
						}
						got := make([]byte, buf.Len())
						if err := d.CopyToHost(got, buf); err != nil {
							return err
						}
						return algotest.Compare(got, want, dt)
					})
					if err != nil {
						t.Errorf("%s p=%d count=%d %s %s (seed %d): %v", a.Name, p, count, dt, op, seed, err)
					}
				}
			}
		}
	})
}

// TestMockLinkMemory checks the Link's memory on the mock driver: Alloc's
// buffers are reused once unreachable, pinned memory and fence events are
// reused across messages, and Close frees every allocation, stream and
// event the Link made.
func TestMockLinkMemory(t *testing.T) {
	d, mock := mockOrSkip(t)
	before := mock.Counts()
	_, err := sim.Run(sim.Config{World: 2, Model: testModel, HostData: true}, func(ctx context.Context, inner algos.Link) error {
		l, err := NewLink(inner, d, WithChunk(1000))
		if err != nil {
			return err
		}
		if err := l.Alloc(4096).(*cuda.Buffer).Free(); err == nil {
			return errors.New("Free of a pooled buffer succeeded")
		}
		// Buffers dropped at once are collected, and their memory comes
		// back for allocations of the same size.
		const allocs = 60
		for i := range allocs {
			_ = l.Alloc(4096)
			if i%10 == 9 {
				runtime.GC()
				time.Sleep(5 * time.Millisecond) // cleanups run on their own goroutine
			}
		}
		if n := mock.Counts().Allocs - before.Allocs; n >= allocs {
			return fmt.Errorf("%d device allocations for %d short-lived buffers: none reused", n, allocs)
		}
		buf := l.Alloc(10_000)
		for range 3 {
			if err := ringU8(ctx, l, buf); err != nil {
				return err
			}
		}
		if n := len(l.pins.all); n > 4 {
			return fmt.Errorf("%d pinned regions for three identical allreduces", n)
		}
		if err := l.Synchronize(); err != nil {
			return err
		}
		if err := l.Close(); err != nil {
			return err
		}
		if l.Synchronize() == nil {
			return errors.New("Synchronize of a closed Link succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after := mock.Counts()
	if after.Allocs != before.Allocs || after.Pinned != before.Pinned || after.Streams != before.Streams || after.Events != before.Events {
		t.Errorf("the Links leaked: before %+v, after %+v", before, after)
	}
}

// ringU8 is a u8 sum ring allreduce of buf.
func ringU8(ctx context.Context, l algos.Link, buf device.Buffer) error {
	return algos.RingAllreduce(ctx, l, buf, device.U8, device.Sum)
}
