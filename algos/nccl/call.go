package nccl

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// call is one rank's view of one NCCL collective: the link, the protocol,
// the hardware it runs on and how the data is split over channels.
type call struct {
	ctx   context.Context
	l     algos.Link
	proto Protocol
	dt    device.DType
	op    device.Op
	p, me int
	nc    int // channels asked for
	// node is each rank's node (nil: one node); nodes the number of them.
	node  []int
	nodes int
	hw    hardware
}

// newCall reads the machine of l and the call's channel count (the
// "channels" parameter; 0 takes the machine's, else 1), and charges the
// call's fixed cost for algo (NCCL's algorithm index) under proto on a
// model (see hardware.base).
func newCall(ctx context.Context, l algos.Link, algo int, proto Protocol, c algos.Call) (*call, error) {
	m := algos.MachineOf(l)
	p := l.Size()
	k := &call{ctx: ctx, l: l, proto: proto, dt: c.DType, op: c.Op, p: p, me: l.Rank()}
	k.nc = c.Param("channels", 0)
	if k.nc == 0 && m != nil {
		k.nc = m.Channels
	}
	k.nc = max(k.nc, 1)
	if k.nc > MaxChannels {
		return nil, fmt.Errorf("nccl: %d channels, more than NCCL's %d", k.nc, MaxChannels)
	}
	if m != nil && m.Node != nil {
		if len(m.Node) < p {
			return nil, fmt.Errorf("nccl: the machine places %d ranks, fewer than the world's %d", len(m.Node), p)
		}
		k.node = m.Node[:p]
	}
	k.nodes = m.Nodes(p)
	hw, err := resolveHardware(m, k.nodes, p)
	if err != nil {
		return nil, err
	}
	k.hw = hw
	if p > 1 {
		if err := algos.Delay(ctx, l, hw.base[algo][proto]); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// nodeOf returns the node of rank r.
func (k *call) nodeOf(r int) int {
	if k.node == nil {
		return 0
	}
	return k.node[r]
}

// inter reports whether a hop from rank a to rank b leaves a's node.
func (k *call) inter(a, b int) bool { return k.nodeOf(a) != k.nodeOf(b) }

// nodeRanks returns the ranks of each node, nodes in the order of their
// lowest rank, ranks ascending within a node.
func (k *call) nodeRanks() [][]int {
	var out [][]int
	index := map[int]int{}
	for r := range k.p {
		n := k.nodeOf(r)
		i, ok := index[n]
		if !ok {
			i = len(out)
			index[n] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// part is the share of one channel: count elements from off.
type part struct{ off, count int }

// minTrafficPerChannel is the least traffic NCCL gives a channel
// (MinTrafficPerChannel in enqueue.cc): small calls use fewer channels.
const minTrafficPerChannel = 32 << 10

// channelParts splits count elements over at most nc channels as NCCL
// does (enqueue.cc, ncclCollCbdPart): in cells of
// minTrafficPerChannel/trafficPerByte bytes (LL counts four times its
// traffic), as many cells to each channel as an even share of the
// traffic gives, the last channel the rest. Channels past the data get
// nothing. trafficPerByte is 2 for allreduce, p for allgather and
// reduce-scatter (whose count is one rank's block), 1 otherwise.
func channelParts(count, elemSize, nc, trafficPerByte int, proto Protocol) []part {
	parts := make([]part, nc)
	if count == 0 {
		return parts
	}
	if proto == LL {
		trafficPerByte *= 4
	}
	cell := alignUp(divUp(minTrafficPerChannel, trafficPerByte), 16)
	perCell := max(cell/elemSize, 1)
	cells := divUp(count, perCell)
	perChannel := divUp(cells, nc)
	off := 0
	for c := range nc {
		n := min(perChannel*perCell, count-off)
		if n <= 0 {
			break
		}
		parts[c] = part{off, n}
		off += n
	}
	return parts
}

// chunkBytes is the chunk size of calcCollChunking before the kernel's
// own adjustments: a slot's data times the chunk steps (which only
// Simple's rings take; a chunk of LL, LL128 or a tree is one slot),
// aligned down to the protocol's grain.
func (p Protocol) chunkBytes(chunkSteps int) int {
	if p != Simple {
		chunkSteps = 1
	}
	c := p.stepSize() * chunkSteps
	switch p {
	case LL:
		c /= 2
	case LL128:
		c = c / ll128LineBytes * ll128LineData
	}
	return c / p.grain() * p.grain()
}

// runChannels runs fn for each channel that has data, concurrently where
// the link can spawn processes (as NCCL's channels are thread blocks of
// one kernel), one after another otherwise.
func (k *call) runChannels(n int, fn func(ctx context.Context, c int) error) error {
	if n == 1 {
		return fn(k.ctx, 0)
	}
	sp, ok := algos.SpawnerOf(k.l)
	if !ok {
		for c := range n {
			if err := fn(k.ctx, c); err != nil {
				return err
			}
		}
		return nil
	}
	reqs := make([]algos.Request, n)
	for c := range n {
		reqs[c] = sp.Spawn(func(ctx context.Context) error { return fn(ctx, c) })
	}
	return k.l.Wait(k.ctx, reqs...)
}

func divUp(a, b int) int   { return (a + b - 1) / b }
func alignUp(a, b int) int { return divUp(a, b) * b }

// elems returns the elements of buf from element off, n of them.
func (k *call) elems(buf device.Buffer, off, n int) device.Buffer {
	es := k.dt.Size()
	return buf.Slice(off*es, n*es)
}

func fmtErr(format string, args ...any) error {
	return fmt.Errorf("nccl: "+format, args...)
}
