package cuda

import (
	"fmt"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/device"
)

// Benchmarks of the GPU path. They need a GPU and skip without one:
//
//	BenchmarkStaging        host<->device copies from and to pinned memory
//	BenchmarkKernel         every reduction kernel (sum) and the device-to-
//	                        device copy, in one run, as GB/s of bytes read
//	                        plus written; reports f32-sum/copy as a ratio
//
// Run them (on the device machine) with, for example:
//
//	./cuda.test -test.run '^$' -test.bench . -test.benchtime 20x

const benchBytes = 64 << 20

func BenchmarkStaging(b *testing.B) {
	d := gpuOrSkip(b)
	buf, err := d.Alloc(benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	pin, err := d.AllocPinned(benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer pin.Free()
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, dir := range []string{"H2D", "D2H"} {
		b.Run(fmt.Sprintf("%s/pinned/%dMiB", dir, benchBytes>>20), func(b *testing.B) {
			b.SetBytes(benchBytes)
			for b.Loop() {
				if dir == "H2D" {
					err = s.CopyFromHost(buf, pin.Bytes())
				} else {
					err = s.CopyToHost(pin.Bytes(), buf)
				}
				if err == nil {
					err = s.Synchronize()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// gpuTime runs fn reps times on s between two timing events and returns
// the GPU time of one repetition.
func gpuTime(d *Device, s *Stream, reps int, fn func() error) (time.Duration, error) {
	start, err := d.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer start.Close()
	end, err := d.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer end.Close()
	if err := fn(); err != nil { // warm up (and JIT on first use)
		return 0, err
	}
	if err := s.Record(start); err != nil {
		return 0, err
	}
	for range reps {
		if err := fn(); err != nil {
			return 0, err
		}
	}
	if err := s.Record(end); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	el, err := Elapsed(start, end)
	return el / time.Duration(reps), err
}

// BenchmarkKernel measures the sum kernel of every element type and the
// device-to-device copy on 64 MiB operands in the same run, with GPU
// timing events. Bytes are those read plus written (3n for a reduction, 2n
// for a copy), so the two are comparable and copy is the ceiling.
func BenchmarkKernel(b *testing.B) {
	d := gpuOrSkip(b)
	if err := d.LoadKernels(); err != nil {
		b.Fatal(err)
	}
	x, err := d.Alloc(benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	y, err := d.Alloc(benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer y.Free()
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Zeros: no NaN or subnormal slows a kernel down.
	if err := d.CopyFromHost(x, make([]byte, benchBytes)); err != nil {
		b.Fatal(err)
	}
	if err := d.CopyFromHost(y, make([]byte, benchBytes)); err != nil {
		b.Fatal(err)
	}
	var copyRate float64
	b.Run("copy", func(b *testing.B) {
		var per time.Duration
		for b.Loop() {
			if per, err = gpuTime(d, s, 10, func() error { return s.Copy(x, y) }); err != nil {
				b.Fatal(err)
			}
		}
		copyRate = 2 * benchBytes / per.Seconds() / 1e9
		b.ReportMetric(copyRate, "GB/s")
	})
	for _, dt := range device.DTypes() {
		b.Run("sum/"+dt.String(), func(b *testing.B) {
			var per time.Duration
			for b.Loop() {
				if per, err = gpuTime(d, s, 10, func() error { return s.Reduce(x, y, dt, device.Sum) }); err != nil {
					b.Fatal(err)
				}
			}
			rate := 3 * benchBytes / per.Seconds() / 1e9
			b.ReportMetric(rate, "GB/s")
			if copyRate > 0 {
				b.ReportMetric(rate/copyRate, "of-copy")
			}
		})
	}
}
