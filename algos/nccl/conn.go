package nccl

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Tags. An algorithm's messages use the low 16 bits of the tag: the
// connection's role (a ring, a tree's up or down direction, ...) in bits
// 8-11 (processes of one channel that run at once use roles of their own,
// so that their messages and in-network operations, matched in the order
// each rank posts them, never cross), the channel in bits 2-7, and whether the message is a step's data
// or Simple's flag in bits 0-1. So a channel's connections never take
// another's messages, and two connections between one pair of ranks (a
// tree's up and down) never take each other's.
const (
	roleRing algos.Tag = iota
	roleTreeUp
	roleTreeDown
	rolePAT
	roleSwitch // an NVLS allgather's or reduce-scatter's, or a three-phase allreduce's scatter
	roleDirectScatter
	roleDirectGather
	roleSignal
	roleSwitchGather // a three-phase allreduce's gather
	roleSwitchInter  // a three-phase allreduce's SHARP between nodes
	kindData         = 0
	kindFlag         = 1
)

// MaxChannels is the most channels an algorithm may use (NCCL's
// MAXCHANNELS).
const MaxChannels = 64

func tagOf(role algos.Tag, channel int, kind algos.Tag) algos.Tag {
	return role<<8 | algos.Tag(channel)<<2 | kind
}

// channel is one of NCCL's channels as it runs on one rank: a process of
// its own (a thread block on the GPU) with its own connections, so that
// channels move data concurrently.
type channel struct {
	l     algos.Link
	ctx   context.Context
	proto Protocol
	id    int
	dt    device.DType
	op    device.Op
	// rate caps the data the channel sends per second (0: no cap): the
	// pace of the channel's threads where NCCL's model carries a measured
	// cap. step[0] is what a step inside a node holds the channel for
	// beyond the link's latency, step[1] a step's latency across nodes
	// beyond the link's and the proxy's; netHold is what the proxy's
	// posting of a step across nodes holds the channel for.
	rate    float64
	step    [2]time.Duration
	netHold time.Duration
	// sliceSteps is how many FIFO slots a slice takes, so a sender may
	// have Steps/sliceSteps slices outstanding; slices is how many slices
	// make a chunk (Simple's SlicePerChunk; 1 for LL and LL128).
	sliceSteps, slicesPerChunk int
	// scratch receives data to reduce.
	scratch device.Buffer
}

// newChannel returns channel id of a call of algorithm algo (NCCL's
// index, whose per-step costs it takes). maxSlice bounds the data of one
// slice, for the scratch buffers.
func newChannel(ctx context.Context, l algos.Link, algo int, proto Protocol, id int, dt device.DType, op device.Op, rate float64, hw *hardware, sliceSteps, slices, maxSlice int) *channel {
	return &channel{l: l, ctx: ctx, proto: proto, id: id, dt: dt, op: op, rate: rate, step: hw.step[algo][proto], netHold: hw.netHold(proto),
		sliceSteps: sliceSteps, slicesPerChunk: slices, scratch: l.Alloc(maxSlice)}
}

// window is how many slices a sender may have outstanding to one peer.
func (ch *channel) window() int { return max(Steps/ch.sliceSteps, 1) }

// sendConn is the sending end of one connection of a channel: its FIFO's
// slots, of which at most window() are in flight.
type sendConn struct {
	ch    *channel
	peer  int
	tag   algos.Tag
	inter bool // the hop leaves the node
	steps uint32
	// pending holds the requests of the slices in flight, oldest first;
	// wire and flags their buffers, slot by slot.
	pending []algos.Request
	wire    []device.Buffer
	flags   []device.Buffer
	next    int
	// sentAt and leaves are when, on the link's clock, the last message
	// of the connection was sent and when it leaves (a late send leaves
	// its lag after it is sent); see inOrder.
	sentAt, leaves time.Duration
}

// recvConn is the receiving end of a connection.
type recvConn struct {
	ch    *channel
	peer  int
	tag   algos.Tag
	steps uint32
	wire  device.Buffer
	flag  device.Buffer
}

func (ch *channel) sender(role algos.Tag, peer int, inter bool, maxSlice int) *sendConn {
	w := ch.window()
	c := &sendConn{ch: ch, peer: peer, tag: tagOf(role, ch.id, kindData), inter: inter,
		wire: make([]device.Buffer, w), flags: make([]device.Buffer, w)}
	if ch.proto != Simple {
		for i := range c.wire {
			c.wire[i] = ch.l.Alloc(ch.proto.wire(maxSlice))
		}
	} else {
		for i := range c.flags {
			c.flags[i] = ch.l.Alloc(flagBytes)
		}
	}
	return c
}

func (ch *channel) receiver(role algos.Tag, peer int, maxSlice int) *recvConn {
	c := &recvConn{ch: ch, peer: peer, tag: tagOf(role, ch.id, kindData)}
	if ch.proto != Simple {
		c.wire = ch.l.Alloc(ch.proto.wire(maxSlice))
	} else {
		c.flag = ch.l.Alloc(flagBytes)
	}
	return c
}

// send moves one slice of data to the peer. First what the step holds
// the channel for beyond the link (channel.step: inside a node the
// protocol's fences and flag polling; across nodes the proxy's posting of
// the step), in series; then a free slot; then the data in the protocol's
// format. Inside a node, Simple sends the data as it is, waits until it
// has landed (the fence) and sends the step's flag as a message of its
// own; LL and LL128 carry their flags in their lines and need no fence.
// Across nodes the proxy moves the data: nothing waits for it to land,
// Simple's data and flag leave together, and the step's latency beyond
// the link's (channel.lag) is in flight, holding nothing (a late send).
// Last, where NCCL's model caps what the channel moves (channel.rate), the
// channel's threads are busy for the slice's bytes at that rate while the
// message is on the wire: they stream lines as they come, so the cap and
// the transfer overlap rather than add. The caller must not modify data
// until the connection's later sends have freed its slot (see flush).
func (c *sendConn) send(data device.Buffer) error { return c.sendSlice(data, true) }

