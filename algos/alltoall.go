package algos

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/device"
)

// Tags of the alltoall algorithms (the low 16 bits; see tags.go).
const (
	tagAlltoallPairwise Tag = 0x3000
	tagAlltoallBruck    Tag = 0x3100 // + round
	tagAlltoallLinear   Tag = 0x3200
)

// checkAlltoall checks that send and recv are p blocks of whole elements
// each, and returns the size of a block in bytes; nil buffers count as
// empty.
func checkAlltoall(send, recv device.Buffer, p int, dt device.DType) (int, error) {
	n := bufLen(send)
	if m := bufLen(recv); n != m {
		return 0, fmt.Errorf("algos: alltoall: send buffer of %d bytes, receive buffer of %d", n, m)
	}
	if n%(p*dt.Size()) != 0 {
		return 0, fmt.Errorf("algos: alltoall: buffer of %d bytes is not %d blocks of whole %s elements", n, p, dt)
	}
	return n / p, nil
}

// AlltoallPairwise sends block j of send to rank j and receives rank j's
// block r into block j of recv, on every rank r. send and recv are p
// blocks of equal size and must not overlap.
//
// In step s (s = 1 .. p-1) rank r sends to rank r+s and receives from rank
// r-s, one block each way, so every rank's ports carry exactly one message
// per step and nothing contends. On alpha-beta the time is (p-1)(α +
// (n/p)β), n being the bytes of send: optimal bandwidth, p-1 latencies,
// the choice for large blocks.
func AlltoallPairwise(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	b, err := checkAlltoall(send, recv, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if err := l.Copy(recv.Slice(r*b, b), send.Slice(r*b, b)); err != nil {
		return err
	}
	for s := 1; s < p; s++ {
		dst, src := mod(r+s, p), mod(r-s, p)
		if err := SendRecv(ctx, l, dst, send.Slice(dst*b, b), src, recv.Slice(src*b, b), tagAlltoallPairwise); err != nil {
			return err
		}
	}
	return nil
}

// AlltoallLinear does what AlltoallPairwise does, but posts every receive
// and every send at once and waits for all of them, leaving the order to
// the network. Sends are posted in the order r+1, r+2, ..., r+p-1, so
// that the ranks do not all start on the same receiver.
//
// On alpha-beta a rank's egress sends its messages one after another in
// the order posted, and in that order the k-th message of every rank goes
// to a different receiver, whose ingress is free just then; so the model
// serialises it into the pairwise schedule and the time is again (p-1)(α +
// (n/p)β). It differs from pairwise on networks that let messages overlap
// (latency hidden behind other transfers, several ports or links), where
// posting everything at once is what wins for small and medium blocks; it
// needs p-1 receives in flight, which is what limits it at scale.
func AlltoallLinear(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	b, err := checkAlltoall(send, recv, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if err := l.Copy(recv.Slice(r*b, b), send.Slice(r*b, b)); err != nil {
		return err
	}
	reqs := make([]Request, 0, 2*(p-1))
	for s := 1; s < p; s++ {
		src := mod(r-s, p)
		reqs = append(reqs, l.Irecv(src, tagAlltoallLinear, recv.Slice(src*b, b)))
	}
	for s := 1; s < p; s++ {
		dst := mod(r+s, p)
		reqs = append(reqs, l.Isend(dst, tagAlltoallLinear, send.Slice(dst*b, b)))
	}
	return l.Wait(ctx, reqs...)
}

// AlltoallBruck does what AlltoallPairwise does in ceil(lg p) rounds,
// trading bandwidth for latency.
//
// Rank r rotates its send blocks so that entry j holds the block for rank
// r+j. In the round at distance d = 1, 2, 4, ... it packs every entry j
// whose bit d is set, sends them in one message to rank r+d, and unpacks
// what rank r-d sends into the same entries; after the last round entry j
// holds the block from rank r-j, which a final reversal puts in place.
// The packing and unpacking are local copies, free on the cost model. With
// c_k the number of j in [0, p) with bit k set, c_k = floor(p/2^(k+1))2^k
// + max(0, p mod 2^(k+1) - 2^k), the time on alpha-beta is
// sum over k < ceil(lg p) of (α + c_k(n/p)β); for p a power of two every
// c_k is p/2 and that is lg p(α + (n/2)β), the row of
// reference/cost-models.md. It moves about lg p/2 times the data of
// pairwise, so it wins only while latency dominates: small blocks on
// large worlds.
func AlltoallBruck(ctx context.Context, l Link, send, recv device.Buffer, dt device.DType) error {
	r, p := l.Rank(), l.Size()
	b, err := checkAlltoall(send, recv, p, dt)
	if err != nil || b == 0 {
		return err
	}
	if p == 1 {
		return l.Copy(recv, send)
	}
	w := Scratch(l, p*b)
	if err := rotateLeft(l, w, send, r*b); err != nil {
		return err
	}
	most := 0
	for d := 1; d < p; d *= 2 {
		most = max(most, bruckMoved(p, d))
	}
	out, in := Scratch(l, most*b), Scratch(l, most*b)
	round := 0
	for d := 1; d < p; d *= 2 {
		m := bruckMoved(p, d) * b
		if err := bruckPack(l, w, out, p, d, b, true); err != nil {
			return err
		}
		if err := SendRecv(ctx, l, mod(r+d, p), out.Slice(0, m), mod(r-d, p), in.Slice(0, m), tagAlltoallBruck+Tag(round)); err != nil {
			return err
		}
		if err := bruckPack(l, w, in, p, d, b, false); err != nil {
			return err
		}
		round++
	}
	for j := 0; j < p; j++ {
		if err := l.Copy(recv.Slice(mod(r-j, p)*b, b), w.Slice(j*b, b)); err != nil {
			return err
		}
	}
	Release(l, w, out, in)
	return nil
}

// bruckMoved is the number of entries j in [0, p) with bit d set: the
// blocks that move in Bruck's round at distance d.
func bruckMoved(p, d int) int {
	return p/(2*d)*d + max(0, p%(2*d)-d)
}

// bruckPack copies the entries of w whose bit d is set into packed (pack)
// or back from it (unpack). Such entries come in runs [d, 2d), [3d, 4d),
// ..., so it copies a run at a time.
func bruckPack(l Link, w, packed device.Buffer, p, d, b int, pack bool) error {
	at := 0
	for j := d; j < p; j += 2 * d {
		run := min(d, p-j) * b
		src, dst := w.Slice(j*b, run), packed.Slice(at, run)
		if !pack {
			src, dst = dst, src
		}
		if err := l.Copy(dst, src); err != nil {
			return err
		}
		at += run
	}
	return nil
}
