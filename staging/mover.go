package staging

import (
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda"
)

// mover is what a Link needs from the device it stages for: device memory,
// page-locked host memory, copies between them that complete
// asynchronously, and reductions and copies on the device. The GPU
// implements it (cuda.Stager, through gpuMover); tests implement it on host
// memory, with copies that complete late, to exercise the staging logic
// without a GPU.
//
// Ordering contract, which the Link relies on and cuda.Stager provides:
//   - a copy to or from the host issued after a reduce or copy on the
//     device sees (or overwrites) that operation's result;
//   - a reduce or copy issued after a fence was observed complete sees the
//     fenced copy's result;
//   - fences of copies in one direction complete in the order the copies
//     were issued.
//
// Operations that conflict otherwise (writing a buffer a pending copy
// reads) are excluded by the algos.Link contract: a buffer is not touched
// while a send or receive of it is in flight.
type mover interface {
	// isDevice reports whether b is device memory of this mover.
	isDevice(b device.Buffer) bool
	// alloc returns n bytes of device memory.
	alloc(n int) (device.Buffer, error)
	// allocPinned and freePinned manage page-locked host memory.
	allocPinned(n int) ([]byte, error)
	freePinned(b []byte) error
	// toHost starts copying device memory src into host memory dst, and
	// fromHost host memory src into device memory dst; the fence says
	// when the copy is done (dst may be read, src reused).
	toHost(dst []byte, src device.Buffer) (fence, error)
	fromHost(dst device.Buffer, src []byte) (fence, error)
	// reduce and copy start dst = dst op src and dst = src on the device.
	reduce(dst, src device.Buffer, dt device.DType, op device.Op) error
	copy(dst, src device.Buffer) error
	// sync waits until the reductions, copies and staging copies issued
	// so far are done.
	sync() error
	// close frees what the mover holds (streams, pooled memory).
	close() error
}

// fence is the completion of an asynchronous copy.
type fence interface {
	// done reports whether the copy has completed, without blocking.
	done() (bool, error)
	// wait blocks until the copy has completed.
	wait() error
}

// gpuMover is the mover of a GPU: a cuda.Stager, whose methods are the
// mover's own.
type gpuMover struct{ s *cuda.Stager }

var _ mover = gpuMover{}

func (m gpuMover) isDevice(b device.Buffer) bool     { return m.s.IsDevice(b) }
func (m gpuMover) allocPinned(n int) ([]byte, error) { return m.s.AllocPinned(n) }
func (m gpuMover) freePinned(b []byte) error         { return m.s.FreePinned(b) }
func (m gpuMover) copy(dst, src device.Buffer) error { return m.s.Copy(dst, src) }
func (m gpuMover) close() error                      { return m.s.Close() }
func (m gpuMover) sync() error                       { return m.s.Synchronize() }

func (m gpuMover) alloc(n int) (device.Buffer, error) {
	b, err := m.s.Alloc(n)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (m gpuMover) reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	return m.s.Reduce(dst, src, dt, op)
}

func (m gpuMover) toHost(dst []byte, src device.Buffer) (fence, error) {
	return gpuFence(m.s.ToHost(dst, src))
}

func (m gpuMover) fromHost(dst device.Buffer, src []byte) (fence, error) {
	return gpuFence(m.s.FromHost(dst, src))
}

// gpuFence is the fence of a cuda.Fence (nil, not a nil *cuda.Fence, on
// error).
func gpuFence(f *cuda.Fence, err error) (fence, error) {
	if err != nil {
		return nil, err
	}
	return cudaFence{f}, nil
}

type cudaFence struct{ f *cuda.Fence }

func (f cudaFence) done() (bool, error) { return f.f.Done() }
func (f cudaFence) wait() error         { return f.f.Wait() }
