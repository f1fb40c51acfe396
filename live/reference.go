package live

import (
	"bytes"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sweep"
)

// rankData is one rank's buffers for one point: what it starts every
// iteration with, and what it must end with.
type rankData struct {
	call algos.Call
	// send0 and buf0 are the pristine inputs, restored before every
	// iteration: in-place collectives overwrite their input.
	send0, buf0 []byte
	// want is what Buf must hold after the collective, nil when this
	// rank's Buf is not the collective's to define (a reduce's non-root).
	want []byte
	// link, for a link whose memory is not host memory (a staging
	// link's GPU), is the link whose Copy puts the inputs into Buf and
	// Send and takes Buf's result out into got, a host copy, to check.
	link algos.Link
	got  []byte
}

// refMaker fills one rank's buffers for a point and says what they must
// hold afterwards, from the references of algotest: inputs chosen so that
// every order of reduction gives the same bits, outputs pre-filled with
// garbage so that an element never written is caught.
type refMaker func(p sweep.Point, rank int, send, buf []byte) (want []byte)

var references = map[string]refMaker{
	"allreduce": func(p sweep.Point, rank int, _, buf []byte) []byte {
		n := used(p)
		algotest.Fill(buf[:n*p.DType.Size()], p.DType, p.Op, rank, p.World, p.Seed)
		// A lossy (compressed) allreduce must leave the same compression
		// of the same inputs, exactly; so wrong counts its errors too.
		return algotest.AllreduceExpected(p.Algorithm, p.Params, n, p.DType, p.Op, p.World, p.Seed)
	},
	"reduce_scatter": func(p sweep.Point, rank int, send, buf []byte) []byte {
		b := block(p)
		copy(send, algotest.ReduceScatterInput(b, p.DType, p.Op, rank, p.World, p.Seed))
		want := algotest.ReduceScattered(b, p.DType, p.Op, p.World, p.Seed)[rank]
		copy(buf, algotest.Garbage(want))
		return want
	},
	"allgather": func(p sweep.Point, rank int, send, buf []byte) []byte {
		b := block(p)
		copy(send, algotest.AllgatherInput(b, p.DType, rank, p.Seed))
		want := algotest.Allgathered(b, p.DType, p.World, p.Seed)
		copy(buf, algotest.Garbage(want))
		return want
	},
	"alltoall": func(p sweep.Point, rank int, send, buf []byte) []byte {
		b := block(p)
		copy(send, algotest.AlltoallInput(b, p.DType, rank, p.World, p.Seed))
		want := algotest.AlltoallOutput(b, p.DType, rank, p.World, p.Seed)
		copy(buf, algotest.Garbage(want))
		return want
	},
	"broadcast": func(p sweep.Point, rank int, _, buf []byte) []byte {
		want := algotest.Broadcasted(used(p), p.DType, p.Root, p.Seed)
		if rank == p.Root {
			copy(buf, want)
		} else {
			copy(buf, algotest.Garbage(want))
		}
		return want
	},
	"reduce": func(p sweep.Point, rank int, _, buf []byte) []byte {
		n := used(p)
		algotest.Fill(buf[:n*p.DType.Size()], p.DType, p.Op, rank, p.World, p.Seed)
		if rank != p.Root {
			return nil // other ranks' buffers are unspecified
		}
		return algotest.Reduced(n, p.DType, p.Op, p.World, p.Seed)
	},
	"gather": func(p sweep.Point, rank int, send, buf []byte) []byte {
		b := block(p)
		copy(send, algotest.Distinct(b, p.DType, rank, p.Seed))
		if rank != p.Root {
			return nil
		}
		want := algotest.Gathered(b, p.DType, p.World, p.Seed)
		copy(buf, algotest.Garbage(want))
		return want
	},
	"scatter": func(p sweep.Point, rank int, send, buf []byte) []byte {
		b := block(p)
		if rank == p.Root {
			copy(send, algotest.ScatterInput(b, p.DType, rank, p.Root, p.World, p.Seed))
		}
		want := algotest.Scattered(b, p.DType, rank, p.Seed)
		copy(buf, algotest.Garbage(want))
		return want
	},
	"scan": func(p sweep.Point, rank int, _, buf []byte) []byte {
		n := used(p)
		algotest.Fill(buf[:n*p.DType.Size()], p.DType, p.Op, rank, p.World, p.Seed)
		return algotest.Scanned(n, p.DType, p.Op, p.World, p.Seed, p.Params["exclusive"] != 0)[rank]
	},
	"barrier": func(sweep.Point, int, []byte, []byte) []byte { return nil },
	// Rank 0's message must reach rank 1, and come back to rank 0 in the
	// ping-pong; the other ranks' buffers are not the benchmark's.
	"sendrecv": func(p sweep.Point, rank int, send, buf []byte) []byte {
		msg := algotest.Distinct(used(p), p.DType, 0, p.Seed)
		copy(send, msg)
		copy(buf, algotest.Garbage(msg))
		if rank == 1 || p.World == 1 || rank == 0 && p.Algorithm.Name == "latency" {
			return msg
		}
		return nil
	},
}

