package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
)

// memory is one device allocation, shared by the Buffers that slice it.
type memory struct {
	dev   *Device
	ptr   uint64 // CUdeviceptr; 0 for an empty allocation
	size  int
	freed atomic.Bool
	pool  *memPool // the pool it returns to when unreachable, or nil
}

// Buffer is device memory: a device.Buffer whose bytes live on a GPU. A
// Slice aliases the buffer it was cut from. Algorithms move and combine
// Buffers through package staging's Link, or directly with a Device, Stream
// or Stager.
type Buffer struct {
	mem    *memory
	off, n int
}

var _ device.Buffer = (*Buffer)(nil)

// Len implements device.Buffer.
func (b *Buffer) Len() int { return b.n }

// Slice implements device.Buffer: the n bytes from off, aliasing b. It
// panics if the range is outside b, like slicing a Go slice.
func (b *Buffer) Slice(off, n int) device.Buffer {
	if off < 0 || n < 0 || off+n > b.n {
		panic(fmt.Sprintf("cuda: slice [%d:%d] of a device buffer of %d bytes", off, off+n, b.n))
	}
	return &Buffer{mem: b.mem, off: b.off + off, n: n}
}

// Ptr is the device address of the buffer's first byte.
func (b *Buffer) Ptr() uint64 { return b.mem.ptr + uint64(b.off) }

// Device is the GPU the buffer is on.
func (b *Buffer) Device() *Device { return b.mem.dev }

// Free frees the allocation b was cut from (so every slice of it) right
// away. It must not be in use by queued work. Buffers from a Stager's
// Alloc (which a staging Link's Alloc returns) are pooled: Free returns an
// error for them; they are reused once unreachable and freed by the
// Stager's Close.
func (b *Buffer) Free() error {
	m := b.mem
	if m.pool != nil {
		return errors.New("cuda: Free of a pooled buffer (from Stager.Alloc)")
	}
	if m.freed.Swap(true) || m.ptr == 0 {
		return nil
	}
	exit, err := m.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return m.dev.drv.call(m.dev.drv.cuMemFree, uintptr(m.ptr))
}

// Alloc allocates n bytes of device memory (uninitialised). Free it with
// Buffer.Free, or let Close of the device release it.
func (d *Device) Alloc(n int) (*Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cuda: allocation of %d bytes", n)
	}
	ptr, err := d.memAlloc(n)
	if err != nil {
		return nil, err
	}
	return &Buffer{mem: &memory{dev: d, ptr: ptr, size: n}, n: n}, nil
}

func (d *Device) memAlloc(n int) (uint64, error) {
	if n == 0 {
		return 0, nil // the driver refuses empty allocations
	}
	exit, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer exit()
	var ptr uint64
	if err := d.drv.call(d.drv.cuMemAlloc, uintptr(unsafe.Pointer(&ptr)), uintptr(n)); err != nil {
		return 0, fmt.Errorf("allocating %d bytes on %v: %w", n, d, err)
	}
	return ptr, nil
}

// buffer returns b as a live Buffer of d.
func (d *Device) buffer(b device.Buffer) (*Buffer, error) {
	x, ok := b.(*Buffer)
	switch {
	case !ok:
		return nil, fmt.Errorf("cuda: %T is not device memory", b)
	case x.mem.dev != d:
		return nil, fmt.Errorf("cuda: buffer of %v used on %v", x.mem.dev, d)
	case x.mem.freed.Load():
		return nil, ErrFreed
	}
	return x, nil
}

// memPool keeps the device allocations of a Stager, by size, for reuse: a
// Buffer from Stager.Alloc returns its memory here when the garbage collector
// finds it unreachable (runtime.AddCleanup), and the next Alloc of the same
// size takes it. The memory is only ever touched through the Stager's
// streams, whose ordering makes reuse safe (see Stager).
type memPool struct {
	dev    *Device
	mu     sync.Mutex
	free   map[int][]uint64
	all    []uint64
	closed bool
}

type reclaim struct {
	pool *memPool
	size int
	ptr  uint64
}

func (p *memPool) alloc(n int) (*Buffer, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("cuda: allocation from a closed stager")
	}
	var ptr uint64
	if f := p.free[n]; len(f) > 0 {
		ptr, p.free[n] = f[len(f)-1], f[:len(f)-1]
	}
	p.mu.Unlock()
	if ptr == 0 && n > 0 {
		var err error
		if ptr, err = p.dev.memAlloc(n); err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.all = append(p.all, ptr)
		p.mu.Unlock()
	}
	m := &memory{dev: p.dev, ptr: ptr, size: n, pool: p}
	if ptr != 0 {
		runtime.AddCleanup(m, func(r reclaim) { r.pool.put(r.size, r.ptr) }, reclaim{p, n, ptr})
	}
	return &Buffer{mem: m, n: n}, nil
}

func (p *memPool) put(size int, ptr uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.free[size] = append(p.free[size], ptr)
	}
}

// close frees every allocation of the pool, in use or not.
func (p *memPool) close() error {
	p.mu.Lock()
	all := p.all
	p.all, p.free, p.closed = nil, nil, true
	p.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	exit, err := p.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	var errs []error
	for _, ptr := range all {
		errs = append(errs, p.dev.drv.call(p.dev.drv.cuMemFree, uintptr(ptr)))
	}
	return errors.Join(errs...)
}

// Pinned is page-locked host memory: the GPU's copy engines read and write
// it directly, so copies to and from it run at full PCIe speed and
// asynchronously. Bytes views it as host bytes.
type Pinned struct {
	dev   *Device
	p     unsafe.Pointer
	n     int
	freed bool
}

// AllocPinned allocates n bytes of page-locked host memory.
func (d *Device) AllocPinned(n int) (*Pinned, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: pinned allocation of %d bytes", n)
	}
	exit, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer exit()
	p := &Pinned{dev: d, n: n}
	if err := d.drv.call(d.drv.cuMemAllocHost, uintptr(unsafe.Pointer(&p.p)), uintptr(n)); err != nil {
		return nil, fmt.Errorf("allocating %d pinned bytes: %w", n, err)
	}
	return p, nil
}

// Bytes returns the memory as host bytes (a device.Host), valid until Free.
func (p *Pinned) Bytes() device.Host {
	if p.freed {
		return nil
	}
	return unsafe.Slice((*byte)(p.p), p.n)
}

// Len is the size in bytes.
func (p *Pinned) Len() int { return p.n }

// Free frees the memory. No copy may be using it.
func (p *Pinned) Free() error {
	if p.freed {
		return nil
	}
	exit, err := p.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	p.freed = true
	return p.dev.drv.call(p.dev.drv.cuMemFreeHost, uintptr(p.p))
}
