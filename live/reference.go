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

// reference returns the Data of p's collective from algotest's registry:
// the references of every collective the catalogue has, and of those
// registered elsewhere with algotest.RegisterReference, which nexar-sim
// checks too. Their inputs are chosen so that every order of reduction
// gives the same bits, and outputs are pre-filled with garbage so that an
// element never written is caught.
func reference(p sweep.Point) (algotest.Data, error) {
	ref, ok := algotest.LookupReference(p.Collective.Name)
	if !ok {
		return nil, fmt.Errorf("no reference results for collective %q, so a real run could not check it (algotest.RegisterReference gives one)", p.Collective.Name)
	}
	return ref(p.Case()), nil
}

// newRankData allocates and fills the buffers of l's rank for p: in host
// memory, or, if l's Alloc gives memory of another kind (a staging link's
// GPU memory), in that memory, with the inputs and the reference kept in
// host memory.
func newRankData(p sweep.Point, l algos.Link) (*rankData, error) {
	rank := l.Rank()
	data, err := reference(p)
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
	d.want = data(rank, sendBuf, buf)
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
