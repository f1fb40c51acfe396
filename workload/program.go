package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Stream names: the compute stream, and one stream per kind of
// communication, named after its process group. Reports attribute the
// compute stream's waits to the stream it waited for.
const (
	StreamCompute   = "compute"
	StreamTP        = "tp"
	StreamEP        = "ep"
	StreamDP        = "dp"    // DDP's allreduce, ZeRO's reduce-scatter
	StreamDPGather  = "dp_ag" // ZeRO's parameter allgathers
	StreamDPEP      = "dp_ep"
	StreamRecvFwd   = "pp_recv_fwd"
	StreamRecvBwd   = "pp_recv_bwd"
	StreamSendFwd   = "pp_send_fwd"
	StreamSendBwd   = "pp_send_bwd"
	activationDType = device.BF16
)

// streamGroup is the process group whose communication a stream carries.
var streamGroup = map[string]Group{
	StreamTP: TP, StreamEP: EP, StreamDP: DP, StreamDPGather: DP, StreamDPEP: DPEP,
	StreamRecvFwd: PP, StreamRecvBwd: PP, StreamSendFwd: PP, StreamSendBwd: PP,
}

// groupStream is the stream of a group's collectives.
var groupStream = map[Group]string{TP: StreamTP, EP: StreamEP, DP: StreamDP, DPEP: StreamDPEP}

// Comm ids of the process groups' sub-communicators (algos.Sub).
var groupCommID = map[Group]uint64{TP: 1, DP: 2, EP: 3, DPEP: 4}

// Options are what a rank's program needs beyond its Plan.
type Options struct {
	// Tuning is the table the groups' "auto" algorithms select by; nil
	// for nexar's.
	Tuning *algos.Tuning
	// FLOPS is the rate at which work given in FLOPs runs on this rank's
	// device, before the rank's skew; 0 takes the link's Machine's.
	FLOPS float64
	// Compute performs emulated compute on links that are not a model
	// (see algos.WithCompute); the simulator does not need it.
	Compute func(ctx context.Context, d time.Duration) error
	// Observer, if not nil, is told of every piece of work of the rank's
	// streams (Stats is one).
	Observer algos.StreamObserver
}

// Run runs one training step of p on the rank of link l, the world's
// link, and returns when the rank's streams are done. Every rank of the
// world runs it. It is written against algos' streams only, so it runs
// on any link: the simulator, or real ranks with Options.Compute.
func Run(ctx context.Context, l algos.Link, p *Plan, opt Options) error {
	if l.Size() != p.World() {
		return fmt.Errorf("workload: a world of %d ranks runs a layout of %d", l.Size(), p.World())
	}
	r := &rankProgram{ctx: ctx, l: l, p: p, sp: &p.Spec, rank: l.Rank(), opt: opt}
	return r.run()
}

// rankProgram is one rank's step as it is queued.
type rankProgram struct {
	ctx  context.Context
	l    algos.Link
	p    *Plan
	sp   *Spec
	rank int
	opt  Options

	ss      *algos.Streams
	streams map[string]*algos.Stream
	comms   map[Group]*algos.Comm
	world   *algos.Comm
	speed   float64
	stage   int
	layers  []layerPlan
	first   []int // index in layers of each chunk's first layer

	// Data parallelism.
	buckets    []bucket
	pending    []int // layers of each bucket not yet done
	nextBucket int
	gradDone   []bool
	agEvents   []*algos.Event // ZeRO-1/2: the parameter allgather each layer waits for
	// ZeRO-3: the allgather of each need, in program order.
	needs     []int // layer index of each allgather need
	needEvent []*algos.Event
	needAt    int
	used      map[string]bool // comm streams that got work
}

