package staging

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/device/cuda"
)

// DefaultChunk is the staging chunk of a Link: messages are copied between
// the GPU and pinned host memory, and handed to the inner link, this many
// bytes at a time. At PCIe 4 and 5 speeds (25-50 GB/s) a 1 MiB copy takes
// 20-40 µs, long against the few microseconds of launching it and short
// against a message of many MiB, so a large message pipelines over many
// chunks while a small one is a single chunk with no pipelining overhead.
const DefaultChunk = 1 << 20

// Option configures a Link.
type Option func(*linkConfig) error

type linkConfig struct {
	chunk int
}

// WithChunk sets the staging chunk size in bytes (DefaultChunk if not
// given). Both ends of every message must use the same chunk size.
func WithChunk(bytes int) Option {
	return func(c *linkConfig) error {
		if bytes <= 0 {
			return fmt.Errorf("staging: chunk of %d bytes", bytes)
		}
		c.chunk = bytes
		return nil
	}
}

// Link is an algos.Link whose buffers live on a GPU. It decorates an inner
// Link that moves host memory (realnet's QUIC link, or the simulator with
// host data): Alloc returns device memory; Reduce runs the reduction kernel
// and Copy a device-to-device copy, both on the Link's compute stream;
// Isend and Irecv stage device buffers through page-locked host memory:
//
//	send:    device --D2H copy--> pinned --inner.Isend--> network
//	receive: network --inner.Irecv--> pinned --H2D copy--> device
//
// A message is cut into chunks (WithChunk); each chunk is its own inner
// message, so the copy of one chunk overlaps the network transfer of its
// neighbours: a send's first chunk is on the wire while the second is
// still being copied off the GPU, and a receive copies its first chunk to
// the GPU while the second arrives. Both ends cut a message by their own
// buffer's length, so a message through a Link must be received into a
// buffer of exactly its length (other links allow a longer one; here the
// chunks would not match, and a staged receive would copy stale bytes
// past the message's end to the device).
//
// Host (device.Host) and phantom buffers are cut into the same chunks but
// handed to the inner link as they are, with no copy: a message's two ends
// may be of different kinds (an algorithm sends from the caller's buffer
// into a peer's Alloc scratch), so the cut must not depend on the kind.
// Reduce and Copy of host buffers are the inner link's; a reduction that
// mixes host and device buffers is an error, so algorithms run on a Link
// with device buffers.
//
// Progress. The inner link is only ever called from the goroutine using
// the Link, as the algos.Link contract requires, so staging advances
// inside the Link's own methods: every call posts the send chunks whose
// device-to-host copies have finished, and Wait first posts every pending
// send chunk (waiting for the local copies, which always finish) and then
// waits for the network. Every inner receive is posted in Irecv, for the
// whole message, and every inner send as soon as its data is on the host,
// so the Link never waits on the network while holding back a message the
// peer could need: it cannot deadlock where the algorithm on an unstaged
// link would not. The price is pinned memory for every message in flight
// (from a pool that grows to the high-water mark and is freed by Close),
// rather than two fixed chunk buffers per message.
//
// Like any algos.Link, a Link is used by one goroutine at a time; it does
// not implement algos.Spawner (non-blocking collectives through algos.Comm
// then run deferred, in order).
type Link struct {
	inner algos.Link
	m     mover
	chunk int
	pins  pinnedPool
	sends []*stagedOp // sends not yet completed, in Isend order

	// onRelease, when set (tests), sees every pinned region returned to
	// the pool, before it can be reused.
	onRelease func([]byte)
	closed    bool
}

var _ algos.Link = (*Link)(nil)

// NewLink returns a Link that stages the device buffers of dev through
// inner, through a cuda.Stager of its own (three streams on dev: compute
// and one per copy direction, pooled device memory, pinned memory); Close
// frees them.
func NewLink(inner algos.Link, dev *cuda.Device, opts ...Option) (*Link, error) {
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	s, err := cuda.NewStager(dev)
	if err != nil {
		return nil, err
	}
	return newLink(inner, gpuMover{s}, cfg), nil
}

