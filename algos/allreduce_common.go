package algos

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/nexar-go/nexar-go/device"
)

// AllreduceFunc is the signature of every in-place allreduce algorithm: on
// return each rank's buf holds the element-wise reduction with op of every
// rank's buf.
type AllreduceFunc func(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error

// Tags of the allreduce algorithms (the low 16 bits; see tags.go). Only one
// algorithm runs per operation, but algorithms that run others (rs_ag,
// hierarchical, bucketed) rely on their phases having tags of their own.
const (
	tagPipelinedReduceScatter Tag = 0x6000
	tagFoldIn                 Tag = 0x6100
	tagFoldOut                Tag = 0x6101
	tagHalvingReduceScatter   Tag = 0x6200 // + round
	tagDoublingAllgather      Tag = 0x6280 // + round
	tagRecursiveDoubling      Tag = 0x6300 // + round
	tagTreeReduce             Tag = 0x6400
	tagTreeBroadcast          Tag = 0x6401
	tagRSAGReduceScatter      Tag = 0x6500
	tagDirect                 Tag = 0x6600
)

// allreducePrologue checks buf and reports whether there is nothing to do
// (one rank, or no elements), which every algorithm short-cuts the same way
// so that all ranks agree without communicating.
func allreducePrologue(l Link, buf device.Buffer, dt device.DType) (count int, done bool, err error) {
	if err := checkBuffer(buf, dt); err != nil {
		return 0, false, err
	}
	count = buf.Len() / dt.Size()
	return count, l.Size() == 1 || count == 0, nil
}

// elems returns elements [off, off+n) of buf.
func elems(buf device.Buffer, dt device.DType, off, n int) device.Buffer {
	return buf.Slice(off*dt.Size(), n*dt.Size())
}

// floorPow2 returns the largest power of two not above p (p >= 1).
func floorPow2(p int) int { return 1 << (bits.Len(uint(p)) - 1) }

// fold is how the recursive algorithms run on a world that is not a power
// of two: p2 = floorPow2(p) ranks take part, and e = p - p2 "extra" ranks
// first fold their buffer into a partner and get the result back at the
// end. The layout is MPICH's: among the first 2e ranks, even rank 2i is
// extra and gives its buffer to 2i+1, which takes part as virtual rank i;
// rank r >= 2e takes part as virtual rank r - e.
//
// The layout matters on the alpha-beta model: the folded ranks (virtual
// ranks 0..e-1) run one fold behind the others. The extra ranks have lower
// ranks than any rank that does not fold, so ties at time 0 go to the fold,
// and the rounds run from the largest distance down. For recursive
// doubling, whose rounds take as long as the fold, that keeps every
// message on the critical path from waiting and the time equals the
// reference's closed form for every p. Halving-doubling's rounds are
// shorter than the fold, so ranks that did not fold can run ahead and
// occupy the port of a rank about to receive from a folded one; see
// HalvingDoublingAllreduce.
type fold struct{ p, p2, e int }

func newFold(p int) fold {
	p2 := floorPow2(p)
	return fold{p: p, p2: p2, e: p - p2}
}

// Fold is the catalogue's fold of a world of P ranks that is not a power
// of two onto P2, the largest power of two not above it, as
// halving_doubling and recursive_doubling fold: the Extra = P - P2 even
// ranks below 2*Extra fold into the odd rank above them. It is exported
// for writers of schedules (package schedule) that must place the ranks
// as the catalogue does, so that a schedule exported from an algorithm
// runs as the algorithm runs.
type Fold struct{ f fold }

// NewFold returns the fold of p ranks.
func NewFold(p int) Fold { return Fold{newFold(p)} }

// P2 is the power of two the world folds onto.
func (f Fold) P2() int { return f.f.p2 }

// Extra is how many ranks fold into a neighbour (P - P2).
func (f Fold) Extra() int { return f.f.e }

// VRank returns the virtual rank of r among the P2, or -1 if r folds.
func (f Fold) VRank(r int) int { return f.f.vrank(r) }

// Rank returns the rank of virtual rank v.
func (f Fold) Rank(v int) int { return f.f.rank(v) }

// vrank returns the virtual rank of r, or -1 if r is an extra rank.
func (f fold) vrank(r int) int {
	switch {
	case r >= 2*f.e:
		return r - f.e
	case r%2 == 1:
		return r / 2
	}
	return -1
}

// rank returns the real rank of virtual rank v.
func (f fold) rank(v int) int {
	if v < f.e {
		return 2*v + 1
	}
	return v + f.e
}

// in folds the extra ranks' buffers into their partners: an extra rank
// sends its buffer, its partner reduces it into its own. scratch must hold
// buf.
func (f fold) in(ctx context.Context, l Link, buf, scratch device.Buffer, dt device.DType, op device.Op) error {
	r := l.Rank()
	switch {
	case r >= 2*f.e:
		return nil
	case r%2 == 0:
		return Send(ctx, l, r+1, tagFoldIn, buf)
	}
	tmp := scratch.Slice(0, buf.Len())
	if err := Recv(ctx, l, r-1, tagFoldIn, tmp); err != nil {
		return err
	}
	return l.Reduce(buf, tmp, dt, op)
}

// out sends the result back to the extra ranks.
func (f fold) out(ctx context.Context, l Link, buf device.Buffer) error {
	r := l.Rank()
	switch {
	case r >= 2*f.e:
		return nil
	case r%2 == 0:
		return Recv(ctx, l, r+1, tagFoldOut, buf)
	}
	return Send(ctx, l, r-1, tagFoldOut, buf)
}

// checkPositive returns an error unless the parameter is at least 1.
func checkPositive(algo, param string, v int) error {
	if v < 1 {
		return fmt.Errorf("algos: %s: parameter %q is %d, want at least 1", algo, param, v)
	}
	return nil
}
