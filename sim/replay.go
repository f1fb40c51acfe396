package sim

import (
	"unsafe"

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

// startReplay makes the process run its rank's program in the engine's
// programs instead of a coroutine, with the engine's slots from slot0
// for its requests past the first (see request).
func (p *proc) startReplay(slot0 int) {
	p.slot0 = int32(slot0)
	p.scheduleResume()
}

// began notes when the blocking of the operation at off began, t, for
// the observer's spans; without an observer nothing needs it, and a
// replayed process keeps no field for it (see Engine.starts).
func (p *proc) began(t Time) {
	if r := p.rank(); r.e.starts != nil {
		r.e.starts[r.id()] = t
	}
}

// startedAt is when the blocking of the operation at off began, as
// began noted it; 0 without an observer.
func (p *proc) startedAt() Time {
	if r := p.rank(); r.e.starts != nil {
		return r.e.starts[r.id()]
	}
	return 0
}

// program is the program the process replays: its rank's.
func (p *proc) program() *program { return p.rank().e.progs.ranks[p.rank().id()] }

// request returns the process's request slot i: beside it for the first
// inlineSlots, in the engine's from slot0 on for the others.
func (p *proc) request(i uint64) *request {
	if i < inlineSlots {
		// A replayed process is the first field of its rankProc.
		return &(*rankProc)(unsafe.Pointer(p)).s[i]
	}
	return &p.rank().e.slots[int(p.slot0)+int(i)-inlineSlots]
}

// chunk returns the code of the chunk being run, "" past the end.
func (p *proc) chunk() string {
	progs := p.rank().e.progs
	prog := progs.ranks[p.rank().id()]
	if int(p.ci) >= len(prog.chunks) {
		return ""
	}
	return progs.chunks[prog.chunks[p.ci]]
}

// slot makes request slot i a new send or receive of bytes. Its waiter
// was cleared when the wait on its last request ended; its extra record
// (done, failed or switch) is cleared.
func (p *proc) slot(i uint64, bytes int) *request {
	q := p.request(i)
	q.bytes = bytes
	if q.x != nil {
		q.x = nil
	}
	return q
}

// replay runs the process's program until it blocks or ends. Each
// operation's step returns where the next operation starts and whether
// to go on; a step that blocks (or stops the replay) returns false
// without moving p.off, so that the operation runs again, at its second
// stage, when the process resumes.
func (p *proc) replay() {
	code := p.chunk()
	for {
		if int(p.off) == len(code) {
			if !p.nextChunk() {
				return
			}
			code = p.chunk()
		}
		i := int(p.off)
		op := code[i]
		i++
		ok := true
		switch op & opKindMask {
		case opSend, opRecv:
			i, ok = p.replayMessage(op, code, i)
		case opWait:
			i, ok = p.replayWait(code, i)
		case opReduce:
			i, ok = p.replayReduce(code, i)
		case opSwitch:
			i = p.replaySwitch(code, i)
		case opDelay:
			i, ok = p.replayDelay(code, i)
		}
		if !ok {
			return
		}
		p.off = int32(i)
	}
}

// nextChunk moves to the program's next chunk, whose tags start again
// from 0; at the end of the program the process returns, and nextChunk
// returns false.
func (p *proc) nextChunk() bool {
	p.ci++
	if int(p.ci) >= len(p.program().chunks) {
		p.returned(nil)
		return false
	}
	p.off, p.tag = 0, 0
	return true
}

// replayMessage posts the send or receive at code[i:] (after its op
// byte), as Isend and Irecv do; a send first holds the rank for its
// overhead, if the network charges one, as a first stage.
func (p *proc) replayMessage(op byte, code string, i int) (int, bool) {
	r, e := p.rank(), p.rank().e
	var pv, dt, bytes, slot uint64
	pv, i = uvarint(code, i)
	dt, i = uvarint(code, i)
	bytes, i = uvarint(code, i)
	slot, i = uvarint(code, i)
	peer := r.id() + int(unzigzag(pv))
	if op&opXorPeer != 0 {
		peer = r.id() ^ 1<<pv
	}
	tag := p.tag + algos.Tag(unzigzag(dt))
	n := int(bytes)
	if op&opKindMask == opSend {
		if p.stage == 0 && e.ovh != nil && peer != r.id() {
			if d := e.ovh.SendOverhead(r.id(), n); d > 0 {
				p.stage = 1
				p.began(p.startCompute(d))
				return i, false
			}
		}
		if p.stage != 0 && e.obs != nil {
			e.obs.Span(r.id(), SpanOverhead, n, p.startedAt(), e.now)
		}
		r.send(p.slot(slot, n), peer, tag)
	} else {
		r.recv(p.slot(slot, n), peer, tag)
	}
	p.tag, p.stage = tag, 0
	return i, true
}

// replayWait waits for the requests at code[i:], as Wait does: parking
// until they are done at the first stage, if any is not, and checking
// them for errors at the second.
func (p *proc) replayWait(code string, i int) (int, bool) {
	var n uint64
	n, i = uvarint(code, i)
	if p.stage == 0 {
		return p.startWait(code, i, n)
	}
	return p.endWait(code, i, n)
}

// startWait parks the process on the n requests at code[i:] that are
// not done, if any; a request that failed stops the replay, so that the
// coroutines give the error. (A replayed request is not marked waited
// for: only a spawned process's request, which a replay has none of, is
// asked whether it was.)
func (p *proc) startWait(code string, i int, n uint64) (int, bool) {
	first := i
	var pending int32
	var slot uint64
	for range n {
		slot, i = uvarint(code, i)
		q := p.request(slot)
		if q.done() && q.failure() != nil {
			p.rank().e.stopReplay()
			return i, false
		}
		if !q.done() {
			pending++
		}
	}
	if pending == 0 {
		return i, true
	}
	for j, k := first, uint64(0); k < n; k++ {
		slot, j = uvarint(code, j)
		if q := p.request(slot); !q.done() {
			q.waiter = p
		}
	}
	p.stage = 1
	p.began(p.park(pending))
	return i, false
}

// endWait unparks the process once the n requests at code[i:] are done,
// and stops the replay if one failed.
func (p *proc) endWait(code string, i int, n uint64) (int, bool) {
	p.unpark(p.startedAt(), true)
	var slot uint64
	failed := false
	for range n {
		slot, i = uvarint(code, i)
		q := p.request(slot)
		q.waiter = nil
		failed = failed || q.failure() != nil
	}
	if failed {
		p.rank().e.stopReplay()
		return i, false
	}
	p.stage = 0
	return i, true
}

// replayReduce holds the rank for the reduction at code[i:] as the
// network times it, if it takes time, and observes it at the second
// stage.
func (p *proc) replayReduce(code string, i int) (int, bool) {
	r, e := p.rank(), p.rank().e
	var bytes uint64
	bytes, i = uvarint(code, i)
	n := int(bytes)
	if p.stage == 0 {
		if d := e.net.ReduceTime(r.id(), n); d > 0 {
			p.stage = 1
			p.began(p.startCompute(d))
			return i, false
		}
	} else {
		if e.obs != nil {
			e.obs.Span(r.id(), SpanReduce, n, p.startedAt(), e.now)
		}
		p.stage = 0
	}
	return i, true
}

// replaySwitch posts the in-network collective at code[i:] on its group,
// with phantom buffers where the recording had buffers.
func (p *proc) replaySwitch(code string, i int) int {
	e := p.rank().e
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
	p.rank().postSwitch(p.slot(slot, n), e.progs.groups[gid], tag, send, recv, device.DType(form>>2&0xff), device.Op(form>>10))
	p.tag = tag
	return i
}

// replayDelay sleeps for the delay at code[i:], and observes it at the
// second stage.
func (p *proc) replayDelay(code string, i int) (int, bool) {
	e := p.rank().e
	var d uint64
	d, i = uvarint(code, i)
	if p.stage == 0 {
		p.stage = 1
		p.began(p.sleep(Time(d)))
		return i, false
	}
	if e.obs != nil {
		e.obs.Span(p.rank().id(), SpanDelay, 0, p.startedAt(), e.now)
	}
	p.stage = 0
	return i, true
}
