package algos

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/nexar-go/nexar-go/device"
)

// Selector picks the algorithm of a collective, and its parameters, from
// the world size and the message: bytes as nccl-tests counts them (see
// Collective.Layout) and count elements. It must choose the same on every
// rank. *Tuning implements it; NexarSelector is the default.
type Selector interface {
	Select(collective string, world, bytes, count int) (Choice, error)
}

var _ Selector = (*Tuning)(nil)

// NexarSelector makes nexar's own choices, which is what a Comm does when
// given no Selector: for the collectives its Tuning table has an entry
// for, the table's choice (DefaultTuning: for allreduce the pipelined
// ring from 8 MiB, the ring up to 8 ranks or below one element per rank,
// halving-doubling otherwise; the ring for allgather and reduce_scatter;
// broadcast flat below 4 ranks, binary_tree from 4; reduce binomial_tree,
// where nexar folds the excess ranks of a non-power of two in first, a
// variant the catalogue has not); otherwise nexar's fixed rule:
//
//	gather, scatter flat
//	barrier         two_phase up to 4 ranks, dissemination from 5
//	alltoall        pairwise
//	scan            recursive_doubling
type NexarSelector struct {
	// Tuning is consulted first; nil is DefaultTuning.
	Tuning *Tuning
}

// nexarFixed is NexarSelector's rule for collectives without a table
// entry; ranks-dependent entries are handled in Select.
var nexarFixed = map[string]string{
	"alltoall": "pairwise",
	"gather":   "flat",
	"scatter":  "flat",
	"scan":     "recursive_doubling",
}

// Select implements Selector.
func (s NexarSelector) Select(collective string, world, bytes, count int) (Choice, error) {
	t := s.Tuning
	if t == nil {
		t = DefaultTuning()
	}
	if t.Collective(collective) != nil {
		return t.Select(collective, world, bytes, count)
	}
	if collective == "barrier" {
		if world <= 4 {
			return Choice{Algorithm: "two_phase", From: "nexar"}, nil
		}
		return Choice{Algorithm: "dissemination", From: "nexar"}, nil
	}
	if a, ok := nexarFixed[collective]; ok {
		return Choice{Algorithm: a, From: "nexar"}, nil
	}
	return Choice{}, fmt.Errorf("nexar selector: no choice for %s", collective)
}

// Option configures a Comm.
type Option func(*commConfig) error

type commConfig struct {
	sel   Selector
	fixed map[string]Choice
}

// WithSelector makes the Comm pick algorithms with s, for the collectives
// not fixed by WithAlgorithm. A *Tuning from nexar-sim is a Selector. If s
// returns an error for a collective (a table without an entry for it), the
// Comm falls back to NexarSelector.
func WithSelector(s Selector) Option {
	return func(c *commConfig) error {
		if s == nil {
			return errors.New("comm: nil selector")
		}
		c.sel = s
		return nil
	}
}

// WithAlgorithm fixes the algorithm of collective, with params (nil for
// the algorithm's defaults), whatever the message. The names are the
// catalogue's; NewComm rejects unknown ones.
func WithAlgorithm(collective, algorithm string, params map[string]int) Option {
	return func(c *commConfig) error {
		coll, err := Lookup(collective)
		if err != nil {
			return fmt.Errorf("comm: %w", err)
		}
		a, err := coll.Algorithm(algorithm)
		if err != nil {
			return fmt.Errorf("comm: %w", err)
		}
		for k := range params {
			if _, ok := a.Params[k]; !ok {
				return fmt.Errorf("comm: %s %s has no parameter %q", collective, algorithm, k)
			}
		}
		c.fixed[collective] = Choice{Algorithm: algorithm, Params: maps.Clone(params), From: "WithAlgorithm"}
		return nil
	}
}

// Comm is a communicator: the interface application code calls, over a
// Link, so that the same program runs in the simulator and on QUIC. It
// offers every collective of the catalogue, blocking and non-blocking,
// point-to-point messages, and Split into sub-communicators.
//
// Every rank of the communicator must start its collectives (and Split)
// in the same order, as in MPI. Each operation gets the next of the Comm's
// sequence numbers and runs through Scoped(link, id, seq), so the messages
// of operations in flight at the same time, or of different
// communicators, never match each other's.
//
// The algorithm of each collective is the one fixed with WithAlgorithm,
// else the Selector's (WithSelector), else NexarSelector's.
//
// Non-blocking operations (the I methods) return a *Handle. If the Link
// implements Spawner (the simulator's and realnet's do), the
// operation runs at once, concurrently with the caller, on the same rank.
// Otherwise it is deferred: it runs, in the order operations were started,
// when the caller waits on its handle or on a later one's, or calls any
// blocking method of the Comm, whichever comes first. Every rank then runs
// the deferred operations in the same order, so the program cannot
// deadlock on them, but nothing overlaps.
//
// A Comm is used by one goroutine at a time, like its Link.
type Comm struct {
	link    Link
	id      uint64
	spawner Spawner // nil if the link cannot spawn
	cfg     commConfig
	seq     uint64
	// deferred holds the started, not yet run operations, oldest first,
	// when the link cannot spawn.
	deferred []*Handle
}

