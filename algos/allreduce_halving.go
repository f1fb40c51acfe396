package algos

import (
	"context"
	"slices"

	"github.com/nexar-go/nexar-go/device"
)

// HalvingDoublingAllreduce is Rabenseifner's allreduce: a reduce-scatter by
// recursive halving followed by an allgather by recursive doubling.
//
// With p a power of two, in the round at distance d = p/2, p/4, ..., 1 rank
// v exchanges half of its current range of the buffer with v XOR d: the
// rank without bit d keeps the lower half, the other the upper, and each
// reduces the half it keeps with the one it receives. After lg p rounds
// rank v holds the fully reduced block v (ranges split by elements, so any
// count works); the allgather retraces the rounds from d = 1 up, each rank
// sending all it holds. Every rank sends ((p-1)/p)n bytes in each phase, in
// lg p messages. On alpha-beta:
//
//	2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ
//
// When p is not a power of two, the e = p - p' extra ranks (p' the largest
// power of two below p) first fold their buffer into a partner, the p'
// others run the algorithm, and the partners send the result back (see
// fold): the p' time + 2α + 2nβ + nγ, the reference's closed form. The
// simulator gives exactly that once n >= (lg p' - 1)p'α/(β + 2γ), or
// whenever e >= p'/2. Below, ranks that did not fold run ahead (rounds take
// less than the fold), and a message of theirs for a later round can hold
// the port of a rank just before its folded partner's message arrives:
// each such collision costs at most a latency, and the time stays within
// (lg p' - 1)α of the closed form. No layout avoids it with one extra rank
// (every butterfly pairs a rank about to wait on the folded one with one
// that has not); it is what eager messages and first-come ports do to a
// schedule that is not in lock step.
//
// It has the ring's bandwidth term with a logarithmic latency term, so it
// wins over the ring on many ranks for medium messages; nexar uses it above
// 8 ranks below 8 MiB. Off powers of two the fold's 2nβ + nγ costs it
// dearly for large messages.
func HalvingDoublingAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	return halvingDoublingAllreduce(ctx, l, buf, dt, op, farthestFirst)
}

// HalvingDoublingNearestAllreduce is MPICH's Rabenseifner allreduce
// (SimGrid's "rab_rdb"): HalvingDoublingAllreduce with the rounds in the
// other order. The reduce-scatter exchanges its largest halves with the
// nearest partner, at distance d = 1, 2, ..., p/2, and the allgather
// retraces the rounds from d = p/2 down to 1; the fold is the same.
//
// On alpha-beta the order changes nothing for p = 2^k: 2 lg p α +
// 2((p-1)/p)nβ + ((p-1)/p)nγ. Off powers of two the time is at least
// HalvingDoublingAllreduce's row, the p' time + 2α + 2nβ + nγ, and often
// equal to it; but the largest halves now go first, so a rank that did
// not fold and ran ahead can hold a folded partner's port for a large
// block, and the time can exceed the row by up to another fold's
// 2α + 2nβ + nγ (by α + (n/p')β at p = 6 with free reductions, say).
// Where distance costs something (a fat tree whose leaves hold
// neighbouring ranks, a torus), nearest-first keeps the big exchanges
// local and sends only the small ones far: on a 2:1 oversubscribed fat
// tree it is the faster order.
func HalvingDoublingNearestAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	return halvingDoublingAllreduce(ctx, l, buf, dt, op, nearestFirst)
}

// order is the order in which a recursive algorithm visits its partners.
type order bool

const (
	farthestFirst order = false
	nearestFirst  order = true
)

// maxRounds bounds the rounds of a recursive algorithm: lg p of any int p.
const maxRounds = 64

// distances returns the partner distances of the rounds among p2 ranks
// (a power of two) in order o: p2/2, ..., 2, 1 farthest first, the reverse
// nearest first. They are appended to ds[:0], so that a caller that
// passes room for maxRounds allocates nothing.
func (o order) distances(p2 int, ds []int) []int {
	ds = ds[:0]
	for d := p2 / 2; d >= 1; d /= 2 {
		ds = append(ds, d)
	}
	if o == nearestFirst {
		slices.Reverse(ds)
	}
	return ds
}

func halvingDoublingAllreduce(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, o order) error {
	count, done, err := allreducePrologue(l, buf, dt)
	if err != nil || done {
		return err
	}
	f := newFold(l.Size())
	scratchElems := (count + 1) / 2
	if f.e > 0 {
		scratchElems = count
	}
	scratch := Scratch(l, scratchElems*dt.Size())
	if err := f.in(ctx, l, buf, scratch, dt, op); err != nil {
		return err
	}
	if v := f.vrank(l.Rank()); v >= 0 {
		if err := halvingDoubling(ctx, l, f, v, buf, scratch, count, dt, op, o.distances(f.p2, make([]int, 0, maxRounds))); err != nil {
			return err
		}
	}
	Release(l, scratch)
	return f.out(ctx, l, buf)
}

// halvingDoubling runs Rabenseifner's algorithm among the p2 ranks of f, as
// virtual rank v: the reduce-scatter rounds at the distances ds in order,
// then the allgather rounds in the reverse order.
func halvingDoubling(ctx context.Context, l Link, f fold, v int, buf, scratch device.Buffer, count int, dt device.DType, op device.Op, ds []int) error {
	type span struct {
		off, n int
		lower  bool // the lower half of the range before the round
	}
	// kept[i] is the range held after reduce-scatter round i.
	kept := make([]span, 0, maxRounds)
	cur := span{0, count, true}
	for round, d := range ds {
		lo := span{cur.off, cur.n / 2, true}
		hi := span{cur.off + lo.n, cur.n - lo.n, false}
		keep, give := lo, hi
		if v&d != 0 {
			keep, give = hi, lo
		}
		peer := f.rank(v ^ d)
		tmp := scratch.Slice(0, keep.n*dt.Size())
		if err := SendRecv(ctx, l, peer, elems(buf, dt, give.off, give.n), peer, tmp, tagHalvingReduceScatter+Tag(round)); err != nil {
			return err
		}
		if err := l.Reduce(elems(buf, dt, keep.off, keep.n), tmp, dt, op); err != nil {
			return err
		}
		kept = append(kept, keep)
		cur = keep
	}
	// The allgather: undo the rounds, the last one first. In the round at
	// distance d the partner holds the other half of the range both held
	// before it.
	for i := len(kept) - 1; i >= 0; i-- {
		d, mine := ds[i], kept[i]
		parent := span{0, count, true}
		if i > 0 {
			parent = kept[i-1]
		}
		theirs := span{parent.off, parent.n - mine.n, !mine.lower}
		if mine.lower {
			theirs.off = parent.off + mine.n
		}
		peer := f.rank(v ^ d)
		if err := SendRecv(ctx, l, peer, elems(buf, dt, mine.off, mine.n), peer, elems(buf, dt, theirs.off, theirs.n), tagDoublingAllgather+Tag(i)); err != nil {
			return err
		}
	}
	return nil
}