func configure(opts []Option) (linkConfig, error) {
	cfg := linkConfig{chunk: DefaultChunk}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func newLink(inner algos.Link, m mover, cfg linkConfig) *Link {
	return &Link{inner: inner, m: m, chunk: cfg.chunk, pins: pinnedPool{m: m, free: map[int][][]byte{}}}
}

// Inner returns the link the Link stages through.
func (l *Link) Inner() algos.Link { return l.inner }

// Rank implements algos.Link.
func (l *Link) Rank() int { return l.inner.Rank() }

// Size implements algos.Link.
func (l *Link) Size() int { return l.inner.Size() }

// Now implements algos.Link with the inner link's clock.
func (l *Link) Now() time.Duration { return l.inner.Now() }

// Alloc implements algos.Link with device memory, pooled by the Link: a
// buffer's memory is reused by a later Alloc once the buffer is unreachable,
// and freed by Close. It panics if the device is out of memory (the Link
// interface has no error for Alloc).
func (l *Link) Alloc(n int) device.Buffer {
	b, err := l.m.alloc(n)
	if err != nil {
		panic(fmt.Errorf("staging: Link.Alloc(%d): %w", n, err))
	}
	return b
}

// Reduce implements algos.Link: on the GPU for device buffers (queued on
// the compute stream; later staging copies and reductions are ordered
// after it), by the inner link for host buffers.
func (l *Link) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	l.postSends(false)
	dd, sd := l.m.isDevice(dst), l.m.isDevice(src)
	switch {
	case dd && sd:
		return l.m.reduce(dst, src, dt, op)
	case !dd && !sd:
		return l.inner.Reduce(dst, src, dt, op)
	}
	return fmt.Errorf("staging: reduce of a %s buffer into a %s buffer", kind(l.m, src), kind(l.m, dst))
}

// Copy implements algos.Link: device to device on the compute stream, host
// to host by the inner link, and between host and device by a staging copy
// that Copy waits for.
func (l *Link) Copy(dst, src device.Buffer) error {
	l.postSends(false)
	if dst.Len() != src.Len() {
		return fmt.Errorf("staging: copy of %d bytes into a buffer of %d", src.Len(), dst.Len())
	}
	dd, sd := l.m.isDevice(dst), l.m.isDevice(src)
	var f fence
	var err error
	switch {
	case dd && sd:
		return l.m.copy(dst, src)
	case !dd && !sd:
		return l.inner.Copy(dst, src)
	case dd:
		h, ok := device.HostBytes(src)
		if !ok {
			return fmt.Errorf("staging: copy from a %T into device memory", src)
		}
		f, err = l.m.fromHost(dst, h)
	default:
		h, ok := device.HostBytes(dst)
		if !ok {
			return fmt.Errorf("staging: copy from device memory into a %T", dst)
		}
		f, err = l.m.toHost(h, src)
	}
	if err != nil {
		return err
	}
	return f.wait()
}

func kind(m mover, b device.Buffer) string {
	if m.isDevice(b) {
		return "device"
	}
	return fmt.Sprintf("%T", b)
}

// stagedOp is a send or receive through the Link: the request Isend and
// Irecv return. Every message is cut into chunks the same way whatever its
// buffer, since the receiver's buffer may be of another kind than the
// sender's (an algorithm sends from the caller's buffer into a peer's
// Alloc scratch); only device buffers are staged through pinned memory,
// host and phantom buffers are handed to the inner link slice by slice.
type stagedOp struct {
	l      *Link
	send   bool
	staged bool // buf is device memory, moved through pin
	peer   int
	tag    algos.Tag
	buf    device.Buffer
	pin    []byte // pinned host memory of a staged message, from the pool
	chunks []chunk
	// next is, for a send, the number of chunks handed to the inner link;
	// for a receive, the number that have arrived (and, if staged, whose
	// host-to-device copy has started).
	next int
	done bool
	err  error
}

type chunk struct {
	off, n int
	fence  fence         // the staging copy (send: D2H, receive: H2D), if any
	req    algos.Request // the inner send or receive
}

type matchKey struct {
	peer int
	tag  algos.Tag
}

