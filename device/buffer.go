package device

import (
	"fmt"
	"math/bits"
)

// Buffer is a contiguous region of memory holding elements of some type.
// Algorithms see buffers only through this interface so that the same
// algorithm runs on real host bytes, on phantom buffers in the simulator, and
// on device memory.
//
// A slice of a buffer aliases it: writes through either are seen by both.
type Buffer interface {
	// Len is the size of the buffer in bytes.
	Len() int
	// Slice returns the n bytes starting at off. It panics if the range is
	// outside the buffer, like slicing a Go slice.
	Slice(off, n int) Buffer
}

// Host is a buffer of real bytes in host memory.
type Host []byte

// Len implements Buffer.
func (h Host) Len() int { return len(h) }

// Slice implements Buffer.
func (h Host) Slice(off, n int) Buffer { return h[off : off+n : off+n] }

// Phantom is a buffer that has a size but no bytes. The simulator moves
// phantom buffers to study timing without allocating memory, so a run of
// 100,000 ranks does not hold 100,000 copies of its data.
type Phantom int

// Len implements Buffer.
func (p Phantom) Len() int { return int(p) }

// Slice implements Buffer.
func (p Phantom) Slice(off, n int) Buffer {
	if off < 0 || n < 0 || off+n > int(p) {
		panic(fmt.Sprintf("device: slice [%d:%d] of phantom buffer of %d bytes", off, off+n, int(p)))
	}
	if n >= 256 && n&(n-1) == 0 {
		return phantomPow2[bits.TrailingZeros(uint(n))]
	}
	return Phantom(n)
}

// phantomPow2[k] is Phantom(1<<k) as a Buffer. Converting a Phantom of 256
// bytes or more to an interface allocates (smaller ones the runtime keeps
// boxed); collectives cut their buffers in halves and in blocks, so a
// slice whose length is a power of two is taken from here, boxed once.
var phantomPow2 = func() (t [bits.UintSize - 1]Buffer) {
	for k := range t {
		t[k] = Phantom(1 << k)
	}
	return t
}()

// IsPhantom reports whether b carries no bytes.
func IsPhantom(b Buffer) bool {
	_, ok := b.(Phantom)
	return ok
}

// HostBytes returns the bytes of a host buffer, and false for any other kind.
func HostBytes(b Buffer) ([]byte, bool) {
	h, ok := b.(Host)
	return h, ok
}

// Copy copies src into dst, which must have the same length. Copies that
// involve a phantom buffer move nothing.
func Copy(dst, src Buffer) error {
	if dst.Len() != src.Len() {
		return fmt.Errorf("device: copy of %d bytes into a buffer of %d", src.Len(), dst.Len())
	}
	d, dok := dst.(Host)
	s, sok := src.(Host)
	switch {
	case dok && sok:
		copy(d, s)
		return nil
	case IsPhantom(dst) || IsPhantom(src):
		return nil
	}
	return fmt.Errorf("device: copy from %T to %T is not supported", src, dst)
}

// Reduce computes dst = dst op src element-wise, treating both buffers as
// arrays of dt. Reductions that involve a phantom buffer compute nothing.
func Reduce(dst, src Buffer, dt DType, op Op) error {
	if dst.Len() != src.Len() {
		return fmt.Errorf("device: reduce of %d bytes into a buffer of %d", src.Len(), dst.Len())
	}
	if dst.Len()%dt.Size() != 0 {
		return fmt.Errorf("device: reduce of %d bytes is not a whole number of %s elements", dst.Len(), dt)
	}
	d, dok := dst.(Host)
	s, sok := src.(Host)
	switch {
	case dok && sok:
		ReduceHost(d, s, dt, op)
		return nil
	case IsPhantom(dst) || IsPhantom(src):
		return nil
	}
	return fmt.Errorf("device: reduce from %T into %T is not supported", src, dst)
}
