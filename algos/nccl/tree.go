package nccl

import (
	"context"
	"math"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Btree returns rank's parent and children in NCCL's binary tree over n
// ranks (ncclGetBtree in src/graph/trees.cc): rooted at 0, leaves and
// inner nodes alternating, the parent found from the lowest set bit.
// Missing links are -1; childType is 0 if rank is its parent's first
// child, 1 if its second.
func Btree(n, rank int) (up, down0, down1, childType int) {
	bit := 1
	for bit < n {
		if bit&rank != 0 {
			break
		}
		bit <<= 1
	}
	if rank == 0 {
		down1 = -1
		if n > 1 {
			down1 = bit >> 1
		}
		return -1, -1, down1, 0
	}
	up = (rank ^ bit) | (bit << 1)
	if up >= n {
		up = rank ^ bit
	}
	if rank >= up {
		childType = 1
	}
	lowbit := bit >> 1
	down0, down1 = -1, -1
	if lowbit != 0 {
		down0, down1 = rank-lowbit, rank+lowbit
	}
	for down1 >= n {
		down1 = -1
		if lowbit != 0 {
			down1 = rank + lowbit
		}
		lowbit >>= 1
	}
	return up, down0, down1, childType
}

// Dtree returns rank's links in tree t (0 or 1) of NCCL's double binary
// tree over n ranks (ncclGetDtree): tree 0 is Btree, tree 1 its mirror
// r -> n-1-r when n is even, its shift by one when n is odd, so that a
// rank that is a leaf of one tree is an inner node of the other.
func Dtree(n, rank, t int) (up, down0, down1, childType int) {
	if t == 0 {
		return Btree(n, rank)
	}
	if n%2 == 1 {
		u, d0, d1, ct := Btree(n, (rank-1+n)%n)
		shift := func(x int) int {
			if x == -1 {
				return -1
			}
			return (x + 1) % n
		}
		return shift(u), shift(d0), shift(d1), ct
	}
	u, d0, d1, ct := Btree(n, n-1-rank)
	mirror := func(x int) int {
		if x == -1 {
			return -1
		}
		return n - 1 - x
	}
	return mirror(u), mirror(d0), mirror(d1), ct
}

// treeLinks is one rank's place in one channel's tree: its parent (-1 at
// the root) and children, by rank.
type treeLinks struct {
	up   int
	down []int
}

// treeOf returns this rank's links in the tree of channel c when the call
// uses used channels: the first ceil(used/2) channels follow tree 0 of
// the double binary tree over nodes, the others tree 1 (NCCL duplicates
// its tree graph's channels, one copy per tree). Inside a node the ranks
// form a chain from its head, in the channel's order (the ring's
// rotation); between nodes the links follow NCCL's balanced pattern: the
// node's parent link and its second child hang off the chain's head, its
// first child off the chain's second rank (or the head, in a node of one
// rank). For a rooted collective (rooted) the tree is moved so that its
// root is root: the nodes are renumbered from root's node, root's node's
// chain starts at root, and every channel uses tree 0, whose root is
// node 0 (tree 1's is not).
func (k *call) treeOf(c, used, root int, rooted bool) treeLinks {
	graph := divUp(used, 2)
	t, rot := 0, c
	if c >= graph {
		t, rot = 1, c-graph
	}
	if rooted {
		// Tree 1's root is not node 0: a rooted collective uses tree 0
		// on every channel, each channel its own chain order.
		t = 0
	}
	nodes := k.nodeRanks()
	// Renumber the nodes so that root's node is node 0.
	start := 0
	for i, ranks := range nodes {
		for _, r := range ranks {
			if r == root {
				start = i
			}
		}
	}
	nn := len(nodes)
	intra := make([][]int, nn) // intra[i] is the chain of node i (renumbered)
	for i := range nn {
		ranks := nodes[(start+i)%nn]
		g := len(ranks)
		first := mod(rot, g)
		if i == 0 {
			for j, r := range ranks {
				if r == root {
					first = j
				}
			}
		}
		chain := make([]int, g)
		for j := range g {
			chain[j] = ranks[(first+j)%g]
		}
		intra[i] = chain
	}
	child0Index := func(i int) int { return min(1, len(intra[i])-1) }
	const parentIndex, child1Index = 0, 0
	var me treeLinks
	me.up = -1
	for i, chain := range intra {
		for j, r := range chain {
			if r != k.me {
				continue
			}
			if j > 0 {
				me.up = chain[j-1]
			}
			if j < len(chain)-1 {
				me.down = append(me.down, chain[j+1])
			}
			nu, nd0, nd1, ct := Dtree(nn, i, t)
			if j == parentIndex && nu != -1 {
				if ct == 0 {
					me.up = intra[nu][child0Index(nu)]
				} else {
					me.up = intra[nu][child1Index]
				}
			}
			if j == child0Index(i) && nd0 != -1 {
				me.down = append(me.down, intra[nd0][parentIndex])
			}
			if j == child1Index && nd1 != -1 {
				me.down = append(me.down, intra[nd1][parentIndex])
			}
		}
	}
	return me
}

// treeChunkBytes is a tree's chunk (calcCollChunking): one slot; under
// LL128 it halves for small calls, as NCCL's nstepsLL128 rule has it.
func (k *call) treeChunkBytes(channelBytes int) int {
	c := k.proto.chunkBytes(treeChunkSteps)
	if k.proto == LL128 {
		ppn := float64(k.p) / float64(k.nodes)
		steps := 1 + float64(log2i(k.nodes)) + 0.1*ppn
		for float64(channelBytes/c) < steps*64/ppn && c > 131072 {
			c /= 2
		}
		for float64(channelBytes/c) < steps*16/ppn && c > 32768 {
			c /= 2
		}
		c = c / k.proto.grain() * k.proto.grain()
	}
	return c
}

func log2i(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// treeRate is the cap on what one direction of a tree channel sends per
// second: NCCL's model caps a tree allreduce's bus bandwidth (what a
// channel sends up and down together) at perChMaxTreeBw, under LL128 at
// perChMaxTreeLL128Bw too, under LL at its GPU-wide llMaxBw.
func (k *call) treeRate(used int) float64 {
	rate := math.Inf(1)
	capAt := func(r float64) {
		if r > 0 {
			rate = min(rate, r)
		}
	}
	capAt(k.hw.treeCh)
	switch k.proto {
	case LL:
		capAt(k.hw.llBus / float64(used))
	case LL128:
		capAt(k.hw.treeLL128Ch)
	}
	if math.IsInf(rate, 1) {
		return 0
	}
	return rate / 2
}

// TreeAllreduce is NCCL's double binary tree allreduce
// (src/device/all_reduce.h runTreeSplit): each channel's part goes up its
// tree in chunks, reduced at every rank from its children, and comes
// down again from the root; the root reduces and sends each chunk back
// down at once, the other ranks run the way up and the way down as two
// processes of the channel, so that chunks go up and down at the same
// time. Half the channels use each of the two trees.
func TreeAllreduce(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	k, err := newCall(ctx, l, AlgoTree, proto, c)
	if err != nil || k.p == 1 {
		return err
	}
	count := c.Buf.Len() / k.dt.Size()
	parts := channelParts(count, k.dt.Size(), k.nc, 2, proto)
	used := usedChannels(parts)
	if used == 0 {
		return nil
	}
	return k.runChannels(used, func(ctx context.Context, id int) error {
		pt := parts[id]
		chunk := k.treeChunkBytes(pt.count*k.dt.Size()) / k.dt.Size()
		tl := k.treeOf(id, used, 0, false)
		maxSlice := chunk * k.dt.Size()
		newCh := func(ctx context.Context) *channel {
			return newChannel(ctx, l, AlgoTree, proto, id, k.dt, k.op, k.treeRate(used), &k.hw, treeSliceSteps, 1, maxSlice)
		}
		up := func(ctx context.Context) error {
			ch := newCh(ctx)
			return k.treeUp(ch, tl, c.Buf, pt, chunk, tl.up != -1)
		}
		down := func(ctx context.Context) error {
			return k.treeDown(newCh(ctx), tl, c.Buf, pt, chunk)
		}
		if tl.up == -1 {
			return k.treeRoot(newCh(ctx), tl, c.Buf, pt, chunk)
		}
		return k.concurrently(ctx, up, down)
	})
}

// concurrently runs fns as processes of the rank where the link can spawn
// them, else one after the other.
func (k *call) concurrently(ctx context.Context, fns ...func(ctx context.Context) error) error {
	sp, ok := algos.SpawnerOf(k.l)
	if !ok {
		for _, fn := range fns {
			if err := fn(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	reqs := make([]algos.Request, len(fns))
	for i, fn := range fns {
		reqs[i] = sp.Spawn(fn)
	}
	return k.l.Wait(ctx, reqs...)
}

// treeUp reduces each chunk from the children into buf and, unless this
// is the root, sends it up.
func (k *call) treeUp(ch *channel, tl treeLinks, buf device.Buffer, pt part, chunk int, send bool) error {
	var in []*recvConn
	for _, d := range tl.down {
		in = append(in, ch.receiver(roleTreeUp, d, chunk*k.dt.Size()))
	}
	var out *sendConn
	if send {
		out = ch.sender(roleTreeUp, tl.up, k.inter(k.me, tl.up), chunk*k.dt.Size())
	}
	for e := 0; e < pt.count; e += chunk {
		b := k.elems(buf, pt.off+e, min(chunk, pt.count-e))
		for _, rc := range in {
			if err := rc.recvReduce(b); err != nil {
				return err
			}
		}
		if out != nil {
			if err := out.send(b); err != nil {
				return err
			}
		}
	}
	if out != nil {
		return out.flush()
	}
	return nil
}

// treeDown receives each chunk from the parent into buf and sends it to
// the children.
func (k *call) treeDown(ch *channel, tl treeLinks, buf device.Buffer, pt part, chunk int) error {
	in := ch.receiver(roleTreeDown, tl.up, chunk*k.dt.Size())
	outs := k.treeSenders(ch, tl, chunk)
	for e := 0; e < pt.count; e += chunk {
		b := k.elems(buf, pt.off+e, min(chunk, pt.count-e))
		if err := in.recv(b); err != nil {
			return err
		}
		for _, sc := range outs {
			if err := sc.send(b); err != nil {
				return err
			}
		}
	}
	return flushAll(outs)
}

func (k *call) treeSenders(ch *channel, tl treeLinks, chunk int) []*sendConn {
	var outs []*sendConn
	for _, d := range tl.down {
		outs = append(outs, ch.sender(roleTreeDown, d, k.inter(k.me, d), chunk*k.dt.Size()))
	}
	return outs
}

func flushAll(outs []*sendConn) error {
	for _, sc := range outs {
		if err := sc.flush(); err != nil {
			return err
		}
	}
	return nil
}

// treeRoot reduces each chunk from the children and sends it straight back
// down (recvReduceCopySend).
func (k *call) treeRoot(ch *channel, tl treeLinks, buf device.Buffer, pt part, chunk int) error {
	var in []*recvConn
	for _, d := range tl.down {
		in = append(in, ch.receiver(roleTreeUp, d, chunk*k.dt.Size()))
	}
	outs := k.treeSenders(ch, tl, chunk)
	for e := 0; e < pt.count; e += chunk {
		b := k.elems(buf, pt.off+e, min(chunk, pt.count-e))
		for _, rc := range in {
			if err := rc.recvReduce(b); err != nil {
				return err
			}
		}
		for _, sc := range outs {
			if err := sc.send(b); err != nil {
				return err
			}
		}
	}
	return flushAll(outs)
}

// TreeBroadcast broadcasts from c.Root down the channels' trees (NCCL's
// TreeDown pattern, which calcCollChunking still names; NCCL 2.30's
// kernels broadcast on rings only), the trees moved so that the root is
// their root.
func TreeBroadcast(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	return treeRooted(ctx, l, c, proto, false)
}

// TreeReduce reduces to c.Root up the channels' trees (NCCL's TreeUp
// pattern; see TreeBroadcast).
func TreeReduce(ctx context.Context, l algos.Link, c algos.Call, proto Protocol) error {
	return treeRooted(ctx, l, c, proto, true)
}

func treeRooted(ctx context.Context, l algos.Link, c algos.Call, proto Protocol, reduce bool) error {
	k, err := newCall(ctx, l, AlgoTree, proto, c)
	if err != nil || k.p == 1 {
		return err
	}
	count := c.Buf.Len() / k.dt.Size()
	parts := channelParts(count, k.dt.Size(), k.nc, 1, proto)
	used := usedChannels(parts)
	if used == 0 {
		return nil
	}
	return k.runChannels(used, func(ctx context.Context, id int) error {
		pt := parts[id]
		chunk := k.treeChunkBytes(pt.count*k.dt.Size()) / k.dt.Size()
		tl := k.treeOf(id, used, c.Root, true)
		ch := newChannel(ctx, l, AlgoTree, proto, id, k.dt, k.op, k.treeRate(used)*2, &k.hw, treeSliceSteps, 1, chunk*k.dt.Size())
		if reduce {
			return k.treeUp(ch, tl, c.Buf, pt, chunk, tl.up != -1)
		}
		if tl.up == -1 {
			outs := k.treeSenders(ch, tl, chunk)
			for e := 0; e < pt.count; e += chunk {
				b := k.elems(c.Buf, pt.off+e, min(chunk, pt.count-e))
				for _, sc := range outs {
					if err := sc.send(b); err != nil {
						return err
					}
				}
			}
			return flushAll(outs)
		}
		return k.treeDown(ch, tl, c.Buf, pt, chunk)
	})
}