func referenceMaker(collective string) (refMaker, error) {
	m, ok := references[collective]
	if !ok {
		return nil, fmt.Errorf("no reference results for collective %q, so a real run could not check it", collective)
	}
	return m, nil
}

func used(p sweep.Point) int {
	_, _, u := p.Layout()
	return u
}

// block is the per-rank block of collectives whose buffer is world equal
// blocks.
func block(p sweep.Point) int {
	if p.World == 0 {
		return 0
	}
	return used(p) / p.World
}

// newRankData allocates and fills the buffers of l's rank for p: in host
// memory, or, if l's Alloc gives memory of another kind (a staging link's
// GPU memory), in that memory, with the inputs and the reference kept in
// host memory.
func newRankData(p sweep.Point, l algos.Link) (*rankData, error) {
	rank := l.Rank()
	fill, err := referenceMaker(p.Collective.Name)
	if err != nil {
		return nil, err
	}
	send, recv, _ := p.Layout()
	sz := p.DType.Size()
	d := &rankData{
		call: algos.Call{DType: p.DType, Op: p.Op, Root: p.Root, Params: p.Params, Tuning: p.Tuning},
	}
	buf := make(device.Host, recv*sz)
	var sendBuf device.Host
	if !p.InPlace() {
		sendBuf = make(device.Host, send*sz)
	}
	d.want = fill(p, rank, sendBuf, buf)
	if d.want != nil && len(d.want) > len(buf) {
		return nil, fmt.Errorf("%v: reference of %d bytes for a buffer of %d", p, len(d.want), len(buf))
	}
	d.call.Buf = buf
	if sendBuf != nil {
		d.call.Send = sendBuf
	}
	d.buf0 = bytes.Clone(buf)
	d.send0 = bytes.Clone(sendBuf)
	if _, host := device.HostBytes(l.Alloc(0)); !host {
		// The link's memory is elsewhere: the collective runs there; buf
		// becomes the host copy its result is checked on.
		d.link, d.got = l, buf
		d.call.Buf = l.Alloc(len(buf))
		if sendBuf != nil {
			d.call.Send = l.Alloc(len(sendBuf))
		}
	}
	return d, nil
}

// reset restores the pristine input (and the garbage in outputs).
func (d *rankData) reset() {
	if d.link != nil {
		d.linkCopy(d.call.Buf, device.Host(d.buf0))
		if d.send0 != nil {
			d.linkCopy(d.call.Send, device.Host(d.send0))
		}
		return
	}
	copy(d.call.Buf.(device.Host), d.buf0)
	if d.send0 != nil {
		copy(d.call.Send.(device.Host), d.send0)
	}
}

// linkCopy copies between host memory and the link's memory. A copy that
// fails there is a broken device, which no later point could use either:
// the rank stops with the driver's error (its launcher reports it).
func (d *rankData) linkCopy(dst, src device.Buffer) {
	if err := d.link.Copy(dst, src); err != nil {
		panic(fmt.Errorf("live: rank %d: copying a point's buffer between host and device memory: %w", d.link.Rank(), err))
	}
}

// wrong counts the elements of Buf that differ from the reference.
func (d *rankData) wrong() int64 {
	if d.want == nil {
		return 0
	}
	var got []byte
	if d.link != nil {
		d.linkCopy(device.Host(d.got), d.call.Buf)
		got = d.got[:len(d.want)]
	} else {
		got = []byte(d.call.Buf.(device.Host))[:len(d.want)]
	}
	if bytes.Equal(got, d.want) {
		return 0
	}
	return int64(algotest.Wrong(got, d.want, d.call.DType))
}