func (r *rankProgram) run() error {
	sp := r.sp
	opts := []algos.StreamsOption{}
	if r.opt.Observer != nil {
		opts = append(opts, algos.WithStreamObserver(r.opt.Observer))
	}
	if r.opt.Compute != nil {
		opts = append(opts, algos.WithCompute(r.opt.Compute))
	}
	if r.opt.FLOPS > 0 {
		opts = append(opts, algos.WithFLOPS(r.opt.FLOPS))
	}
	r.ss = algos.NewStreams(r.l, opts...)
	r.streams = map[string]*algos.Stream{}
	r.used = map[string]bool{}
	r.speed = r.p.Speed(r.rank)
	r.stage = r.p.Stage(r.rank)
	r.layers, r.first = r.p.localLayers(r.stage)
	if err := r.makeComms(); err != nil {
		return err
	}
	r.gradDone = make([]bool, len(r.layers))
	if sp.ZeRO < 3 && r.p.groupSize(DP) > 1 {
		r.buckets = r.p.buckets(r.layers)
		r.pending = make([]int, len(r.buckets))
		for i, b := range r.buckets {
			r.pending[i] = len(b.layers)
		}
	}
	sched := r.p.schedule(r.stage)
	if sp.ZeRO >= 1 && sp.ZeRO <= 2 {
		r.gatherParams()
	}
	if sp.ZeRO == 3 {
		r.planNeeds(sched)
	}
	lastB := map[int]int{} // chunk -> index in sched of its last backward
	for i, a := range sched {
		if !a.fwd {
			lastB[a.chunk] = i
		}
	}
	for i, a := range sched {
		if a.fwd {
			r.forward(a)
		} else {
			r.backward(a, lastB[a.chunk] == i)
		}
	}
	r.finish()
	return r.ss.Synchronize(r.ctx)
}

// makeComms builds the communicators of the rank's groups, with their
// algorithms.
func (r *rankProgram) makeComms() error {
	var err error
	if r.world, err = algos.NewComm(r.l); err != nil {
		return err
	}
	r.comms = map[Group]*algos.Comm{}
	for _, g := range []Group{TP, DP, EP, DPEP} {
		if r.p.groupSize(g) <= 1 {
			continue
		}
		sub, err := algos.Sub(r.l, r.p.Members(r.rank, g), groupCommID[g])
		if err != nil {
			return err
		}
		var opts []algos.Option
		if r.opt.Tuning != nil {
			opts = append(opts, algos.WithSelector(r.opt.Tuning))
		}
		for coll, alg := range r.sp.Algorithms[g] {
			if alg == "" {
				continue
			}
			if alg == "auto" {
				c, err := algos.Lookup(coll)
				if err != nil {
					return fmt.Errorf("workload: %s group: %w", g, err)
				}
				if _, err := c.Algorithm("auto"); err != nil {
					continue // the Comm's selector chooses
				}
			}
			opts = append(opts, algos.WithAlgorithm(coll, alg, nil))
		}
		c, err := algos.NewComm(sub, opts...)
		if err != nil {
			return fmt.Errorf("workload: %s group: %w", g, err)
		}
		r.comms[g] = c
	}
	return nil
}

// stream returns the named stream, made on first use.
func (r *rankProgram) stream(name string) *algos.Stream {
	s := r.streams[name]
	if s == nil {
		s = r.ss.NewStream(name)
		r.streams[name] = s
	}
	return s
}

// compute queues w, scaled by the rank's speed, on the compute stream.
func (r *rankProgram) compute(w Work, label string) {
	if w.IsZero() {
		return
	}
	w = w.Scale(r.speed)
	cs := r.stream(StreamCompute)
	if w.Time > 0 {
		cs.Compute(r.ctx, w.Time, label)
	} else {
		cs.ComputeFLOPs(r.ctx, w.FLOPs, label)
	}
}

// runs reports whether c moves anything: its group has more than one
// rank and it has bytes.
func (r *rankProgram) runs(c Comm) bool { return r.comms[c.Group] != nil && c.Bytes > 0 }

