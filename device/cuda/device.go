package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
)

// Device attributes read at Open (CUdevice_attribute in cuda.h).
const (
	attrMaxThreadsPerBlock = 1
	attrClockRate          = 13 // kHz
	attrSMCount            = 16
	attrPCIBusID           = 33
	attrMemoryClockRate    = 36 // kHz
	attrMemoryBusWidth     = 37 // bits
	attrMaxThreadsPerSM    = 39
	attrAsyncEngineCount   = 40
	attrComputeMajor       = 75
	attrComputeMinor       = 76
	attrMaxBlocksPerSM     = 106
)

// Properties describes a GPU.
type Properties struct {
	// Name is the marketing name ("NVIDIA H100 80GB HBM3").
	Name string
	// Major and Minor are the compute capability (9.0 for Hopper).
	Major, Minor int
	// SMs is the number of streaming multiprocessors.
	SMs int
	// MaxThreadsPerSM and MaxBlocksPerSM bound how many threads and
	// blocks an SM holds at once.
	MaxThreadsPerSM, MaxBlocksPerSM int
	// Memory is the device memory in bytes.
	Memory int64
	// MemoryClockKHz and MemoryBusWidth (bits) give the theoretical
	// memory bandwidth: 2 * clock * width / 8 bytes per second.
	MemoryClockKHz, MemoryBusWidth int
	// CopyEngines is the number of asynchronous copy engines (2 or more
	// lets host-to-device and device-to-host copies run at once).
	CopyEngines int
	// PCIBus is the device's PCI bus number.
	PCIBus int
}

// PeakMemoryBandwidth is the theoretical device memory bandwidth in bytes
// per second (double data rate).
func (p Properties) PeakMemoryBandwidth() float64 {
	return 2 * float64(p.MemoryClockKHz) * 1e3 * float64(p.MemoryBusWidth) / 8
}

// Available returns nil if the CUDA driver loads and sees at least one
// device, and otherwise an error that wraps ErrNoDriver or ErrNoDevice.
// Tests use it to skip.
func Available() error {
	n, err := Count()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: the driver reports no devices", ErrNoDevice)
	}
	return nil
}

// Count returns the number of CUDA devices.
func Count() (int, error) {
	drv, err := getDriver()
	if err != nil {
		return 0, err
	}
	return drv.count()
}

func (drv *driver) count() (int, error) {
	var n int32
	if err := drv.call(drv.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device is one GPU, opened for use by this process: its primary context
// (shared with any other library in the process that uses the same GPU),
// the reduction kernels (compiled from PTX on first use) and a stream for
// the synchronous operations.
//
// A Device's methods may be called from any goroutine: each one makes the
// context current on its OS thread for the duration of the call.
type Device struct {
	drv     *driver
	ordinal int
	dev     int32 // CUdevice
	ctx     uintptr
	props   Properties

	kernelsOnce sync.Once
	kernelsErr  error
	module      uintptr
	kernels     [][]kernelFunc // by dtype, op
	jitLog      []byte         // JIT error log buffer, kept alive with the device

	mu     sync.Mutex // serializes the synchronous operations on stream
	stream *Stream
	closed bool
}

type kernelFunc struct {
	fn        uintptr // CUfunction
	maxBlocks int     // resident blocks of blockThreads on the whole GPU
}

// Open opens device ordinal (0 is the first; CUDA_VISIBLE_DEVICES applies).
func Open(ordinal int) (*Device, error) {
	drv, err := getDriver()
	if err != nil {
		return nil, err
	}
	return drv.open(ordinal)
}

// OpenLibrary is Open with the driver library at path instead of the one
// the dynamic loader finds (libcuda.so.1) or NEXAR_CUDA_LIB names: for a
// driver outside the loader's search path, or the mock driver of package
// cudamock in tests. The library is loaded once per path and process.
func OpenLibrary(path string, ordinal int) (*Device, error) {
	drv, err := libraryDriver(path)
	if err != nil {
		return nil, err
	}
	return drv.open(ordinal)
}

func (drv *driver) open(ordinal int) (*Device, error) {
	n, err := drv.count()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("%w: device %d of %d", ErrNoDevice, ordinal, n)
	}
	d := &Device{drv: drv, ordinal: ordinal}
	if err := drv.call(drv.cuDeviceGet, uintptr(unsafe.Pointer(&d.dev)), uintptr(ordinal)); err != nil {
		return nil, err
	}
	if err := d.readProperties(); err != nil {
		return nil, err
	}
	if err := drv.call(drv.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.dev)); err != nil {
		return nil, err
	}
	s, err := d.NewStream()
	if err != nil {
		_ = drv.call(drv.cuDevicePrimaryCtxRelease, uintptr(d.dev))
		return nil, err
	}
	d.stream = s
	return d, nil
}

