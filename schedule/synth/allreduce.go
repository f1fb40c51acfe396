package synth

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Allreduce returns the synthesized allreduce, named name: the buffer cut
// into one block per rank, rank q's block reduced up the reverses of q's
// allgather trees (AllgatherPacking) to q, each tree its share, then sent
// back down them: a reduce-scatter and an allgather on the same trees, as
// ForestColl builds its allreduce. Both phases are pipelined in segments;
// a rank reduces what each child sends into its own copy of a segment,
// then sends the sum to its parent.
func (s *Synth) Allreduce(name string) *algos.Algorithm {
	return &algos.Algorithm{Name: name, Family: "synth", Params: map[string]int{"segment": segment},
		Summary: "reduce-scatter up and allgather down every rank's spanning trees, packed to the max-flow bound (ForestColl)",
		Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
			p := l.Size()
			pk, err := s.plan(p, 1)
			if err != nil {
				return err
			}
			es := c.DType.Size()
			n := c.Buf.Len() / es
			rs := make([]region, p)
			for q := range p {
				lo, hi := n*q/p, n*(q+1)/p
				rs[q] = region{pk[q], c.Buf.Slice(lo*es, (hi-lo)*es)}
			}
			return s.reduceRegions(ctx, l, c, rs, true)
		}}
}

// reduceUp reduces buf up tree tr to its root: for each segment a rank
// adds what each child sends into its own, then sends the sum to its
// parent once its previous segment has left.
func reduceUp(ctx context.Context, l algos.Link, tr Tree, buf device.Buffer, seg int, dt device.DType, op device.Op, tag algos.Tag) error {
	me, es := l.Rank(), dt.Size()
	kids := tr.children(me)
	n := buf.Len() / es
	if n == 0 {
		return nil
	}
	k := segments(buf.Len(), seg)
	var tmp []device.Buffer
	for range kids {
		tmp = append(tmp, l.Alloc((n/k+1)*es))
	}
	var sent []algos.Request
	for s := range k {
		lo, hi := n*s/k, n*(s+1)/k
		b := buf.Slice(lo*es, (hi-lo)*es)
		if err := l.Wait(ctx, sent...); err != nil {
			return err
		}
		sent = sent[:0]
		reqs := make([]algos.Request, len(kids))
		for i, c := range kids {
			reqs[i] = l.Irecv(c, tag, tmp[i].Slice(0, b.Len()))
		}
		if err := l.Wait(ctx, reqs...); err != nil {
			return fmt.Errorf("synth: reduce to %d: %w", tr.Root, err)
		}
		for i := range kids {
			if err := l.Reduce(b, tmp[i].Slice(0, b.Len()), dt, op); err != nil {
				return err
			}
		}
		if par := tr.Parent[me]; par >= 0 {
			sent = append(sent, l.Isend(par, tag, b))
		}
	}
	return l.Wait(ctx, sent...)
}

// Reduce returns the synthesized reduce, named name: the buffer reduced
// up the reverses of the root's broadcast trees, each tree its share,
// pipelined in segments. Other ranks' buffers are left with partial sums.
func (s *Synth) Reduce(name string) *algos.Algorithm {
	return &algos.Algorithm{Name: name, Family: "synth", Params: map[string]int{"segment": segment},
		Summary: "reduced up the root's spanning trees, packed to the max-flow bound (Blink)",
		Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
			pk, err := s.plan(l.Size(), 0)
			if err != nil {
				return err
			}
			return s.reduceRegions(ctx, l, c, []region{{pk[c.Root], c.Buf}}, false)
		}}
}

// ReduceScatter returns the synthesized reduce-scatter, named name: rank
// q's block reduced up the reverses of q's allgather trees
// (AllgatherPacking), on a copy of the send buffer.
func (s *Synth) ReduceScatter(name string) *algos.Algorithm {
	return &algos.Algorithm{Name: name, Family: "synth", Params: map[string]int{"segment": segment},
		Summary: "every rank's block reduced up its own spanning trees, packed to the max-flow bound (ForestColl)",
		Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
			p := l.Size()
			pk, err := s.plan(p, 1)
			if err != nil {
				return err
			}
			work := l.Alloc(c.Send.Len())
			if err := l.Copy(work, c.Send); err != nil {
				return err
			}
			n := c.Buf.Len()
			rs := make([]region, p)
			for q := range p {
				rs[q] = region{pk[q], work.Slice(q*n, n)}
			}
			if err := s.reduceRegions(ctx, l, c, rs, false); err != nil {
				return err
			}
			return l.Copy(c.Buf, work.Slice(l.Rank()*n, n))
		}}
}

// reduceRegions reduces every region up its packing's trees, and with
// down sends the result back down them.
func (s *Synth) reduceRegions(ctx context.Context, l algos.Link, c algos.Call, rs []region, down bool) error {
	es := c.DType.Size()
	seg := c.Param("segment", segment)
	var jobs []func(context.Context) error
	for q, rg := range rs {
		parts := shares(rg.buf.Len()/es, rg.p.Trees)
		for i, tr := range rg.p.Trees {
			buf := rg.buf.Slice(parts[i]*es, (parts[i+1]-parts[i])*es)
			tag := tagBase + algos.Tag(q*maxTrees+i)
			jobs = append(jobs, func(ctx context.Context) error {
				if err := reduceUp(ctx, l, tr, buf, seg, c.DType, c.Op, tag+0x1000); err != nil || !down {
					return err
				}
				return runTree(ctx, l, tr, buf, seg, es, tag)
			})
		}
	}
	return runJobs(ctx, l, jobs)
}
