package nccl

import (
	"context"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Chunk and slice steps of NCCL's rings (src/include/collectives.h): a
// chunk of an allreduce, allgather or reduce-scatter takes 4 slots of the
// FIFO, cut into 2 slices of 2 slots; a broadcast's or reduce's chunk is
// one slice of one slot. LL and LL128 always move a chunk of one slot as
// one slice.
const (
	collChunkSteps  = Steps / 2
	collSliceSteps  = Steps / 4
	pipeChunkSteps  = 1
	pipeSliceSteps  = 1
	treeChunkSteps  = 1
	treeSliceSteps  = 1
	simpleMinSlices = 32 // a Simple slice is at least a slot's slice / 32
)

// ringOrder returns the ring of channel c: the nodes in the order of their
// lowest rank, and within node k its ranks from local index (c - k) mod G,
// so that a channel enters each node on the GPU whose rail it left the
// previous node by (each hop between nodes stays on one rail) and
// different channels use different GPUs and rails to cross.
func (k *call) ringOrder(c int) []int {
	var order []int
	for i, ranks := range k.nodeRanks() {
		g := len(ranks)
		start := mod(c-i, g)
		for j := range g {
			order = append(order, ranks[(start+j)%g])
		}
	}
	return order
}

func mod(a, b int) int {
	a %= b
	if a < 0 {
		a += b
	}
	return a
}

// ring is one channel's ring as this rank sees it.
type ring struct {
	k      *call
	ch     *channel
	order  []int
	ix     int // this rank's position in order
	prev   *recvConn
	next   *sendConn
	me     int
	nRanks int
}

// newRing connects channel ch to its ring neighbours.
func (k *call) newRing(ch *channel, maxSlice int) *ring {
	order := k.ringOrder(ch.id)
	ix := 0
	for i, r := range order {
		if r == k.me {
			ix = i
		}
	}
	p := len(order)
	next, prev := order[(ix+1)%p], order[(ix+p-1)%p]
	return &ring{k: k, ch: ch, order: order, ix: ix, me: k.me, nRanks: p,
		prev: ch.receiver(roleRing, prev, maxSlice),
		next: ch.sender(roleRing, next, k.inter(k.me, next), maxSlice)}
}

// userRank returns the rank i positions after this one on the ring (NCCL's
// ring->userRanks[i]).
func (r *ring) userRank(i int) int { return r.order[(r.ix+i)%r.nRanks] }

// slices cuts a chunk of nelem elements into the channel's slices, as
// NCCL's primitives do: under Simple a slice is at least a 32nd of a
// slot's slice and the chunk's elements are shared by the slices in
// multiples of 16; the slices past the data are empty but are still
// stepped through (the FIFO's steps stay in line).
func (ch *channel) slices(nelem int) []int {
	out := make([]int, ch.slicesPerChunk)
	if ch.slicesPerChunk == 1 {
		out[0] = nelem
		return out
	}
	es := ch.dt.Size()
	sliceElems := ch.proto.stepSize() * ch.sliceSteps / es
	size := max(divUp(nelem, 16*ch.slicesPerChunk)*16, sliceElems/simpleMinSlices)
	off := 0
	for i := range out {
		n := min(size, nelem-off)
		out[i] = max(n, 0)
		off += out[i]
	}
	return out
}

// stepKind is what one step of a ring or tree does with a chunk.
type stepKind uint8

const (
	stepSend           stepKind = iota // send the chunk
	stepRecvReduceSend                 // receive, reduce into the chunk, send it on
	stepRecvCopySend                   // receive into the chunk, send it on
	stepRecv                           // receive into the chunk
	stepRecvReduce                     // receive and reduce into the chunk
)

// step runs one step on the nelem elements of buf from off, slice by slice,
// receiving from in and sending to out.
func (k *call) step(ch *channel, kind stepKind, in *recvConn, out *sendConn, buf device.Buffer, off, nelem int) error {
	for i, n := range ch.slices(nelem) {
		b := k.elems(buf, off, n)
		off += n
		if ch.empty(i, n) {
			if in != nil && kind != stepSend {
				in.skip()
			}
			if out != nil && (kind == stepSend || kind == stepRecvReduceSend || kind == stepRecvCopySend) {
				out.skip()
			}
			continue
		}
		var err error
		switch kind {
		case stepRecvReduceSend, stepRecvReduce:
			err = in.recvReduce(b)
		case stepRecvCopySend, stepRecv:
			err = in.recv(b)
		}
		if err != nil {
			return err
		}
		switch kind {
		case stepSend, stepRecvReduceSend, stepRecvCopySend:
			err = out.sendSlice(b, i == 0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ringChannel makes channel c of a ring collective: its protocol's
// slicing for chunkSteps and sliceSteps, the rate cap of NCCL's model for
// rings under the protocol, and the scratch its slices need.
func (k *call) ringChannel(c, used, chunkSteps, sliceSteps int) (*channel, int) {
	spc, ss := 1, 1
	if k.proto == Simple {
		spc, ss = chunkSteps/sliceSteps, sliceSteps
	}
	var rate float64
	switch k.proto {
	case LL:
		if k.hw.llBus > 0 {
			rate = k.hw.llBus / float64(used)
		}
	case LL128:
		rate = k.hw.ll128Ch
	}
	maxSlice := k.proto.chunkBytes(chunkSteps)
	if k.proto == Simple {
		maxSlice = k.proto.stepSize() * ss
	}
	ch := newChannel(k.ctx, k.l, AlgoRing, k.proto, c, k.dt, k.op, rate, &k.hw, ss, spc, maxSlice)
	return ch, maxSlice
}

// usedChannels is the number of leading parts with data.
func usedChannels(parts []part) int {
	n := 0
	for _, p := range parts {
		if p.count > 0 {
			n++
		}
	}
	return n
}

// RingAllreduce is NCCL's ring allreduce (src/device/all_reduce.h
// runRing) over the protocol: the buffer is split over the channels, each
// channel's part is cut into loops of p chunks, and each loop runs the
// ring's 2(p-1) steps (a send, p-2 receive-reduce-sends, a
// receive-reduce-copy-send, p-2 receive-copy-sends, a receive) chunk by
// chunk, each step slice by slice. The last loop's chunks shrink to
// ceil(rest/p) elements, aligned to 16 bytes.
func RingAllreduce(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	k, err := newCall(ctx, l, AlgoRing, proto, c)
	if err != nil || k.p == 1 {
		return err
	}
	count := c.Buf.Len() / k.dt.Size()
	return k.ringCollective(count, 2, collChunkSteps, collSliceSteps, func(r *ring, pt part, chunkCount int) error {
		return r.allreduce(c.Buf, pt, chunkCount)
	})
}

func (r *ring) allreduce(buf device.Buffer, pt part, chunkCount int) error {
	k, p := r.k, r.nRanks
	loopCount := p * chunkCount
	align := max(16/k.dt.Size(), 1)
	for elemOffset := 0; elemOffset < pt.count; elemOffset += loopCount {
		rem := pt.count - elemOffset
		ck := chunkCount
		if rem < loopCount {
			ck = alignUp(divUp(rem, p), align)
		}
		chunk := func(j int) (int, int) {
			o := j * ck
			if o >= rem { // an empty chunk: its steps still run, moving nothing
				return pt.off + pt.count, 0
			}
			return pt.off + elemOffset + o, min(ck, rem-o)
		}
		do := func(kind stepKind, j int) error {
			off, n := chunk(mod(j, p))
			return k.step(r.ch, kind, r.prev, r.next, buf, off, n)
		}
		if err := do(stepSend, r.ix+p-1); err != nil {
			return err
		}
		for j := 2; j < p; j++ {
			if err := do(stepRecvReduceSend, r.ix+p-j); err != nil {
				return err
			}
		}
		if err := do(stepRecvReduceSend, r.ix); err != nil {
			return err
		}
		for j := 1; j < p-1; j++ {
			if err := do(stepRecvCopySend, r.ix+p-j); err != nil {
				return err
			}
		}
		if err := do(stepRecv, r.ix+1); err != nil {
			return err
		}
	}
	return nil
}

// ringCollective runs fn on every channel with data of a ring collective
// whose count (as channelParts splits it) is count, with the chunk and
// slice steps of the collective.
func (k *call) ringCollective(count, trafficPerByte, chunkSteps, sliceSteps int, fn func(r *ring, pt part, chunkCount int) error) error {
	parts := channelParts(count, k.dt.Size(), k.nc, trafficPerByte, k.proto)
	used := usedChannels(parts)
	if used == 0 {
		return nil
	}
	chunkCount := k.proto.chunkBytes(chunkSteps) / k.dt.Size()
	return k.runChannels(used, func(ctx context.Context, id int) error {
		ch, maxSlice := k.ringChannel(id, used, chunkSteps, sliceSteps)
		ch.ctx = ctx
		r := k.newRing(ch, maxSlice)
		if err := fn(r, parts[id], chunkCount); err != nil {
			return err
		}
		return r.next.flush()
	})
}

// RingAllgather is NCCL's ring allgather (src/device/all_gather.h): each
// channel's part of the blocks goes around the ring chunk by chunk, p-1
// steps a chunk (a copy-send of the rank's own block, p-2
// receive-copy-sends, a receive). c.Send is the rank's block, c.Buf the
// p blocks.
func RingAllgather(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	k, err := newCall(ctx, l, AlgoRing, proto, c)
	if err != nil {
		return err
	}
	es := k.dt.Size()
	count := c.Buf.Len() / es / k.p
	if c.Send != nil && c.Send.Len() != count*es {
		return fmtErr("allgather: send buffer of %d bytes for blocks of %d", c.Send.Len(), count*es)
	}
	if c.Send != nil {
		if err := l.Copy(k.elems(c.Buf, k.me*count, count), c.Send); err != nil {
			return err
		}
	}
	if k.p == 1 {
		return nil
	}
	return k.ringCollective(count, k.p, collChunkSteps, collSliceSteps, func(r *ring, pt part, chunkCount int) error {
		p := r.nRanks
		for e := 0; e < pt.count; e += chunkCount {
			n := min(chunkCount, pt.count-e)
			at := func(rank int) int { return rank*count + pt.off + e }
			if err := k.step(r.ch, stepSend, nil, r.next, c.Buf, at(r.userRank(0)), n); err != nil {
				return err
			}
			for j := 1; j < p-1; j++ {
				if err := k.step(r.ch, stepRecvCopySend, r.prev, r.next, c.Buf, at(r.userRank(p-j)), n); err != nil {
					return err
				}
			}
			if err := k.step(r.ch, stepRecv, r.prev, nil, c.Buf, at(r.userRank(1)), n); err != nil {
				return err
			}
		}
		return nil
	})
}

// RingReduceScatter is NCCL's ring reduce-scatter
// (src/device/reduce_scatter.h): partial sums of each chunk go around the
// ring, p-1 steps a chunk (a send of the input block the rank before
// this one's predecessor ends with, p-2 receive-reduce-sends, and a
// receive-reduce into the rank's own output). c.Send holds the p input
// blocks and is not written; c.Buf receives the rank's block.
func RingReduceScatter(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	k, err := newCall(ctx, l, AlgoRing, proto, c)
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
	return k.ringCollective(count, k.p, collChunkSteps, collSliceSteps, func(r *ring, pt part, chunkCount int) error {
		p := r.nRanks
		for e := 0; e < pt.count; e += chunkCount {
			n := min(chunkCount, pt.count-e)
			input := func(rank int) int { return rank*count + pt.off + e }
			if err := k.step(r.ch, stepSend, nil, r.next, c.Send, input(r.userRank(p-1)), n); err != nil {
				return err
			}
			for j := 2; j < p; j++ {
				if err := k.reduceInputSend(r.ch, r.prev, r.next, c.Send, input(r.userRank(p-j)), n); err != nil {
					return err
				}
			}
			out := pt.off + e
			for i, sn := range r.ch.slices(n) {
				if r.ch.empty(i, sn) {
					r.prev.skip()
					continue
				}
				dst := k.elems(c.Buf, out, sn)
				if err := r.prev.recv(dst); err != nil {
					return err
				}
				if err := l.Reduce(dst, k.elems(c.Send, input(r.me)+out-pt.off-e, sn), k.dt, k.op); err != nil {
					return err
				}
				out += sn
			}
		}
		return nil
	})
}

// reduceInputSend is a receive-reduce-send whose own contribution is read
// from an input buffer that is not written: the partial sum is received
// into scratch, the input reduced into it, and the scratch sent on.
func (k *call) reduceInputSend(ch *channel, in *recvConn, out *sendConn, input device.Buffer, off, nelem int) error {
	for i, n := range ch.slices(nelem) {
		if ch.empty(i, n) {
			in.skip()
			out.skip()
			continue
		}
		tmp := ch.scratch.Slice(0, n*k.dt.Size())
		if err := in.recv(tmp); err != nil {
			return err
		}
		if err := k.l.Reduce(tmp, k.elems(input, off, n), k.dt, k.op); err != nil {
			return err
		}
		if err := out.sendSlice(tmp, i == 0); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// RingBroadcast is NCCL's ring broadcast (src/device/broadcast.h): the
// root's buffer flows along each channel's ring in chunks of one slot,
// pipelined: the root sends, the others receive and send on, the rank
// before the root only receives.
func RingBroadcast(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	k, err := newCall(ctx, l, AlgoRing, proto, c)
	if err != nil || k.p == 1 {
		return err
	}
	count := c.Buf.Len() / k.dt.Size()
	return k.ringCollective(count, 1, pipeChunkSteps, pipeSliceSteps, func(r *ring, pt part, chunkCount int) error {
		kind := stepRecvCopySend
		switch {
		case r.me == c.Root:
			kind = stepSend
		case r.userRank(1) == c.Root:
			kind = stepRecv
		}
		for e := 0; e < pt.count; e += chunkCount {
			if err := k.step(r.ch, kind, r.prev, r.next, c.Buf, pt.off+e, min(chunkCount, pt.count-e)); err != nil {
				return err
			}
		}
		return nil
	})
}

// RingReduce is NCCL's ring reduce (src/device/reduce.h): partial sums
// flow along each channel's ring from the rank after the root to the
// root, in chunks of one slot, pipelined; the root ends with the
// reduction, the others with partial sums.
func RingReduce(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	k, err := newCall(ctx, l, AlgoRing, proto, c)
	if err != nil || k.p == 1 {
		return err
	}
	count := c.Buf.Len() / k.dt.Size()
	return k.ringCollective(count, 1, pipeChunkSteps, pipeSliceSteps, func(r *ring, pt part, chunkCount int) error {
		kind := stepRecvReduceSend
		switch {
		case r.userRank(r.nRanks-1) == c.Root:
			kind = stepSend
		case r.me == c.Root:
			kind = stepRecvReduce
		}
		for e := 0; e < pt.count; e += chunkCount {
			if err := k.step(r.ch, kind, r.prev, r.next, c.Buf, pt.off+e, min(chunkCount, pt.count-e)); err != nil {
				return err
			}
		}
		return nil
	})
}