// sendSlice is send for one slice of a step: the step's costs are charged
// on its first slice only (NCCL's per-step latency is a step's, however
// many slices it is cut into).
func (c *sendConn) sendSlice(data device.Buffer, first bool) error {
	ch := c.ch
	var lag time.Duration
	if first {
		hold := ch.step[0]
		if c.inter {
			hold, lag = ch.netHold, ch.step[1]
		}
		if err := algos.Delay(ch.ctx, ch.l, hold); err != nil {
			return err
		}
	}
	if len(c.pending) == len(c.wire) {
		if err := ch.l.Wait(ch.ctx, c.pending[0]); err != nil {
			return err
		}
		c.pending = c.pending[1:]
	}
	// After the wait for a free slot, which may hold a first slice long
	// past its hold: its lag counts from when it is sent.
	if lag > 0 || c.leaves > 0 {
		lag = c.inOrder(ch.l.Now(), lag)
	}
	c.steps++
	slot := c.next
	c.next = (c.next + 1) % len(c.wire)
	if ch.proto != Simple {
		w := c.wire[slot].Slice(0, ch.proto.wire(data.Len()))
		if err := ch.proto.pack(ch.l, w, data, c.steps); err != nil {
			return err
		}
		c.pending = append(c.pending, algos.IsendAfter(ch.l, lag, c.peer, c.tag, w))
	} else {
		f := c.flags[slot]
		if h, ok := device.HostBytes(f); ok {
			binary.LittleEndian.PutUint64(h, uint64(c.steps))
		}
		if c.inter {
			if data.Len() > 0 {
				c.pending = append(c.pending, algos.IsendAfter(ch.l, lag, c.peer, c.tag, data))
			}
		} else if data.Len() > 0 {
			if err := algos.Send(ch.ctx, ch.l, c.peer, c.tag, data); err != nil {
				return err
			}
		}
		c.pending = append(c.pending, algos.IsendAfter(ch.l, lag, c.peer, c.tag|kindFlag, f))
	}
	if ch.rate > 0 {
		return algos.Delay(ch.ctx, ch.l, time.Duration(float64(data.Len())/ch.rate*1e9))
	}
	return nil
}

// inOrder returns the lag of a message sent now (on the link's clock,
// in whole nanoseconds) that should leave lag later, made long enough
// that it leaves after the connection's message before it: messages of
// one tag match their receives in the order they leave, and a second
// slice of a step that overtook the first, late, one would land in the
// first's receive. A message sent at the same instant as the one before
// leaves with it, behind it; one sent later, whose clock reading may lag
// the true time by up to a nanosecond, leaves a nanosecond after it.
func (c *sendConn) inOrder(now, lag time.Duration) time.Duration {
	if c.leaves > 0 && now+lag <= c.leaves {
		switch {
		case now == c.sentAt:
			lag = c.leaves - now
		default:
			lag = c.leaves - now + time.Nanosecond
		}
	}
	c.sentAt, c.leaves = now, now+lag
	return lag
}

// flush waits for every slice in flight.
func (c *sendConn) flush() error {
	err := c.ch.l.Wait(c.ch.ctx, c.pending...)
	c.pending = c.pending[:0]
	return err
}

// skip steps past an empty slice that follows another of its step: its
// flag is the same 8-byte word as the slice's before it, written with it,
// so it makes no message of its own (see channel.empty). The receiver
// skips it too.
func (c *sendConn) skip() { c.steps++ }

// skip steps past an empty slice (see sendConn.skip).
func (c *recvConn) skip() { c.steps++ }

// empty reports whether slice i of a step, of n elements, is an empty
// Simple slice after the step's first: NCCL still steps through it (the
// FIFO's steps stay in line), and its flag goes with the one before.
func (ch *channel) empty(i, n int) bool { return ch.proto == Simple && i > 0 && n == 0 }

// recv takes the next slice from the peer into data (data.Len() bytes,
// as the sender sent), checking the step's flags.
func (c *recvConn) recv(data device.Buffer) error {
	ch := c.ch
	c.steps++
	if ch.proto != Simple {
		w := c.wire.Slice(0, ch.proto.wire(data.Len()))
		if err := algos.Recv(ch.ctx, ch.l, c.peer, c.tag, w); err != nil {
			return err
		}
		return ch.proto.unpack(ch.l, data, w, c.steps)
	}
	reqs := []algos.Request{ch.l.Irecv(c.peer, c.tag|kindFlag, c.flag)}
	if data.Len() > 0 {
		reqs = append(reqs, ch.l.Irecv(c.peer, c.tag, data))
	}
	if err := ch.l.Wait(ch.ctx, reqs...); err != nil {
		return err
	}
	if h, ok := device.HostBytes(c.flag); ok {
		if f := binary.LittleEndian.Uint64(h); f != uint64(c.steps) {
			return &flagError{peer: c.peer, got: f, want: uint64(c.steps)}
		}
	}
	return nil
}

// recvReduce takes the next slice from the peer and reduces it into dst.
func (c *recvConn) recvReduce(dst device.Buffer) error {
	tmp := c.ch.scratch.Slice(0, dst.Len())
	if err := c.recv(tmp); err != nil {
		return err
	}
	return c.ch.l.Reduce(dst, tmp, c.ch.dt, c.ch.op)
}

type flagError struct {
	peer      int
	got, want uint64
}

func (e *flagError) Error() string {
	return fmt.Sprintf("nccl: Simple flag from rank %d is step %d, want %d", e.peer, e.got, e.want)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
