package algos

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/nexar-go/nexar-go/device"
)

// Tags of the reduce-scatter algorithms (the low 16 bits; see tags.go).
// Algorithms with a logarithmic number of rounds add the round to their
// base, so that no two rounds share a tag.
const (
	tagReduceScatterRing     Tag = 0x1000
	tagReduceScatterPairwise Tag = 0x1100
	tagReduceScatterHalving  Tag = 0x1200 // + round
)

// roundsLog2 returns ceil(lg p) for p >= 1: the number of rounds of the
// dissemination-style algorithms (Bruck, dissemination barrier, scan).
func roundsLog2(p int) int { return bits.Len(uint(p - 1)) }

// isPowerOfTwo reports whether p is a power of two.
func isPowerOfTwo(p int) bool { return p > 0 && p&(p-1) == 0 }

// bufLen is the length of b, with a nil buffer taken as an empty one (as
// Layout's zero sizes may give).
func bufLen(b device.Buffer) int {
	if b == nil {
		return 0
	}
	return b.Len()
}

// checkReduceScatter checks the buffers of a reduce-scatter (or of an
// allgather, with the roles swapped): whole is p blocks of part's size, and
// part holds whole elements of dt. It returns the size of a block in
// bytes; nil buffers count as empty.
func checkReduceScatter(what string, whole, part device.Buffer, p int, dt device.DType) (int, error) {
	b := bufLen(part)
	if b%dt.Size() != 0 {
		return 0, fmt.Errorf("algos: %s: block of %d bytes is not a whole number of %s elements", what, b, dt)
	}
	if n := bufLen(whole); n != p*b {
		return 0, fmt.Errorf("algos: %s: buffer of %d bytes, want world %d x block %d = %d bytes",
			what, n, p, b, p*b)
	}
	return b, nil
}

