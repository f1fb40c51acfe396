package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
)

// Stager is the GPU side of staging device buffers through host memory,
// as package staging's Link does to run collectives on GPU buffers over a
// transport that moves host memory: pooled device memory, page-locked host
// memory, asynchronous copies between them, and reductions and copies on
// the device, on three streams of its own: compute (kernels and
// device-to-device copies), d2h and h2d (the staging copies, one per
// direction so that both copy engines work at once).
//
// Ordering, which a stager's user can rely on:
//   - a copy to or from the host issued after a Reduce or Copy sees (or
//     overwrites) that operation's result: before a staging copy its stream
//     waits for the compute work queued so far (an event recorded on
//     compute);
//   - a Reduce or Copy issued after a copy's Fence was observed complete
//     sees the copy's result (the fence's event has completed, so the data
//     is in place);
//   - the fences of copies in one direction complete in the order the
//     copies were issued (one stream per direction).
//
// Compute never waits for the copy streams: the user issues compute work on
// received data only after the receive's fences have completed. Work that
// conflicts otherwise (writing a buffer a pending copy reads) is the user's
// to avoid.
//
// A Stager is used by one goroutine at a time.
type Stager struct {
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

// NewStager creates a Stager's streams and event on dev; Close frees them
// with the Stager's memory.
func NewStager(dev *Device) (*Stager, error) {
	m := &Stager{dev: dev, waited: map[*Stream]uint64{}, pinned: map[*byte]*Pinned{},
		pool: &memPool{dev: dev, free: map[int][]uint64{}}}
	var err error
	for _, s := range []**Stream{&m.compute, &m.d2h, &m.h2d} {
		if *s, err = dev.NewStream(); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	if m.mark, err = dev.NewEvent(false); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// IsDevice reports whether b is memory of the Stager's device.
func (m *Stager) IsDevice(b device.Buffer) bool {
	x, ok := b.(*Buffer)
	return ok && x.mem.dev == m.dev
}

// Alloc returns n bytes of device memory from the Stager's pool: the
// memory is reused by a later Alloc of the same size once the buffer is
// unreachable, and freed by Close (Buffer.Free refuses it).
func (m *Stager) Alloc(n int) (*Buffer, error) { return m.pool.alloc(n) }

// AllocPinned returns n bytes of page-locked host memory, to be given back
// with FreePinned (or freed by Close).
func (m *Stager) AllocPinned(n int) ([]byte, error) {
	p, err := m.dev.AllocPinned(n)
	if err != nil {
		return nil, err
	}
	b := p.Bytes()
	m.pinned[&b[0]] = p
	return b, nil
}

// FreePinned frees memory from AllocPinned. No copy may be using it.
func (m *Stager) FreePinned(b []byte) error {
	p := m.pinned[unsafe.SliceData(b)]
	if p == nil {
		return errors.New("cuda: freeing host memory that this stager did not pin")
	}
	delete(m.pinned, unsafe.SliceData(b))
	return p.Free()
}

// after makes s wait for the compute work issued so far.
func (m *Stager) after(s *Stream) error {
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
func (m *Stager) fenceOn(s *Stream) (*Fence, error) {
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
	return &Fence{m: m, ev: e}, nil
}

// ToHost starts copying device memory src into host memory dst, which
// should be pinned (from AllocPinned) for the copy to be asynchronous. The
// Fence says when the copy is done: dst may be read, src reused.
func (m *Stager) ToHost(dst []byte, src device.Buffer) (*Fence, error) {
	if err := m.after(m.d2h); err != nil {
		return nil, err
	}
	if err := m.d2h.CopyToHost(dst, src); err != nil {
		return nil, err
	}
	return m.fenceOn(m.d2h)
}

// FromHost starts copying host memory src (pinned, as for ToHost) into
// device memory dst. The Fence says when the copy is done: dst may be used
// by later work, src reused.
func (m *Stager) FromHost(dst device.Buffer, src []byte) (*Fence, error) {
	if err := m.after(m.h2d); err != nil {
		return nil, err
	}
	if err := m.h2d.CopyFromHost(dst, src); err != nil {
		return nil, err
	}
	return m.fenceOn(m.h2d)
}

// Reduce queues dst = dst op src on the compute stream.
func (m *Stager) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	m.computeSeq++
	return m.compute.Reduce(dst, src, dt, op)
}

// Copy queues dst = src (device to device) on the compute stream.
func (m *Stager) Copy(dst, src device.Buffer) error {
	m.computeSeq++
	return m.compute.Copy(dst, src)
}

// Synchronize waits until the work queued on the Stager's streams
// (reductions, copies) is done.
func (m *Stager) Synchronize() error {
	var errs []error
	for _, s := range []*Stream{m.compute, m.d2h, m.h2d} {
		errs = append(errs, s.Synchronize())
	}
	return errors.Join(errs...)
}

// Close waits for the Stager's streams and frees them, its events, its
// pinned memory and its pool of device memory, in use or not.
func (m *Stager) Close() error {
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

// Fence is the completion of a Stager's copy: an event recorded after the
// copy. Once observed complete the event goes back to the Stager for reuse.
type Fence struct {
	m        *Stager
	ev       *Event
	finished bool
	err      error
}

func (f *Fence) finish(err error) {
	f.finished, f.err = true, err
	if err == nil {
		f.m.events = append(f.m.events, f.ev)
	}
	f.ev = nil
}

// Done reports whether the copy has completed, without blocking.
func (f *Fence) Done() (bool, error) {
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

// Wait blocks until the copy has completed.
func (f *Fence) Wait() error {
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
