package synth

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// Synth makes the packed trees of a topology algorithms: Broadcast sends
// the root's buffer down its trees, each tree a share of the buffer in
// proportion to its rate, pipelined in segments; Allgather broadcasts
// every rank's block down its own trees at once (see
// AllgatherPacking). The trees of each world size are packed once, on the
// topology built for it (ranks on devices 0..p-1, as the flow model's
// default placement).
type Synth struct {
	Build func(world int) (*sim.Topology, error)
	mu    sync.Mutex
	plans map[[2]int][]*Packing // by world and kind (0 broadcast, 1 allgather)
}

// NewSynth returns a synthesizer for the topology spec builds.
func NewSynth(spec sim.TopologySpec) *Synth {
	return &Synth{Build: spec.Build, plans: map[[2]int][]*Packing{}}
}

// plan returns the packings of every root for world p.
func (s *Synth) plan(p, kind int) ([]*Packing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pk, ok := s.plans[[2]int{p, kind}]; ok {
		return pk, nil
	}
	t, err := s.Build(p)
	if err != nil {
		return nil, err
	}
	g, err := FromTopology(t, p)
	if err != nil {
		return nil, err
	}
	var pk []*Packing
	if kind == 0 {
		pk, err = g.packAll(g.Cap)
	} else {
		pk, err = g.AllgatherPacking()
	}
	if err != nil {
		return nil, err
	}
	s.plans[[2]int{p, kind}] = pk
	return pk, nil
}

// packAll packs the trees of every root on capacities c.
func (g *Graph) packAll(c []float64) ([]*Packing, error) {
	pk := make([]*Packing, len(g.Devices))
	for r := range pk {
		var err error
		if pk[r], err = g.Pack(r, c); err != nil {
			return nil, err
		}
	}
	return pk, nil
}

// AllgatherPacking packs every root's trees for an allgather, where all
// roots broadcast at once: each on 1/(p-1) of every link's capacity
// (a rank's links carry the other ranks' blocks, not its own), packed
// one root after another on what the roots before left, where every
// root then reaches its bound on that share; else each on 1/p, which
// always fits.
func (g *Graph) AllgatherPacking() ([]*Packing, error) {
	p := len(g.Devices)
	if pk, ok := g.packShared(p - 1); ok {
		return pk, nil
	}
	c := make([]float64, len(g.Cap))
	for e, x := range g.Cap {
		c[e] = x / float64(p)
	}
	return g.packAll(c)
}

// packShared packs the roots one after the other, each on 1/share of
// every link's capacity but no more than the roots before it left; ok
// is false where a root's trees fall short of its bound on that share.
func (g *Graph) packShared(share int) ([]*Packing, bool) {
	if share < 1 {
		return nil, false
	}
	res := slices.Clone(g.Cap)
	g.prefer = res
	defer func() { g.prefer = nil }()
	pk := make([]*Packing, len(g.Devices))
	for r := range pk {
		c := make([]float64, len(g.Cap))
		for e, x := range g.Cap {
			c[e] = min(x/float64(share), res[e])
		}
		want := g.BroadcastBound(r, scaled(g.Cap, 1/float64(share)))
		p, err := g.Pack(r, c)
		if err != nil || p.Rate < want*(1-1e-9) {
			return nil, false
		}
		p.Bound = want
		pk[r] = p
		for _, t := range p.Trees {
			for d, par := range t.Parent {
				if par >= 0 {
					take(res, g.Route(par, d), t.Rate)
				}
			}
		}
	}
	return pk, g.fits(pk)
}

func scaled(c []float64, f float64) []float64 {
	out := make([]float64, len(c))
	for e, x := range c {
		out[e] = x * f
	}
	return out
}

// fits reports whether the trees of every packing together stay within
// the capacities.
func (g *Graph) fits(pk []*Packing) bool {
	load := make([]float64, len(g.Cap))
	for _, p := range pk {
		for _, t := range p.Trees {
			for d, par := range t.Parent {
				if par >= 0 {
					for _, e := range g.Route(par, d) {
						load[e] += t.Rate
					}
				}
			}
		}
	}
	for e, l := range load {
		if l > g.Cap[e]*(1+1e-9) {
			return false
		}
	}
	return true
}

// segment is the default smallest message of a tree's pipeline, in
// bytes: a tree moves its share in segments of that much, but in no more
// than maxSegments messages.
const (
	segment     = 16 << 10
	maxSegments = 64
	tagBase     = algos.Tag(0x5300)
)

// Algorithms returns the synthesized broadcast and allgather, both named
// name, for algos.RegisterAlgorithm.
func (s *Synth) Algorithms(name string) (bcast, allgather *algos.Algorithm) {
	params := map[string]int{"segment": segment}
	bcast = &algos.Algorithm{Name: name, Family: "synth", Params: params,
		Summary: "spanning trees packed to the topology's max-flow bound (Blink, ForestColl), pipelined in segments",
		Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
			pk, err := s.plan(l.Size(), 0)
			if err != nil {
				return err
			}
			return runTrees(ctx, l, c.Param("segment", segment), c.DType.Size(), []region{{pk[c.Root], c.Buf}})
		}}
	allgather = &algos.Algorithm{Name: name, Family: "synth", Params: params,
		Summary: "every rank's block down its own spanning trees, packed together to the topology's max-flow bound",
		Run: func(ctx context.Context, l algos.Link, c algos.Call) error {
			p := l.Size()
			pk, err := s.plan(p, 1)
			if err != nil {
				return err
			}
			n := c.Send.Len()
			if err := l.Copy(c.Buf.Slice(l.Rank()*n, n), c.Send); err != nil {
				return err
			}
			rs := make([]region, p)
			for q := range p {
				rs[q] = region{pk[q], c.Buf.Slice(q*n, n)}
			}
			return runTrees(ctx, l, c.Param("segment", segment), c.DType.Size(), rs)
		}}
	return bcast, allgather
}