// newOp makes the op for a message of buf, with its chunks and, if buf is
// device memory, its pinned memory.
func (l *Link) newOp(send bool, peer int, tag algos.Tag, buf device.Buffer) *stagedOp {
	o := &stagedOp{l: l, send: send, peer: peer, tag: tag, buf: buf, staged: l.m.isDevice(buf)}
	n := buf.Len()
	if l.closed {
		o.err = errors.New("staging: use of a closed Link")
		return o
	}
	if o.staged {
		pin, err := l.pins.get(n)
		if err != nil {
			o.err = err
			return o
		}
		o.pin = pin
	}
	o.chunks = make([]chunk, 0, max(1, (n+l.chunk-1)/l.chunk))
	for off := 0; off < n || off == 0; off += l.chunk {
		o.chunks = append(o.chunks, chunk{off: off, n: min(l.chunk, n-off)})
		if n == 0 {
			break // an empty message is one empty inner message
		}
	}
	return o
}

// inner is the buffer the inner link moves for chunk c: its slice of the
// pinned memory if the message is staged, of the message's buffer if not.
func (o *stagedOp) inner(c *chunk) device.Buffer {
	if o.staged {
		return device.Host(o.pin[c.off : c.off+c.n : c.off+c.n])
	}
	return o.buf.Slice(c.off, c.n)
}

// Isend implements algos.Link. A device buffer is copied to pinned memory
// chunk by chunk; each chunk is sent as soon as its copy is done.
func (l *Link) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	l.postSends(false)
	o := l.newOp(true, dst, tag, buf)
	if o.err != nil {
		return o
	}
	if o.staged {
		for i := range o.chunks {
			c := &o.chunks[i]
			if c.n == 0 {
				continue
			}
			f, err := l.m.toHost(o.pin[c.off:c.off+c.n], buf.Slice(c.off, c.n))
			if err != nil {
				o.fail(err)
				return o
			}
			c.fence = f
		}
	}
	l.sends = append(l.sends, o)
	l.postSends(false)
	return o
}

// Irecv implements algos.Link. Every chunk's inner receive is posted now;
// Wait copies the chunks of a device buffer to the device as they arrive.
func (l *Link) Irecv(src int, tag algos.Tag, buf device.Buffer) algos.Request {
	l.postSends(false)
	o := l.newOp(false, src, tag, buf)
	if o.err != nil {
		return o
	}
	for i := range o.chunks {
		c := &o.chunks[i]
		c.req = l.inner.Irecv(src, tag, o.inner(c))
	}
	return o
}

// postSends hands to the inner link the send chunks whose copies to the
// host are done, in order: chunks of one message in order, and messages to
// one (peer, tag) in Isend order, since the receiver matches them in that
// order. With block it waits for the copies, so that every pending send is
// fully posted when it returns.
func (l *Link) postSends(block bool) {
	var held map[matchKey]bool // keys with an earlier message not fully posted
	for _, o := range l.sends {
		if o.err != nil || o.next == len(o.chunks) {
			continue
		}
		k := matchKey{o.peer, o.tag}
		if held[k] {
			continue
		}
		for o.next < len(o.chunks) {
			c := &o.chunks[o.next]
			if c.fence != nil {
				ready, err := true, error(nil)
				if block {
					err = c.fence.wait()
				} else {
					ready, err = c.fence.done()
				}
				if err != nil {
					o.fail(err)
					break
				}
				if !ready {
					break
				}
				c.fence = nil
			}
			c.req = l.inner.Isend(o.peer, o.tag, o.inner(c))
			o.next++
		}
		if o.err == nil && o.next < len(o.chunks) {
			if held == nil {
				held = map[matchKey]bool{}
			}
			held[k] = true
		}
	}
}