// collective queues c on stream s; it returns false when there is
// nothing to run (a group of one rank, no bytes).
func (r *rankProgram) collective(s *algos.Stream, c Comm, label string) bool {
	comm := r.comms[c.Group]
	if comm == nil || c.Bytes <= 0 {
		return false
	}
	p := comm.Size()
	dt := activationDType
	if c.Group == DP || c.Group == DPEP {
		dt = r.sp.GradDType
	}
	es := int64(dt.Size())
	call := algos.Call{DType: dt, Op: device.Sum, Tuning: r.opt.Tuning}
	switch c.Collective {
	case "allreduce":
		n := c.Bytes / es * es
		call.Buf = r.l.Alloc(int(n))
	case "reduce_scatter":
		blk := c.Bytes / (int64(p) * es) * es
		call.Send, call.Buf = r.l.Alloc(int(blk)*p), r.l.Alloc(int(blk))
	case "allgather":
		blk := c.Bytes / (int64(p) * es) * es
		call.Send, call.Buf = r.l.Alloc(int(blk)), r.l.Alloc(int(blk)*p)
	case "alltoall":
		blk := c.Bytes / (int64(p) * es) * es
		call.Send, call.Buf = r.l.Alloc(int(blk)*p), r.l.Alloc(int(blk)*p)
	case "broadcast", "reduce":
		n := c.Bytes / es * es
		call.Buf = r.l.Alloc(int(n))
	default:
		return false
	}
	r.used[s.Name()] = true
	s.Collective(r.ctx, comm, c.Collective, call, label)
	return true
}

// critical runs c on its group's stream with the compute stream waiting
// for it: the collective starts once the compute queued before it is
// done, and the compute after it waits for it.
func (r *rankProgram) critical(c Comm, label string) {
	if !r.runs(c) {
		return
	}
	s := r.stream(groupStream[c.Group])
	var ready, done algos.Event
	cs := r.stream(StreamCompute)
	cs.Record(&ready)
	s.WaitEvent(&ready)
	if !r.collective(s, c, label) {
		return
	}
	s.Record(&done)
	cs.WaitEvent(&done)
}

// background runs c on stream name once the compute queued so far is
// done, beside the compute that follows; with Overlap off the compute
// waits for it at once.
func (r *rankProgram) background(name string, c Comm, label string) {
	if !r.runs(c) {
		return
	}
	s := r.stream(name)
	cs := r.stream(StreamCompute)
	var ready algos.Event
	cs.Record(&ready)
	s.WaitEvent(&ready)
	if !r.collective(s, c, label) {
		return
	}
	if !r.sp.Overlap {
		var done algos.Event
		s.Record(&done)
		cs.WaitEvent(&done)
	}
}

// vstage is the virtual stage of chunk c on this rank.
func (r *rankProgram) vstage(c int) int { return c*r.sp.PP + r.stage }

// peer is the rank of virtual stage vs in this rank's pipeline.
func (r *rankProgram) peer(vs int) int {
	c := r.p.coords(r.rank)
	c[2] = vs % r.sp.PP
	return r.p.rankOf(c)
}

// p2pTag is the tag of the message into virtual stage vs for micro-batch
// mb, forward (activations) or backward (their gradients).
func p2pTag(fwd bool, mb, vs int) uint64 {
	t := uint64(mb)<<13 | uint64(vs)<<1
	if !fwd {
		t |= 1
	}
	return t
}

// chunkLayers returns the local indices of chunk c's layers.
func (r *rankProgram) chunkLayers(c int) (lo, hi int) {
	lo = r.first[c]
	hi = len(r.layers)
	if c+1 < len(r.first) {
		hi = r.first[c+1]
	}
	return lo, hi
}

// receive queues the receive of a micro-batch's input on stream name and
// makes the compute wait for it.
func (r *rankProgram) receive(name string, from int, tag uint64, bytes int64, label string) {
	s := r.stream(name)
	s.Recv(r.ctx, r.world, from, tag, r.l.Alloc(int(bytes)), label)
	var got algos.Event
	s.Record(&got)
	r.stream(StreamCompute).WaitEvent(&got)
}

// send queues the send of a micro-batch's output on stream name once the
// compute queued so far is done.
func (r *rankProgram) send(name string, to int, tag uint64, bytes int64, label string) {
	s := r.stream(name)
	var ready algos.Event
	r.stream(StreamCompute).Record(&ready)
	s.WaitEvent(&ready)
	s.Send(r.ctx, r.world, to, tag, r.l.Alloc(int(bytes)), label)
	r.used[name] = true
}

