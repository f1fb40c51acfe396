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
// every rank, like AllgatherRing, by MPICH's recursive doubling (SimGrid's
// "rdb") for any p.
//
// In the round at distance d = 1, 2, 4, ... rank r exchanges everything it
// has gathered (the existing blocks of its aligned group of d ranks,
// [r &^ (d-1), ...)) with rank r XOR d, so the data doubles every round.
// For p a power of two that is all: on alpha-beta lg p α + ((p-1)/p)nβ.
// Otherwise the partner's group may be cut short by the end of the world,
// or missing: then, in the same round, the ranks of the whole group that
// received the other half pass it on inside their group along a binomial
// tree (distances d/2, ..., 1), to the ranks whose partner did not exist.
// A round whose upper group holds c ranks (c < d) so costs up to lg d more
// messages of c blocks on the way to the last rank served; on alpha-beta,
// with m = n/p and b_i the blocks of the round at distance d_i = 2^i:
//
//	Σ_i (α + b_i mβ) + Σ_{i: c_i < d_i} i (α + c_i mβ)
//
// where b_i = min(d_i, p - (r &^ (d_i-1))) is what the slowest pair
// exchanges and c_i = p - g_i - d_i the ranks of the short upper group
// above the lowest group g_i that has one. It keeps recursive doubling's
// lg p exchanges where the world allows them and pays for the rest; Bruck
// (AllgatherBruck) has ceil(lg p) rounds for every p and no such cost,
// which is why it is the better algorithm off powers of two on a flat
// network.
func AllgatherRecursiveDoubling(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	b, err := checkReduceScatter("allgather", recv, send, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if err := l.Copy(recv.Slice(r*b, b), send); err != nil {
		return err
	}
	// blocks returns the blocks rank x holds when the round at distance d
	// starts: those of its aligned group of d ranks that exist.
	blocks := func(x, d int) (from, n int) {
		from = x &^ (d - 1)
		return from, min(d, p-from)
	}
	round := 0
	for d := 1; d < p; d *= 2 {
		peer := r ^ d
		mine, mn := blocks(r, d)
		theirs := peer &^ (d - 1)
		if peer < p {
			_, tn := blocks(peer, d)
			if err := SendRecv(ctx, l, peer, recv.Slice(mine*b, mn*b), peer, recv.Slice(theirs*b, tn*b), tagAllgatherDoubling+Tag(round)); err != nil {
				return err
			}
		}
		if theirs+d > p {
			// The other group is short: those of mine who got it pass
			// its c blocks on to those who did not.
			if err := rdbForward(ctx, l, recv, b, r, d, p-mine-d, tagAllgatherDoubling+0x40+Tag(round)); err != nil {
				return err
			}
		}
		round++
	}
	return nil
}

// rdbForward is the second part of a round of AllgatherRecursiveDoubling
// at distance d whose upper group is short: inside rank r's group of d
// ranks, the first c (those whose partner existed) hold the c blocks of
// the upper group and pass them down a binomial tree, distances d/2 to 1,
// to the others. Nothing moves when c <= 0.
func rdbForward(ctx context.Context, l Link, recv device.Buffer, b, r, d, c int, tag Tag) error {
	if c <= 0 {
		return nil
	}
	data := recv.Slice(((r&^(d-1))+d)*b, c*b)
	for t := d / 2; t >= 1; t /= 2 {
		peer := r ^ t
		root := r &^ (2*t - 1) // the root of the subtree being split
		switch {
		case peer > r && r < root+c && peer >= root+c:
			if err := Send(ctx, l, peer, tag, data); err != nil {
				return err
			}
		case peer < r && peer < root+c && r >= root+c:
			if err := Recv(ctx, l, peer, tag, data); err != nil {
				return err
			}
		}
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
	w := Scratch(l, p*b) // w[j] is block r+j (mod p)
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
	if err := rotateLeft(l, recv, w, (p-r)*b%(p*b)); err != nil {
		return err
	}
	Release(l, w)
	return nil
}