// Wait implements algos.Link. It first posts every pending send chunk of
// the Link (waiting only for local copies), then, for the receives among
// reqs, waits for their chunks one at a time, round robin, starting each
// staged chunk's copy to the device as soon as it has arrived; then it
// waits for those copies, and for the sends among reqs.
func (l *Link) Wait(ctx context.Context, reqs ...algos.Request) error {
	ops := make([]*stagedOp, 0, len(reqs))
	for _, r := range reqs {
		o, ok := r.(*stagedOp)
		if !ok {
			return fmt.Errorf("staging: Wait on a request (%T) this Link did not return", r)
		}
		if o.l != l {
			return errors.New("staging: Wait on a request of another Link")
		}
		ops = append(ops, o)
	}
	l.postSends(true)
	defer l.sweep()

	var recvs []*stagedOp
	var inner []algos.Request
	for _, o := range ops {
		switch {
		case o.err != nil:
			return o.err
		case o.done:
		case o.send:
			for _, c := range o.chunks {
				inner = append(inner, c.req)
			}
		case !o.staged:
			// Unstaged receives need no copy: wait for them with the sends.
			recvs = append(recvs, o)
			for _, c := range o.chunks {
				inner = append(inner, c.req)
			}
			o.next = len(o.chunks)
		default:
			recvs = append(recvs, o)
		}
	}
	for busy := true; busy; {
		busy = false
		for _, o := range recvs {
			if o.next == len(o.chunks) {
				continue
			}
			busy = true
			c := &o.chunks[o.next]
			if err := l.inner.Wait(ctx, c.req); err != nil {
				o.fail(err)
				return err
			}
			if c.n > 0 {
				f, err := l.m.fromHost(o.buf.Slice(c.off, c.n), o.pin[c.off:c.off+c.n])
				if err != nil {
					o.fail(err)
					return err
				}
				c.fence = f
			}
			o.next++
		}
	}
	for _, o := range recvs {
		for i := range o.chunks {
			if f := o.chunks[i].fence; f != nil {
				if err := f.wait(); err != nil {
					o.fail(err)
					return err
				}
				o.chunks[i].fence = nil
			}
		}
	}
	if len(inner) > 0 {
		if err := l.inner.Wait(ctx, inner...); err != nil {
			for _, o := range ops {
				if !o.done {
					o.fail(err)
				}
			}
			return err
		}
	}
	for _, o := range ops {
		o.finish()
	}
	return nil
}

// finish completes o and returns its pinned memory to the pool.
func (o *stagedOp) finish() {
	if o.done {
		return
	}
	o.done = true
	o.l.pins.put(o.pin, o.l.onRelease)
	o.pin = nil
}

// fail records o's error. Its pinned memory is not reused: the inner link
// may still be using it for an abandoned request (Close frees it).
func (o *stagedOp) fail(err error) {
	if o.err == nil {
		o.err = err
	}
	o.pin = nil
}

// sweep drops completed and failed sends from the pending list.
func (l *Link) sweep() {
	kept := l.sends[:0]
	for _, o := range l.sends {
		if !o.done && o.err == nil {
			kept = append(kept, o)
		}
	}
	clear(l.sends[len(kept):])
	l.sends = kept
}

// Synchronize waits until the device work the Link has queued is done:
// Reduce and Copy of device buffers return once the work is queued on the
// GPU, and a collective may end with one, so a caller that times a
// collective, or reads its result other than through the Link, calls
// Synchronize first (as nccl-tests synchronizes its stream).
func (l *Link) Synchronize() error {
	if l.closed {
		return errors.New("staging: use of a closed Link")
	}
	return l.m.sync()
}

// Close frees the Link's pinned memory, its pooled device memory (Alloc's
// buffers must no longer be used) and its streams. Close the inner link
// first, so that nothing still reads or writes the pinned memory of an
// abandoned request, and the Device last.
func (l *Link) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	return errors.Join(l.pins.close(), l.m.close())
}

// pinnedPool keeps the pinned host memory of a Link: regions of a power of
// two bytes (64 KiB or more), reused for later messages once a message
// completes.
type pinnedPool struct {
	m    mover
	free map[int][][]byte // idle regions by size
	all  [][]byte
}

const minPinned = 64 << 10

func pinnedClass(n int) int {
	if n <= minPinned {
		return minPinned
	}
	return 1 << bits.Len(uint(n-1))
}

// get returns pinned memory of n bytes (nil for 0).
func (p *pinnedPool) get(n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	c := pinnedClass(n)
	if f := p.free[c]; len(f) > 0 {
		b := f[len(f)-1]
		p.free[c] = f[:len(f)-1]
		return b[:n], nil
	}
	b, err := p.m.allocPinned(c)
	if err != nil {
		return nil, err
	}
	p.all = append(p.all, b)
	return b[:n], nil
}

// put returns b, from get, to the pool.
func (p *pinnedPool) put(b []byte, onRelease func([]byte)) {
	if b == nil {
		return
	}
	b = b[:cap(b)]
	if onRelease != nil {
		onRelease(b)
	}
	p.free[len(b)] = append(p.free[len(b)], b)
}

func (p *pinnedPool) close() error {
	var errs []error
	for _, b := range p.all {
		errs = append(errs, p.m.freePinned(b))
	}
	p.all, p.free = nil, nil
	return errors.Join(errs...)
}
