package algos_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The stream tests run on alpha-beta with α = 1 µs and 1 GB/s (one
// nanosecond a byte) and free reductions, so that every time is a whole
// number of nanoseconds and the links' clocks (Link.Now, in nanoseconds)
// read it exactly.
var streamModel = sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9}

// ringTime is the ring allreduce's time on streamModel: 2(p-1)α +
// 2((p-1)/p)nβ, n bytes on p ranks (n divisible by p).
func ringTime(p, n int) time.Duration {
	return time.Duration(2*(p-1))*time.Microsecond + time.Duration(2*(p-1)*n/p)*time.Nanosecond
}

func runStreams(t *testing.T, world int, body func(ctx context.Context, l algos.Link, ss *algos.Streams) error) (*sim.Result, *algotest.StreamLog) {
	t.Helper()
	rec := &algotest.StreamLog{}
	res, err := sim.Run(sim.Config{World: world, Model: streamModel}, func(ctx context.Context, l algos.Link) error {
		return body(ctx, l, algos.NewStreams(l, algos.WithStreamObserver(rec)))
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

// A collective queued behind a wait for a compute event starts when the
// compute ends: it ends at compute + the ring's time, exactly, and the
// host is not held meanwhile.
func TestStreamCollectiveWaitsForCompute(t *testing.T) {
	const p, n = 4, 1 << 20
	compute := 300 * time.Microsecond
	var hostAfterQueue [p]time.Duration
	res, rec := runStreams(t, p, func(ctx context.Context, l algos.Link, ss *algos.Streams) error {
		c, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
		if err != nil {
			return err
		}
		cs, ds := ss.NewStream("compute"), ss.NewStream("dp")
		var ready algos.Event
		cs.Compute(ctx, compute, "backward")
		cs.Record(&ready)
		ds.WaitEvent(&ready)
		ds.AllReduce(ctx, c, l.Alloc(n), device.F32, device.Sum, "grads")
		hostAfterQueue[l.Rank()] = l.Now()
		return ss.Synchronize(ctx)
	})
	want := compute + ringTime(p, n)
	if got := res.End.Duration(); got != want {
		t.Errorf("step took %v, want compute + ring = %v", got, want)
	}
	for r := range p {
		if hostAfterQueue[r] != 0 {
			t.Errorf("rank %d: the host was held %v by queueing", r, hostAfterQueue[r])
		}
		ar := rec.Find(t, r, "grads")
		if ar.Start != compute || ar.End != want || ar.Collective != "allreduce" || ar.Bytes != n {
			t.Errorf("rank %d: allreduce %+v, want it from %v to %v", r, ar, compute, want)
		}
		w := rec.Find(t, r, "wait compute")
		if w.Waited.Label != "backward" || w.Waited.Stream != "compute" || w.End != compute {
			t.Errorf("rank %d: wait %+v, want it to end at %v, after \"backward\"", r, w, compute)
		}
	}
}

// Waiting on an event before it is recorded waits for nothing (CUDA's
// rule: a wait is for the event's most recent record when it is queued),
// and a wait queued after a record is not moved by a later record.
func TestStreamWaitBeforeRecord(t *testing.T) {
	res, rec := runStreams(t, 1, func(ctx context.Context, l algos.Link, ss *algos.Streams) error {
		a, b := ss.NewStream("a"), ss.NewStream("b")
		var ev algos.Event
		b.WaitEvent(&ev) // not recorded yet: nothing to wait for
		b.Compute(ctx, 10*time.Microsecond, "b1")
		a.Compute(ctx, 50*time.Microsecond, "a1")
		a.Record(&ev)
		b.WaitEvent(&ev) // waits for a1
		b.Compute(ctx, 10*time.Microsecond, "b2")
		a.Compute(ctx, 100*time.Microsecond, "a2")
		a.Record(&ev) // b's wait keeps waiting for a1, not a2
		if done, err := ev.Query(); done || err != nil {
			return fmt.Errorf("event done %v (%v) before its work ran", done, err)
		}
		return ss.Synchronize(ctx)
	})
	if b1 := rec.Find(t, 0, "b1"); b1.Start != 0 || b1.End != 10*time.Microsecond {
		t.Errorf("b1 ran %v..%v, want 0..10µs: a wait before the record waits for nothing", b1.Start, b1.End)
	}
	if b2 := rec.Find(t, 0, "b2"); b2.Start != 50*time.Microsecond {
		t.Errorf("b2 started at %v, want 50µs (after a1, not a2)", b2.Start)
	}
	if res.End.Duration() != 150*time.Microsecond {
		t.Errorf("end %v, want 150µs", res.End)
	}
	if n := len(rec.Records()); n != 5 {
		t.Errorf("%d records, want 5 (4 computes, one wait)", n)
	}
}

// Two communication streams run their collectives at once, each in its
// order; a compute waiting for both starts when the later one ends.
func TestStreamTwoCommStreams(t *testing.T) {
	const p, n = 4, 1 << 16
	_, rec := runStreams(t, p, func(ctx context.Context, l algos.Link, ss *algos.Streams) error {
		tp, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
		if err != nil {
			return err
		}
		sub, err := algos.Sub(l, []int{0, 1, 2, 3}, 7)
		if err != nil {
			return err
		}
		dp, err := algos.NewComm(sub, algos.WithAlgorithm("allgather", "ring", nil))
		if err != nil {
			return err
		}
		cs, s1, s2 := ss.NewStream("compute"), ss.NewStream("comm1"), ss.NewStream("comm2")
		s1.AllReduce(ctx, tp, l.Alloc(n), device.F32, device.Sum, "ar1")
		s1.AllReduce(ctx, tp, l.Alloc(n), device.F32, device.Sum, "ar2")
		s2.AllGather(ctx, dp, l.Alloc(n/p), l.Alloc(n), device.F32, "ag1")
		var e1, e2 algos.Event
		s1.Record(&e1)
		s2.Record(&e2)
		cs.WaitEvent(&e1)
		cs.WaitEvent(&e2)
		cs.Compute(ctx, time.Microsecond, "after")
		return ss.Synchronize(ctx)
	})
	for r := range p {
		ar1, ar2, ag1 := rec.Find(t, r, "ar1"), rec.Find(t, r, "ar2"), rec.Find(t, r, "ag1")
		if ar2.Start < ar1.End {
			t.Errorf("rank %d: ar2 started at %v, before ar1 ended at %v", r, ar2.Start, ar1.End)
		}
		if ag1.Start != 0 || ag1.Start >= ar1.End {
			t.Errorf("rank %d: ag1 ran %v..%v, want it from 0, beside ar1 (%v..%v)", r, ag1.Start, ag1.End, ar1.Start, ar1.End)
		}
		if after := rec.Find(t, r, "after"); after.Start != max(ar2.End, ag1.End) {
			t.Errorf("rank %d: compute started at %v, want the later of %v and %v", r, after.Start, ar2.End, ag1.End)
		}
	}
}

// The host blocks on an event until the stream reaches it, and on the
// whole stream until its work is done.
func TestStreamHostSynchronize(t *testing.T) {
	runStreams(t, 1, func(ctx context.Context, l algos.Link, ss *algos.Streams) error {
		s := ss.NewStream("compute")
		var ev algos.Event
		if err := ev.Synchronize(ctx); err != nil || l.Now() != 0 {
			return fmt.Errorf("an unrecorded event held the host until %v (%v)", l.Now(), err)
		}
		s.Compute(ctx, 7*time.Microsecond, "one")
		s.Record(&ev)
		s.Compute(ctx, 5*time.Microsecond, "two")
		if err := ev.Synchronize(ctx); err != nil {
			return err
		}
		if now := l.Now(); now != 7*time.Microsecond {
			return fmt.Errorf("event synchronised at %v, want 7µs", now)
		}
		if done, err := ev.Query(); !done || err != nil {
			return fmt.Errorf("event not done after Synchronize: %v %v", done, err)
		}
		if err := s.Synchronize(ctx); err != nil {
			return err
		}
		if now := l.Now(); now != 12*time.Microsecond {
			return fmt.Errorf("stream synchronised at %v, want 12µs", now)
		}
		return nil
	})
}

// A failure is sticky: the stream skips its later work, its Synchronize
// and the waits for its later events fail, and a stream that waits for
// such an event fails too; work recorded before the failure is fine.
func TestStreamErrorsAreSticky(t *testing.T) {
	boom := errors.New("boom")
	_, rec := runStreams(t, 1, func(ctx context.Context, l algos.Link, ss *algos.Streams) error {
		a, b := ss.NewStream("a"), ss.NewStream("b")
		var before, after algos.Event
		a.Compute(ctx, time.Microsecond, "ok")
		a.Record(&before)
		a.Do(ctx, "fails", func(context.Context) error { return boom })
		a.Compute(ctx, time.Microsecond, "skipped")
		a.Record(&after)
		b.WaitEvent(&before)
		b.Compute(ctx, time.Microsecond, "b ok")
		b.WaitEvent(&after)
		b.Compute(ctx, time.Microsecond, "b skipped")
		if err := before.Synchronize(ctx); err != nil {
			return fmt.Errorf("event before the failure: %v", err)
		}
		var se *algos.StreamError
		if err := after.Synchronize(ctx); !errors.Is(err, boom) || !errors.As(err, &se) || se.Stream != "a" || se.Item != "fails" {
			return fmt.Errorf("event after the failure: %v, want boom on stream a", err)
		}
		if err := b.Synchronize(ctx); !errors.Is(err, boom) || !errors.As(err, &se) || se.Stream != "b" {
			return fmt.Errorf("waiting stream: %v, want boom on stream b", err)
		}
		if err := ss.Synchronize(ctx); !errors.Is(err, boom) {
			return fmt.Errorf("Synchronize: %v, want boom", err)
		}
		return nil
	})
	for _, x := range rec.Records() {
		if x.Label == "skipped" || x.Label == "b skipped" {
			t.Errorf("%q ran after its stream failed", x.Label)
		}
	}
}

// ComputeFLOPs takes flops / rate, from the option or the link's Machine,
// and fails without a rate.
func TestStreamComputeFLOPs(t *testing.T) {
	run := func(machine *algos.Machine, opts ...algos.StreamsOption) (time.Duration, error) {
		var took time.Duration
		_, err := sim.Run(sim.Config{World: 1, Model: streamModel, Machine: machine}, func(ctx context.Context, l algos.Link) error {
			ss := algos.NewStreams(l, opts...)
			s := ss.NewStream("compute")
			s.ComputeFLOPs(ctx, 3e12, "gemm")
			err := s.Synchronize(ctx)
			took = l.Now()
			return err
		})
		return took, err
	}
	if d, err := run(&algos.Machine{FLOPS: 1e15}); err != nil || d != 3*time.Millisecond {
		t.Errorf("3 TFLOP at 1 PFLOP/s from the machine: %v, %v; want 3ms", d, err)
	}
	if d, err := run(&algos.Machine{FLOPS: 1e15}, algos.WithFLOPS(2e15)); err != nil || d != 1500*time.Microsecond {
		t.Errorf("3 TFLOP at 2 PFLOP/s from the option: %v, %v; want 1.5ms", d, err)
	}
	if _, err := run(nil); err == nil {
		t.Error("FLOPs without a rate did not fail")
	}
}

// hideSignal hides the simulator's Signaler (and nothing else), so that
// the streams fall back to messages from the rank to itself.
type hideSignal struct{ algos.Link }

func (h hideSignal) Spawn(fn func(ctx context.Context) error) algos.Request {
	return h.Link.(algos.Spawner).Spawn(fn)
}
func (h hideSignal) Delay(ctx context.Context, d time.Duration) error {
	return h.Link.(algos.Delayer).Delay(ctx, d)
}

// hideSpawn hides the Spawner too: the streams then run their work when
// it is queued.
type hideSpawn struct{ algos.Link }

func (h hideSpawn) Delay(ctx context.Context, d time.Duration) error {
	return h.Link.(algos.Delayer).Delay(ctx, d)
}

// pipelineBody is a two-stream program: three layers' compute, each
// followed by an allreduce of its gradients on the comm stream.
func pipelineBody(ctx context.Context, l algos.Link, ss *algos.Streams) error {
	c, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
	if err != nil {
		return err
	}
	cs, ds := ss.NewStream("compute"), ss.NewStream("dp")
	for i := range 3 {
		var ev algos.Event
		cs.Compute(ctx, 20*time.Microsecond, fmt.Sprint("layer ", i))
		cs.Record(&ev)
		ds.WaitEvent(&ev)
		ds.AllReduce(ctx, c, l.Alloc(4096), device.F32, device.Sum, fmt.Sprint("bucket ", i))
	}
	var done algos.Event
	ds.Record(&done)
	cs.WaitEvent(&done)
	return ss.Synchronize(ctx)
}

// Without a Signaler the streams wake each other with messages to
// themselves: the same times to the picosecond. Without a Spawner the
// work runs as it is queued: the sum of every piece.
func TestStreamFallbacks(t *testing.T) {
	const p = 4
	run := func(wrap func(algos.Link) algos.Link) (*sim.Result, error) {
		return sim.Run(sim.Config{World: p, Model: streamModel}, func(ctx context.Context, l algos.Link) error {
			w := wrap(l)
			return pipelineBody(ctx, w, algos.NewStreams(w))
		})
	}
	native, err := run(func(l algos.Link) algos.Link { return l })
	if err != nil {
		t.Fatal(err)
	}
	selfMsg, err := run(func(l algos.Link) algos.Link { return hideSignal{l} })
	if err != nil {
		t.Fatal(err)
	}
	if native.End != selfMsg.End {
		t.Errorf("with self-messages %v, natively %v", selfMsg.End, native.End)
	}
	// Compute 20 µs, then one 4 KiB allreduce behind each layer but the
	// last, whose allreduce is the only one exposed.
	if want := 60*time.Microsecond + ringTime(p, 4096); native.End.Duration() != want {
		t.Errorf("overlapped: %v, want 3 computes + one allreduce = %v", native.End, want)
	}
	eager, err := run(func(l algos.Link) algos.Link { return hideSpawn{l} })
	if err != nil {
		t.Fatal(err)
	}
	if want := 60*time.Microsecond + 3*ringTime(p, 4096); eager.End.Duration() != want {
		t.Errorf("without a Spawner: %v, want every piece in turn, %v", eager.End, want)
	}
}

// A stream that waits for an event no stream ever reaches is a deadlock
// the simulator reports, naming the signal.
func TestStreamDeadlockNamesSignal(t *testing.T) {
	_, err := sim.Run(sim.Config{World: 2, Model: streamModel}, func(ctx context.Context, l algos.Link) error {
		c, err := algos.NewComm(l)
		if err != nil {
			return err
		}
		ss := algos.NewStreams(l)
		s := ss.NewStream("p2p")
		s.Recv(ctx, c, 1-l.Rank(), 5, l.Alloc(8), "never sent")
		return s.Synchronize(ctx)
	})
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("got %v, want a deadlock", err)
	}
	sig := false
	for _, b := range dl.Blocked {
		for _, w := range b.Waits {
			sig = sig || w.Signal
		}
	}
	if !sig {
		t.Errorf("the deadlock names no signal: %v", err)
	}
}

// goNet is a world of ranks on goroutines with real concurrency: each
// rank's link matches messages in memory, spawns goroutines, and reads a
// logical clock that ticks at every reading, so that the order of
// records shows what happened before what. It is how the streams are
// tested under the race detector, as they run on realnet.
type goNet struct {
	mu     sync.Mutex
	clock  time.Duration
	queues map[goKey]*goQueue
	wg     sync.WaitGroup
}

type goKey struct {
	dst, src int
	tag      algos.Tag
}

type goQueue struct {
	msgs  [][]byte
	recvs []*goReq
}

type goReq struct {
	done chan struct{}
	err  error
	buf  device.Buffer
}

type goLink struct {
	net        *goNet
	rank, size int
}

var _ algos.Spawner = (*goLink)(nil)

func (l *goLink) Rank() int { return l.rank }
func (l *goLink) Size() int { return l.size }
func (l *goLink) Now() time.Duration {
	l.net.mu.Lock()
	defer l.net.mu.Unlock()
	l.net.clock++
	return l.net.clock
}
func (l *goLink) Alloc(n int) device.Buffer         { return make(device.Host, n) }
func (l *goLink) Copy(dst, src device.Buffer) error { return device.Copy(dst, src) }
func (l *goLink) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	return device.Reduce(dst, src, dt, op)
}

func (n *goNet) queue(k goKey) *goQueue {
	q := n.queues[k]
	if q == nil {
		q = &goQueue{}
		n.queues[k] = q
	}
	return q
}

func doneReq() *goReq { r := &goReq{done: make(chan struct{})}; close(r.done); return r }

func (l *goLink) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	data, _ := device.HostBytes(buf)
	l.net.mu.Lock()
	defer l.net.mu.Unlock()
	q := l.net.queue(goKey{dst, l.rank, tag})
	if len(q.recvs) > 0 {
		r := q.recvs[0]
		q.recvs = q.recvs[1:]
		h, _ := device.HostBytes(r.buf)
		copy(h, data)
		close(r.done)
	} else {
		q.msgs = append(q.msgs, append([]byte(nil), data...))
	}
	return doneReq()
}

