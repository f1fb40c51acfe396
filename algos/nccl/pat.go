package nccl

import (
	"context"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// PAT, NCCL's Parallel Aggregated Trees (src/include/collectives.h
// PatAGAlgorithm and PatRSAlgorithm; arXiv 2506.20252), for allgather and
// reduce-scatter under Simple: Bruck's algorithm with its dimensions
// reversed, so that a rank's block reaches every other along a binomial
// tree of its own and the trees of all ranks move together, their blocks
// aggregated into one message per step. The allgather takes the far
// dimensions first (distance 2^(K-1), one block) and the near ones last
// (distance 1, half the blocks), so no long-distance step comes at the
// end; the reduce-scatter is its mirror in time, near and large first.
// ceil(lg p) steps a chunk where the blocks fit the aggregation buffer;
// where they do not, a step's blocks go in several messages of at most
// patBuffer bytes, and the message count grows towards p-1.
//
// Where NCCL's state machine also bounds the steps in flight by its
// shared memory (stepDepth, parallelFactor), this one moves one step's
// messages at a time.

// patBuffer is the most a PAT message aggregates: a connection's Simple
// buffer.
const patBuffer = BufferSimple

// patChunkBytes is PAT's chunk (calcCollChunking): one Simple slot,
// halved while chunk x 32 (allgather) or x 16 (reduce-scatter) exceeds the
// channel's bytes, down to 64 KiB.
func patChunkBytes(globalBytes int, allgather bool) int {
	c := Simple.stepSize()
	f := 16
	if allgather {
		f = 32
	}
	for c*f > globalBytes && c > 65536 {
		c /= 2
	}
	return c
}

// patDims returns K = ceil(lg p).
func patDims(p int) int {
	k := 0
	for 1<<k < p {
		k++
	}
	return k
}

// patOffsets returns the block offsets s' (multiples of 2^(d+1)) with
// 2^d + s' < p: relative to the lower rank of a step at dimension d, the
// blocks that cross it.
func patOffsets(p, d int) []int {
	var out []int
	for s := 0; (1<<d)+s < p; s += 2 << d {
		out = append(out, s)
	}
	return out
}

// patConns holds one channel's connections to the peers at each distance.
type patConns struct {
	k    *call
	ch   *channel
	send map[int]*sendConn
	recv map[int]*recvConn
	size int
}

func (pc *patConns) to(peer int) *sendConn {
	if c, ok := pc.send[peer]; ok {
		return c
	}
	c := pc.ch.sender(rolePAT, peer, pc.k.inter(pc.k.me, peer), pc.size)
	pc.send[peer] = c
	return c
}

func (pc *patConns) from(peer int) *recvConn {
	if c, ok := pc.recv[peer]; ok {
		return c
	}
	c := pc.ch.receiver(rolePAT, peer, pc.size)
	pc.recv[peer] = c
	return c
}

func (pc *patConns) flush() error {
	for _, peer := range sortedKeys(pc.send) {
		if err := pc.send[peer].flush(); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[int]*sendConn) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// patExchange moves, at one dimension, the blocks at offsets offs: to
// peer `to` the blocks `sendBlock(s)` and from peer `from` the blocks
// `recvBlock(s)`, in messages of at most agg blocks each, packed into
// wire buffers (copies, which the model does not charge). recvDone is
// called with each received block, packed.
func (pc *patConns) exchange(offs []int, agg, n int, to, from int, sendBlock func(s int) device.Buffer, recvDone func(s int, b device.Buffer) error) error {
	k, es := pc.k, pc.k.dt.Size()
	out, in := pc.to(to), pc.from(from)
	agg = min(agg, len(offs))
	wire := k.l.Alloc(agg * n * es)
	rwire := k.l.Alloc(agg * n * es)
	for i := 0; i < len(offs); i += agg {
		group := offs[i:min(i+agg, len(offs))]
		w := wire.Slice(0, len(group)*n*es)
		for j, s := range group {
			if err := k.l.Copy(w.Slice(j*n*es, n*es), sendBlock(s)); err != nil {
				return err
			}
		}
		if err := out.send(w); err != nil {
			return err
		}
		rw := rwire.Slice(0, len(group)*n*es)
		if err := in.recv(rw); err != nil {
			return err
		}
		for j, s := range group {
			if err := recvDone(s, rw.Slice(j*n*es, n*es)); err != nil {
				return err
			}
		}
	}
	return nil
}

// patRun runs fn on each channel of a PAT collective over blocks of count
// elements.
func (k *call) patRun(count int, allgather bool, fn func(pc *patConns, pt part, chunk int) error) error {
	parts := channelParts(count, k.dt.Size(), k.nc, k.p, Simple)
	used := usedChannels(parts)
	if used == 0 {
		return nil
	}
	return k.runChannels(used, func(ctx context.Context, id int) error {
		pt := parts[id]
		chunk := patChunkBytes(pt.count*k.p*k.dt.Size(), allgather) / k.dt.Size()
		chunk = max(min(chunk, pt.count), 1)
		agg := max(patBuffer/(chunk*k.dt.Size()), 1)
		ch := newChannel(ctx, k.l, AlgoPAT, Simple, id, k.dt, k.op, 0, &k.hw, 1, 1, 0)
		pc := &patConns{k: k, ch: ch, send: map[int]*sendConn{}, recv: map[int]*recvConn{}, size: agg * chunk * k.dt.Size()}
		if err := fn(pc, pt, chunk); err != nil {
			return err
		}
		return pc.flush()
	})
}

// PatAllgather is NCCL's PAT allgather. c.Send is the rank's block, c.Buf
// the p blocks.
func PatAllgather(ctx context.Context, l algos.Link, c algos.Call) error {
	k, err := newCall(ctx, l, AlgoPAT, Simple, c)
	if err != nil {
		return err
	}
	es := k.dt.Size()
	count := c.Buf.Len() / es / k.p
	if c.Send != nil {
		if err := l.Copy(k.elems(c.Buf, k.me*count, count), c.Send); err != nil {
			return err
		}
	}
	if k.p == 1 {
		return nil
	}
	p, me := k.p, k.me
	return k.patRun(count, true, func(pc *patConns, pt part, chunk int) error {
		for e := 0; e < pt.count; e += chunk {
			n := min(chunk, pt.count-e)
			block := func(b int) device.Buffer { return k.elems(c.Buf, mod(b, p)*count+pt.off+e, n) }
			for d := patDims(p) - 1; d >= 0; d-- {
				dist := 1 << d
				// Send the blocks r+s' to r-2^d; receive r+2^d+s' from r+2^d.
				err := pc.exchange(patOffsets(p, d), max(patBuffer/(n*es), 1), n, mod(me-dist, p), mod(me+dist, p),
					func(s int) device.Buffer { return block(me + s) },
					func(s int, b device.Buffer) error { return l.Copy(block(me+dist+s), b) })
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// PatReduceScatter is NCCL's PAT reduce-scatter. c.Send holds the p input
// blocks and is not written; c.Buf receives the rank's block.
func PatReduceScatter(ctx context.Context, l algos.Link, c algos.Call) error {
	k, err := newCall(ctx, l, AlgoPAT, Simple, c)
	if err != nil {
		return err
	}
	es := k.dt.Size()
	count := c.Buf.Len() / es
	if c.Send == nil || c.Send.Len() != k.p*count*es {
		return fmtErr("reduce_scatter: want a send buffer of %d blocks of %d bytes", k.p, count*es)
	}
	if k.p == 1 {
		return l.Copy(c.Buf, c.Send)
	}
	p, me := k.p, k.me
	return k.patRun(count, false, func(pc *patConns, pt part, chunk int) error {
		acc := l.Alloc(p * chunk * es) // this rank's partial sums of every block's chunk
		for e := 0; e < pt.count; e += chunk {
			n := min(chunk, pt.count-e)
			// acc's slot j holds block me+j.
			slot := func(j int) device.Buffer { return acc.Slice(mod(j, p)*n*es, n*es) }
			for j := range p {
				if err := l.Copy(slot(j), k.elems(c.Send, mod(me+j, p)*count+pt.off+e, n)); err != nil {
					return err
				}
			}
			for d := range patDims(p) {
				dist := 1 << d
				// Send the partials of r+2^d+s' to r+2^d; reduce those of
				// r+s' from r-2^d.
				err := pc.exchange(patOffsets(p, d), max(patBuffer/(n*es), 1), n, mod(me+dist, p), mod(me-dist, p),
					func(s int) device.Buffer { return slot(dist + s) },
					func(s int, b device.Buffer) error { return l.Reduce(slot(s), b, k.dt, k.op) })
				if err != nil {
					return err
				}
			}
			if err := l.Copy(k.elems(c.Buf, pt.off+e, n), slot(0)); err != nil {
				return err
			}
		}
		return nil
	})
}
