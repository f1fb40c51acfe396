package realnet

import (
	"slices"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// scratchPool keeps host memory the link is done with for the next use
// of as many bytes: the scratch buffers algorithms release (algos.Release)
// and the link memory that bulk payloads arriving before their receive
// were read into (match.go). A collective at a given size asks for the
// same buffers every call, and taking them afresh cost a 64 MiB allreduce
// on 4 ranks thousands of page faults per call (each page zeroed by the
// kernel), with the garbage collector's work besides. A sync.Pool would
// lose its buffers at every collection, which those very allocations
// triggered; the free list keeps the scratchPoolMax bytes released last.
type scratchPool struct {
	mu   sync.Mutex
	free []device.Host // released, the oldest first
	held int           // bytes in free
}

// scratchPoolMax is the most memory a link keeps for reuse: what a 64 MiB
// allreduce's scratch and late payloads take on any algorithm of the
// catalogue (direct's, the most, 3 x 64 MiB), with room to spare.
const scratchPoolMax = 256 << 20

// get returns a buffer of n bytes: the one of that length released last,
// with its old contents, or a new one.
func (s *scratchPool) get(n int) device.Host {
	if n > 0 {
		s.mu.Lock()
		for i := len(s.free) - 1; i >= 0; i-- {
			if b := s.free[i]; len(b) == n {
				s.free = slices.Delete(s.free, i, i+1)
				s.held -= n
				s.mu.Unlock()
				return b
			}
		}
		s.mu.Unlock()
	}
	return make(device.Host, n)
}

// put keeps b, which nobody uses any more, for a later get of its
// length, and lets the oldest buffers go past scratchPoolMax.
func (s *scratchPool) put(b device.Host) {
	if len(b) == 0 || len(b) > scratchPoolMax {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = append(s.free, b[:len(b):len(b)])
	s.held += len(b)
	for s.held > scratchPoolMax {
		s.held -= len(s.free[0])
		s.free = slices.Delete(s.free, 0, 1)
	}
}

// drop lets every buffer go (the link is closing).
func (s *scratchPool) drop() {
	s.mu.Lock()
	s.free, s.held = nil, 0
	s.mu.Unlock()
}

var _ algos.ScratchPool = (*Link)(nil)

// Scratch implements algos.ScratchPool with host memory released before,
// where there is some of length n.
func (l *Link) Scratch(n int) device.Buffer { return l.scratch.get(n) }

// Release implements algos.ScratchPool. Buffers of other kinds than host
// memory are left to whoever made them.
func (l *Link) Release(buf device.Buffer) {
	if b, ok := buf.(device.Host); ok {
		l.scratch.put(b)
	}
}
