package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Plan is a Spec compiled for its layout: each rank's layers with the
// work and collectives of one micro-batch, its gradient buckets, its
// pipeline schedule and its compute speed. Every rank of a process group
// has the same program, so their collectives start in the same order.
type Plan struct {
	Spec Spec
	// stages[s][c] are the layers of chunk c of stage s (virtual stage
	// c·PP + s), in forward order.
	stages [][][]layerPlan
	pos    [3]int // order of tp, dp, pp in rank numbers (orderOf)
	speed  []float64
}

// layerPlan is one layer's work on one rank for one micro-batch.
type layerPlan struct {
	name                           string
	fwd, bwdInput, bwdWeight       Work
	fwdComms, bwdComms, wgradComms []Comm
	// grad is the bytes of this rank's dense gradients of the layer,
	// reduced over DP in buckets; expertGrad those of its experts,
	// reduced over DP_EP; param the bytes of parameters ZeRO-3 gathers.
	grad, expertGrad, param int64
	// act is the point-to-point message to the next virtual stage when
	// the layer ends one.
	act int64
}

// NewPlan validates s and compiles it.
func NewPlan(s Spec) (*Plan, error) {
	s.defaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	pos, _ := orderOf(s.Order)
	p := &Plan{Spec: s, pos: pos}
	p.speed = speeds(s)
	chunks := s.chunks()
	V := s.PP * chunks
	p.stages = make([][][]layerPlan, s.PP)
	for st := range p.stages {
		p.stages[st] = make([][]layerPlan, chunks)
	}
	for vs, layers := range s.split(V) {
		lp := make([]layerPlan, len(layers))
		for i, l := range layers {
			lp[i] = s.layerPlan(l)
		}
		p.stages[vs%s.PP][vs/s.PP] = lp
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// defaults fills what a Spec may leave out.
func (s *Spec) defaults() {
	for _, d := range []*int{&s.DP, &s.TP, &s.PP, &s.EP} {
		if *d == 0 {
			*d = 1
		}
	}
	if s.MicroBatches == 0 {
		s.MicroBatches = 1
	}
	if s.Slowdown == 0 {
		s.Slowdown = 1
	}
}

// split cuts the layers into V contiguous virtual stages: the layers that
// are not edges as evenly as possible (the first stages take one more),
// each edge layer with its neighbour.
func (s *Spec) split(V int) [][]Layer {
	n := s.splitLayers()
	out := make([][]Layer, V)
	if n == 0 {
		out[0] = s.Layers
		return out
	}
	vs, inStage := 0, 0
	quota := func(v int) int {
		q := n / V
		if v < n%V {
			q++
		}
		return q
	}
	for _, l := range s.Layers {
		if !l.Edge {
			if inStage == quota(vs) && vs < V-1 {
				vs, inStage = vs+1, 0
			}
			inStage++
		}
		out[vs] = append(out[vs], l)
	}
	return out
}

// layerPlan is l's work on one rank.
func (s *Spec) layerPlan(l Layer) layerPlan {
	if e := l.Explicit; e != nil {
		return layerPlan{name: l.Name, fwd: e.Forward, bwdInput: e.InputGrad, bwdWeight: e.WeightGrad,
			fwdComms: e.FwdComms, bwdComms: e.InputComms, wgradComms: e.WeightComms, act: l.Activation}
	}
	tp := float64(s.TP)
	bwd := l.Backward
	if bwd.IsZero() {
		bwd = l.Forward.Scale(2)
	}
	lp := layerPlan{name: l.Name, fwd: l.Forward.Scale(1 / tp), bwdInput: bwd.Scale(1 / tp)}
	dense := l.Params - l.ExpertParams
	lp.grad = dense / int64(s.TP) * int64(s.GradDType.Size())
	lp.param = dense / int64(s.TP) * int64(s.ParamDType.Size())
	if l.ExpertParams > 0 {
		lp.expertGrad = l.ExpertParams / int64(s.TP*s.EP) * int64(s.GradDType.Size())
	}
	lp.act = l.Activation / int64(s.TP)
	for range l.TPCollectives {
		if s.SequenceParallel {
			c := []Comm{{TP, "reduce_scatter", l.Activation}, {TP, "allgather", l.Activation}}
			lp.fwdComms = append(lp.fwdComms, c...)
			lp.bwdComms = append(lp.bwdComms, c...)
		} else {
			lp.fwdComms = append(lp.fwdComms, Comm{TP, "allreduce", l.Activation})
			lp.bwdComms = append(lp.bwdComms, Comm{TP, "allreduce", l.Activation})
		}
	}
	for range l.Alltoalls {
		lp.fwdComms = append(lp.fwdComms, Comm{EP, "alltoall", l.Alltoall})
		lp.bwdComms = append(lp.bwdComms, Comm{EP, "alltoall", l.Alltoall})
	}
	return lp
}

// speeds draws each rank's compute factor (see Spec.Skew).
func speeds(s Spec) []float64 {
	w := s.World()
	f := make([]float64, w)
	rng := rand.New(rand.NewPCG(s.Seed, 0x6e65786172))
	for r := range f {
		f[r] = 1
		if s.Skew > 0 {
			f[r] = math.Max(0.1, 1+s.Skew*rng.NormFloat64())
		}
	}
	if s.Stragglers > 0 {
		for _, r := range rng.Perm(w)[:s.Stragglers] {
			f[r] *= s.Slowdown
		}
	}
	return f
}

// Speed is the factor by which rank's compute takes longer than stated
// (1 without skew or stragglers).
func (p *Plan) Speed(rank int) float64 { return p.speed[rank] }

// World is the number of ranks.
func (p *Plan) World() int { return p.Spec.World() }

// coords returns the tp, dp and pp coordinates of rank.
func (p *Plan) coords(rank int) (c [3]int) {
	sizes := [3]int{p.Spec.TP, p.Spec.DP, p.Spec.PP}
	// Dimensions from fastest to slowest.
	var dims [3]int
	for d, at := range p.pos {
		dims[at] = d
	}
	for _, d := range dims {
		c[d] = rank % sizes[d]
		rank /= sizes[d]
	}
	return c
}

// rankOf is the rank at coordinates c.
func (p *Plan) rankOf(c [3]int) int {
	sizes := [3]int{p.Spec.TP, p.Spec.DP, p.Spec.PP}
	var dims [3]int
	for d, at := range p.pos {
		dims[at] = d
	}
	r, stride := 0, 1
	for _, d := range dims {
		r += c[d] * stride
		stride *= sizes[d]
	}
	return r
}

// Stage is rank's pipeline stage.
func (p *Plan) Stage(rank int) int { return p.coords(rank)[2] }

// Members returns the ranks of rank's group g, ascending in the group's
// own order (for PP, the ranks of every stage of its pipeline).
func (p *Plan) Members(rank int, g Group) []int {
	c := p.coords(rank)
	var out []int
	switch g {
	case TP:
		for t := range p.Spec.TP {
			out = append(out, p.rankOf([3]int{t, c[1], c[2]}))
		}
	case DP:
		for d := range p.Spec.DP {
			out = append(out, p.rankOf([3]int{c[0], d, c[2]}))
		}
	case PP:
		for s := range p.Spec.PP {
			out = append(out, p.rankOf([3]int{c[0], c[1], s}))
		}
	case EP:
		base := c[1] - c[1]%p.Spec.EP
		for d := base; d < base+p.Spec.EP; d++ {
			out = append(out, p.rankOf([3]int{c[0], d, c[2]}))
		}
	case DPEP:
		for d := c[1] % p.Spec.EP; d < p.Spec.DP; d += p.Spec.EP {
			out = append(out, p.rankOf([3]int{c[0], d, c[2]}))
		}
	}
	return out
}

// groupSize is the size of every group g.
func (p *Plan) groupSize(g Group) int {
	switch g {
	case TP:
		return p.Spec.TP
	case DP:
		return p.Spec.DP
	case PP:
		return p.Spec.PP
	case EP:
		return p.Spec.EP
	default:
		return p.Spec.DP / p.Spec.EP
	}
}

// action is one step of a pipeline schedule: a micro-batch's forward or
// backward through one chunk of the stage.
type action struct {
	fwd       bool
	mb, chunk int
}

// schedule returns the order stage s runs its micro-batches' passes in.
func (p *Plan) schedule(s int) []action {
	sp := &p.Spec
	m, pp, v := sp.MicroBatches, sp.PP, sp.chunks()
	var out []action
	switch {
	case sp.Schedule == GPipe || pp == 1:
		for mb := range m {
			out = append(out, action{true, mb, 0})
		}
		for mb := m - 1; mb >= 0; mb-- {
			out = append(out, action{false, mb, 0})
		}
	case sp.Schedule == OneFOneB:
		warm := min(pp-s-1, m)
		for mb := range warm {
			out = append(out, action{true, mb, 0})
		}
		for i := range m - warm {
			out = append(out, action{true, warm + i, 0}, action{false, i, 0})
		}
		for mb := m - warm; mb < m; mb++ {
			out = append(out, action{false, mb, 0})
		}
	default: // Megatron's interleaved 1F1B
		total := m * v
		mbOf := func(k int) int { return (k/(pp*v))*pp + k%pp }
		fwdOf := func(k int) action { return action{true, mbOf(k), (k / pp) % v} }
		bwdOf := func(k int) action { return action{false, mbOf(k), v - 1 - (k/pp)%v} }
		warm := total
		if m != pp {
			warm = min((pp-s-1)*2+(v-1)*pp, total)
		}
		for k := range warm {
			out = append(out, fwdOf(k))
		}
		for i := range total - warm {
			out = append(out, fwdOf(warm+i), bwdOf(i))
		}
		for k := total - warm; k < total; k++ {
			out = append(out, bwdOf(k))
		}
	}
	return out
}

// bucket is a gradient bucket of a rank: bytes of the contiguous
// gradients in reverse layer order, and the layers (local indices, in
// forward order over the rank's chunks) it holds a part of.
type bucket struct {
	bytes  int64
	layers []int
}

// buckets cuts the rank's dense gradients, last layer first, into
// buckets of Spec.Bucket bytes (the first of FirstBucket); layers are the
// rank's layers in forward order over its chunks.
func (p *Plan) buckets(layers []layerPlan) []bucket {
	var out []bucket
	size := p.Spec.FirstBucket
	if size == 0 {
		size = p.Spec.Bucket
	}
	cur := bucket{}
	for i := len(layers) - 1; i >= 0; i-- {
		g := layers[i].grad
		if g == 0 {
			continue
		}
		for g > 0 {
			take := g
			if size > 0 {
				take = min(g, size-cur.bytes)
			}
			cur.bytes += take
			g -= take
			if !slices.Contains(cur.layers, i) {
				cur.layers = append(cur.layers, i)
			}
			if size > 0 && cur.bytes == size {
				out = append(out, cur)
				cur = bucket{}
				size = p.Spec.Bucket
			}
		}
	}
	if cur.bytes > 0 {
		out = append(out, cur)
	}
	return out
}

// localLayers returns stage s's layers in forward order over its chunks,
// and for each chunk the index of its first layer.
func (p *Plan) localLayers(s int) ([]layerPlan, []int) {
	var all []layerPlan
	var first []int
	for _, ls := range p.stages[s] {
		first = append(first, len(all))
		all = append(all, ls...)
	}
	return all, first
}

// check returns an error if a stage or chunk has no layers (a model of
// edge layers only, on several stages).
func (p *Plan) check() error {
	for s, st := range p.stages {
		for c, ls := range st {
			if len(ls) == 0 {
				return fmt.Errorf("stage %d chunk %d has no layers (every layer with compute is an edge layer, kept on the first stage)", s, c)
			}
		}
	}
	return nil
}