func (d *Device) readProperties() error {
	name := make([]byte, 256)
	if err := d.drv.call(d.drv.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(d.dev)); err != nil {
		return err
	}
	d.props.Name = goString(&name[0])
	attrs := []struct {
		attr int
		dst  *int
	}{
		{attrSMCount, &d.props.SMs},
		{attrComputeMajor, &d.props.Major},
		{attrComputeMinor, &d.props.Minor},
		{attrMaxThreadsPerSM, &d.props.MaxThreadsPerSM},
		{attrMaxBlocksPerSM, &d.props.MaxBlocksPerSM},
		{attrMemoryClockRate, &d.props.MemoryClockKHz},
		{attrMemoryBusWidth, &d.props.MemoryBusWidth},
		{attrAsyncEngineCount, &d.props.CopyEngines},
		{attrPCIBusID, &d.props.PCIBus},
	}
	for _, a := range attrs {
		var v int32
		if err := d.drv.call(d.drv.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a.attr), uintptr(d.dev)); err != nil {
			return fmt.Errorf("attribute %d: %w", a.attr, err)
		}
		*a.dst = int(v)
	}
	var mem uint64
	if err := d.drv.call(d.drv.cuDeviceTotalMem, uintptr(unsafe.Pointer(&mem)), uintptr(d.dev)); err != nil {
		return err
	}
	d.props.Memory = int64(mem)
	return nil
}

// Properties returns what the driver says about the device.
func (d *Device) Properties() Properties { return d.props }

// Ordinal is the device's index among the visible devices.
func (d *Device) Ordinal() int { return d.ordinal }

func (d *Device) String() string {
	return fmt.Sprintf("cuda:%d (%s, sm_%d%d, %d SMs)", d.ordinal, d.props.Name, d.props.Major, d.props.Minor, d.props.SMs)
}

// enter makes the device's context current on the calling goroutine's OS
// thread, which it locks until the returned function is called.
func (d *Device) enter() (func(), error) {
	runtime.LockOSThread()
	if d.closed {
		runtime.UnlockOSThread()
		return nil, errors.New("cuda: device is closed")
	}
	if err := d.drv.call(d.drv.cuCtxSetCurrent, d.ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return runtime.UnlockOSThread, nil
}

// Synchronize waits until all work on the device has finished.
func (d *Device) Synchronize() error {
	exit, err := d.enter()
	if err != nil {
		return err
	}
	defer exit()
	return d.drv.call(d.drv.cuCtxSynchronize)
}

// MemoryInfo returns the free and total device memory in bytes.
func (d *Device) MemoryInfo() (free, total int64, err error) {
	exit, err := d.enter()
	if err != nil {
		return 0, 0, err
	}
	defer exit()
	var f, t uint64
	err = d.drv.call(d.drv.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))
	return int64(f), int64(t), err
}

// Close waits for the device's work, unloads the kernels and releases the
// primary context. When no other user in the process holds the context,
// the driver then frees every allocation made on it.
func (d *Device) Close() error {
	if d.closed {
		return nil
	}
	exit, err := d.enter()
	if err != nil {
		return err
	}
	errs := []error{d.drv.call(d.drv.cuCtxSynchronize), d.stream.close()}
	if d.module != 0 {
		errs = append(errs, d.drv.call(d.drv.cuModuleUnload, d.module))
	}
	exit()
	d.closed = true
	errs = append(errs, d.drv.call(d.drv.cuDevicePrimaryCtxRelease, uintptr(d.dev)))
	return errors.Join(errs...)
}

// JIT options (CUjit_option in cuda.h).
const (
	jitInfoLogBuffer       = 3
	jitInfoLogBufferSize   = 4
	jitErrorLogBuffer      = 5
	jitErrorLogBufferSize  = 6
	jitLogBytes            = 1 << 16
	occupancyFallbackBlock = 8
)

// LoadKernels compiles the reduction kernels for the device, if that has
// not been done yet. Reduce calls it; calling it first separates the
// one-time JIT cost (and any compiler error, returned as an *Error with
// the compiler's log) from the first reduction.
func (d *Device) LoadKernels() error {
	d.kernelsOnce.Do(func() { d.kernelsErr = d.loadKernels() })
	return d.kernelsErr
}

