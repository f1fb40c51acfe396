package algotest

import (
	"fmt"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// The reference registry: for every collective, the data its results are
// checked against, wherever it runs. The simulator's host-data points
// (package sweep), nexar-live's measurements (package live) and the tests
// of real transports (realnet's catalogue test) all take a collective's
// inputs and expected outputs from here, so a collective is checked
// everywhere or nowhere: one that a user registers with algos.Register is
// checked by nexar-sim and nexar-live alike once its reference is
// registered with RegisterReference.

// Case is one call of a collective whose data is checked: what a Reference
// builds every rank's input and expected output from.
type Case struct {
	// Algorithm is the algorithm that runs the call, nil if none is
	// known. A lossy one (algos.Algorithm.Lossy) is held to what its
	// compression of the inputs must leave, which Params set.
	Algorithm *algos.Algorithm
	Params    map[string]int
	DType     device.DType
	Op        device.Op
	Root      int
	World     int
	// Count is the number of elements the call runs on: the used count
	// of the collective's Layout, the whole buffer of an in-place
	// collective, World blocks of the others (see Block).
	Count int
	// Seed seeds the inputs.
	Seed uint64
}

// Block is the per-rank block of a collective whose Count is World equal
// blocks (allgather, alltoall, gather, reduce_scatter, scatter).
func (c Case) Block() int {
	if c.World == 0 {
		return 0
	}
	return c.Count / c.World
}

// Data fills one rank's buffers for a call and says what they must hold
// afterwards. It writes rank's input into send, its send buffer (nil for
// an in-place collective), and buf: its input, or, where buf is only an
// output, a Garbage of what it must end with, so that an element the
// collective never writes is caught. It returns what buf must hold after
// the call in its first len(want) bytes, or nil where the collective
// leaves rank's buf unspecified (a reduce's non-root). The returned bytes
// may be shared between ranks: they are to be read, not written.
//
// A Data may be called for the ranks in any order, from several goroutines
// at once, each rank once or more (a real run restores its inputs before
// every iteration with copies of its own).
type Data func(rank int, send, buf []byte) (want []byte)

// A Reference is what one collective computes, as data: for a call, the
// Data of its ranks. It computes what every rank shares (an allreduce's
// result, the reduction of every rank's input) once, when a rank first
// needs it, and only what the ranks asked for need: a real run asks for
// one rank per process, the simulator for all of them in one process.
type Reference func(c Case) Data

var (
	refsMu sync.RWMutex
	// refs are keyed by collective name: a collective's layout does not
	// say what it computes (scan and allreduce look alike).
	refs = map[string]Reference{}
)

// RegisterReference makes r the reference of the collective called
// collective, replacing any earlier one. The catalogue's collectives have
// theirs built in; a collective registered elsewhere (with
// algos.Register) registers its own, from an init function or at the start
// of main, and is then checked wherever it runs: by nexar-sim's host-data
// points, by nexar-live's measurements and by the tests of real transports.
func RegisterReference(collective string, r Reference) {
	if r == nil {
		panic("algotest: nil reference for collective " + collective)
	}
	refsMu.Lock()
	defer refsMu.Unlock()
	refs[collective] = r
}

// LookupReference returns the reference of the collective called
// collective, and whether it has one.
func LookupReference(collective string) (Reference, bool) {
	refsMu.RLock()
	defer refsMu.RUnlock()
	r, ok := refs[collective]
	return r, ok
}

// HasReference reports whether the collective called collective has a
// reference, that is whether its results can be checked.
func HasReference(collective string) bool {
	_, ok := LookupReference(collective)
	return ok
}

// Check compares buf after a call with want, what rank's Data returned:
// nil if want is nil (nothing to check) or buf begins with it.
func Check(buf, want []byte, dt device.DType) error {
	if want == nil {
		return nil
	}
	if len(buf) < len(want) {
		return fmt.Errorf("buffer of %d bytes, want %d", len(buf), len(want))
	}
	return Compare(buf[:len(want)], want, dt)
}
