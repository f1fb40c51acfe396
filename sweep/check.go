package sweep

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// HasCheck reports whether points of c can run with host data: whether
// its results can be checked, which algotest's reference registry says
// (algotest.RegisterReference adds the reference of a collective
// registered elsewhere).
func HasCheck(c *algos.Collective) bool { return algotest.HasReference(c.Name) }

// Case is the call of p as algotest's references see it: what every
// rank's input and expected output are built from, with p's seed.
func (p Point) Case() algotest.Case {
	_, _, used := p.Layout()
	return algotest.Case{
		Algorithm: p.Algorithm, Params: p.Params,
		DType: p.DType, Op: p.Op, Root: p.Root, World: p.World,
		Count: used, Seed: p.Seed,
	}
}

// check fills the buffers of one host-data point with each rank's input
// and verifies them after the collective, against the collective's
// reference. The simulator runs one rank at a time, but a check does not
// assume it.
type check struct {
	data  algotest.Data
	dt    device.DType
	wants [][]byte // by rank, set by fill
}

// newCheck returns the check of p, with the inputs of seed.
func newCheck(p Point, seed uint64) (*check, error) {
	ref, ok := algotest.LookupReference(p.Collective.Name)
	if !ok {
		return nil, fmt.Errorf("collective %s has no host-data check", p.Collective.Name)
	}
	q := p
	q.Seed = seed
	return &check{data: ref(q.Case()), dt: p.DType, wants: make([][]byte, p.World)}, nil
}

// fill writes rank's input into the call's buffers (Send, or Buf for
// in-place collectives) where they are host memory; verify reports the
// rest.
func (k *check) fill(rank int, c *algos.Call) {
	k.wants[rank] = k.data(rank, hostOrNil(c.Send), hostOrNil(c.Buf))
}

// verify returns an error if rank's buffers do not hold what the
// collective must leave there.
func (k *check) verify(rank int, c algos.Call) error {
	want := k.wants[rank]
	if want == nil {
		return nil
	}
	if c.Buf == nil {
		return fmt.Errorf("no buffer")
	}
	h, ok := device.HostBytes(c.Buf)
	if !ok {
		return fmt.Errorf("buffer is %T, not host memory", c.Buf)
	}
	return algotest.Check(h, want, k.dt)
}

// hostOrNil returns the bytes of b, or nil if b is nil or not host memory.
func hostOrNil(b device.Buffer) []byte {
	if b == nil {
		return nil
	}
	h, _ := device.HostBytes(b)
	return h
}
