package algos

import "github.com/nexar-go/nexar-go/device"

// ScratchPool is implemented by links that keep the scratch memory of
// algorithms for reuse from one call to the next: realnet's, where taking
// tens of MiB afresh per collective costs a page fault per 4 KiB page
// (the kernel zeroing each) and garbage collection. Algorithms reach it
// through Scratch and Release, never directly.
type ScratchPool interface {
	// Scratch returns a buffer of n bytes of the kind Alloc returns, whose
	// contents are unspecified: a buffer released earlier comes back with
	// the bytes it held.
	Scratch(n int) device.Buffer
	// Release hands back a buffer Scratch returned, which its caller no
	// longer uses: no request on it is pending (an abandoned one may still
	// write into it), and nothing of it is read or written afterwards.
	Release(buf device.Buffer)
}

// scratchPoolOf returns the ScratchPool of l or of the link it decorates
// (see Unwrapper), and whether there is one.
func scratchPoolOf(l Link) (ScratchPool, bool) {
	for l != nil {
		if s, ok := l.(ScratchPool); ok {
			return s, true
		}
		l = unwrap(l)
	}
	return nil, false
}

// Scratch returns n bytes of scratch memory for an algorithm on l: from
// l's ScratchPool (or that of the link l decorates), whose contents are
// whatever an earlier call left there, else l.Alloc(n). An algorithm
// writes every byte of scratch it reads, so that its results never depend
// on which it got, and hands it back with Release when it is done.
func Scratch(l Link, n int) device.Buffer {
	if s, ok := scratchPoolOf(l); ok {
		return s.Scratch(n)
	}
	return l.Alloc(n)
}

// Release hands scratch memory that Scratch returned for l back to l's
// ScratchPool, where there is one, for a later call to reuse; elsewhere it
// does nothing (the garbage collector takes the buffer). Call it only when
// every request on the buffers has completed: on the path where a Wait
// failed, requests may be abandoned with their transfers still writing
// into the buffer, so there the buffer is left to the garbage collector.
func Release(l Link, bufs ...device.Buffer) {
	s, ok := scratchPoolOf(l)
	if !ok {
		return
	}
	for _, b := range bufs {
		if b != nil {
			s.Release(b)
		}
	}
}
