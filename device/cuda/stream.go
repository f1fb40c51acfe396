package cuda

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/nexar-go/nexar-go/device"
)

// Stream flags and event flags (cuda.h).
const (
	streamNonBlocking    = 1 // CU_STREAM_NON_BLOCKING: no implicit sync with the legacy default stream
	eventDisableTiming   = 2 // CU_EVENT_DISABLE_TIMING: cheaper to record and query
	eventDefaultWithTime = 0
)

// Stream is a queue of work on a device: kernels and copies run in the
// order they were queued, and concurrently with other streams' work. The
// methods queue work and return; Synchronize waits for it.
type Stream struct {
	dev *Device
	h   uintptr // CUstream
}

// NewStream creates a stream that does not synchronize with the legacy
// default stream.
func (d *Device) NewStream() (*Stream, error) {
	exit, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer exit()
	s := &Stream{dev: d}
	if err := d.drv.call(d.drv.cuStreamCreate, uintptr(unsafe.Pointer(&s.h)), streamNonBlocking); err != nil {
		return nil, err
	}
	return s, nil
}

// Close destroys the stream once its queued work has finished.
func (s *Stream) Close() error {
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.close()
}

// close destroys the stream; the context must be current.
func (s *Stream) close() error {
	if s.h == 0 {
		return nil
	}
	err := s.dev.drv.call(s.dev.drv.cuStreamDestroy, s.h)
	s.h = 0
	return err
}

// Synchronize waits until the stream's queued work has finished.
func (s *Stream) Synchronize() error {
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.drv.call(s.dev.drv.cuStreamSynchronize, s.h)
}

// Reduce queues dst = dst op src element-wise on device buffers of equal
// length holding elements of dt, with the semantics of device.ReduceHost
// (integers wrap, floats round to nearest even, f16 and bf16 combine in
// f32, min and max propagate NaNs and order -0 below +0). The element
// offsets must be multiples of the element size; the kernel reads and
// writes 16 bytes at a time where dst and src are equally aligned.
func (s *Stream) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	if err := checkReduce(dst.Len(), src.Len(), dt, op); err != nil {
		return err
	}
	d, err := s.dev.buffer(dst)
	if err != nil {
		return err
	}
	sb, err := s.dev.buffer(src)
	if err != nil {
		return err
	}
	if d.n == 0 {
		return nil
	}
	if err := s.dev.LoadKernels(); err != nil {
		return err
	}
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.launchReduce(s.h, d, sb, dt, op)
}

// Copy queues a copy of device buffer src into device buffer dst.
func (s *Stream) Copy(dst, src device.Buffer) error {
	if dst.Len() != src.Len() {
		return fmt.Errorf("cuda: copy of %d bytes into a buffer of %d", src.Len(), dst.Len())
	}
	d, err := s.dev.buffer(dst)
	if err != nil {
		return err
	}
	sb, err := s.dev.buffer(src)
	if err != nil {
		return err
	}
	if d.n == 0 {
		return nil
	}
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.drv.call(s.dev.drv.cuMemcpyDtoDAsync, uintptr(d.Ptr()), uintptr(sb.Ptr()), uintptr(d.n), s.h)
}

// CopyToHost queues a copy of device buffer src into dst. If dst is
// pinned (Pinned.Bytes) the copy is asynchronous and dst must not be
// touched until the stream is synchronized; for ordinary Go memory the
// driver returns only once the copy is done.
func (s *Stream) CopyToHost(dst []byte, src device.Buffer) error {
	if len(dst) != src.Len() {
		return fmt.Errorf("cuda: copy of %d device bytes into %d host bytes", src.Len(), len(dst))
	}
	sb, err := s.dev.buffer(src)
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.drv.call(s.dev.drv.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(&dst[0])), uintptr(sb.Ptr()), uintptr(len(dst)), s.h)
}

// CopyFromHost queues a copy of src into device buffer dst. If src is
// pinned the copy is asynchronous and src must not be modified until the
// stream is synchronized; ordinary Go memory is staged by the driver
// before the call returns.
func (s *Stream) CopyFromHost(dst device.Buffer, src []byte) error {
	if dst.Len() != len(src) {
		return fmt.Errorf("cuda: copy of %d host bytes into %d device bytes", len(src), dst.Len())
	}
	d, err := s.dev.buffer(dst)
	if err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.drv.call(s.dev.drv.cuMemcpyHtoDAsync, uintptr(d.Ptr()), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), s.h)
}

// Record queues e on the stream: e completes when the work queued before
// it has.
func (s *Stream) Record(e *Event) error {
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.drv.call(s.dev.drv.cuEventRecord, e.h, s.h)
}

// WaitEvent makes work queued on s after this call wait until e (as last
// recorded) completes.
func (s *Stream) WaitEvent(e *Event) error {
	exit, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return s.dev.drv.call(s.dev.drv.cuStreamWaitEvent, s.h, e.h, 0)
}

// Event marks a point in a stream's work: to wait for it from the host, to
// make another stream wait for it, or (timing events) to measure the time
// between two of them on the GPU's clock.
type Event struct {
	dev    *Device
	h      uintptr // CUevent
	timing bool
}

// NewEvent creates an event; timing events can be passed to Elapsed, the
// others are cheaper.
func (d *Device) NewEvent(timing bool) (*Event, error) {
	exit, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer exit()
	e := &Event{dev: d, timing: timing}
	flags := eventDisableTiming
	if timing {
		flags = eventDefaultWithTime
	}
	if err := d.drv.call(d.drv.cuEventCreate, uintptr(unsafe.Pointer(&e.h)), uintptr(flags)); err != nil {
		return nil, err
	}
	return e, nil
}

// Synchronize waits until the event has completed.
func (e *Event) Synchronize() error {
	exit, err := e.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return e.dev.drv.call(e.dev.drv.cuEventSynchronize, e.h)
}

// Done reports whether the event has completed, without waiting.
func (e *Event) Done() (bool, error) {
	exit, err := e.dev.enter()
	if err != nil {
		return false, err
	}
	defer exit()
	switch code := e.dev.drv.raw(e.dev.drv.cuEventQuery, e.h); code {
	case cudaSuccess:
		return true, nil
	case cudaErrorNotReady:
		return false, nil
	default:
		return false, e.dev.drv.result(e.dev.drv.cuEventQuery.name, code)
	}
}

// Close destroys the event.
func (e *Event) Close() error {
	exit, err := e.dev.enter()
	if err != nil {
		return err
	}
	defer exit()
	return e.dev.drv.call(e.dev.drv.cuEventDestroy, e.h)
}

// Elapsed returns the GPU time between two completed timing events
// (resolution about half a microsecond).
func Elapsed(start, end *Event) (time.Duration, error) {
	if !start.timing || !end.timing {
		return 0, fmt.Errorf("cuda: Elapsed of an event created without timing")
	}
	exit, err := start.dev.enter()
	if err != nil {
		return 0, err
	}
	defer exit()
	var ms float32
	if err := start.dev.drv.call(start.dev.drv.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), start.h, end.h); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * 1e6), nil
}
