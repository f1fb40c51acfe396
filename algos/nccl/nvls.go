package nccl

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// In-network reduction: NVLS (NVLink SHARP: an NVSwitch reduces what the
// GPUs of its domain load through a multicast address, multimem.ld_reduce,
// and replicates what one stores, multimem.st) and CollNet (InfiniBand
// SHARP: the switches of the fabric reduce what the nodes' NICs send).
// An allreduce runs in three phases per chunk, each a process of the
// channel, so that chunks flow through them as through NCCL's warp
// groups: inside each node a reduce-scatter leaves each rank its shard of
// the chunk reduced over the node; across nodes the ranks with the same
// local index allreduce their shard; inside each node an allgather gives
// every rank every shard. Phases hand chunks on by messages to the rank
// itself, which cost nothing.
//
//   - nccl_nvls: NVLS inside (G ld_reduce then G multicasts per chunk),
//     SHARP across nodes (NCCL runs NVLS across nodes only with CollNet).
//   - nccl_nvls_tree: NVLS inside, NCCL's double binary tree across.
//   - nccl_collnet_direct: direct NVLink inside (each rank sends shard j
//     to local rank j, which reduces; then sends its shard to every local
//     rank), SHARP across.

// nvlsChunkBytes is the chunk of NVLS and NVLS tree (calcCollChunking
// and ncclNvlsTuning): for NVLS NCCL_NVLS_CHUNKSIZE (128 KiB) on one
// node, 32 KiB across nodes (NCCL's rule for an NVLS bandwidth below 150
// GB/s, the common case with SHARP across nodes), then smaller for small
// calls: 64 KiB below 64 chunks per concurrent operation, 32 KiB below 8,
// 16 KiB below 2. For NVLS tree, 128 KiB capped by the tree's maximum (64
// KiB from 4 nodes, NCCL_NVLSTREE_MAX_CHUNKSIZE's default), then 64 KiB
// below 4 chunks per concurrent operation and 32 KiB below 1.
func nvlsChunkBytes(channelBytes, heads, nodes int, tree bool) int {
	c := 128 << 10
	ops := heads
	if tree {
		if nodes >= 4 {
			c = 64 << 10
		}
		if channelBytes < 4*ops*c && c > 65536 {
			c = 65536
		}
		if channelBytes < ops*c && c > 32768 {
			c = 32768
		}
		return c
	}
	if nodes > 1 {
		c = 32 << 10
	}
	if channelBytes < 64*ops*c && c > 65536 {
		c = 65536
	}
	if channelBytes < 8*ops*c && c > 32768 {
		c = 32768
	}
	if channelBytes < 2*ops*c && c > 16384 {
		c = 16384
	}
	return c
}

// needNVLS refuses NVLS on GPUs older than Hopper, which have no NVSwitch
// that reduces (NCCL's nvlsSupport needs compute capability 9.0); a
// machine that names no GPU may run it on any switch that reduces.
func (k *call) needNVLS() error {
	if k.hw.generation >= 0 && k.hw.generation < Hopper {
		return fmt.Errorf("nccl: NVLS needs Hopper or later GPUs (NVLink SHARP); these are %s", k.hw.generation)
	}
	return nil
}

// layout is the nodes of a call for the three-phase algorithms. A chunk
// is cut into as many shards as the largest node has ranks; in node n the
// owner of shard i is its local rank i mod G_n, so that in nodes of equal
// size every rank owns one shard, and in smaller nodes some own several.
// The owners of shard i across the nodes allreduce it between nodes.
type layout struct {
	nodes  [][]int // the ranks of each node
	myNode int     // this rank's node
	local  []int   // its ranks
	shards int     // shards a chunk is cut into
	mine   []int   // the shards this rank owns, ascending
}

func (k *call) layout() layout {
	var lo layout
	lo.nodes = k.nodeRanks()
	for ni, n := range lo.nodes {
		lo.shards = max(lo.shards, len(n))
		for _, r := range n {
			if r == k.me {
				lo.myNode, lo.local = ni, n
			}
		}
	}
	for i := range lo.shards {
		if lo.owner(lo.myNode, i) == k.me {
			lo.mine = append(lo.mine, i)
		}
	}
	return lo
}