func (r *rankProgram) forward(a action) {
	vs := r.vstage(a.chunk)
	V := r.sp.PP * r.sp.chunks()
	lo, hi := r.chunkLayers(a.chunk)
	if vs > 0 && r.sp.PP > 1 {
		r.receive(StreamRecvFwd, r.peer(vs-1), p2pTag(true, a.mb, vs), r.layers[lo].act, fmt.Sprintf("recv act mb%d", a.mb))
	}
	for i := lo; i < hi; i++ {
		lp := &r.layers[i]
		r.waitParams(i, a.mb == 0)
		r.compute(lp.fwd, fmt.Sprintf("fwd %s mb%d", lp.name, a.mb))
		for _, c := range lp.fwdComms {
			r.critical(c, fmt.Sprintf("%s %s fwd %s mb%d", c.Group, c.Collective, lp.name, a.mb))
		}
	}
	if vs < V-1 && r.sp.PP > 1 {
		r.send(StreamSendFwd, r.peer(vs+1), p2pTag(true, a.mb, vs+1), r.layers[hi-1].act, fmt.Sprintf("send act mb%d", a.mb))
	}
}

func (r *rankProgram) backward(a action, last bool) {
	vs := r.vstage(a.chunk)
	V := r.sp.PP * r.sp.chunks()
	lo, hi := r.chunkLayers(a.chunk)
	if vs < V-1 && r.sp.PP > 1 {
		r.receive(StreamRecvBwd, r.peer(vs+1), p2pTag(false, a.mb, vs), r.layers[hi-1].act, fmt.Sprintf("recv grad mb%d", a.mb))
	}
	for i := hi - 1; i >= lo; i-- {
		lp := &r.layers[i]
		r.waitParams(i, false)
		r.compute(lp.bwdInput, fmt.Sprintf("bwd %s mb%d", lp.name, a.mb))
		for _, c := range lp.bwdComms {
			r.critical(c, fmt.Sprintf("%s %s bwd %s mb%d", c.Group, c.Collective, lp.name, a.mb))
		}
		r.compute(lp.bwdWeight, fmt.Sprintf("wgrad %s mb%d", lp.name, a.mb))
		if last {
			r.gradsReady(i)
		}
	}
	if vs > 0 && r.sp.PP > 1 {
		r.send(StreamSendBwd, r.peer(vs-1), p2pTag(false, a.mb, vs-1), r.layers[lo].act, fmt.Sprintf("send grad mb%d", a.mb))
	}
}

// gradsReady launches what layer i's finished gradients allow: its
// weight-gradient collectives, its experts' reduction, and the buckets
// it completes (or, under ZeRO-3, its reduce-scatter).
func (r *rankProgram) gradsReady(i int) {
	lp := &r.layers[i]
	r.gradDone[i] = true
	for _, c := range lp.wgradComms {
		r.background(groupStream[c.Group], c, fmt.Sprintf("%s %s wgrad %s", c.Group, c.Collective, lp.name))
	}
	if lp.expertGrad > 0 {
		r.background(StreamDPEP, Comm{DPEP, "allreduce", lp.expertGrad}, "dp_ep allreduce experts "+lp.name)
	}
	if r.sp.ZeRO == 3 {
		if lp.grad > 0 {
			r.background(StreamDP, Comm{DP, "reduce_scatter", lp.grad}, "dp reduce_scatter "+lp.name)
		}
		return
	}
	for k, b := range r.buckets {
		if k >= r.nextBucket && containsInt(b.layers, i) {
			r.pending[k]--
		}
	}
	for r.nextBucket < len(r.buckets) && r.pending[r.nextBucket] == 0 {
		k := r.nextBucket
		coll := "allreduce"
		if r.sp.ZeRO > 0 {
			coll = "reduce_scatter"
		}
		r.background(StreamDP, Comm{DP, coll, r.buckets[k].bytes}, fmt.Sprintf("dp %s bucket %d", coll, k))
		r.nextBucket++
	}
}

