package schedule

import (
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
)

// RingAllgather is the catalogue's ring allgather (algos.AllgatherRing)
// on p GPUs: rank r copies its input into chunk r of the output, then in
// step s sends chunk r-s to r+1 and receives chunk r-s-1 from r-1.
func RingAllgather(p int) *Schedule {
	b := newBuilder(fmt.Sprintf("ring_allgather_%d", p), "allgather", p, p, false)
	for r := range p {
		b.s.GPUs[r].IChunks, b.s.GPUs[r].OChunks = 1, p
		right, left := -1, -1
		if p > 1 {
			right, left = mod(r+1, p), mod(r-1, p)
		}
		send := b.tb(r, right, -1, 0)
		b.step(r, send, Copy, 'i', 0, 'o', r, 1, noDep)
		if p == 1 {
			continue
		}
		recv, last := b.tb(r, -1, left, 0), noDep
		for s := range p - 1 {
			sent := b.step(r, send, Send, 'o', mod(r-s, p), 'o', mod(r-s, p), 1, last)
			last = b.step(r, recv, Recv, 'o', mod(r-s-1, p), 'o', mod(r-s-1, p), 1, sent)
		}
	}
	return b.done()
}

// RingReduceScatter is the catalogue's ring reduce-scatter
// (algos.ReduceScatterRing) on p GPUs: in step s rank r sends its partial
// of chunk r-s-1 to r+1 and receives the partial of chunk r-s-2 from r-1,
// adding its own input chunk; the partials alternate between the output
// and a scratch chunk so that the last lands in the output.
func RingReduceScatter(p int) *Schedule {
	b := newBuilder(fmt.Sprintf("ring_reduce_scatter_%d", p), "reducescatter", p, p, false)
	for r := range p {
		g := &b.s.GPUs[r]
		g.IChunks, g.OChunks = p, 1
		if p == 1 {
			b.step(r, b.tb(r, -1, -1, 0), Copy, 'i', 0, 'o', 0, 1, noDep)
			continue
		}
		g.SChunks = 1
		send, recv := b.tb(r, mod(r+1, p), -1, 0), b.tb(r, -1, mod(r-1, p), 0)
		outBuf, outOff, last := byte('i'), mod(r-1, p), noDep
		for s := range p - 1 {
			sent := b.step(r, send, Send, outBuf, outOff, outBuf, outOff, 1, last)
			in := byte('s')
			if (p-2-s)%2 == 0 {
				in = 'o'
			}
			last = b.step(r, recv, RecvReduceCopy, 'i', mod(r-s-2, p), in, 0, 1, sent)
			outBuf, outOff = in, 0
		}
	}
	return b.done()
}

// PairwiseAlltoall is the catalogue's pairwise alltoall
// (algos.AlltoallPairwise) on p GPUs: rank r copies its own chunk, then in
// step s sends chunk r+s to rank r+s and receives chunk r-s from rank r-s,
// one threadblock per peer and direction, each step waiting for the
// previous step's receive.
func PairwiseAlltoall(p int) *Schedule {
	b := newBuilder(fmt.Sprintf("pairwise_alltoall_%d", p), "alltoall", p, p, false)
	for r := range p {
		b.s.GPUs[r].IChunks, b.s.GPUs[r].OChunks = p, p
		first := -1
		if p > 1 {
			first = mod(r+1, p)
		}
		send := b.tb(r, first, -1, 0)
		b.step(r, send, Copy, 'i', r, 'o', r, 1, noDep)
		last := noDep
		for s := 1; s < p; s++ {
			dst, src := mod(r+s, p), mod(r-s, p)
			if s > 1 {
				send = b.tb(r, dst, -1, 0)
			}
			recv := b.tb(r, -1, src, 0)
			sent := b.step(r, send, Send, 'i', dst, 'i', dst, 1, last)
			last = b.step(r, recv, Recv, 'o', src, 'o', src, 1, sent)
		}
	}
	return b.done()
}

