package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/device"
)

// gpuOrSkip opens the first real GPU, or skips with the reason there is
// none.
func gpuOrSkip(t testing.TB) *Device {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("device: %v, compute %d.%d, %d SMs, %.0f GB/s peak memory bandwidth",
		d, d.props.Major, d.props.Minor, d.props.SMs, d.props.PeakMemoryBandwidth()/1e9)
	return d
}

// mockOrSkip opens the mock driver's device, or skips.
func mockOrSkip(t testing.TB) *Device {
	t.Helper()
	drv := mockDriver(t)
	d, err := drv.open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
		for _, e := range takeLaunchErrors() {
			t.Error(e)
		}
	})
	return d
}

// onDevices runs body on the real GPU (subtest "gpu", skipped without
// one) and on the mock driver (subtest "mock", skipped without a C
// compiler). large says whether the device can take large buffers (the
// mock interprets its kernels, slowly).
func onDevices(t *testing.T, body func(t *testing.T, d *Device, large bool)) {
	t.Run("gpu", func(t *testing.T) { body(t, gpuOrSkip(t), true) })
	t.Run("mock", func(t *testing.T) { body(t, mockOrSkip(t), false) })
}

func TestNoDriver(t *testing.T) {
	_, err := loadDriver([]string{"/nonexistent/libcuda.so.1"})
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "/nonexistent/libcuda.so.1") {
		t.Errorf("missing library: %v", err)
	}
	// A library that loads but is not the driver.
	_, err = loadDriver([]string{"libc.so.6"})
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "no cuInit") {
		t.Errorf("libc as the driver: %v", err)
	}
	// This machine: whatever it has, the answer is nil or a typed error.
	if err := Available(); err != nil {
		if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) {
			t.Errorf("Available: untyped error %v", err)
		}
		if _, err2 := Open(0); !errors.Is(err2, ErrNoDriver) && !errors.Is(err2, ErrNoDevice) {
			t.Errorf("Open(0) without a device: %v", err2)
		}
		if _, err2 := Count(); err2 == nil && errors.Is(err, ErrNoDriver) {
			t.Error("Count succeeded without a driver")
		}
		t.Logf("this machine: %v", err)
	}
}

func TestLibraryNames(t *testing.T) {
	t.Setenv(libEnv, "")
	os.Unsetenv(libEnv)
	if got := libraryNames(); len(got) != 2 || got[0] != "libcuda.so.1" {
		t.Errorf("default library names %v", got)
	}
	t.Setenv(libEnv, "/opt/driver/libcuda.so.1")
	if got := libraryNames(); len(got) != 1 || got[0] != "/opt/driver/libcuda.so.1" {
		t.Errorf("%s set: library names %v", libEnv, got)
	}
}

func TestErrorType(t *testing.T) {
	cases := []struct {
		e        *Error
		text     string
		noDevice bool
		noDriver bool
	}{
		{&Error{Call: "cuInit", Code: 100, Name: "CUDA_ERROR_NO_DEVICE", Description: "no CUDA-capable device is detected"},
			"cuda: cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected", true, false},
		{&Error{Call: "cuDeviceGet", Code: 101}, "cuda: cuDeviceGet: error 101", true, false},
		{&Error{Call: "cuInit", Code: 34, Name: "CUDA_ERROR_STUB_LIBRARY"}, "cuda: cuInit: CUDA_ERROR_STUB_LIBRARY (34)", false, true},
		{&Error{Call: "cuModuleLoadDataEx", Code: 218, Name: "CUDA_ERROR_INVALID_PTX", Log: "line 3: syntax error"},
			"cuda: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218)\nline 3: syntax error", false, false},
	}
	for _, c := range cases {
		err := fmt.Errorf("wrapped: %w", c.e)
		if c.e.Error() != c.text || errors.Is(err, ErrNoDevice) != c.noDevice || errors.Is(err, ErrNoDriver) != c.noDriver {
			t.Errorf("%q: no device %v, no driver %v", c.e.Error(), errors.Is(err, ErrNoDevice), errors.Is(err, ErrNoDriver))
		}
	}
}

