package algos

import (
	"context"

	"github.com/nexar-go/nexar-go/device"
)

// Tags of the allgather algorithms (the low 16 bits; see tags.go).
const (
	tagAllgatherRing     Tag = 0x2000
	tagAllgatherDoubling Tag = 0x2100 // + round
	tagAllgatherBruck    Tag = 0x2200 // + round
)

// AllgatherRing gathers every rank's send block into recv on every rank:
// block i of recv (of send's size) is rank i's send. recv must hold p
// blocks.
//
// Rank r puts its own block in place, then in step s (s = 0 .. p-2) sends
// block r-s to its right neighbour and receives block r-s-1 from its left,
// so each block travels once around the ring. On alpha-beta the time is
// (p-1)α + ((p-1)/p)nβ, n being the bytes of recv: bandwidth-optimal with
// neighbour traffic only, the choice for large messages; its p-1 latencies
// lose to bruck and recursive_doubling for small ones.
func AllgatherRing(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	b, err := checkReduceScatter("allgather", recv, send, p, dt)
	if err != nil || b == 0 {
		return err
	}
	blk := func(i int) device.Buffer { return recv.Slice(mod(i, p)*b, b) }
	if err := l.Copy(blk(r), send); err != nil {
		return err
	}
	right, left := mod(r+1, p), mod(r-1, p)
	for s := 0; s < p-1; s++ {
		if err := SendRecv(ctx, l, right, blk(r-s), left, blk(r-s-1), tagAllgatherRing); err != nil {
			return err
		}
	}
	return nil
}

// AllgatherRecursiveDoubling gathers every rank's send block into recv on
// every rank, like AllgatherRing, in ceil(lg p) rounds.
//
// For p a power of two, in the round at distance d = 1, 2, 4, ..., p/2
// rank r exchanges everything it has gathered so far (the d blocks of its
// aligned group) with rank r XOR d, so the data doubles every round; on
// alpha-beta the time is lg p α + ((p-1)/p)nβ. For other p the partner
// XOR d does not always exist, and the algorithm runs AllgatherBruck
// instead (as Open MPI's recursive doubling does): same number of rounds,
// same data, ceil(lg p)α + ((p-1)/p)nβ. The least latency of the
// allgathers with optimal bandwidth on alpha-beta, it wins for small and
// medium messages; its partners are far apart, which real topologies can
// punish for large ones.
func AllgatherRecursiveDoubling(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	if !isPowerOfTwo(p) {
		return AllgatherBruck(ctx, l, send, recv, dt)
	}
	b, err := checkReduceScatter("allgather", recv, send, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if err := l.Copy(recv.Slice(r*b, b), send); err != nil {
		return err
	}
	round := 0
	for d := 1; d < p; d *= 2 {
		peer := r ^ d
		mine := recv.Slice(r&^(d-1)*b, d*b)
		theirs := recv.Slice(peer&^(d-1)*b, d*b)
		if err := SendRecv(ctx, l, peer, mine, peer, theirs, tagAllgatherDoubling+Tag(round)); err != nil {
			return err
		}
		round++
	}
	return nil
}

// AllgatherBruck gathers every rank's send block into recv on every rank,
// like AllgatherRing, in ceil(lg p) rounds for any p.
//
// Rank r keeps a copy of the blocks rotated so that its own comes first.
// In the round at distance d = 1, 2, 4, ... it sends the first min(d, p-d)
// blocks it has to rank r-d and appends the same number from rank r+d;
// after the last round it holds blocks r, r+1, ..., r+p-1 and rotates them
// into place (local copies, free on the cost model). Every rank receives
// p-1 blocks in all, so on alpha-beta the time is ceil(lg p)α +
// ((p-1)/p)nβ for every p (Bruck et al. 1997). It is what to use for
// small messages on worlds that are not powers of two.
func AllgatherBruck(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	b, err := checkReduceScatter("allgather", recv, send, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if p == 1 {
		return l.Copy(recv, send)
	}
	w := l.Alloc(p * b) // w[j] is block r+j (mod p)
	if err := l.Copy(w.Slice(0, b), send); err != nil {
		return err
	}
	round := 0
	for d := 1; d < p; d *= 2 {
		m := min(d, p-d) * b
		if err := SendRecv(ctx, l, mod(r-d, p), w.Slice(0, m), mod(r+d, p), w.Slice(d*b, m), tagAllgatherBruck+Tag(round)); err != nil {
			return err
		}
		round++
	}
	// Undo the rotation: w[j] goes to block r+j.
	return rotateLeft(l, recv, w, (p-r)*b%(p*b))
}
