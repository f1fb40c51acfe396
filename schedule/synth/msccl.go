package synth

import (
	"bytes"
	"fmt"
	"math"

	"github.com/nexar-go/nexar-go/schedule"
)

// AllgatherSchedule writes the allgather's packings (AllgatherPacking) as
// an MSCCL schedule that package schedule runs like any other: every
// rank's block is cut into chunks chunks, shared among its root's trees
// in proportion to their rates (largest remainders; a tree given none is
// left out); root q's blocks move on channel q (mod 64), so that the
// roots' trees run at once; each GPU has one threadblock per peer it
// sends to and one per peer it receives from on each channel, whose
// steps follow one order of (root, tree, chunk) on every GPU, so that a
// step waits only for an earlier chunk or for its own chunk higher up
// its tree, and the schedule cannot deadlock. It fails where a GPU would
// need more threadblocks than the reader allows (128). A non-root receives a chunk from its parent into its
// output and each send of it to a child waits for that receive; the root
// sends from its input and copies its block to its output. A chunk is
// sent once the previous has left, so chunks, and the slices of the
// executor's loops, flow down each tree as a pipeline.
func (g *Graph) AllgatherSchedule(name string, pk []*Packing, chunks int) (*schedule.Schedule, error) {
	p := len(g.Devices)
	chans := min(p, maxChannels)
	s := &schedule.Schedule{File: name + ".xml", Name: name, Proto: "Simple", NChannels: chans,
		NChunksPerLoop: p * chunks, NGPUs: p, Coll: "allgather", OutOfPlace: true, GPUs: make([]schedule.GPU, p)}
	w := &writer{s: s, chans: chans, send: make([]map[[2]int]int, p), recv: make([]map[[2]int]int, p)}
	for r := range p {
		s.GPUs[r] = schedule.GPU{ID: r, IChunks: chunks, OChunks: p * chunks}
		w.send[r], w.recv[r] = map[[2]int]int{}, map[[2]int]int{}
		local := w.tb(r, -1, -1, 0, nil)
		w.step(r, local, schedule.Step{Type: schedule.Copy, SrcBuf: 'i', DstBuf: 'o', DstOff: r * chunks, Cnt: chunks, DepID: -1, Deps: -1})
	}
	for q, pq := range pk {
		parts := chunkShares(chunks, pq.Trees)
		for i, t := range pq.Trees {
			for c := parts[i]; c < parts[i+1]; c++ {
				w.chunk(q, c, chunks, t)
			}
		}
	}
	var xml bytes.Buffer
	if err := s.WriteXML(&xml); err != nil {
		return nil, err
	}
	// Read back: the schedule is checked and dry-run as any file is.
	return schedule.Parse(s.File, xml.Bytes())
}

// maxChannels is the most channels a schedule uses (the reader's limit):
// root q's blocks move on channel q mod maxChannels.
const maxChannels = 64

// writer appends steps to a schedule's threadblocks: send[r][{peer, ch}]
// and recv[r][{peer, ch}] are GPU r's threadblocks that send to and
// receive from peer on channel ch.
type writer struct {
	s          *schedule.Schedule
	chans      int
	send, recv []map[[2]int]int
}

func (w *writer) tb(r, send, recv, ch int, by map[[2]int]int) int {
	g := &w.s.GPUs[r]
	k := [2]int{max(send, recv), ch}
	if id, ok := by[k]; ok && by != nil {
		return id
	}
	g.TBs = append(g.TBs, schedule.TB{ID: len(g.TBs), Send: send, Recv: recv, Chan: ch})
	if by != nil {
		by[k] = len(g.TBs) - 1
	}
	return len(g.TBs) - 1
}

// step appends st to threadblock tb of GPU r and returns its index.
func (w *writer) step(r, tb int, st schedule.Step) int {
	t := &w.s.GPUs[r].TBs[tb]
	st.S = len(t.Steps)
	if st.DepID >= 0 {
		w.s.GPUs[r].TBs[st.DepID].Steps[st.Deps].HasDep = true
	}
	t.Steps = append(t.Steps, st)
	return st.S
}

// chunk moves chunk c of root q's block down tree t.
func (w *writer) chunk(q, c, chunks int, t Tree) {
	out, ch := q*chunks+c, q%w.chans
	for v, par := range t.Parent {
		if v != q && par < 0 {
			continue
		}
		src, off, dep, deps := byte('i'), c, -1, -1
		if v != q {
			rt := w.tb(v, -1, par, ch, w.recv[v])
			deps = w.step(v, rt, schedule.Step{Type: schedule.Recv, SrcBuf: 'o', SrcOff: out, DstBuf: 'o', DstOff: out, Cnt: 1, DepID: -1, Deps: -1})
			src, off, dep = 'o', out, rt
		}
		for k, pk := range t.Parent {
			if pk == v {
				st := w.tb(v, k, -1, ch, w.send[v])
				w.step(v, st, schedule.Step{Type: schedule.Send, SrcBuf: src, SrcOff: off, DstBuf: 'o', DstOff: out, Cnt: 1, DepID: dep, Deps: deps})
			}
		}
	}
}

// chunkShares cuts n chunks among the trees in proportion to their rates
// by largest remainders: tree i gets chunks parts[i] to parts[i+1].
func chunkShares(n int, trees []Tree) []int {
	total := 0.0
	for _, t := range trees {
		total += t.Rate
	}
	got := make([]int, len(trees))
	rem := make([]float64, len(trees))
	left := n
	for i, t := range trees {
		exact := float64(n) * t.Rate / total
		got[i] = int(math.Floor(exact))
		rem[i] = exact - float64(got[i])
		left -= got[i]
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rem {
			if rem[i] > rem[best]+1e-12 {
				best = i
			}
		}
		got[best]++
		rem[best] = -1
	}
	parts := make([]int, len(trees)+1)
	for i, k := range got {
		parts[i+1] = parts[i] + k
	}
	return parts
}

// String names a packing for messages.
func (p *Packing) String() string {
	return fmt.Sprintf("%d tree(s) from device %d, %.4g of %.4g B/s", len(p.Trees), p.Root, p.Rate, p.Bound)
}
