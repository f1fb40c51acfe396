package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// tagScan is the tag of the scan's rounds (the low 16 bits; see tags.go).
const tagScan Tag = 0x5000 // + round

// ScanRecursiveDoubling computes a prefix reduction of buf in place, in
// ceil(lg p) rounds (Hillis and Steele 1986). With exclusive false, rank r
// ends with the reduction with op of the buffers of ranks 0..r (MPI_Scan).
// With exclusive true it ends with that of ranks 0..r-1 (MPI_Exscan), and
// rank 0, for which that is empty, keeps its buffer as it was: MPI leaves
// it undefined, and leaving it alone needs neither an identity element
// for every type and op nor any time.
//
// In the round at distance d = 1, 2, 4, ... rank r sends its running
// inclusive partial (over ranks r-2d+1..r, clipped at 0) to rank r+d and
// reduces the partial arriving from rank r-d into its own. Every round
// moves and reduces the whole buffer, so on alpha-beta the inclusive scan
// takes K(α + nβ + nγ), K = ceil(lg p) and n the bytes of buf: the row of
// reference/cost-models.md. Where 2^(K-1) < p <= 3·2^(K-2) (p = 3, 5, 6,
// 9..12, 17..24, ...) it takes one nγ less, because the ranks low enough to
// stop receiving early send their last messages without waiting for a
// reduction. The exclusive scan keeps a second partial, the result, that
// leaves out the rank's own buffer: the first round's message is received
// straight into it, and later ones are reduced into it while the next
// round's transfer is on the wire, after the inclusive partial that round
// sends; so it takes the same time, except α + nβ at p = 2. These closed
// forms hold while nγ < α + nβ, so that a reduction hides behind a
// transfer; beyond that, ranks that stop receiving early send into ports
// still busy with the rounds before, and the time has no closed form (see
// doc_collectives_b.go). It needs a commutative op (every device op is).
// Its lg p rounds make it the scan for small and medium buffers; for
// large ones a pipelined chain moves n once instead of lg p times.
func ScanRecursiveDoubling(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op, exclusive bool) error {
	if buf == nil {
		return nil // an empty buffer, as Layout's zero sizes may give
	}
	if err := checkBuffer(buf, dt); err != nil {
		return err
	}
	p, n := l.Size(), buf.Len()
	if p == 1 || n == 0 {
		return nil
	}
	if exclusive {
		return exscan(ctx, l, buf, dt, op)
	}
	r := l.Rank()
	tmp := Scratch(l, n)
	round := 0
	for d := 1; d < p; d *= 2 {
		reqs := make([]Request, 0, 2)
		if r-d >= 0 {
			reqs = append(reqs, l.Irecv(r-d, tagScan+Tag(round), tmp))
		}
		if r+d < p {
			reqs = append(reqs, l.Isend(r+d, tagScan+Tag(round), buf))
		}
		if err := l.Wait(ctx, reqs...); err != nil {
			return err
		}
		if r-d >= 0 {
			if err := l.Reduce(buf, tmp, dt, op); err != nil {
				return err
			}
		}
		round++
	}
	Release(l, tmp)
	return nil
}

// exscan is the exclusive form of ScanRecursiveDoubling, for p > 1.
func exscan(ctx context.Context, l Link, buf device.Buffer, dt device.DType, op device.Op) error {
	r, p, n := l.Rank(), l.Size(), buf.Len()
	// acc is the inclusive partial that travels; buf becomes the result.
	acc := Scratch(l, n)
	if err := l.Copy(acc, buf); err != nil {
		return err
	}
	tmp := [2]device.Buffer{Scratch(l, n), Scratch(l, n)}
	var pending device.Buffer // a received partial not yet reduced into buf
	round := 0
	for d := 1; d < p; d *= 2 {
		recvs := r-d >= 0
		reqs := make([]Request, 0, 2)
		in := buf // the first partial a rank receives is its result so far
		if d > 1 {
			in = tmp[round%2]
		}
		if recvs {
			reqs = append(reqs, l.Irecv(r-d, tagScan+Tag(round), in))
		}
		if r+d < p {
			reqs = append(reqs, l.Isend(r+d, tagScan+Tag(round), acc))
		}
		if pending != nil {
			// Overlaps the transfer just posted; pending is the other tmp.
			if err := l.Reduce(buf, pending, dt, op); err != nil {
				return err
			}
			pending = nil
		}
		if err := l.Wait(ctx, reqs...); err != nil {
			return err
		}
		if recvs {
			if r+2*d < p {
				// acc travels again next round.
				if err := l.Reduce(acc, in, dt, op); err != nil {
					return err
				}
			}
			if d > 1 {
				pending = in
			}
		}
		round++
	}
	if pending != nil {
		if err := l.Reduce(buf, pending, dt, op); err != nil {
			return err
		}
	}
	Release(l, acc, tmp[0], tmp[1])
	return nil
}