func (d *Device) loadKernels() error {
	exit, err := d.enter()
	if err != nil {
		return err
	}
	defer exit()
	image := cBytes(kernelsPTX)
	d.jitLog = make([]byte, 2*jitLogBytes)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize, jitInfoLogBuffer, jitInfoLogBufferSize}
	vals := []uintptr{
		uintptr(unsafe.Pointer(&d.jitLog[0])), jitLogBytes,
		uintptr(unsafe.Pointer(&d.jitLog[jitLogBytes])), jitLogBytes,
	}
	code := d.drv.raw(d.drv.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&d.module)), uintptr(unsafe.Pointer(&image[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(d.jitLog)
	if err := d.drv.result(d.drv.cuModuleLoadDataEx.name, code); err != nil {
		if e, ok := err.(*Error); ok {
			e.Log = goString(&d.jitLog[0])
		}
		return fmt.Errorf("loading the reduction kernels (PTX %s, %s): %w", ptxVersion, ptxTarget, err)
	}
	d.kernels = make([][]kernelFunc, len(device.DTypes()))
	for _, dt := range device.DTypes() {
		d.kernels[dt] = make([]kernelFunc, len(device.Ops()))
		for _, op := range device.Ops() {
			name := cBytes(kernelName(dt, op))
			k := &d.kernels[dt][op]
			if err := d.drv.call(d.drv.cuModuleGetFunction, uintptr(unsafe.Pointer(&k.fn)), d.module, uintptr(unsafe.Pointer(&name[0]))); err != nil {
				return fmt.Errorf("kernel %s: %w", kernelName(dt, op), err)
			}
			var perSM int32
			err := d.drv.call(d.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&perSM)), k.fn, blockThreads, 0)
			if err != nil || perSM < 1 {
				// From the attributes: as many blocks as the SM
				// has threads for, within its block limit.
				perSM = int32(occupancyFallbackBlock)
				if t := d.props.MaxThreadsPerSM / blockThreads; t > 0 {
					perSM = int32(t)
				}
				if b := d.props.MaxBlocksPerSM; b > 0 && int(perSM) > b {
					perSM = int32(b)
				}
			}
			k.maxBlocks = int(perSM) * max(1, d.props.SMs)
		}
	}
	return nil
}

// launchReduce launches the kernel for dt and op on stream.
func (d *Device) launchReduce(stream uintptr, dst, src *Buffer, dt device.DType, op device.Op) error {
	if err := d.LoadKernels(); err != nil {
		return err
	}
	k := d.kernels[dt][op]
	l, err := planReduce(dst.Ptr(), src.Ptr(), dst.Len()/dt.Size(), dt.Size(), k.maxBlocks)
	if err != nil {
		return err
	}
	args := &[5]uint64{l.dst, l.src, l.head, l.nvec, l.n}
	params := &[5]unsafe.Pointer{
		unsafe.Pointer(&args[0]), unsafe.Pointer(&args[1]), unsafe.Pointer(&args[2]),
		unsafe.Pointer(&args[3]), unsafe.Pointer(&args[4]),
	}
	err = d.drv.call(d.drv.cuLaunchKernel, k.fn, uintptr(l.blocks), 1, 1, uintptr(l.threads), 1, 1,
		0, stream, uintptr(unsafe.Pointer(&params[0])), 0)
	runtime.KeepAlive(args)
	runtime.KeepAlive(params)
	return err
}

// Reduce computes dst = dst op src on the device and waits for it. dst and
// src are buffers of this device; see Stream.Reduce.
func (d *Device) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.stream.Reduce(dst, src, dt, op); err != nil {
		return err
	}
	return d.stream.Synchronize()
}

// Copy copies device buffer src into device buffer dst, of equal length,
// and waits for it.
func (d *Device) Copy(dst, src device.Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.stream.Copy(dst, src); err != nil {
		return err
	}
	return d.stream.Synchronize()
}

// CopyToHost copies device buffer src into dst and waits for it.
func (d *Device) CopyToHost(dst []byte, src device.Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.stream.CopyToHost(dst, src); err != nil {
		return err
	}
	return d.stream.Synchronize()
}

// CopyFromHost copies src into device buffer dst and waits for it.
func (d *Device) CopyFromHost(dst device.Buffer, src []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.stream.CopyFromHost(dst, src); err != nil {
		return err
	}
	return d.stream.Synchronize()
}