// ReduceScatterRing reduces send (p blocks of recv's size) across all ranks
// with op and leaves block r of the result in recv on rank r. send is left
// unchanged.
//
// The partial sums travel around the ring: in step s (s = 0 .. p-2) rank r
// sends its partial of block r-s-1 to its right neighbour, receives the
// partial of block r-s-2 from its left, and adds its own input block to
// it; after p-1 steps the partial that reaches rank r is block r, reduced
// over every rank. Every step moves and reduces one block of n/p bytes, so
// on alpha-beta the time is (p-1)α + ((p-1)/p)n(β + γ), n being the bytes
// of send. It is bandwidth-optimal and needs only neighbour links, so it
// wins for large messages; its p-1 latencies make it lose to
// recursive_halving for small ones.
func ReduceScatterRing(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, op device.Op) error {
	r, p := l.Rank(), l.Size()
	b, err := checkReduceScatter("reduce_scatter", send, recv, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if p == 1 {
		return l.Copy(recv, send)
	}
	input := func(i int) device.Buffer { return send.Slice(mod(i, p)*b, b) }
	tmp := Scratch(l, b)
	right, left := mod(r+1, p), mod(r-1, p)
	out := input(r - 1) // step 0 sends the input block as it is
	for s := 0; s < p-1; s++ {
		// The received partials alternate between recv and tmp so that
		// the one being sent is never the one being received, and the
		// last lands in recv.
		in := tmp
		if (p-2-s)%2 == 0 {
			in = recv
		}
		if err := SendRecv(ctx, l, right, out, left, in, tagReduceScatterRing); err != nil {
			return err
		}
		if err := l.Reduce(in, input(r-s-2), dt, op); err != nil {
			return err
		}
		out = in
	}
	Release(l, tmp)
	return nil
}

// ReduceScatterPairwise reduces send across all ranks with op and leaves
// block r of the result in recv on rank r, like ReduceScatterRing.
//
// In step s (s = 1 .. p-1) rank r sends its input block r+s straight to
// its owner, rank r+s, receives block r from rank r-s, and reduces it into
// recv: each rank talks to every other once, and no partial result is
// forwarded. On alpha-beta the time is (p-1)α + ((p-1)/p)n(β + γ), the
// same as ring; they differ where distance matters: pairwise talks to
// every rank directly, which suits fully connected (switched) networks and
// loses to ring's neighbour traffic on rings and tori.
func ReduceScatterPairwise(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, op device.Op) error {
	r, p := l.Rank(), l.Size()
	b, err := checkReduceScatter("reduce_scatter", send, recv, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if err := l.Copy(recv, send.Slice(r*b, b)); err != nil {
		return err
	}
	if p == 1 {
		return nil
	}
	tmp := Scratch(l, b)
	for s := 1; s < p; s++ {
		dst, src := mod(r+s, p), mod(r-s, p)
		if err := SendRecv(ctx, l, dst, send.Slice(dst*b, b), src, tmp, tagReduceScatterPairwise); err != nil {
			return err
		}
		if err := l.Reduce(recv, tmp, dt, op); err != nil {
			return err
		}
	}
	Release(l, tmp)
	return nil
}

// ReduceScatterRecursiveHalving reduces send across all ranks with op and
// leaves block r of the result in recv on rank r: the recursive halving of
// Thakur, Rabenseifner and Gropp as Open MPI and MPICH run it (SimGrid's
// "ompi_basic_recursivehalving").
//
// For p a power of two, in the round at distance d = p/2, p/4, ..., 1 rank
// r and its partner r XOR d split the blocks they are still responsible
// for in two halves; each sends the half that holds the other's block and
// reduces the half it keeps, so the data halves every round: on
// alpha-beta lg p α + ((p-1)/p)n(β + γ), the row of
// reference/cost-models.md. For other p the e = p - p' extra ranks (p' the
// largest power of two below p) fold: among the first 2e ranks, even rank
// 2i sends its whole input to 2i+1 and waits; the p' others run the
// halving on p' "virtual" blocks, the first e of them double (the blocks
// of a folded pair), and at the end rank 2i+1 sends 2i its block. That
// costs a whole-buffer message and reduction, α + nβ + nγ, before and a
// block, α + (n/p)β, after, and the halving rounds carry the double blocks
// besides: it is the slower form off powers of two (see
// ReduceScatterDissemination), kept because it is what MPI libraries run.
// It needs a commutative op, which every device op is.
func ReduceScatterRecursiveHalving(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, op device.Op) error {
	b, done, err := reduceScatterPrologue(l, send, recv, dt)
	if done {
		return err
	}
	if isPowerOfTwo(l.Size()) {
		return halvingButterfly(ctx, l, send, recv, b, dt, op)
	}
	return halvingFold(ctx, l, send, recv, b, dt, op)
}

// ReduceScatterDissemination reduces send across all ranks with op and
// leaves block r of the result in recv on rank r, in ceil(lg p) rounds of
// recursive halving in dissemination form (the transpose of Bruck's
// allgather): in the round at distance d = 2^(ceil(lg p)-1), ..., 2, 1 rank
// r sends the partials of the min(d, p-d) blocks r+d, r+d+1, ... to rank
// r+d and reduces those arriving from rank r-d. Each rank sends and
// reduces p-1 blocks in total, and on alpha-beta the time is
// ceil(lg p)α + ((p-1)/p)n(β + γ) for every p: the recursive halving's
// time without its fold. It has the fewest rounds of the reduce-scatters
// and the least data, so it wins whenever rounds cost anything; on real
// networks its far partners can lose to ring's neighbour traffic for large
// messages. It needs a commutative op, which every device op is.
func ReduceScatterDissemination(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType, op device.Op) error {
	b, done, err := reduceScatterPrologue(l, send, recv, dt)
	if done {
		return err
	}
	return halvingDissemination(ctx, l, send, recv, b, dt, op)
}

// reduceScatterPrologue checks the buffers of a reduce-scatter and does
// what needs no message: done reports that nothing is left (no data, or
// one rank, whose block is copied).
func reduceScatterPrologue(l Link, send, recv device.Buffer, dt device.DType) (b int, done bool, err error) {
	b, err = checkReduceScatter("reduce_scatter", send, recv, l.Size(), dt)
	if err != nil || b == 0 {
		return b, true, err
	}
	if l.Size() == 1 {
		return b, true, l.Copy(recv, send)
	}
	return b, false, nil
}

// Tags of the folded recursive halving's fold and fix-up.
const (
	tagReduceScatterFoldIn  Tag = 0x1300
	tagReduceScatterFoldOut Tag = 0x1301
)

// halvingFold is Open MPI's recursive halving for p not a power of two
// (reduce_scatter_intra_basic_recursivehalving): fold the extra ranks in,
// halve among the p' others over virtual blocks, send the folded ranks
// their blocks.
func halvingFold(ctx context.Context, l Link, send, recv device.Buffer, b int, dt device.DType, op device.Op) error {
	r, p := l.Rank(), l.Size()
	f := newFold(p)
	n := p * b
	switch v := f.vrank(r); {
	case v < 0: // an extra rank: give everything, get its block back
		if err := Send(ctx, l, r+1, tagReduceScatterFoldIn, send); err != nil {
			return err
		}
		return Recv(ctx, l, r+1, tagReduceScatterFoldOut, recv)
	default:
		result, in := Scratch(l, n), Scratch(l, n)
		if err := l.Copy(result, send); err != nil {
			return err
		}
		if r < 2*f.e {
			if err := Recv(ctx, l, r-1, tagReduceScatterFoldIn, in); err != nil {
				return err
			}
			if err := l.Reduce(result, in, dt, op); err != nil {
				return err
			}
		}
		// Virtual block i holds the blocks of the ranks behind virtual
		// rank i: two for a folded pair, one otherwise; off is where it
		// starts, in bytes.
		off := func(i int) int {
			if i < f.e {
				return 2 * i * b
			}
			return (i + f.e) * b
		}
		bytes := func(from, to int) device.Buffer { return result.Slice(off(from), off(to)-off(from)) }
		lo, hi := 0, f.p2 // the virtual blocks v is still responsible for
		round := 0
		for d := f.p2 / 2; d >= 1; d /= 2 {
			mid := lo + d
			keepLo, keepHi, giveLo, giveHi := lo, mid, mid, hi
			if v&d != 0 {
				keepLo, keepHi, giveLo, giveHi = mid, hi, lo, mid
			}
			peer := f.rank(v ^ d)
			mine := bytes(keepLo, keepHi)
			tmp := in.Slice(0, mine.Len())
			if err := SendRecv(ctx, l, peer, bytes(giveLo, giveHi), peer, tmp, tagReduceScatterHalving+Tag(round)); err != nil {
				return err
			}
			if err := l.Reduce(mine, tmp, dt, op); err != nil {
				return err
			}
			lo, hi = keepLo, keepHi
			round++
		}
		if err := l.Copy(recv, result.Slice(r*b, b)); err != nil {
			return err
		}
		if r < 2*f.e {
			if err := Send(ctx, l, r-1, tagReduceScatterFoldOut, result.Slice((r-1)*b, b)); err != nil {
				return err
			}
		}
		Release(l, result, in)
		return nil
	}
}

// halvingButterfly is recursive halving for p a power of two.
func halvingButterfly(ctx context.Context, l Link, send, recv device.Buffer, b int, dt device.DType, op device.Op) error {
	r, p := l.Rank(), l.Size()
	// cur holds the partials of the 2d blocks rank r is responsible for in
	// the round at distance d; at first that is every block of send.
	cur := send
	acc := Scratch(l, p/2*b) // partials from the first round on
	var tmp device.Buffer
	if p > 2 {
		tmp = Scratch(l, p/4*b)
	}
	round := 0
	for d := p / 2; d >= 1; d /= 2 {
		half := d * b
		keep, give := 0, half
		if r&d != 0 {
			keep, give = half, 0
		}
		in := acc.Slice(0, half)
		if d < p/2 {
			in = tmp.Slice(0, half)
		}
		if err := SendRecv(ctx, l, r^d, cur.Slice(give, half), r^d, in, tagReduceScatterHalving+Tag(round)); err != nil {
			return err
		}
		if d == p/2 {
			// in (acc) becomes the running partial: partner's half op mine.
			if err := l.Reduce(in, cur.Slice(keep, half), dt, op); err != nil {
				return err
			}
			cur = in
		} else {
			cur = cur.Slice(keep, half)
			if err := l.Reduce(cur, in, dt, op); err != nil {
				return err
			}
		}
		round++
	}
	if err := l.Copy(recv, cur); err != nil {
		return err
	}
	Release(l, acc, tmp)
	return nil
}

// halvingDissemination is recursive halving for any p, in the form of a
// transposed Bruck allgather.
func halvingDissemination(ctx context.Context, l Link, send, recv device.Buffer, b int, dt device.DType, op device.Op) error {
	r, p := l.Rank(), l.Size()
	// w[j] holds the partial of block r+j (mod p); entries [0, 2d) are
	// live before the round at distance d, and the round retires [d, 2d).
	w := Scratch(l, p*b)
	if err := rotateLeft(l, w, send, r*b); err != nil {
		return err
	}
	rounds := roundsLog2(p)
	most := 0 // the most blocks a round moves
	for d := 1; d < p; d *= 2 {
		most = max(most, min(d, p-d))
	}
	tmp := Scratch(l, most*b)
	for k := rounds - 1; k >= 0; k-- {
		d := 1 << k
		m := min(d, p-d) * b
		in := tmp.Slice(0, m)
		if err := SendRecv(ctx, l, mod(r+d, p), w.Slice(d*b, m), mod(r-d, p), in, tagReduceScatterHalving+Tag(k)); err != nil {
			return err
		}
		if err := l.Reduce(w.Slice(0, m), in, dt, op); err != nil {
			return err
		}
	}
	if err := l.Copy(recv, w.Slice(0, b)); err != nil {
		return err
	}
	Release(l, w, tmp)
	return nil
}

// rotateLeft copies src into dst rotated left by off bytes: dst starts with
// src[off:] and ends with src[:off]. Local copies are free on the cost
// model, so rotations cost nothing there.
func rotateLeft(l Link, dst, src device.Buffer, off int) error {
	n := src.Len()
	if err := l.Copy(dst.Slice(0, n-off), src.Slice(off, n-off)); err != nil {
		return err
	}
	return l.Copy(dst.Slice(n-off, off), src.Slice(0, off))
}
