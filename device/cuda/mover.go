package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
)

// mover is what a Link needs from the device it stages for: device memory,
// page-locked host memory, copies between them that complete
// asynchronously, and reductions and copies on the device. The GPU
// implements it (gpuMover); tests implement it on host memory, with copies
// that complete late, to exercise the staging logic without a GPU.
//
// Ordering contract, which the Link relies on and the GPU implementation
// provides:
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

// gpuMover implements mover on a GPU with three streams: compute (kernels
// and device-to-device copies), d2h and h2d (the staging copies, one per
// direction so that both copy engines work at once). Before a staging copy
// its stream waits for the compute work queued so far (an event recorded on
// compute), which gives the ordering the mover contract asks for; compute
// never waits for the copy streams, because the Link only issues compute
// work on received data after the receive's fences have completed.
type gpuMover struct {
	dev               *Device
	compute, d2h, h2d *Stream
	mark              *Event // recorded on compute for the copy streams to wait on
	computeSeq        uint64 // compute operations issued
	markSeq           uint64 // computeSeq when mark was last recorded
	waited            map[*Stream]uint64
	events            []*Event // idle fence events
	pool              *memPool
	pinned            map[*byte]*Pinned
}

var _ mover = (*gpuMover)(nil)

func newGPUMover(dev *Device) (*gpuMover, error) {
	m := &gpuMover{dev: dev, waited: map[*Stream]uint64{}, pinned: map[*byte]*Pinned{},
		pool: &memPool{dev: dev, free: map[int][]uint64{}}}
	var err error
	for _, s := range []**Stream{&m.compute, &m.d2h, &m.h2d} {
		if *s, err = dev.NewStream(); err != nil {
			_ = m.close()
			return nil, err
		}
	}
	if m.mark, err = dev.NewEvent(false); err != nil {
		_ = m.close()
		return nil, err
	}
	return m, nil
}

func (m *gpuMover) isDevice(b device.Buffer) bool {
	x, ok := b.(*Buffer)
	return ok && x.mem.dev == m.dev
}

func (m *gpuMover) alloc(n int) (device.Buffer, error) { return m.pool.alloc(n) }

func (m *gpuMover) allocPinned(n int) ([]byte, error) {
	p, err := m.dev.AllocPinned(n)
	if err != nil {
		return nil, err
	}
	b := p.Bytes()
	m.pinned[&b[0]] = p
	return b, nil
}

func (m *gpuMover) freePinned(b []byte) error {
	p := m.pinned[unsafe.SliceData(b)]
	if p == nil {
		return errors.New("cuda: freeing host memory that is not pinned by this link")
	}
	delete(m.pinned, unsafe.SliceData(b))
	return p.Free()
}

// after makes s wait for the compute work issued so far.
func (m *gpuMover) after(s *Stream) error {
	if m.waited[s] == m.computeSeq {
		return nil
	}
	if m.markSeq != m.computeSeq {
		if err := m.compute.Record(m.mark); err != nil {
			return err
		}
		m.markSeq = m.computeSeq
	}
	if err := s.WaitEvent(m.mark); err != nil {
		return err
	}
	m.waited[s] = m.computeSeq
	return nil
}

// fenceOn records a fence event on s.
func (m *gpuMover) fenceOn(s *Stream) (fence, error) {
	var e *Event
	if n := len(m.events); n > 0 {
		e, m.events = m.events[n-1], m.events[:n-1]
	} else {
		var err error
		if e, err = m.dev.NewEvent(false); err != nil {
			return nil, err
		}
	}
	if err := s.Record(e); err != nil {
		return nil, err
	}
	return &gpuFence{m: m, ev: e}, nil
}

func (m *gpuMover) toHost(dst []byte, src device.Buffer) (fence, error) {
	if err := m.after(m.d2h); err != nil {
		return nil, err
	}
	if err := m.d2h.CopyToHost(dst, src); err != nil {
		return nil, err
	}
	return m.fenceOn(m.d2h)
}

func (m *gpuMover) fromHost(dst device.Buffer, src []byte) (fence, error) {
	if err := m.after(m.h2d); err != nil {
		return nil, err
	}
	if err := m.h2d.CopyFromHost(dst, src); err != nil {
		return nil, err
	}
	return m.fenceOn(m.h2d)
}

func (m *gpuMover) reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	m.computeSeq++
	return m.compute.Reduce(dst, src, dt, op)
}

func (m *gpuMover) copy(dst, src device.Buffer) error {
	m.computeSeq++
	return m.compute.Copy(dst, src)
}

func (m *gpuMover) close() error {
	var errs []error
	for _, s := range []*Stream{m.compute, m.d2h, m.h2d} {
		if s != nil {
			errs = append(errs, s.Synchronize(), s.Close())
		}
	}
	for _, e := range append(m.events, m.mark) {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	m.events = nil
	for _, p := range m.pinned {
		errs = append(errs, p.Free())
	}
	m.pinned = nil
	errs = append(errs, m.pool.close())
	return errors.Join(errs...)
}

// gpuFence is a fence event recorded after a staging copy. Once observed
// complete the event goes back to the mover for reuse.
type gpuFence struct {
	m        *gpuMover
	ev       *Event
	finished bool
	err      error
}

func (f *gpuFence) finish(err error) {
	f.finished, f.err = true, err
	if err == nil {
		f.m.events = append(f.m.events, f.ev)
	}
	f.ev = nil
}

func (f *gpuFence) done() (bool, error) {
	if f.finished {
		return true, f.err
	}
	ok, err := f.ev.Done()
	if err != nil {
		f.finish(fmt.Errorf("staging copy: %w", err))
		return true, f.err
	}
	if ok {
		f.finish(nil)
	}
	return ok, nil
}

func (f *gpuFence) wait() error {
	if f.finished {
		return f.err
	}
	err := f.ev.Synchronize()
	if err != nil {
		err = fmt.Errorf("staging copy: %w", err)
	}
	f.finish(err)
	return err
}