func containsInt(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// gatherParams queues ZeRO-1/2's allgathers of the updated parameters,
// bucket by bucket in forward order, at the start of the step; each
// layer's first forward waits for the last of them that holds its
// parameters.
func (r *rankProgram) gatherParams() {
	if r.p.groupSize(DP) <= 1 {
		return
	}
	s := r.stream(StreamDPGather)
	r.agEvents = make([]*algos.Event, len(r.layers))
	ps, gs := int64(r.sp.ParamDType.Size()), int64(r.sp.GradDType.Size())
	for k := len(r.buckets) - 1; k >= 0; k-- {
		b := r.buckets[k]
		if !r.collective(s, Comm{DP, "allgather", b.bytes / gs * ps}, fmt.Sprintf("dp allgather params bucket %d", k)) {
			continue
		}
		ev := &algos.Event{}
		s.Record(ev)
		for _, i := range b.layers {
			r.agEvents[i] = ev // the later bucket (in launch order) wins
		}
	}
	if !r.sp.Overlap {
		// Nothing overlaps: the compute waits for every gather first.
		var all algos.Event
		s.Record(&all)
		r.stream(StreamCompute).WaitEvent(&all)
	}
}

// planNeeds lists ZeRO-3's allgathers in the order the compute needs
// them (each layer before each forward and each backward), and queues
// the first Prefetch of them.
func (r *rankProgram) planNeeds(sched []action) {
	if r.p.groupSize(DP) <= 1 {
		return
	}
	for _, a := range sched {
		lo, hi := r.chunkLayers(a.chunk)
		if a.fwd {
			for i := lo; i < hi; i++ {
				r.needs = append(r.needs, i)
			}
		} else {
			for i := hi - 1; i >= lo; i-- {
				r.needs = append(r.needs, i)
			}
		}
	}
	r.needEvent = make([]*algos.Event, len(r.needs))
	for k := 0; k < min(r.sp.Prefetch, len(r.needs)); k++ {
		r.gatherNeed(k)
	}
}

// gatherNeed queues the allgather of need k on the gather stream, after
// the compute queued so far.
func (r *rankProgram) gatherNeed(k int) {
	s := r.stream(StreamDPGather)
	var ready algos.Event
	r.stream(StreamCompute).Record(&ready)
	s.WaitEvent(&ready)
	lp := &r.layers[r.needs[k]]
	ev := &algos.Event{}
	if r.collective(s, Comm{DP, "allgather", lp.param}, "dp allgather params "+lp.name) {
		s.Record(ev)
	}
	r.needEvent[k] = ev
}

// waitParams makes layer i's next pass wait for its parameters: under
// ZeRO-3 the allgather of this need (queued Prefetch needs ahead), under
// ZeRO-1/2 on the first forward the bucket gather that holds them.
func (r *rankProgram) waitParams(i int, firstFwd bool) {
	cs := r.stream(StreamCompute)
	switch {
	case r.sp.ZeRO == 3 && r.needs != nil:
		k := r.needAt
		r.needAt++
		if r.needEvent[k] == nil {
			r.gatherNeed(k)
		}
		if next := k + r.sp.Prefetch; r.sp.Prefetch > 0 && next < len(r.needs) {
			r.gatherNeed(next)
		}
		cs.WaitEvent(r.needEvent[k])
	case firstFwd && r.agEvents != nil && r.agEvents[i] != nil:
		cs.WaitEvent(r.agEvents[i])
	}
}

// finish launches the last bucket, makes the compute wait for every
// communication stream, and runs the optimizer.
func (r *rankProgram) finish() {
	cs := r.stream(StreamCompute)
	for _, name := range []string{StreamDP, StreamDPEP, StreamTP, StreamEP, StreamDPGather} {
		if s := r.streams[name]; s != nil && r.used[name] {
			var done algos.Event
			s.Record(&done)
			cs.WaitEvent(&done)
		}
	}
	opt := r.sp.Optimizer.Scale(1 / float64(r.sp.TP*r.sp.PP))
	if r.sp.ZeRO > 0 {
		opt = opt.Scale(1 / float64(r.sp.DP))
	}
	r.compute(opt, "optimizer")
}
