package schedule

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// tagBase is the tag of channel 0: a channel's messages carry tagBase+chan,
// so that they match in order per connection, as the executor's do.
const tagBase algos.Tag = 0x4d00

// layout places chunks in a buffer: the collective's whole buffer of total
// elements is cut into n chunks per loop as evenly as possible (the first
// total%n one element longer, as the catalogue's rings cut theirs); chunk
// c of any buffer starts where chunk c of a run of such loops would.
type layout struct{ total, n int }

func (y layout) off(c int) int {
	q, r := y.total/y.n, y.total%y.n
	i := c % y.n
	return (c/y.n)*y.total + i*q + min(i, r)
}

func (y layout) len(c int) int { return y.off(c+1) - y.off(c) }

// span is a run of elements of one of a rank's buffers.
type span struct {
	buf      byte
	off, len int
}

// rank is one rank's run of the schedule.
type rank struct {
	s     *Schedule
	g     *GPU
	l     algos.Link
	dt    device.DType
	op    device.Op
	bufs  map[byte]device.Buffer
	alias map[byte]alias // the buffers that are part of another
	y     layout
	iters int
	slice int // elements of a chunk per iteration, 0: whole chunks
	tbs   []*tbRun
}

// tbRun is a threadblock's progress.
type tbRun struct {
	tb    *TB
	pc    int // steps done, over every iteration
	phase int // 0: next step not begun; 1: receiving; 2: its send to post; 3: sending
	temp  device.Buffer
	bufs  []device.Buffer // what the step receives into or sends
	// direct is set where a reducing step receives into its dst.
	direct bool
}

// alias places a buffer in another's memory: its elements start at
// element off of buffer of. A schedule run in place names one memory by
// two letters (see Schedule.runsInPlace), so spans are compared as the
// memory they are, never by letter.
type alias struct {
	of  byte
	off int
}

// mem returns the span of memory sp is: of the buffer that holds it.
func (r *rank) mem(sp span) span {
	if a, ok := r.alias[sp.buf]; ok {
		return span{a.of, a.off + sp.off, sp.len}
	}
	return sp
}

// overlap reports whether a run of a and one of b share memory.
func (r *rank) overlap(a, b []span) bool {
	for _, x := range a {
		x = r.mem(x)
		for _, y := range b {
			y = r.mem(y)
			if x.buf == y.buf && x.off < y.off+y.len && y.off < x.off+x.len {
				return true
			}
		}
	}
	return false
}

func sameLens(a, b []span) bool {
	for k := range a {
		if a[k].len != b[k].len {
			return false
		}
	}
	return true
}

// pieces returns the runs of elements of chunks off..off+cnt-1 of buf in
// iteration it: the whole run in one piece where chunks are moved whole,
// else a slice of each chunk, one piece apiece, as the executor moves them.
func (r *rank) pieces(buf byte, off, cnt, it int) []span {
	if r.iters == 1 {
		return []span{{buf, r.y.off(off), r.y.off(off+cnt) - r.y.off(off)}}
	}
	out := make([]span, cnt)
	g := it * r.slice
	for k := range out {
		c := off + k
		out[k] = span{buf, r.y.off(c) + g, max(0, min(r.slice, r.y.len(c)-g))}
	}
	return out
}

func (r *rank) buffer(sp span) device.Buffer {
	es := r.dt.Size()
	return r.bufs[sp.buf].Slice(sp.off*es, sp.len*es)
}

// current returns the step tb runs next and its iteration.
func (r *rank) current(t *tbRun) (*Step, int) {
	n := len(t.tb.Steps)
	return &t.tb.Steps[t.pc%n], t.pc / n
}

func (r *rank) finished(t *tbRun) bool { return t.pc == len(t.tb.Steps)*r.iters }

// ready reports whether the step t runs next may start: the step it
// depends on, in the same iteration, is done.
func (r *rank) ready(t *tbRun) bool {
	if r.finished(t) {
		return false
	}
	st, it := r.current(t)
	if st.DepID < 0 {
		return true
	}
	d := r.tbs[st.DepID]
	return d.pc > it*len(d.tb.Steps)+st.Deps
}

// run advances the threadblocks in rounds, on a link that cannot spawn
// them as processes: local steps whose dependencies are met run at once;
// then every threadblock whose next step may start posts its receives,
// then its sends, and the rank waits for all of them before the
// reductions and copies that follow the receives. A round is as long as
// its slowest transfer, which is the executor's time where threadblocks
// move in lockstep, as every exported catalogue algorithm does.
func (r *rank) run(ctx context.Context) error {
	for {
		if err := r.local(); err != nil {
			return err
		}
		var reqs []algos.Request
		for _, t := range r.tbs {
			if t.phase == 0 && r.ready(t) {
				if st, it := r.current(t); st.Type.recvs() {
					reqs = append(reqs, r.postRecv(t, st, it)...)
				}
			}
		}
		for _, t := range r.tbs {
			if t.phase == 2 || (t.phase == 0 && r.ready(t) && r.current1(t) == Send) {
				reqs = append(reqs, r.postSend(t)...)
			}
		}
		if len(reqs) == 0 {
			for _, t := range r.tbs {
				if !r.finished(t) {
					st, it := r.current(t)
					return fmt.Errorf("%s: gpu %d tb %d step %d (iteration %d) can never start", r.s.File, r.g.ID, t.tb.ID, st.S, it)
				}
			}
			return nil
		}
		if err := r.l.Wait(ctx, reqs...); err != nil {
			return fmt.Errorf("%s: gpu %d: %w", r.s.File, r.g.ID, err)
		}
		for _, t := range r.tbs {
			if err := r.complete(t); err != nil {
				return err
			}
		}
	}
}

