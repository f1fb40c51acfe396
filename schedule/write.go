package schedule

import (
	"bufio"
	"fmt"
	"io"
)

// WriteXML writes s as MSCCL XML, in the format msccl-tools writes and the
// MSCCL executor reads, with every attribute the executor requires.
func (s *Schedule) WriteXML(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "<algo name=%q proto=%q nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=%q inplace=\"%d\" outofplace=\"%d\" minBytes=\"%d\" maxBytes=\"%d\">\n",
		s.Name, s.Proto, s.NChannels, s.NChunksPerLoop, s.NGPUs, s.Coll, bit(s.InPlace), bit(s.OutOfPlace), s.MinBytes, s.MaxBytes)
	for _, g := range s.GPUs {
		fmt.Fprintf(b, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\">\n", g.ID, g.IChunks, g.OChunks, g.SChunks)
		for _, tb := range g.TBs {
			fmt.Fprintf(b, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", tb.ID, tb.Send, tb.Recv, tb.Chan)
			for _, st := range tb.Steps {
				fmt.Fprintf(b, "      <step s=\"%d\" type=%q srcbuf=\"%c\" srcoff=\"%d\" dstbuf=\"%c\" dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
					st.S, st.Type, st.SrcBuf, st.SrcOff, st.DstBuf, st.DstOff, st.Cnt, st.DepID, st.Deps, bit(st.HasDep))
			}
			fmt.Fprintf(b, "    </tb>\n")
		}
		fmt.Fprintf(b, "  </gpu>\n")
	}
	fmt.Fprintf(b, "</algo>\n")
	return b.Flush()
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mod(i, p int) int { return ((i % p) + p) % p }

// builder assembles a schedule's steps, numbering them and marking the
// steps others depend on.
type builder struct{ s *Schedule }

// done checks the schedule built, as Parse checks a file's: a failure is
// a bug of the exporter.
func (b *builder) done() *Schedule {
	if err := b.s.check(); err != nil {
		panic("schedule: exported schedule: " + err.Error())
	}
	return b.s
}

func newBuilder(name, coll string, p, nchunks int, inPlace bool) *builder {
	s := &Schedule{File: name + ".xml", Name: name, Proto: "Simple", NChannels: 1, NChunksPerLoop: nchunks, NGPUs: p,
		Coll: coll, InPlace: inPlace, OutOfPlace: !inPlace}
	s.GPUs = make([]GPU, p)
	for r := range s.GPUs {
		s.GPUs[r].ID = r
	}
	return &builder{s}
}

// tb adds a threadblock to gpu r and returns its id.
func (b *builder) tb(r, send, recv, ch int) int {
	g := &b.s.GPUs[r]
	g.TBs = append(g.TBs, TB{ID: len(g.TBs), Send: send, Recv: recv, Chan: ch})
	return len(g.TBs) - 1
}

// dep is a step to wait for: threadblock tb's step s, none where tb < 0.
type dep struct{ tb, s int }

var noDep = dep{-1, -1}

// step appends a step to threadblock tb of gpu r and returns it as a dep.
func (b *builder) step(r, tb int, op Op, src byte, srcoff int, dst byte, dstoff, cnt int, d dep) dep {
	t := &b.s.GPUs[r].TBs[tb]
	if d.tb == tb {
		d = noDep // a threadblock runs its steps in order
	}
	if d.tb >= 0 {
		b.s.GPUs[r].TBs[d.tb].Steps[d.s].HasDep = true
	}
	t.Steps = append(t.Steps, Step{S: len(t.Steps), Type: op, SrcBuf: src, SrcOff: srcoff, DstBuf: dst, DstOff: dstoff,
		Cnt: cnt, DepID: d.tb, Deps: d.s})
	return dep{tb, len(t.Steps) - 1}
}

// RingAllreduce is the catalogue's ring allreduce (algos.RingAllreduce)
// on p GPUs as a schedule: p chunks, in place; in step s of the
// reduce-scatter rank r sends chunk r-s to r+1 and reduces chunk r-1-s
// arriving from r-1 into its own, then in step s of the allgather sends
// chunk r+1-s and receives chunk r-s. One threadblock sends, one receives,
// so that a step's send and receive run at once, as the catalogue's do.
func RingAllreduce(p int) *Schedule {
	b := newBuilder(fmt.Sprintf("ring_allreduce_%d", p), "allreduce", p, p, true)
	for r := range p {
		b.s.GPUs[r].IChunks, b.s.GPUs[r].OChunks = p, p
		if p == 1 {
			continue
		}
		send, recv := b.tb(r, mod(r+1, p), -1, 0), b.tb(r, -1, mod(r-1, p), 0)
		// Each step's receive waits for its send, as the catalogue's
		// SendRecv waits for both: no buffer is written while a send
		// of it may still be reading it.
		last := noDep
		for s := range p - 1 {
			sent := b.step(r, send, Send, 'i', mod(r-s, p), 'i', mod(r-s, p), 1, last)
			c := mod(r-1-s, p)
			last = b.step(r, recv, RecvReduceCopy, 'i', c, 'i', c, 1, sent)
		}
		for s := range p - 1 {
			sent := b.step(r, send, Send, 'i', mod(r+1-s, p), 'i', mod(r+1-s, p), 1, last)
			c := mod(r-s, p)
			last = b.step(r, recv, Recv, 'i', c, 'i', c, 1, sent)
		}
	}
	return b.done()
}