// region is a buffer that a root's packing broadcasts.
type region struct {
	p   *Packing
	buf device.Buffer
}

// runTrees runs every tree of every region, each as a process of the rank
// where the link can spawn them, else one after the other.
func runTrees(ctx context.Context, l algos.Link, seg, es int, rs []region) error {
	var jobs []func(context.Context) error
	for q, rg := range rs {
		parts := shares(rg.buf.Len()/es, rg.p.Trees)
		for i, tr := range rg.p.Trees {
			buf := rg.buf.Slice(parts[i]*es, (parts[i+1]-parts[i])*es)
			tag := tagBase + algos.Tag(q*maxTrees+i)
			jobs = append(jobs, func(ctx context.Context) error { return runTree(ctx, l, tr, buf, seg, es, tag) })
		}
	}
	return runJobs(ctx, l, jobs)
}

// runJobs runs jobs as processes of the rank where the link can spawn
// them, else one after the other.
func runJobs(ctx context.Context, l algos.Link, jobs []func(context.Context) error) error {
	if sp, ok := algos.SpawnerOf(l); ok && len(jobs) > 1 {
		reqs := make([]algos.Request, len(jobs))
		for i, j := range jobs {
			reqs[i] = sp.Spawn(j)
		}
		return l.Wait(ctx, reqs...)
	}
	for _, j := range jobs {
		if err := j(ctx); err != nil {
			return err
		}
	}
	return nil
}

// shares cuts n elements among the trees in proportion to their rates:
// tree i gets elements parts[i] to parts[i+1].
func shares(n int, trees []Tree) []int {
	total := 0.0
	for _, t := range trees {
		total += t.Rate
	}
	parts := make([]int, len(trees)+1)
	acc := 0.0
	for i, t := range trees {
		acc += t.Rate
		parts[i+1] = int(float64(n) * acc / total)
	}
	parts[len(trees)] = n
	return parts
}

// children returns the devices that receive from r in the tree.
func (tr Tree) children(r int) []int {
	var kids []int
	for d, par := range tr.Parent {
		if par == r {
			kids = append(kids, d)
		}
	}
	return kids
}

// segments is how many segments a buffer of n bytes moves in down or up a
// tree: segments of seg bytes, at least one and at most maxSegments.
func segments(n, seg int) int {
	return min(maxSegments, max(1, (n+seg-1)/max(seg, 1)))
}

// runTree moves buf down one tree: each segment received from the parent
// (but at the root) and sent on to every child once the previous segment
// has left, so that the segments flow down the tree as a pipeline.
func runTree(ctx context.Context, l algos.Link, tr Tree, buf device.Buffer, seg, es int, tag algos.Tag) error {
	me := l.Rank()
	kids := tr.children(me)
	n := buf.Len() / es
	if n == 0 {
		return nil
	}
	k := segments(buf.Len(), seg)
	var reqs []algos.Request
	for s := range k {
		lo, hi := n*s/k, n*(s+1)/k
		b := buf.Slice(lo*es, (hi-lo)*es)
		if tr.Parent[me] >= 0 {
			if err := algos.Recv(ctx, l, tr.Parent[me], tag, b); err != nil {
				return fmt.Errorf("synth: tree from %d: %w", tr.Root, err)
			}
		}
		// One segment in flight per child: segments sent at once would
		// share the link and all arrive at the end, with no pipeline.
		if err := l.Wait(ctx, reqs...); err != nil {
			return err
		}
		reqs = reqs[:0]
		for _, c := range kids {
			reqs = append(reqs, l.Isend(c, tag, b))
		}
	}
	return l.Wait(ctx, reqs...)
}

// Register registers the synthesized broadcast, allgather, allreduce,
// reduce and reduce-scatter for the topology spec builds as algorithms of those collectives, all
// named name (for example "synth_tree"), so that sweeps, tuning tables
// and commands built with them (nexarsim.Main in a user's module) run
// them like the catalogue's. The trees are packed for spec: run them on
// that topology.
func Register(name string, spec sim.TopologySpec) error {
	s := NewSynth(spec)
	bc, ag := s.Algorithms(name)
	for _, x := range []struct {
		coll string
		a    *algos.Algorithm
	}{{"broadcast", bc}, {"allgather", ag}, {"allreduce", s.Allreduce(name)}, {"reduce", s.Reduce(name)}, {"reduce_scatter", s.ReduceScatter(name)}} {
		if err := algos.RegisterAlgorithm(x.coll, x.a); err != nil {
			return err
		}
	}
	return nil
}