// TestMockDriver checks the binding against the mock driver: results and
// out-parameters, error names from the driver, a device that is absent,
// and that Close frees what was created.
func TestMockDriver(t *testing.T) {
	drv := mockDriver(t)
	before := mockCounters()
	mock.ctl.SetDevices(0)
	_, err := loadDriver([]string{mock.drv.cuInit.name}) // not a library path: fails to load
	if !errors.Is(err, ErrNoDriver) {
		t.Errorf("bad path: %v", err)
	}
	var ce *Error
	err = drv.call(drv.cuInit, 0)
	if !errors.As(err, &ce) || ce.Name != "CUDA_ERROR_NO_DEVICE" || !errors.Is(err, ErrNoDevice) {
		t.Errorf("cuInit with no devices: %v", err)
	}
	mock.ctl.SetDevices(1)
	if err := drv.call(drv.cuInit, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.open(1); !errors.Is(err, ErrNoDevice) {
		t.Errorf("open(1) of 1 device: %v", err)
	}
	d, err := drv.open(0)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Properties()
	if p.Name != "Mock GPU" || p.SMs != 2 || p.Major != 7 || p.Memory != 1<<30 || p.CopyEngines != 2 || p.PeakMemoryBandwidth() != 256e9 {
		t.Errorf("properties %+v", p)
	}
	if free, total, err := d.MemoryInfo(); err != nil || free != 1<<29 || total != 1<<30 {
		t.Errorf("MemoryInfo: %d, %d, %v", free, total, err)
	}
	// A call with no context current fails with the driver's name for it.
	err = drv.call(drv.cuCtxSetCurrent, 0)
	if err == nil {
		err = drv.call(drv.cuCtxSynchronize)
	}
	if !errors.As(err, &ce) || ce.Code != 201 || ce.Call != "cuCtxSynchronize" || ce.Description != "invalid device context" {
		t.Errorf("call without a context: %v", err)
	}
	if err := d.Synchronize(); err != nil {
		t.Errorf("Synchronize enters the context: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Synchronize(); err == nil {
		t.Error("Synchronize after Close succeeded")
	}
	after := mockCounters()
	if after.Allocs != before.Allocs || after.Streams != before.Streams || after.Retained != before.Retained {
		t.Errorf("leaked: before %+v, after %+v", before, after)
	}
}

// TestMockJITError checks that a module the JIT rejects is an *Error
// carrying the compiler's log.
func TestMockJITError(t *testing.T) {
	d := mockOrSkip(t)
	saved := kernelsPTX
	kernelsPTX = "not ptx"
	defer func() { kernelsPTX = saved }()
	err := d.LoadKernels()
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != cudaErrorInvalidPTX || !strings.Contains(ce.Log, "mock ptxas") {
		t.Fatalf("LoadKernels of bad PTX: %v", err)
	}
}

// TestDeviceMemory covers allocation, slicing, copies both ways and on the
// device, pinned memory, streams and events, use after free, and calls
// from many goroutines at once (each must make the context current on its
// own thread).
func TestDeviceMemory(t *testing.T) {
	onDevices(t, func(t *testing.T, d *Device, large bool) {
		const n = 4096
		a, err := d.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		b, err := d.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i * 13)
		}
		if err := d.CopyFromHost(a, want); err != nil {
			t.Fatal(err)
		}
		if err := d.Copy(b.Slice(100, 1000), a.Slice(200, 1000)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 1000)
		if err := d.CopyToHost(got, b.Slice(100, 1000)); err != nil || !bytes.Equal(got, want[200:1200]) {
			t.Fatalf("copy round trip through a slice: %v", err)
		}
		if s := a.Slice(10, 20).(*Buffer).Slice(5, 5).(*Buffer); s.Ptr() != a.Ptr()+15 || s.Len() != 5 || s.Device() != d {
			t.Errorf("slice of a slice: ptr %#x len %d", s.Ptr(), s.Len())
		}
		if err := d.Copy(a.Slice(0, 10), b.Slice(0, 11)); err == nil {
			t.Error("copy of unequal lengths succeeded")
		}
		if err := d.Copy(a, device.Host(want)); err == nil {
			t.Error("device Copy from host memory succeeded")
		}

		p, err := d.AllocPinned(n)
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		start, _ := d.NewEvent(true)
		end, _ := d.NewEvent(true)
		if err := s.Record(start); err != nil {
			t.Fatal(err)
		}
		if err := s.CopyToHost(p.Bytes(), a); err != nil {
			t.Fatal(err)
		}
		if err := s.Record(end); err != nil {
			t.Fatal(err)
		}
		if err := end.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if done, err := end.Done(); !done || err != nil {
			t.Errorf("event after Synchronize: %v, %v", done, err)
		}
		if el, err := Elapsed(start, end); err != nil || el < 0 {
			t.Errorf("Elapsed: %v, %v", el, err)
		}
		if !bytes.Equal(p.Bytes(), want) {
			t.Error("copy into pinned memory")
		}
		plain, _ := d.NewEvent(false)
		if _, err := Elapsed(start, plain); err == nil {
			t.Error("Elapsed of an event without timing succeeded")
		}
		for _, e := range []*Event{start, end, plain} {
			if err := e.Close(); err != nil {
				t.Error(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := p.Free(); err != nil || p.Bytes() != nil {
			t.Errorf("pinned Free: %v", err)
		}

		var wg sync.WaitGroup
		errs := make([]error, 16)
		for g := range errs {
			wg.Go(func() {
				buf := make([]byte, 64)
				for range 20 {
					if err := d.CopyToHost(buf, a.Slice(64*g, 64)); err != nil {
						errs[g] = err
						return
					}
					if !bytes.Equal(buf, want[64*g:64*g+64]) {
						errs[g] = errors.New("wrong bytes")
						return
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Errorf("concurrent copies: %v", err)
		}

		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyToHost(got, b.Slice(0, 1000)); !errors.Is(err, ErrFreed) {
			t.Errorf("use after free: %v", err)
		}
		if _, err := d.AllocPinned(0); err == nil {
			t.Error("empty pinned allocation succeeded")
		}
		if z, err := d.Alloc(0); err != nil || z.Len() != 0 || z.Free() != nil {
			t.Errorf("empty allocation: %v", err)
		}
	})
}

// TestDeviceReduce compares every kernel with device.ReduceHost on random
// data, special values included, over lengths that exercise the vector
// bulk and the scalar head and tail, offsets that are equally and unequally
// aligned, and dst == src. f32 and f64 must match exactly (one operation
// per element, the same one); f16 and bf16 too (the same f32 operation and
// round to nearest even); any NaN matches any NaN.
func TestDeviceReduce(t *testing.T) {
	onDevices(t, func(t *testing.T, d *Device, large bool) {
		const seed = 3
		rng := rand.New(rand.NewPCG(seed, 4))
		// Offsets of dst and src in elements: aligned, equally and
		// unequally misaligned.
		lengths, offsets := []int{1, 2, 3, 15, 16, 17, 100, 1027, 1<<20 + 3}, [][2]int{{0, 0}, {1, 1}, {0, 1}}
		if !large { // the mock interprets every thread of every launch
			lengths, offsets = []int{1, 17, 1027}, [][2]int{{0, 0}, {0, 1}}
			if testing.Short() {
				lengths = []int{17}
			}
		}
		for _, dt := range device.DTypes() {
			sz := dt.Size()
			for _, op := range device.Ops() {
				for _, n := range lengths {
					for i, o := range offsets {
						if n > 1<<20 && i > 0 {
							break // one large case per kernel, aligned
						}
						o := [2]int{o[0] * sz, o[1] * sz}
						where := fmt.Sprintf("%s %s n=%d offsets %v (seed %d)", dt, op, n, o, seed)
						dh := make([]byte, n*sz)
						sh := make([]byte, n*sz)
						randomElements(rng, dh, dt)
						randomElements(rng, sh, dt)
						want := append([]byte(nil), dh...)
						device.ReduceHost(want, sh, dt, op)
						da, err := d.Alloc(n*sz + 16)
						if err != nil {
							t.Fatal(err)
						}
						sa, err := d.Alloc(n*sz + 16)
						if err != nil {
							t.Fatal(err)
						}
						dst, src := da.Slice(o[0], n*sz), sa.Slice(o[1], n*sz)
						if err := d.CopyFromHost(dst, dh); err != nil {
							t.Fatal(err)
						}
						if err := d.CopyFromHost(src, sh); err != nil {
							t.Fatal(err)
						}
						if err := d.Reduce(dst, src, dt, op); err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						got := make([]byte, n*sz)
						if err := d.CopyToHost(got, dst); err != nil {
							t.Fatal(err)
						}
						if err := sameElements(got, want, dt); err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						// dst op dst.
						want2 := append([]byte(nil), got...)
						device.ReduceHost(want2, got, dt, op)
						if err := d.Reduce(dst, dst, dt, op); err != nil {
							t.Fatal(err)
						}
						if err := d.CopyToHost(got, dst); err != nil {
							t.Fatal(err)
						}
						if err := sameElements(got, want2, dt); err != nil {
							t.Fatalf("%s, dst op dst: %v", where, err)
						}
						da.Free()
						sa.Free()
					}
				}
			}
		}
		// Invalid reductions are errors, not launches.
		a, _ := d.Alloc(64)
		defer a.Free()
		bad := []struct {
			dst, src device.Buffer
			dt       device.DType
		}{
			{a.Slice(0, 8), a.Slice(8, 16), device.F32},
			{a.Slice(0, 6), a.Slice(8, 6), device.F32},
			{a.Slice(2, 8), a.Slice(16, 8), device.F32},
			{a.Slice(0, 8), device.Host(make([]byte, 8)), device.F32},
		}
		for _, c := range bad {
			if err := d.Reduce(c.dst, c.src, c.dt, device.Sum); err == nil {
				t.Errorf("Reduce of %d bytes into %d (%T) succeeded", c.src.Len(), c.dst.Len(), c.src)
			}
		}
	})
}