// RecursiveDoublingAllreduce is the catalogue's recursive_doubling
// allreduce (algos.RecursiveDoublingAllreduce) on p GPUs: the whole buffer
// as one chunk; off powers of two the extra ranks fold in (even rank r < 2e
// sends to r+1, which reduces), the others exchange and reduce at
// distances p2/2, ..., 1 of virtual ranks, and the result folds out.
func RecursiveDoublingAllreduce(p int) *Schedule {
	b := newBuilder(fmt.Sprintf("recursive_doubling_allreduce_%d", p), "allreduce", p, 1, true)
	f := algos.NewFold(p)
	for r := range p {
		g := &b.s.GPUs[r]
		g.IChunks, g.OChunks = 1, 1
		if p == 1 {
			continue
		}
		v := f.VRank(r)
		if v < 0 {
			sent := b.step(r, b.tb(r, r+1, -1, 0), Send, 'i', 0, 'i', 0, 1, noDep)
			b.step(r, b.tb(r, -1, r+1, 0), Recv, 'i', 0, 'i', 0, 1, sent)
			continue
		}
		last := noDep
		if r < 2*f.Extra() {
			last = b.step(r, b.tb(r, -1, r-1, 0), RecvReduceCopy, 'i', 0, 'i', 0, 1, noDep)
		}
		for d := f.P2() / 2; d >= 1; d /= 2 {
			// The reduction waits for the round's send too, as the
			// catalogue's SendRecv waits for both before it reduces.
			peer := f.Rank(v ^ d)
			sent := b.step(r, b.tb(r, peer, -1, 0), Send, 'i', 0, 'i', 0, 1, last)
			last = b.step(r, b.tb(r, -1, peer, 0), RecvReduceCopy, 'i', 0, 'i', 0, 1, sent)
		}
		if r < 2*f.Extra() {
			b.step(r, b.tb(r, r-1, -1, 0), Send, 'i', 0, 'i', 0, 1, last)
		}
	}
	return b.done()
}

// HalvingDoublingAllreduce is the catalogue's halving_doubling allreduce
// (algos.HalvingDoublingAllreduce, Rabenseifner's) on p GPUs: p2 chunks
// (p2 the largest power of two not above p), the extra ranks folded in and
// out as in RecursiveDoublingAllreduce; in the round at distance d = p2/2,
// ..., 1 virtual rank v sends the half of its chunks it gives to v XOR d
// and reduces the half it keeps, then the rounds are retraced, each rank
// sending all it holds. Where the count is not a multiple of p2 the
// catalogue halves elements and the schedule whole chunks: the data is
// the same, the time within a few elements' transfer, but for counts
// below p2 off powers of two, where other messages are empty and a rank
// that ran ahead can take a port a latency earlier or later (see
// algos.HalvingDoublingAllreduce): at p = 5, one element, 35us against
// the catalogue's 30us with a 5us latency.
func HalvingDoublingAllreduce(p int) *Schedule {
	f := algos.NewFold(p)
	b := newBuilder(fmt.Sprintf("halving_doubling_allreduce_%d", p), "allreduce", p, f.P2(), true)
	for r := range p {
		g := &b.s.GPUs[r]
		g.IChunks, g.OChunks = f.P2(), f.P2()
		if p == 1 {
			continue
		}
		v := f.VRank(r)
		if v < 0 {
			sent := b.step(r, b.tb(r, r+1, -1, 0), Send, 'i', 0, 'i', 0, f.P2(), noDep)
			b.step(r, b.tb(r, -1, r+1, 0), Recv, 'i', 0, 'i', 0, f.P2(), sent)
			continue
		}
		last := noDep
		if r < 2*f.Extra() {
			last = b.step(r, b.tb(r, -1, r-1, 0), RecvReduceCopy, 'i', 0, 'i', 0, f.P2(), noDep)
		}
		sendTB, recvTB := map[int]int{}, map[int]int{}
		type rng struct{ off, n int }
		var kept []rng
		cur := rng{0, f.P2()}
		for d := f.P2() / 2; d >= 1; d /= 2 {
			peer := f.Rank(v ^ d)
			sendTB[peer], recvTB[peer] = b.tb(r, peer, -1, 0), b.tb(r, -1, peer, 0)
			lo, hi := rng{cur.off, cur.n / 2}, rng{cur.off + cur.n/2, cur.n / 2}
			keep, give := lo, hi
			if v&d != 0 {
				keep, give = hi, lo
			}
			sent := b.step(r, sendTB[peer], Send, 'i', give.off, 'i', give.off, give.n, last)
			last = b.step(r, recvTB[peer], RecvReduceCopy, 'i', keep.off, 'i', keep.off, keep.n, sent)
			kept = append(kept, keep)
			cur = keep
		}
		for i, d := len(kept)-1, 1; i >= 0; i, d = i-1, d*2 {
			peer := f.Rank(v ^ d)
			mine, parent := kept[i], rng{0, f.P2()}
			if i > 0 {
				parent = kept[i-1]
			}
			theirs := rng{parent.off, parent.n - mine.n}
			if mine.off == parent.off {
				theirs.off = parent.off + mine.n
			}
			sent := b.step(r, sendTB[peer], Send, 'i', mine.off, 'i', mine.off, mine.n, last)
			last = b.step(r, recvTB[peer], Recv, 'i', theirs.off, 'i', theirs.off, theirs.n, sent)
		}
		if r < 2*f.Extra() {
			b.step(r, b.tb(r, r-1, -1, 0), Send, 'i', 0, 'i', 0, f.P2(), last)
		}
	}
	return b.done()
}