// owner returns the rank of node n that owns shard i.
func (lo layout) owner(n, i int) int { return lo.nodes[n][i%len(lo.nodes[n])] }

// heads returns the owners of shard i, one a node, in node order.
func (lo layout) heads(i int) []int {
	out := make([]int, len(lo.nodes))
	for n := range lo.nodes {
		out[n] = lo.owner(n, i)
	}
	return out
}

func sortedCopy(s []int) []int {
	out := append([]int(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// intraKind and interKind name the phases of a three-phase allreduce.
type intraKind uint8

const (
	intraNVLS intraKind = iota
	intraDirect
)

type interKind uint8

const (
	interSHARP interKind = iota
	interTree
)

// Kinds of the phases' hand-over messages to the rank itself.
const (
	sigScattered algos.Tag = 0
	sigReduced   algos.Tag = 1
)

// threePhase is one channel of a three-phase allreduce.
type threePhase struct {
	k       *call
	lo      layout
	intra   intraKind
	inter   interKind
	buf     device.Buffer
	pt      part
	chunk   int
	id      int
	used    int
	nChunks int
	// ld and mc are NVLS's operations for each shard's owner in this
	// rank's node, made once: a call posts them chunk after chunk.
	ld, mc []switchOp
}

// threePhaseAllreduce runs an in-network allreduce (see the notes above)
// with the given phases.
func threePhaseAllreduce(ctx context.Context, l algos.Link, c algos.Call, algo int, intra intraKind, inter interKind) error {
	k, err := newCall(ctx, l, algo, Simple, c)
	if err != nil || k.p == 1 {
		return err
	}
	if intra == intraNVLS {
		if err := k.needNVLS(); err != nil {
			return err
		}
	}
	lo := k.layout()
	count := c.Buf.Len() / k.dt.Size()
	parts := channelParts(count, k.dt.Size(), k.nc, 2, Simple)
	used := usedChannels(parts)
	if used == 0 {
		return nil
	}
	return k.runChannels(used, func(ctx context.Context, id int) error {
		pt := parts[id]
		chunk := nvlsChunkBytes(pt.count*k.dt.Size(), lo.shards, len(lo.nodes), algo == AlgoNVLSTree) / k.dt.Size()
		chunk = max(chunk/lo.shards*lo.shards, lo.shards)
		tp := &threePhase{k: k, lo: lo, intra: intra, inter: inter, buf: c.Buf, pt: pt, chunk: chunk, id: id, used: used,
			nChunks: divUp(pt.count, chunk)}
		return tp.run(ctx)
	})
}

func (tp *threePhase) run(ctx context.Context) error {
	for i := range tp.lo.shards {
		owner := tp.lo.owner(tp.lo.myNode, i)
		tp.ld = append(tp.ld, ldReduce(tp.lo.local, owner))
		tp.mc = append(tp.mc, multicast(tp.lo.local, owner))
	}
	kc := *tp.k
	kc.ctx = ctx
	k := &kc
	tp.k = k
	ch := newChannel(ctx, k.l, AlgoRing, Simple, tp.id, k.dt, k.op, 0, &k.hw, 1, 1, tp.chunk*k.dt.Size())
	var groups [][]int
	if tp.intra == intraNVLS && len(tp.lo.local) > 1 {
		groups = append(groups, tp.lo.local)
	}
	if tp.inter == interSHARP && len(tp.lo.nodes) > 1 {
		for _, i := range tp.lo.mine {
			groups = append(groups, sortedCopy(tp.lo.heads(i)))
		}
	}
	var sn *switchNet
	if len(groups) > 0 {
		var err error
		if sn, err = k.newSwitchNet(ch, groups, "an in-network allreduce"); err != nil {
			return err
		}
	}
	scatter := func(ctx context.Context) error { return tp.scatterPhase(ctx, sn) }
	across := func(ctx context.Context) error { return tp.interPhase(ctx, sn) }
	gather := func(ctx context.Context) error { return tp.gatherPhase(ctx, sn) }
	return k.concurrently(ctx, scatter, across, gather)
}

// shard returns shard i of chunk c: its element offset and count.
func (tp *threePhase) shard(c, i int) (int, int) {
	o := c * tp.chunk
	n := min(tp.chunk, tp.pt.count-o)
	g := tp.lo.shards
	q, r := n/g, n%g
	return tp.pt.off + o + i*q + min(i, r), q + b2i(i < r)
}

func (tp *threePhase) shardBuf(c, i int) device.Buffer {
	off, n := tp.shard(c, i)
	return tp.k.elems(tp.buf, off, n)
}

// signal hands chunk c on to the next phase; await waits for it.
func (tp *threePhase) signal(kind algos.Tag) algos.Request {
	return tp.k.l.Isend(tp.k.me, tagOf(roleSignal, tp.id, kind), tp.k.l.Alloc(0))
}

func (tp *threePhase) await(ctx context.Context, kind algos.Tag) error {
	return algos.Recv(ctx, tp.k.l, tp.k.me, tagOf(roleSignal, tp.id, kind), tp.k.l.Alloc(0))
}

// scatterPhase leaves the shards this rank owns of every chunk reduced
// over its node.
func (tp *threePhase) scatterPhase(ctx context.Context, sn *switchNet) error {
	k, lo := tp.k, tp.lo
	var sigs []algos.Request
	var conns *directConns
	if tp.intra == intraDirect {
		conns = newDirectConns(k, ctx, tp.id, roleDirectScatter, tp.chunk)
	}
	for c := range tp.nChunks {
		if len(lo.local) > 1 {
			var err error
			if tp.intra == intraNVLS {
				err = tp.nvlsScatter(sn, c)
			} else {
				err = tp.directScatter(conns, c)
			}
			if err != nil {
				return err
			}
		}
		sigs = append(sigs, tp.signal(sigScattered))
	}
	if conns != nil {
		if err := conns.flush(); err != nil {
			return err
		}
	}
	return k.l.Wait(ctx, sigs...)
}

func (tp *threePhase) nvlsScatter(sn *switchNet, c int) error {
	k, lo := tp.k, tp.lo
	tmp := map[int]device.Buffer{}
	var reqs []algos.Request
	for i := range lo.shards {
		owner := lo.owner(lo.myNode, i)
		var recv device.Buffer
		if owner == k.me {
			recv = k.l.Alloc(tp.shardBuf(c, i).Len())
			tmp[i] = recv
		}
		rq, err := sn.post(roleSwitch, tp.ld[i], tp.shardBuf(c, i), recv)
		if err != nil {
			return err
		}
		reqs = append(reqs, rq...)
	}
	if err := k.l.Wait(k.ctx, reqs...); err != nil {
		return err
	}
	for _, i := range lo.mine {
		if err := k.l.Copy(tp.shardBuf(c, i), tmp[i]); err != nil {
			return err
		}
	}
	return nil
}

func (tp *threePhase) directScatter(dc *directConns, c int) error {
	k, lo := tp.k, tp.lo
	for i := range lo.shards {
		if owner := lo.owner(lo.myNode, i); owner != k.me {
			if err := dc.to(owner).send(tp.shardBuf(c, i)); err != nil {
				return err
			}
		}
	}
	for _, i := range lo.mine {
		for _, peer := range lo.local {
			if peer == k.me {
				continue
			}
			if err := dc.from(peer).recvReduce(tp.shardBuf(c, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// interPhase allreduces the shards this rank owns of every chunk across
// nodes.
func (tp *threePhase) interPhase(ctx context.Context, sn *switchNet) error {
	k, lo := tp.k, tp.lo
	if len(lo.nodes) > 1 && len(lo.mine) > 0 && tp.inter == interTree {
		return tp.treeInter(ctx)
	}
	var sigs []algos.Request
	for c := range tp.nChunks {
		if err := tp.await(ctx, sigScattered); err != nil {
			return err
		}
		if len(lo.nodes) > 1 {
			for _, i := range lo.mine {
				mine := tp.shardBuf(c, i)
				tmp := k.l.Alloc(mine.Len())
				rq, err := sn.post(roleSwitchInter, allreduceOp(sortedCopy(lo.heads(i))), mine, tmp)
				if err != nil {
					return err
				}
				if err := k.l.Wait(ctx, rq...); err != nil {
					return err
				}
				if err := k.l.Copy(mine, tmp); err != nil {
					return err
				}
			}
		}
		sigs = append(sigs, tp.signal(sigReduced))
	}
	return k.l.Wait(ctx, sigs...)
}

// shardTree is this rank's place in the tree of one shard it owns: NCCL's
// double binary tree over the nodes, whose ranks are the shard's owners.
type shardTree struct {
	shard int
	links treeLinks
}

// treeInter allreduces the owned shards across nodes along NCCL's double
// binary tree over their owners, the way up and the way down as processes
// of their own, chunk by chunk.
func (tp *threePhase) treeInter(ctx context.Context) error {
	k, lo := tp.k, tp.lo
	nn := len(lo.nodes)
	t := 0
	if tp.id >= divUp(tp.used, 2) {
		t = 1
	}
	var trees []shardTree
	root := false
	for _, i := range lo.mine {
		heads := lo.heads(i)
		u, d0, d1, _ := Dtree(nn, lo.myNode, t)
		st := shardTree{shard: i, links: treeLinks{up: -1}}
		if u != -1 {
			st.links.up = heads[u]
		}
		for _, d := range []int{d0, d1} {
			if d != -1 {
				st.links.down = append(st.links.down, heads[d])
			}
		}
		root = u == -1
		trees = append(trees, st)
	}
	maxShard := divUp(tp.chunk, lo.shards) * k.dt.Size()
	newCh := func(ctx context.Context) *channel {
		return newChannel(ctx, k.l, AlgoTree, Simple, tp.id, k.dt, k.op, 0, &k.hw, 1, 1, maxShard)
	}
	up := func(ctx context.Context) error {
		dc := &directConns{ch: newCh(ctx), k: k, role: roleTreeUp, size: maxShard, send: map[int]*sendConn{}, recv: map[int]*recvConn{}}
		downs := &directConns{ch: dc.ch, k: k, role: roleTreeDown, size: maxShard, send: map[int]*sendConn{}, recv: map[int]*recvConn{}}
		var sigs []algos.Request
		for c := range tp.nChunks {
			if err := tp.await(ctx, sigScattered); err != nil {
				return err
			}
			for _, st := range trees {
				b := tp.shardBuf(c, st.shard)
				for _, d := range st.links.down {
					if err := dc.from(d).recvReduce(b); err != nil {
						return err
					}
				}
				if st.links.up != -1 {
					if err := dc.to(st.links.up).send(b); err != nil {
						return err
					}
					continue
				}
				for _, d := range st.links.down {
					if err := downs.to(d).send(b); err != nil {
						return err
					}
				}
			}
			if root {
				sigs = append(sigs, tp.signal(sigReduced))
			}
		}
		if err := dc.flush(); err != nil {
			return err
		}
		if err := downs.flush(); err != nil {
			return err
		}
		return k.l.Wait(ctx, sigs...)
	}
	down := func(ctx context.Context) error {
		dc := &directConns{ch: newCh(ctx), k: k, role: roleTreeDown, size: maxShard, send: map[int]*sendConn{}, recv: map[int]*recvConn{}}
		var sigs []algos.Request
		for c := range tp.nChunks {
			for _, st := range trees {
				b := tp.shardBuf(c, st.shard)
				if err := dc.from(st.links.up).recv(b); err != nil {
					return err
				}
				for _, d := range st.links.down {
					if err := dc.to(d).send(b); err != nil {
						return err
					}
				}
			}
			sigs = append(sigs, tp.signal(sigReduced))
		}
		if err := dc.flush(); err != nil {
			return err
		}
		return k.l.Wait(ctx, sigs...)
	}
	if root {
		return up(ctx)
	}
	return k.concurrently(ctx, up, down)
}

// gatherPhase gives every local rank every shard of each chunk.
func (tp *threePhase) gatherPhase(ctx context.Context, sn *switchNet) error {
	k, lo := tp.k, tp.lo
	var conns *directConns
	if tp.intra == intraDirect {
		conns = newDirectConns(k, ctx, tp.id, roleDirectGather, tp.chunk)
	}
	for c := range tp.nChunks {
		if err := tp.await(ctx, sigReduced); err != nil {
			return err
		}
		if len(lo.local) == 1 {
			continue
		}
		if tp.intra == intraNVLS {
			var reqs []algos.Request
			for i := range lo.shards {
				owner := lo.owner(lo.myNode, i)
				var send, recv device.Buffer
				if owner == k.me {
					send = tp.shardBuf(c, i)
				} else {
					recv = tp.shardBuf(c, i)
				}
				rq, err := sn.post(roleSwitchGather, tp.mc[i], send, recv)
				if err != nil {
					return err
				}
				reqs = append(reqs, rq...)
			}
			if err := k.l.Wait(ctx, reqs...); err != nil {
				return err
			}
			continue
		}
		for _, i := range lo.mine {
			for _, peer := range lo.local {
				if peer != k.me {
					if err := conns.to(peer).send(tp.shardBuf(c, i)); err != nil {
						return err
					}
				}
			}
		}
		for i := range lo.shards {
			if owner := lo.owner(lo.myNode, i); owner != k.me {
				if err := conns.from(owner).recv(tp.shardBuf(c, i)); err != nil {
					return err
				}
			}
		}
	}
	if conns != nil {
		return conns.flush()
	}
	return nil
}

// directConns are one channel's Simple connections to the other ranks of
// its node, opened as needed.
type directConns struct {
	ch   *channel
	k    *call
	role algos.Tag
	size int
	send map[int]*sendConn
	recv map[int]*recvConn
}

func newDirectConns(k *call, ctx context.Context, id int, role algos.Tag, chunk int) *directConns {
	size := divUp(chunk, 1) * k.dt.Size()
	ch := newChannel(ctx, k.l, AlgoRing, Simple, id, k.dt, k.op, 0, &k.hw, 1, 1, size)
	return &directConns{ch: ch, k: k, role: role, size: size, send: map[int]*sendConn{}, recv: map[int]*recvConn{}}
}

func (dc *directConns) to(peer int) *sendConn {
	if c, ok := dc.send[peer]; ok {
		return c
	}
	c := dc.ch.sender(dc.role, peer, dc.k.inter(dc.k.me, peer), dc.size)
	dc.send[peer] = c
	return c
}

func (dc *directConns) from(peer int) *recvConn {
	if c, ok := dc.recv[peer]; ok {
		return c
	}
	c := dc.ch.receiver(dc.role, peer, dc.size)
	dc.recv[peer] = c
	return c
}

func (dc *directConns) flush() error {
	for _, peer := range sortedKeys(dc.send) {
		if err := dc.send[peer].flush(); err != nil {
			return err
		}
	}
	return nil
}

// NVLSAllreduce is NCCL's NVLS allreduce: NVLS inside each NVLink
// domain, SHARP across domains.
func NVLSAllreduce(ctx context.Context, l algos.Link, c algos.Call) error {
	return threePhaseAllreduce(ctx, l, c, AlgoNVLS, intraNVLS, interSHARP)
}

// NVLSTreeAllreduce is NCCL's NVLS-tree allreduce: NVLS inside each
// NVLink domain, the double binary tree across domains.
func NVLSTreeAllreduce(ctx context.Context, l algos.Link, c algos.Call) error {
	return threePhaseAllreduce(ctx, l, c, AlgoNVLSTree, intraNVLS, interTree)
}

// CollNetDirectAllreduce is NCCL's CollNet-direct allreduce: direct
// NVLink transfers inside each node, SHARP across nodes.
func CollNetDirectAllreduce(ctx context.Context, l algos.Link, c algos.Call) error {
	return threePhaseAllreduce(ctx, l, c, AlgoCollNetDirect, intraDirect, interSHARP)
}

// nvlsSingle runs fn per chunk of each channel of an NVLS allgather or
// reduce-scatter, within one NVLink domain.
func nvlsSingle(ctx context.Context, l algos.Link, c algos.Call, count int, what string, fn func(k *call, sn *switchNet, lo layout, off, n int) error) error {
	k, err := newCall(ctx, l, AlgoNVLS, Simple, c)
	if err != nil || k.p == 1 {
		return err
	}
	if err := k.needNVLS(); err != nil {
		return err
	}
	lo := k.layout()
	if len(lo.nodes) > 1 {
		if algos.IsModel(l) {
			return fmt.Errorf("nccl: %s runs inside one NVLink domain; these %d ranks span %d (NCCL needs CollNet's allgather and reduce-scatter across nodes)", what, k.p, len(lo.nodes))
		}
		// On real links a rank stands in for the switch, for any group.
		lo.local = make([]int, k.p)
		for r := range lo.local {
			lo.local[r] = r
		}
	}
	parts := channelParts(count, k.dt.Size(), k.nc, k.p, Simple)
	used := usedChannels(parts)
	if used == 0 {
		return nil
	}
	return k.runChannels(used, func(ctx context.Context, id int) error {
		kc := *k
		kc.ctx = ctx
		pt := parts[id]
		chunk := max(nvlsChunkBytes(pt.count*k.dt.Size()*k.p, k.p, 1, false)/k.dt.Size(), 1)
		ch := newChannel(ctx, l, AlgoRing, Simple, id, k.dt, k.op, 0, &k.hw, 1, 1, 0)
		sn, err := kc.newSwitchNet(ch, [][]int{lo.local}, what)
		if err != nil {
			return err
		}
		for e := 0; e < pt.count; e += chunk {
			if err := fn(&kc, sn, lo, pt.off+e, min(chunk, pt.count-e)); err != nil {
				return err
			}
		}
		return nil
	})
}

// NVLSAllgather is NCCL's NVLS allgather inside one NVLink domain: each
// rank stores its block to the domain's multicast address, chunk by
// chunk, and the switch replicates it to every other rank.
func NVLSAllgather(ctx context.Context, l algos.Link, c algos.Call) error {
	es := c.DType.Size()
	p := l.Size()
	count := c.Buf.Len() / es / p
	if c.Send != nil {
		if err := l.Copy(c.Buf.Slice(l.Rank()*count*es, count*es), c.Send); err != nil {
			return err
		}
	}
	return nvlsSingle(ctx, l, c, count, "nccl_nvls allgather", func(k *call, sn *switchNet, lo layout, off, n int) error {
		var reqs []algos.Request
		for _, owner := range lo.local {
			b := k.elems(c.Buf, owner*count+off, n)
			var send, recv device.Buffer
			if owner == k.me {
				send = b
			} else {
				recv = b
			}
			rq, err := sn.post(roleSwitch, multicast(lo.local, owner), send, recv)
			if err != nil {
				return err
			}
			reqs = append(reqs, rq...)
		}
		return k.l.Wait(k.ctx, reqs...)
	})
}

// NVLSReduceScatter is NCCL's NVLS reduce-scatter inside one NVLink
// domain: each rank loads its block of every rank's input through the
// multicast address, the switch reducing them, chunk by chunk.
func NVLSReduceScatter(ctx context.Context, l algos.Link, c algos.Call) error {
	es := c.DType.Size()
	p := l.Size()
	count := c.Buf.Len() / es
	if c.Send == nil || c.Send.Len() != p*count*es {
		return fmtErr("reduce_scatter: want a send buffer of %d blocks of %d bytes", p, count*es)
	}
	if p == 1 {
		return l.Copy(c.Buf, c.Send)
	}
	return nvlsSingle(ctx, l, c, count, "nccl_nvls reduce_scatter", func(k *call, sn *switchNet, lo layout, off, n int) error {
		var reqs []algos.Request
		for _, owner := range lo.local {
			var recv device.Buffer
			if owner == k.me {
				recv = k.elems(c.Buf, off, n)
			}
			rq, err := sn.post(roleSwitch, ldReduce(lo.local, owner), k.elems(c.Send, owner*count+off, n), recv)
			if err != nil {
				return err
			}
			reqs = append(reqs, rq...)
		}
		return k.l.Wait(k.ctx, reqs...)
	})
}
