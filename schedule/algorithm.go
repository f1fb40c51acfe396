package schedule

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Run runs the schedule as one rank's call of its collective on l: the
// program of GPU l.Rank(). The call's buffers become the schedule's input
// and output as the executor sees them (see the package documentation);
// Params' "slice" (bytes, 0 by default) cuts every chunk into slices of
// at most that many bytes, moved in as many loops of the whole program,
// as the executor cuts chunks larger than its protocol's buffers.
func (s *Schedule) Run(ctx context.Context, l algos.Link, c algos.Call) error {
	if l.Size() != s.NGPUs {
		return fmt.Errorf("%s: a schedule for %d GPUs, run on %d ranks", s.File, s.NGPUs, l.Size())
	}
	es := c.DType.Size()
	for _, b := range []device.Buffer{c.Send, c.Buf} {
		if b != nil && b.Len()%es != 0 {
			return fmt.Errorf("%s: a buffer of %d bytes is not a whole number of %s elements", s.File, b.Len(), c.DType)
		}
	}
	r := &rank{s: s, g: &s.GPUs[l.Rank()], l: l, dt: c.DType, op: c.Op, iters: 1}
	total, finish, err := r.buffers(c)
	if err != nil || total == 0 {
		return err
	}
	if err := s.Fits(total, total, es); err != nil {
		return err
	}
	r.y = layout{total, s.NChunksPerLoop}
	if err := r.fit(); err != nil {
		return err
	}
	if sl := c.Param("slice", 0); sl > 0 {
		r.slice = max(1, sl/es)
		r.iters = max(1, (r.y.len(0)+r.slice-1)/r.slice)
	}
	r.setup()
	if sp, ok := algos.SpawnerOf(l); ok && len(r.tbs) > 1 {
		err = r.concurrent(ctx, sp)
	} else {
		err = r.run(ctx)
	}
	if err != nil {
		return err
	}
	return finish()
}

// buffers makes the call's buffers the schedule's input, output and
// scratch, and returns the whole buffer's elements and what to do after
// the schedule has run.
func (r *rank) buffers(c algos.Call) (total int, finish func() error, err error) {
	l, s, es := r.l, r.s, r.dt.Size()
	none := func() error { return nil }
	r.bufs, r.alias = map[byte]device.Buffer{}, map[byte]alias{}
	in, out, inIsSend := c.Send, c.Buf, true
	inPlace := s.runsInPlace()
	switch s.Coll {
	case "allreduce":
		in, total, inIsSend = c.Buf, c.Buf.Len()/es, false
		if !inPlace {
			out = l.Alloc(c.Buf.Len())
			finish = func() error { return l.Copy(c.Buf, out) }
		}
	case "allgather":
		total = c.Buf.Len() / es
		if inPlace {
			in, inIsSend = c.Buf.Slice(l.Rank()*c.Send.Len(), c.Send.Len()), false
			if err := l.Copy(in, c.Send); err != nil {
				return 0, nil, err
			}
		}
	case "reducescatter":
		total = c.Send.Len() / es
		if inPlace {
			in, inIsSend = r.copyOf(c.Send), false
			out = in.Slice(l.Rank()*c.Buf.Len(), c.Buf.Len())
			finish = func() error { return l.Copy(c.Buf, out) }
		}
	case "alltoall":
		total = c.Buf.Len() / es
		if inPlace {
			if err := l.Copy(c.Buf, c.Send); err != nil {
				return 0, nil, err
			}
			in, inIsSend = c.Buf, false
		}
	default:
		_, err := s.Collective()
		return 0, nil, err
	}
	for _, b := range []byte{'i', 'o'} {
		if home, rankBlock, ok := s.inPlaceHome(b); ok {
			off := 0
			if rankBlock { // the smaller buffer is the rank's block of the larger
				off = l.Rank() * min(c.Send.Len(), c.Buf.Len()) / es
			}
			r.alias[b] = alias{home, off}
		}
	}
	if inIsSend && r.writes('i') {
		// The schedule writes its input: never the caller's send buffer.
		in = r.copyOf(c.Send)
	}
	r.bufs['i'], r.bufs['o'] = in, out
	if finish == nil {
		finish = none
	}
	return total, finish, nil
}

func (r *rank) copyOf(b device.Buffer) device.Buffer {
	c := r.l.Alloc(b.Len())
	if err := r.l.Copy(c, b); err != nil {
		panic(err) // equal lengths: Copy cannot fail
	}
	return c
}

// writes reports whether this rank's program writes buffer b.
func (r *rank) writes(b byte) bool {
	for _, tb := range r.g.TBs {
		for _, st := range tb.Steps {
			if st.Type.writes() && st.DstBuf == b {
				return true
			}
		}
	}
	return false
}

// fit checks that the call's buffers hold the chunks the schedule names,
// and allocates its scratch.
func (r *rank) fit() error {
	es := r.dt.Size()
	for _, b := range []struct {
		name byte
		n    int
	}{{'i', r.g.IChunks}, {'o', r.g.OChunks}} {
		if need := r.y.off(b.n); need*es > r.bufs[b.name].Len() {
			return fmt.Errorf("%s: gpu %d: %c_chunks=%d need %d elements; the call's buffer holds %d", r.s.File, r.g.ID, b.name, b.n, need, r.bufs[b.name].Len()/es)
		}
	}
	r.bufs['s'] = r.l.Alloc(r.y.off(r.g.SChunks) * es)
	return nil
}

// setup makes the threadblocks' state, with a temporary buffer for those
// that reduce what they receive.
func (r *rank) setup() {
	for i := range r.g.TBs {
		tb := &r.g.TBs[i]
		t := &tbRun{tb: tb}
		most := 0
		for _, st := range tb.Steps {
			if st.Type.recvs() && st.Type != Recv && st.Type != RecvCopySend {
				most = max(most, st.Cnt)
			}
		}
		if most > 0 {
			t.temp = r.l.Alloc(most * (r.y.len(0) + 1) * r.dt.Size())
		}
		r.tbs = append(r.tbs, t)
	}
}

// Algorithm returns the schedule as an algorithm of its collective, called
// name, for algos.RegisterAlgorithm. It fails for a collective the
// interpreter does not run.
func (s *Schedule) Algorithm(name string) (*algos.Algorithm, error) {
	if _, err := s.Collective(); err != nil {
		return nil, err
	}
	return &algos.Algorithm{
		Name:    name,
		Family:  "msccl",
		Summary: fmt.Sprintf("MSCCL schedule %q (%s, %d GPUs, %s, %d channel(s))", s.Name, filepath.Base(s.File), s.NGPUs, s.Proto, s.NChannels),
		Params:  map[string]int{"slice": 0},
		Run:     s.Run,
	}, nil
}

// Register reads the schedule at path and registers it as an algorithm of
// its collective, named AlgorithmName(path), and returns that name (see
// Use).
func Register(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("schedule: %w", err)
	}
	a, _, err := Use(path, data, "")
	if err != nil {
		return "", err
	}
	return a.Name, nil
}