func (r *rank) current1(t *tbRun) Op {
	st, _ := r.current(t)
	return st.Type
}

// local runs every local step (cpy, re, nop) that may run, until none may.
func (r *rank) local() error {
	for progress := true; progress; {
		progress = false
		for _, t := range r.tbs {
			for t.phase == 0 && r.ready(t) {
				st, it := r.current(t)
				if st.Type.recvs() || st.Type.sends() {
					break
				}
				if err := r.localStep(st, it); err != nil {
					return err
				}
				t.pc++
				progress = true
			}
		}
	}
	return nil
}

func (r *rank) localStep(st *Step, it int) error {
	if st.Type == Nop {
		return nil
	}
	src, dst := r.pieces(st.SrcBuf, st.SrcOff, st.Cnt, it), r.pieces(st.DstBuf, st.DstOff, st.Cnt, it)
	for k := range src {
		if err := r.sameLen(st, src[k], dst[k]); err != nil {
			return err
		}
		var err error
		if st.Type == Copy {
			err = r.l.Copy(r.buffer(dst[k]), r.buffer(src[k]))
		} else {
			err = r.l.Reduce(r.buffer(dst[k]), r.buffer(src[k]), r.dt, r.op)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *rank) sameLen(st *Step, a, b span) error {
	if a.len != b.len {
		return fmt.Errorf("%s:%d: step %d of gpu %d: chunks of %d and %d elements at this count: the schedule runs at counts that are multiples of nchunksperloop (%d)", r.s.File, st.line, st.S, r.g.ID, a.len, b.len, r.s.NChunksPerLoop)
	}
	return nil
}

// postRecv posts the receives of t's step: into its destination, or into
// the threadblock's temporary buffer where the step reduces what arrives.
func (r *rank) postRecv(t *tbRun, st *Step, it int) []algos.Request {
	var spans []span
	if st.Type == Recv || st.Type == RecvCopySend {
		spans = r.pieces(st.DstBuf, st.DstOff, st.Cnt, it)
	} else {
		spans = r.pieces(st.SrcBuf, st.SrcOff, st.Cnt, it)
	}
	direct := st.Type == Recv || st.Type == RecvCopySend
	if st.Type == RecvReduceCopy || st.Type == RecvReduceCopySd {
		// What arrives may land in dst itself where dst is not src's
		// memory (in place, srcbuf i and dstbuf o may be one run):
		// dst = received op src, reduced in place after the wait.
		dst := r.pieces(st.DstBuf, st.DstOff, st.Cnt, it)
		if !r.overlap(spans, dst) && sameLens(spans, dst) {
			spans, direct = dst, true
		}
	}
	t.bufs, t.direct = t.bufs[:0], direct
	reqs := make([]algos.Request, len(spans))
	used := 0
	for k, sp := range spans {
		b := r.buffer(sp)
		if !direct {
			b = t.temp.Slice(used, b.Len())
			used += b.Len()
		}
		t.bufs = append(t.bufs, b)
		reqs[k] = r.l.Irecv(t.tb.Recv, tagBase+algos.Tag(t.tb.Chan), b)
	}
	t.phase = 1
	return reqs
}

// postSend posts the sends of t's step: its source for a send, what its
// receive left to send on for the others.
func (r *rank) postSend(t *tbRun) []algos.Request {
	if t.phase == 0 {
		st, it := r.current(t)
		t.bufs = t.bufs[:0]
		for _, sp := range r.pieces(st.SrcBuf, st.SrcOff, st.Cnt, it) {
			t.bufs = append(t.bufs, r.buffer(sp))
		}
	}
	reqs := make([]algos.Request, len(t.bufs))
	for k, b := range t.bufs {
		reqs[k] = r.l.Isend(t.tb.Send, tagBase+algos.Tag(t.tb.Chan), b)
	}
	t.phase = 3
	return reqs
}

// complete finishes what t's round began: the reduction or copy after a
// receive, and the step itself unless its send is still to post.
func (r *rank) complete(t *tbRun) error {
	switch t.phase {
	case 3:
		t.pc, t.phase = t.pc+1, 0
		return nil
	case 1:
	default:
		return nil
	}
	st, it := r.current(t)
	if st.Type == Recv {
		t.pc, t.phase = t.pc+1, 0
		return nil
	}
	if st.Type == RecvCopySend {
		t.phase = 2
		return nil
	}
	src := r.pieces(st.SrcBuf, st.SrcOff, st.Cnt, it)
	var dst []span
	if st.Type != RecvReduceSend {
		dst = r.pieces(st.DstBuf, st.DstOff, st.Cnt, it)
	}
	for k, tmp := range t.bufs {
		var err error
		switch {
		case t.direct:
			err = r.l.Reduce(tmp, r.buffer(src[k]), r.dt, r.op)
		case dst == nil:
			err = r.l.Reduce(tmp, r.buffer(src[k]), r.dt, r.op)
		case r.mem(src[k]) == r.mem(dst[k]):
			err = r.l.Reduce(r.buffer(dst[k]), tmp, r.dt, r.op)
		default:
			if err = r.sameLen(st, src[k], dst[k]); err == nil {
				if err = r.l.Reduce(tmp, r.buffer(src[k]), r.dt, r.op); err == nil {
					err = r.l.Copy(r.buffer(dst[k]), tmp)
				}
			}
		}
		if err != nil {
			return err
		}
		if dst != nil {
			t.bufs[k] = r.buffer(dst[k])
		}
	}
	if st.Type == RecvReduceCopy {
		t.pc, t.phase = t.pc+1, 0
		return nil
	}
	t.phase = 2
	return nil
}