// NewComm returns a communicator over l, the world or a sub-communicator
// made by Split or Sub.
func NewComm(l Link, opts ...Option) (*Comm, error) {
	cfg := commConfig{fixed: map[string]Choice{}}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return newComm(l, cfg), nil
}

func newComm(l Link, cfg commConfig) *Comm {
	c := &Comm{link: l, id: CommID(l), cfg: cfg}
	c.spawner, _ = l.(Spawner)
	return c
}

// Rank is this rank's index in the communicator.
func (c *Comm) Rank() int { return c.link.Rank() }

// Size is the number of ranks in the communicator.
func (c *Comm) Size() int { return c.link.Size() }

// Link returns the link the communicator runs over.
func (c *Comm) Link() Link { return c.link }

// commSeqBits is the width of the collectives' sequence numbers: the
// operation field of a tag (OpSeqBits) less its top bit, which marks
// point-to-point messages.
const commSeqBits = OpSeqBits - 1

// nextSeq returns the sequence number of the next collective.
func (c *Comm) nextSeq() uint64 {
	s := c.seq
	c.seq = (c.seq + 1) & (1<<commSeqBits - 1)
	return s
}

// MaxUserTag is the largest tag of Send and Recv. User messages carry
// their tag in the low 39 bits and the top bit of the operation field set,
// which no collective's tag has.
const MaxUserTag = 1<<(AlgoTagBits+commSeqBits) - 1

func (c *Comm) userTag(tag uint64) (Tag, error) {
	if tag > MaxUserTag {
		return 0, fmt.Errorf("comm: tag %d above MaxUserTag (%d)", tag, uint64(MaxUserTag))
	}
	return Tag(c.id)<<(AlgoTagBits+OpSeqBits) | 1<<(AlgoTagBits+commSeqBits) | Tag(tag), nil
}

// Handle is a started non-blocking operation.
type Handle struct {
	c *Comm
	// req is the link's request (a spawned collective, a send or a
	// receive); nil while the operation is deferred.
	req Request
	// run is a deferred operation, nil once it has run.
	run  func(ctx context.Context) error
	done bool
	err  error
}

// Wait blocks until the operation has finished and returns its error.
// Waiting again returns the same error. If ctx ends first, Wait returns
// its error and the operation is abandoned.
func (h *Handle) Wait(ctx context.Context) error {
	if h.done {
		return h.err
	}
	if h.run != nil {
		// Run the deferred operations up to this one, in order.
		for len(h.c.deferred) > 0 {
			d := h.c.deferred[0]
			h.c.deferred = h.c.deferred[1:]
			d.runDeferred(ctx)
			if d == h {
				break
			}
		}
		return h.err
	}
	if err := h.c.flush(ctx); err != nil {
		return err
	}
	h.done, h.err = true, h.c.link.Wait(ctx, h.req)
	return h.err
}

func (h *Handle) runDeferred(ctx context.Context) {
	run := h.run
	h.run = nil
	h.done, h.err = true, run(ctx)
}

