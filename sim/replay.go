package sim

import (
	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Replay. A process with a recorded program (see record.go) runs without a
// coroutine: Fire interprets its operations from where it stopped until it
// blocks, doing exactly what the link's methods do for the body's calls,
// in the same order, so the run is the coroutines' run event for event.
// Its requests live in a few slots per rank, reused as the program says.
// Anything that would make an operation fail (a message longer than its
// receive, a rank or link failing) stops the replay, and Run simulates the
// body with coroutines instead, which gives the error exactly.

// replayState is a process's place in its program.
type replayState struct {
	prog  *program
	ci    int       // the chunk being run, an index into prog.chunks
	code  string    // that chunk
	off   int       // where the next operation starts in code
	tag   algos.Tag // the tag the next operation's is written relative to
	stage uint8     // 1 once the operation at off has blocked
	start Time      // when that blocking began, for the observer's spans
	slots []request
}

// uvarint decodes the uvarint at s[i:], and returns it and where the next
// field starts.
func uvarint(s string, i int) (uint64, int) {
	var x uint64
	var shift uint
	for {
		b := s[i]
		i++
		if b < 0x80 {
			return x | uint64(b)<<shift, i
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
}

// startReplay makes the process run prog instead of a coroutine, with
// slots (prog.slots of them) for its requests.
func (p *proc) startReplay(prog *program, slots []request) {
	p.prog = prog
	p.slots = slots
	for i := range p.slots {
		p.slots[i].owner = p.r
	}
	if len(prog.chunks) > 0 {
		p.code = p.r.e.progs.chunks[prog.chunks[0]]
	}
	p.scheduleResume()
}

// slot makes request slot i a new send or receive. Its owner is set for
// good, and its waiter was cleared when the wait on its last request
// ended; only the fields that change are written, none a pointer but a
// failed request's error.
func (p *proc) slot(i uint64, send bool, peer int, tag algos.Tag, bytes int) *request {
	q := &p.slots[i]
	q.send, q.peer, q.tag, q.bytes = send, peer, tag, bytes
	q.done, q.waitedFor = false, false
	if q.err != nil {
		q.err = nil
	}
	if q.sw != nil {
		q.sw = nil
	}
	return q
}

// replay runs the process's program until it blocks or ends.
func (p *proc) replay() {
	r, e := p.r, p.r.e
	for {
		if p.off == len(p.code) {
			p.ci++
			if p.ci >= len(p.prog.chunks) {
				p.returned(nil)
				return
			}
			p.code, p.off, p.tag = e.progs.chunks[p.prog.chunks[p.ci]], 0, 0
		}
		code, i := p.code, p.off
		op := code[i]
		i++
		switch op & opKindMask {
		case opSend, opRecv:
			var pv, dt, bytes, slot uint64
			pv, i = uvarint(code, i)
			dt, i = uvarint(code, i)
			bytes, i = uvarint(code, i)
			slot, i = uvarint(code, i)
			peer := r.id + int(unzigzag(pv))
			if op&opXorPeer != 0 {
				peer = r.id ^ 1<<pv
			}
			tag := p.tag + algos.Tag(unzigzag(dt))
			n := int(bytes)
			if op&opKindMask == opSend {
				if p.stage == 0 && e.ovh != nil && peer != r.id {
					if d := e.ovh.SendOverhead(r.id, n); d > 0 {
						p.stage, p.start = 1, p.startCompute(d)
						return
					}
				}
				if p.stage != 0 && e.obs != nil {
					e.obs.Span(r.id, SpanOverhead, n, p.start, e.now)
				}
				r.send(p.slot(slot, true, peer, tag, n))
			} else {
				r.recv(p.slot(slot, false, peer, tag, n))
			}
			p.tag, p.stage = tag, 0
		case opWait:
			var n, slot uint64
			n, i = uvarint(code, i)
			first := i
			if p.stage == 0 {
				pending := 0
				for range n {
					slot, i = uvarint(code, i)
					q := &p.slots[slot]
					q.waitedFor = true
					if q.done && q.err != nil {
						e.stopReplay()
						return
					}
					if !q.done {
						pending++
					}
				}
				if pending > 0 {
					p.waiting = p.waiting[:0]
					for j, k := first, uint64(0); k < n; k++ {
						slot, j = uvarint(code, j)
						if q := &p.slots[slot]; !q.done {
							q.waiter = p
							p.waiting = append(p.waiting, q)
						}
					}
					p.stage, p.start = 1, p.park(pending)
					return
				}
			} else {
				p.unpark(p.start, true)
				for range n {
					slot, i = uvarint(code, i)
					if p.slots[slot].err != nil {
						e.stopReplay()
						return
					}
				}
				p.stage = 0
			}
		case opReduce:
			var bytes uint64
			bytes, i = uvarint(code, i)
			n := int(bytes)
			if p.stage == 0 {
				if d := e.net.ReduceTime(r.id, n); d > 0 {
					p.stage, p.start = 1, p.startCompute(d)
					return
				}
			} else {
				if e.obs != nil {
					e.obs.Span(r.id, SpanReduce, n, p.start, e.now)
				}
				p.stage = 0
			}
		case opSwitch:
			var gid, dt, bytes, form, slot uint64
			gid, i = uvarint(code, i)
			dt, i = uvarint(code, i)
			bytes, i = uvarint(code, i)
			form, i = uvarint(code, i)
			slot, i = uvarint(code, i)
			tag := p.tag + algos.Tag(unzigzag(dt))
			n := int(bytes)
			var send, recv device.Buffer
			if form&1 != 0 {
				send = device.Phantom(n)
			}
			if form&2 != 0 {
				recv = device.Phantom(n)
			}
			r.postSwitch(p.slot(slot, false, -1, tag, n), e.progs.groups[gid], tag, send, recv, device.DType(form>>2&0xff), device.Op(form>>10))
			p.tag = tag
		case opDelay:
			var d uint64
			d, i = uvarint(code, i)
			if p.stage == 0 {
				p.stage, p.start = 1, p.sleep(Time(d))
				return
			}
			if e.obs != nil {
				e.obs.Span(r.id, SpanDelay, 0, p.start, e.now)
			}
			p.stage = 0
		}
		p.off = i
	}
}