func (l *goLink) Irecv(src int, tag algos.Tag, buf device.Buffer) algos.Request {
	l.net.mu.Lock()
	defer l.net.mu.Unlock()
	q := l.net.queue(goKey{l.rank, src, tag})
	if len(q.msgs) > 0 {
		h, _ := device.HostBytes(buf)
		copy(h, q.msgs[0])
		q.msgs = q.msgs[1:]
		return doneReq()
	}
	r := &goReq{done: make(chan struct{}), buf: buf}
	q.recvs = append(q.recvs, r)
	return r
}

func (l *goLink) Wait(ctx context.Context, reqs ...algos.Request) error {
	for _, x := range reqs {
		r := x.(*goReq)
		select {
		case <-r.done:
			if r.err != nil {
				return r.err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (l *goLink) Spawn(fn func(ctx context.Context) error) algos.Request {
	r := &goReq{done: make(chan struct{})}
	l.net.wg.Add(1)
	go func() {
		defer l.net.wg.Done()
		r.err = fn(context.Background())
		close(r.done)
	}()
	return r
}

// runGo runs body on p goroutine ranks and returns their errors.
func runGo(p int, body func(ctx context.Context, l algos.Link) error) error {
	n := &goNet{queues: map[goKey]*goQueue{}}
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = body(context.Background(), &goLink{net: n, rank: r, size: p})
		}()
	}
	wg.Wait()
	n.wg.Wait()
	return errors.Join(errs...)
}

// On goroutines (run with -race), the streams keep their order and their
// waits, and the collectives move the right data; compute runs as
// WithCompute's function.
func TestStreamGoroutines(t *testing.T) {
	const p, layers, count = 4, 6, 64
	rec := &algotest.StreamLog{}
	var computed sync.Map
	err := runGo(p, func(ctx context.Context, l algos.Link) error {
		ss := algos.NewStreams(l, algos.WithStreamObserver(rec), algos.WithCompute(func(_ context.Context, d time.Duration) error {
			computed.Store(fmt.Sprint(l.Rank(), d), true)
			return nil
		}))
		c, err := algos.NewComm(l, algos.WithAlgorithm("allreduce", "ring", nil))
		if err != nil {
			return err
		}
		cs, ds := ss.NewStream("compute"), ss.NewStream("dp")
		bufs := make([]device.Host, layers)
		for i := range layers {
			bufs[i] = make(device.Host, 4*count)
			var ev algos.Event
			cs.Compute(ctx, time.Duration(i+1), fmt.Sprint("layer ", i))
			cs.Do(ctx, fmt.Sprint("grad ", i), func(context.Context) error {
				for k := range count {
					bufs[i][4*k] = byte(l.Rank() + i) // the low byte of each int32
				}
				return nil
			})
			cs.Record(&ev)
			ds.WaitEvent(&ev)
			ds.Collective(ctx, c, "allreduce", algos.Call{Buf: bufs[i], DType: device.I32, Op: device.Sum}, fmt.Sprint("bucket ", i))
		}
		var done algos.Event
		ds.Record(&done)
		cs.WaitEvent(&done)
		cs.Compute(ctx, 1, "optimizer")
		if err := ss.Synchronize(ctx); err != nil {
			return err
		}
		for i := range layers {
			want := byte(p*(p-1)/2 + p*i)
			for k := range count {
				if got := bufs[i][4*k]; got != want {
					return fmt.Errorf("rank %d layer %d element %d: %d, want %d", l.Rank(), i, k, got, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range p {
		for i := range layers {
			if _, ok := computed.Load(fmt.Sprint(r, time.Duration(i+1))); !ok {
				t.Errorf("rank %d: layer %d's compute never ran", r, i)
			}
			grad, bucket := rec.Find(t, r, fmt.Sprint("grad ", i)), rec.Find(t, r, fmt.Sprint("bucket ", i))
			if bucket.Start < grad.End {
				t.Errorf("rank %d: bucket %d started (%d) before its gradients were ready (%d)", r, i, bucket.Start, grad.End)
			}
			if i > 0 {
				if prev := rec.Find(t, r, fmt.Sprint("bucket ", i-1)); bucket.Start < prev.End {
					t.Errorf("rank %d: bucket %d started before bucket %d ended", r, i, i-1)
				}
			}
		}
		if opt := rec.Find(t, r, "optimizer"); opt.Start < rec.Find(t, r, fmt.Sprint("bucket ", layers-1)).End {
			t.Errorf("rank %d: the optimizer ran before the last bucket ended", r)
		}
	}
}