// WaitAll waits for every handle, in order, and returns the first error.
func WaitAll(ctx context.Context, hs ...*Handle) error {
	var first error
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// flush runs every deferred operation, before a blocking call. The
// operations' own errors stay with their handles.
func (c *Comm) flush(ctx context.Context) error {
	for len(c.deferred) > 0 {
		d := c.deferred[0]
		c.deferred = c.deferred[1:]
		d.runDeferred(ctx)
	}
	return ctx.Err()
}

// choose returns the algorithm the Comm runs for collective over call.
func (c *Comm) choose(collective string, call Call) (*Algorithm, map[string]int, error) {
	coll, err := Lookup(collective)
	if err != nil {
		return nil, nil, fmt.Errorf("comm: %w", err)
	}
	ch, fixed := c.cfg.fixed[collective]
	if !fixed {
		bytes, count, err := messageSize(collective, c.Size(), call)
		if err != nil {
			return nil, nil, err
		}
		var sel Selector = NexarSelector{}
		if c.cfg.sel != nil {
			sel = c.cfg.sel
		}
		ch, err = sel.Select(collective, c.Size(), bytes, count)
		if err != nil && c.cfg.sel != nil {
			ch, err = NexarSelector{}.Select(collective, c.Size(), bytes, count)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("comm: %w", err)
		}
	}
	a, err := coll.Algorithm(ch.Algorithm)
	if err != nil {
		return nil, nil, fmt.Errorf("comm: %s: %w", ch.From, err)
	}
	if a.PowerOfTwo && c.Size()&(c.Size()-1) != 0 {
		return nil, nil, fmt.Errorf("comm: %s %s (from %s) needs a power-of-two world, not %d ranks", collective, a.Name, ch.From, c.Size())
	}
	return a, ch.Params, nil
}

// messageSize returns the bytes (as nccl-tests counts them) and elements
// of a collective's message, computed from buffers every rank has so that
// every rank selects alike.
func messageSize(collective string, p int, call Call) (bytes, count int, err error) {
	size := func(b device.Buffer, times int) (int, int, error) {
		if b == nil {
			return 0, 0, fmt.Errorf("comm: %s: missing buffer", collective)
		}
		return b.Len() * times, b.Len() * times / call.DType.Size(), nil
	}
	switch collective {
	case "barrier":
		return 0, 0, nil
	case "allgather", "gather":
		return size(call.Send, p) // the block, p times
	case "scatter":
		return size(call.Buf, p)
	case "reduce_scatter", "alltoall":
		return size(call.Send, 1)
	}
	return size(call.Buf, 1)
}

// Start starts collective (a catalogue name) over call without waiting
// for it, and returns its handle. The typed I methods call it.
func (c *Comm) Start(ctx context.Context, collective string, call Call) *Handle {
	h := &Handle{c: c}
	// The sequence number is taken even if the call fails here, so that
	// the next operation keeps the same number on every rank.
	l := Scoped(c.link, c.id, c.nextSeq())
	a, params, err := c.choose(collective, call)
	if err != nil {
		h.done, h.err = true, err
		return h
	}
	if call.Params, err = mergeParams(a, params, call.Params); err != nil {
		h.done, h.err = true, err
		return h
	}
	return c.start(ctx, h, func(ctx context.Context) error { return a.Run(ctx, l, call) })
}

// start runs op for h at once if the link can spawn, and defers it
// otherwise.
func (c *Comm) start(ctx context.Context, h *Handle, op func(ctx context.Context) error) *Handle {
	if c.spawner != nil {
		h.req = c.spawner.Spawn(func(context.Context) error { return op(ctx) })
		return h
	}
	// Deferred: it runs under the context it was started with, cut short
	// as well if the context of the call that runs it ends.
	h.run = func(runCtx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(runCtx, cancel)
		defer stop()
		return op(ctx)
	}
	c.deferred = append(c.deferred, h)
	return h
}

// Run runs collective (a catalogue name) over call and waits for it. The
// typed methods call it.
func (c *Comm) Run(ctx context.Context, collective string, call Call) error {
	if err := c.flush(ctx); err != nil {
		return err
	}
	l := Scoped(c.link, c.id, c.nextSeq())
	a, params, err := c.choose(collective, call)
	if err != nil {
		return err
	}
	if call.Params, err = mergeParams(a, params, call.Params); err != nil {
		return err
	}
	return a.Run(ctx, l, call)
}

// mergeParams returns the parameters of chosen overridden by those of the
// call (the exclusive flag of ExScan), without modifying either. The
// call's must be parameters of a, which would otherwise ignore them (an
// exclusive scan would silently come out inclusive).
func mergeParams(a *Algorithm, chosen, call map[string]int) (map[string]int, error) {
	if len(call) == 0 {
		return chosen, nil
	}
	m := maps.Clone(chosen)
	if m == nil {
		m = map[string]int{}
	}
	for k, v := range call {
		if _, ok := a.Params[k]; !ok {
			return nil, fmt.Errorf("comm: algorithm %s has no parameter %q", a.Name, k)
		}
		m[k] = v
	}
	return m, nil
}

// AllReduce reduces buf across all ranks with op, in place: every rank
// ends with the reduction of every rank's buf.
func (c *Comm) AllReduce(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op) error {
	return c.Run(ctx, "allreduce", Call{Buf: buf, DType: dt, Op: op})
}

// IAllReduce is the non-blocking AllReduce.
func (c *Comm) IAllReduce(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op) *Handle {
	return c.Start(ctx, "allreduce", Call{Buf: buf, DType: dt, Op: op})
}

// AllReduceCompressed reduces buf across all ranks with op, in place and
// compressed by comp, this rank's Compressor for the tensor, which keeps
// the error-feedback residual across calls (see Compressor.AllReduce).
// Every rank ends with the same, approximate, result. A training loop
// calls it every step with the same Compressor; through AllReduce (with
// WithAlgorithm "compressed_topk", say) every call would start from a
// zero residual instead.
func (c *Comm) AllReduceCompressed(ctx context.Context, comp *Compressor, buf device.Buffer, dt device.DType, op device.Op) error {
	if err := c.flush(ctx); err != nil {
		return err
	}
	return comp.AllReduce(ctx, Scoped(c.link, c.id, c.nextSeq()), buf, dt, op)
}

// IAllReduceCompressed is the non-blocking AllReduceCompressed; comp and
// buf must not be used until it completes.
func (c *Comm) IAllReduceCompressed(ctx context.Context, comp *Compressor, buf device.Buffer, dt device.DType, op device.Op) *Handle {
	l := Scoped(c.link, c.id, c.nextSeq())
	return c.start(ctx, &Handle{c: c}, func(ctx context.Context) error { return comp.AllReduce(ctx, l, buf, dt, op) })
}

// Broadcast copies root's buf into buf on every rank.
func (c *Comm) Broadcast(ctx context.Context, buf device.Buffer, dt device.DType, root int) error {
	return c.Run(ctx, "broadcast", Call{Buf: buf, DType: dt, Root: root})
}

// IBroadcast is the non-blocking Broadcast.
func (c *Comm) IBroadcast(ctx context.Context, buf device.Buffer, dt device.DType, root int) *Handle {
	return c.Start(ctx, "broadcast", Call{Buf: buf, DType: dt, Root: root})
}

// Reduce reduces buf across all ranks with op into root's buf; on the
// other ranks buf is input, and unspecified afterwards.
func (c *Comm) Reduce(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op, root int) error {
	return c.Run(ctx, "reduce", Call{Buf: buf, DType: dt, Op: op, Root: root})
}

// IReduce is the non-blocking Reduce.
func (c *Comm) IReduce(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op, root int) *Handle {
	return c.Start(ctx, "reduce", Call{Buf: buf, DType: dt, Op: op, Root: root})
}

// AllGather gathers every rank's send block into recv on every rank,
// rank r's block at block r; recv holds Size() blocks.
func (c *Comm) AllGather(ctx context.Context, send, recv device.Buffer, dt device.DType) error {
	return c.Run(ctx, "allgather", Call{Send: send, Buf: recv, DType: dt})
}

// IAllGather is the non-blocking AllGather.
func (c *Comm) IAllGather(ctx context.Context, send, recv device.Buffer, dt device.DType) *Handle {
	return c.Start(ctx, "allgather", Call{Send: send, Buf: recv, DType: dt})
}

// ReduceScatter reduces send, Size() blocks, across all ranks with op and
// leaves block r of the result in recv on rank r.
func (c *Comm) ReduceScatter(ctx context.Context, send, recv device.Buffer, dt device.DType, op device.Op) error {
	return c.Run(ctx, "reduce_scatter", Call{Send: send, Buf: recv, DType: dt, Op: op})
}

// IReduceScatter is the non-blocking ReduceScatter.
func (c *Comm) IReduceScatter(ctx context.Context, send, recv device.Buffer, dt device.DType, op device.Op) *Handle {
	return c.Start(ctx, "reduce_scatter", Call{Send: send, Buf: recv, DType: dt, Op: op})
}

// AllToAll sends block j of send to rank j, which receives it as block r
// of its recv, r being the sender; both hold Size() blocks.
func (c *Comm) AllToAll(ctx context.Context, send, recv device.Buffer, dt device.DType) error {
	return c.Run(ctx, "alltoall", Call{Send: send, Buf: recv, DType: dt})
}

// IAllToAll is the non-blocking AllToAll.
func (c *Comm) IAllToAll(ctx context.Context, send, recv device.Buffer, dt device.DType) *Handle {
	return c.Start(ctx, "alltoall", Call{Send: send, Buf: recv, DType: dt})
}

// Gather gathers every rank's send block into root's recv, rank r's at
// block r. recv holds Size() blocks on the root and is not used elsewhere
// (it may be nil).
func (c *Comm) Gather(ctx context.Context, send, recv device.Buffer, dt device.DType, root int) error {
	return c.Run(ctx, "gather", Call{Send: send, Buf: recv, DType: dt, Root: root})
}

// IGather is the non-blocking Gather.
func (c *Comm) IGather(ctx context.Context, send, recv device.Buffer, dt device.DType, root int) *Handle {
	return c.Start(ctx, "gather", Call{Send: send, Buf: recv, DType: dt, Root: root})
}

// Scatter sends block r of root's send, Size() blocks, into recv on rank
// r. send is not used except on the root (it may be nil).
func (c *Comm) Scatter(ctx context.Context, send, recv device.Buffer, dt device.DType, root int) error {
	return c.Run(ctx, "scatter", Call{Send: send, Buf: recv, DType: dt, Root: root})
}

// IScatter is the non-blocking Scatter.
func (c *Comm) IScatter(ctx context.Context, send, recv device.Buffer, dt device.DType, root int) *Handle {
	return c.Start(ctx, "scatter", Call{Send: send, Buf: recv, DType: dt, Root: root})
}

// Barrier returns once every rank has entered it.
func (c *Comm) Barrier(ctx context.Context) error {
	return c.Run(ctx, "barrier", Call{})
}

// IBarrier is the non-blocking Barrier.
func (c *Comm) IBarrier(ctx context.Context) *Handle {
	return c.Start(ctx, "barrier", Call{})
}

// Scan computes an inclusive prefix reduction in place: rank r ends with
// the reduction with op of the bufs of ranks 0..r.
func (c *Comm) Scan(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op) error {
	return c.Run(ctx, "scan", Call{Buf: buf, DType: dt, Op: op})
}

// IScan is the non-blocking Scan.
func (c *Comm) IScan(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op) *Handle {
	return c.Start(ctx, "scan", Call{Buf: buf, DType: dt, Op: op})
}

// exscanParams is the parameter that makes a scan exclusive.
var exscanParams = map[string]int{"exclusive": 1}

// ExScan computes an exclusive prefix reduction in place: rank r ends
// with the reduction with op of the bufs of ranks 0..r-1; rank 0's buf is
// left as it was.
func (c *Comm) ExScan(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op) error {
	return c.Run(ctx, "scan", Call{Buf: buf, DType: dt, Op: op, Params: exscanParams})
}

// IExScan is the non-blocking ExScan.
func (c *Comm) IExScan(ctx context.Context, buf device.Buffer, dt device.DType, op device.Op) *Handle {
	return c.Start(ctx, "scan", Call{Buf: buf, DType: dt, Op: op, Params: exscanParams})
}

// Send sends buf to rank dst with tag, at most MaxUserTag, and waits until
// the send has completed (the buffer may be reused). Messages match
// receives by source and tag, in order between two ranks, and never match
// a collective's.
func (c *Comm) Send(ctx context.Context, dst int, tag uint64, buf device.Buffer) error {
	return c.ISend(ctx, dst, tag, buf).Wait(ctx)
}

// ISend starts a Send; buf must not be modified until it completes.
func (c *Comm) ISend(_ context.Context, dst int, tag uint64, buf device.Buffer) *Handle {
	t, err := c.userTag(tag)
	if err != nil {
		return &Handle{c: c, done: true, err: err}
	}
	return &Handle{c: c, req: c.link.Isend(dst, t, buf)}
}

// Recv receives a message from rank src with tag into buf, which must be
// at least as long, and waits for it.
func (c *Comm) Recv(ctx context.Context, src int, tag uint64, buf device.Buffer) error {
	return c.IRecv(ctx, src, tag, buf).Wait(ctx)
}

// IRecv starts a Recv; buf must not be touched until it completes.
func (c *Comm) IRecv(_ context.Context, src int, tag uint64, buf device.Buffer) *Handle {
	t, err := c.userTag(tag)
	if err != nil {
		return &Handle{c: c, done: true, err: err}
	}
	return &Handle{c: c, req: c.link.Irecv(src, t, buf)}
}

// Split partitions the communicator as MPI_Comm_split: the ranks that
// pass the same color form a new communicator, ordered by key and then by
// rank. It returns the calling rank's, with this one's options, or nil if
// color is negative. Every rank must call it, as a collective. It needs a
// link that moves bytes (see Split).
func (c *Comm) Split(ctx context.Context, color, key int) (*Comm, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	l, err := Split(ctx, Scoped(c.link, c.id, c.nextSeq()), color, key)
	if err != nil || l == nil {
		return nil, err
	}
	return newComm(l, c.cfg), nil
}
