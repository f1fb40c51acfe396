package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// Recording. A body whose operations depend neither on timing nor on data
// (Config.Replay) is run once per rank against a recording link, which
// answers every Wait at once, and the sequence of operations it makes is
// kept as the rank's program; the engine then replays the programs (see
// replay.go). Programs are stored compactly and shared: each is cut into
// chunks of chunkOps operations, peers are written relative to the rank
// (as a difference, or as an exclusive-or with one bit, the partner of a
// butterfly), and equal chunks and equal programs are kept once. So the
// million ranks of a halving-doubling allreduce share a handful of
// programs, and a ring's share most of their chunks.

// Operation codes: the low three bits of an operation's first byte.
const (
	opSend byte = iota
	opRecv
	opWait
	opReduce
	opDelay
	opSwitch
	opKindMask = 7
	// opXorPeer marks a peer written as rank XOR peer (a power of two)
	// rather than as a zigzag difference peer - rank.
	opXorPeer = 8
)

// An operation is encoded as its code byte, then uvarints:
//
//	send, recv: peer, tag - previous tag (zigzag), bytes, slot
//	wait:       count, then the slot of each request
//	reduce:     bytes
//	delay:      the delay in picoseconds
//	switch:     group, tag - previous tag (zigzag), bytes, form, slot
//
// A switch operation's group is the index of the group among the run's
// (programs.groups); its form packs whether it sends (bit 0) and receives
// (bit 1), its dtype (bits 2-9) and its op (bits 10 on).
//
// The previous tag is 0 at the start of each chunk, so that a chunk
// decodes on its own. A slot is the index of a request among the rank's
// requests alive at once; the recorder reuses a slot once the request in
// it is waited for for the last time.

// recordReport is how many ranks are recorded between two reports of
// progress.
const recordReport = 64

// chunkOps is how many operations a chunk holds.
const chunkOps = 64

// maxProgramBytes bounds what the programs of a run may take, chunks and
// their indexes together; a run whose programs need more is simulated
// with coroutines instead.
const maxProgramBytes = 1 << 30

// program is one rank's recorded operations.
type program struct {
	chunks []int32 // indexes into programs.chunks, in order
	slots  int     // request slots the rank needs
}

// programs are the recorded programs of a run.
type programs struct {
	chunks []string   // the distinct chunks
	groups [][]int    // the groups of switch operations
	ranks  []*program // each rank's program
	// Ops is the number of operations recorded, over all ranks.
	ops int64
}

// errNotReplayable is why a body cannot be replayed; recording stops.
type errNotReplayable struct{ why string }

func (e errNotReplayable) Error() string { return "sim: not replayable: " + e.why }

// recReq is a request returned by the recording link. It holds no
// pointer, so that recording writes none (pointer writes cost a write
// barrier while the collector runs, and the bodies' allocations keep it
// running).
type recReq struct {
	gen uint64 // the recording it belongs to (recordings)
	id  int32
}

// recordings numbers recordings across recorders, so that a request from
// another rank's recording is told apart.
var recordings atomic.Uint64

// recOp is an operation as recorded, before it is encoded.
type recOp struct {
	kind  byte
	peer  int
	tag   algos.Tag
	bytes int   // send, recv, reduce: bytes; delay: picoseconds
	req   int32 // send, recv, switch: the request's id; wait: the first of its ids in recorder.waits
	n     int32 // wait: the number of requests; switch: its form
}

// recorder records the bodies of ranks, one after another, on one
// goroutine; it is the recording link of the rank being recorded.
type recorder struct {
	world int
	rank  int
	gen   uint64
	// info answers what the body asks of the network (runInfo).
	info *runInfo
	// in keeps the programs, and the groups of switch operations; groups
	// caches the ids of the groups this recorder has met, by switchKey.
	in     *interner
	groups map[uint64][]recGroup
	// ops[:nops] and waits[:nwaits] are what was recorded: storage that
	// grows, written by index (see recReq on pointer writes).
	ops    []recOp
	nops   int
	waits  []int32
	nwaits int
	nreq   int32
	block  []recReq
	used   int // of block
	// stopped is set once the rank turned out not to be replayable: the
	// link then does nothing while the body unwinds.
	stopped bool

	// encoding scratch
	lastUse []int32
	slotOf  []int32
	free    []int32
	code    []byte
	ids     []byte
}

var (
	_ algos.Link          = (*recorder)(nil)
	_ algos.Spawner       = (*recorder)(nil)
	_ algos.MachineLink   = (*recorder)(nil)
	_ algos.Delayer       = (*recorder)(nil)
	_ algos.SwitchReducer = (*recorder)(nil)
	_ algos.FixedWaiter   = (*recorder)(nil)
)

// recGroup is a group of switch operations and its id.
type recGroup struct {
	group []int
	id    int32
}

func (c *recorder) stop(why string) {
	c.stopped = true
	panic(errNotReplayable{why})
}

func (c *recorder) Rank() int { return c.rank }
func (c *recorder) Size() int { return c.world }

// Now stops the recording: a body that reads the clock may depend on
// timing.
func (c *recorder) Now() time.Duration {
	if !c.stopped {
		c.stop("the body reads the clock")
	}
	return 0
}

// Spawn stops the recording: spawned operations interleave with the rest
// of the rank's program as timing has it.
func (c *recorder) Spawn(func(ctx context.Context) error) algos.Request {
	if !c.stopped {
		c.stop("the body spawns operations")
	}
	return &recReq{}
}

// Alloc returns a phantom buffer of n bytes, as a slice of itself: a
// Phantom of 256 bytes or more put in an interface is an allocation,
// which Slice spares where n is a power of two.
func (c *recorder) Alloc(n int) device.Buffer { return device.Phantom(n).Slice(0, n) }

// Machine implements algos.MachineLink: the run's Machine, the one its
// links give the body on coroutines.
func (c *recorder) Machine() *algos.Machine { return c.info.recordedMachine() }

func (c *recorder) Copy(dst, src device.Buffer) error { return device.Copy(dst, src) }

func (c *recorder) Reduce(dst, src device.Buffer, dt device.DType, op device.Op) error {
	if err := device.Reduce(dst, src, dt, op); err != nil {
		return err
	}
	if !c.stopped {
		c.add(recOp{kind: opReduce, bytes: src.Len()})
	}
	return nil
}

// IsendAfter stops the recording: a late send is not among the operations
// a program records (a body that sends late runs on coroutines).
func (c *recorder) IsendAfter(d time.Duration, dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	if d <= 0 {
		return c.Isend(dst, tag, buf)
	}
	if !c.stopped {
		c.stop("the body sends late (algos.LateSender)")
	}
	return &recReq{}
}

// Delay implements algos.Delayer: it records the delay, which the replay
// spends as Delay does on coroutines.
func (c *recorder) Delay(ctx context.Context, d time.Duration) error {
	if c.stopped {
		return nil
	}
	if err := ctx.Err(); err != nil {
		c.stop("the body's context ends")
	}
	if d <= 0 {
		return nil
	}
	t, err := delayTime(d)
	if err != nil {
		c.stop(err.Error())
	}
	c.add(recOp{kind: opDelay, bytes: int(t)})
	return nil
}

// CanSwitchReduce implements algos.SwitchReducer: what the run's network
// answers.
func (c *recorder) CanSwitchReduce(group []int) bool {
	return checkGroup(c.rank, c.world, group) == nil && c.info.canSwitchReduce(group)
}

// ISwitchReduce implements algos.SwitchReducer: it records the operation.
// One that would fail at once stops the recording.
func (c *recorder) ISwitchReduce(group []int, tag algos.Tag, send, recv device.Buffer, dt device.DType, op device.Op) algos.Request {
	if c.stopped {
		return &recReq{}
	}
	if !c.CanSwitchReduce(group) {
		c.stop(fmt.Sprintf("rank %d posts a switch reduction that fails", c.rank))
	}
	n, err := switchBytes(c.rank, send, recv, dt, op)
	if err != nil {
		c.stop(err.Error())
	}
	form := int32(dt)<<2 | int32(op)<<10
	if send != nil {
		form |= 1
	}
	if recv != nil {
		form |= 2
	}
	q := c.newReq()
	c.add(recOp{kind: opSwitch, peer: int(c.groupID(group)), tag: tag, bytes: n, req: q.id, n: form})
	return q
}

// groupID returns the id of group among the run's groups.
func (c *recorder) groupID(group []int) int32 {
	key := switchKey(group, 0)
	for _, g := range c.groups[key] {
		if slices.Equal(g.group, group) {
			return g.id
		}
	}
	if c.groups == nil {
		c.groups = map[uint64][]recGroup{}
	}
	g := recGroup{group: slices.Clone(group), id: c.in.group(group)}
	c.groups[key] = append(c.groups[key], g)
	return g.id
}

// add records op.
func (c *recorder) add(op recOp) {
	if c.nops == len(c.ops) {
		c.ops = append(c.ops, make([]recOp, max(len(c.ops), 256))...)
	}
	c.ops[c.nops] = op
	c.nops++
}

// addWait records a request id of a wait.
func (c *recorder) addWait(id int32) {
	if c.nwaits == len(c.waits) {
		c.waits = append(c.waits, make([]int32, max(len(c.waits), 256))...)
	}
	c.waits[c.nwaits] = id
	c.nwaits++
}

// recorded returns the operations recorded.
func (c *recorder) recorded() []recOp { return c.ops[:c.nops] }

func (c *recorder) Isend(dst int, tag algos.Tag, buf device.Buffer) algos.Request {
	return c.post(opSend, dst, tag, buf)
}

func (c *recorder) Irecv(src int, tag algos.Tag, buf device.Buffer) algos.Request {
	return c.post(opRecv, src, tag, buf)
}

func (c *recorder) post(kind byte, peer int, tag algos.Tag, buf device.Buffer) algos.Request {
	if c.stopped {
		return &recReq{}
	}
	if peer < 0 || peer >= c.world {
		c.stop(fmt.Sprintf("rank %d names peer %d", c.rank, peer))
	}
	q := c.newReq()
	c.add(recOp{kind: kind, peer: peer, tag: tag, bytes: buf.Len(), req: q.id})
	return q
}

// newReq returns the next request of the recording.
func (c *recorder) newReq() *recReq {
	if c.used == len(c.block) {
		c.block, c.used = make([]recReq, allocBlock), 0
	}
	q := &c.block[c.used]
	c.used++
	*q = recReq{gen: c.gen, id: c.nreq}
	c.nreq++
	return q
}

// Wait records a wait; every request completes at once.
func (c *recorder) Wait(ctx context.Context, reqs ...algos.Request) error {
	return c.wait(ctx, reqs)
}

// WaitOne implements algos.FixedWaiter: Wait without an argument list on
// the heap.
func (c *recorder) WaitOne(ctx context.Context, a algos.Request) error {
	reqs := [1]algos.Request{a}
	return c.wait(ctx, reqs[:])
}

// WaitTwo implements algos.FixedWaiter: Wait without an argument list on
// the heap.
func (c *recorder) WaitTwo(ctx context.Context, a, b algos.Request) error {
	reqs := [2]algos.Request{a, b}
	return c.wait(ctx, reqs[:])
}

// wait records a wait on reqs, which it does not keep.
func (c *recorder) wait(ctx context.Context, reqs []algos.Request) error {
	if c.stopped {
		return nil
	}
	if err := ctx.Err(); err != nil {
		c.stop("the body's context ends")
	}
	first := c.nwaits
	for _, x := range reqs {
		q, ok := x.(*recReq)
		if !ok || q.gen != c.gen {
			c.stop(fmt.Sprintf("rank %d waits on a request (%T) its link did not return", c.rank, x))
		}
		for _, id := range c.waits[first:c.nwaits] {
			if id == q.id {
				c.stop(fmt.Sprintf("rank %d waits twice on one request in one Wait", c.rank))
			}
		}
		c.addWait(q.id)
	}
	c.add(recOp{kind: opWait, req: int32(first), n: int32(len(reqs))})
	return nil
}

// record runs body as rank and returns its operations encoded: the ids of
// its chunks (interned in in) and its slot count, or the reason it cannot
// be replayed.
func (c *recorder) record(rank int, body Body, in *interner) (p *program, err error) {
	c.rank, c.gen, c.in = rank, recordings.Add(1), in
	c.nops, c.nwaits, c.nreq, c.stopped = 0, 0, 0, false
	defer func() {
		if v := recover(); v != nil {
			if e, ok := v.(errNotReplayable); ok {
				err = e
				return
			}
			err = errNotReplayable{fmt.Sprintf("rank %d panicked: %v", rank, v)}
		}
	}()
	if berr := body(context.Background(), c); berr != nil {
		return nil, errNotReplayable{fmt.Sprintf("rank %d returned an error: %v", rank, berr)}
	}
	return c.encode(in), nil
}

// encode encodes the recorded operations, assigning request slots, and
// interns the chunks and the program. It works on local slices, written
// back at the end (see recReq on pointer writes).
func (c *recorder) encode(in *interner) *program {
	ops, waits := c.recorded(), c.waits
	// The last operation that uses each request: its slot is free after
	// it, if that is a wait (a request never waited for keeps its slot:
	// the engine may still hold it).
	lastUse := grow(c.lastUse, int(c.nreq))
	for i, op := range ops {
		switch op.kind {
		case opSend, opRecv, opSwitch:
			lastUse[op.req] = -1
		case opWait:
			for _, id := range waits[op.req : op.req+op.n] {
				lastUse[id] = int32(i)
			}
		}
	}
	slotOf := grow(c.slotOf, int(c.nreq))
	free := c.free[:0]
	slots := 0
	code, ids := c.code[:0], c.ids[:0]
	var prevTag algos.Tag
	for i, op := range ops {
		if i%chunkOps == 0 && i > 0 {
			ids = binary.LittleEndian.AppendUint32(ids, uint32(in.chunk(code)))
			code, prevTag = code[:0], 0
		}
		switch op.kind {
		case opSend, opRecv:
			slot := c.takeSlot(&free, &slots)
			slotOf[op.req] = slot
			kind, peer := op.kind, uint64(zigzag(int64(op.peer-c.rank)))
			if x := uint(op.peer ^ c.rank); x != 0 && x&(x-1) == 0 {
				kind, peer = kind|opXorPeer, uint64(bits.TrailingZeros(x))
			}
			code = append(code, kind)
			code = binary.AppendUvarint(code, peer)
			code = binary.AppendUvarint(code, zigzag(int64(op.tag-prevTag)))
			code = binary.AppendUvarint(code, uint64(op.bytes))
			code = binary.AppendUvarint(code, uint64(slot))
			prevTag = op.tag
		case opSwitch:
			slot := c.takeSlot(&free, &slots)
			slotOf[op.req] = slot
			code = append(code, opSwitch)
			code = binary.AppendUvarint(code, uint64(op.peer))
			code = binary.AppendUvarint(code, zigzag(int64(op.tag-prevTag)))
			code = binary.AppendUvarint(code, uint64(op.bytes))
			code = binary.AppendUvarint(code, uint64(op.n))
			code = binary.AppendUvarint(code, uint64(slot))
			prevTag = op.tag
		case opWait:
			code = append(code, opWait)
			code = binary.AppendUvarint(code, uint64(op.n))
			for _, id := range waits[op.req : op.req+op.n] {
				code = binary.AppendUvarint(code, uint64(slotOf[id]))
			}
			// A request waited for for the last time is done once the
			// wait returns (or the replay stops): its slot can take the
			// next request.
			for _, id := range waits[op.req : op.req+op.n] {
				if lastUse[id] == int32(i) {
					free = append(free, slotOf[id])
				}
			}
		case opReduce, opDelay:
			code = append(code, op.kind)
			code = binary.AppendUvarint(code, uint64(op.bytes))
		}
	}
	if len(code) > 0 {
		ids = binary.LittleEndian.AppendUint32(ids, uint32(in.chunk(code)))
	}
	n := len(ids) / 4
	ids = binary.AppendUvarint(ids, uint64(slots))
	c.lastUse, c.slotOf, c.free, c.code, c.ids = lastUse, slotOf, free, code, ids
	return in.program(ids, n, slots)
}

// takeSlot returns a free request slot, or a new one.
func (c *recorder) takeSlot(free *[]int32, slots *int) int32 {
	if k := len(*free); k > 0 {
		slot := (*free)[k-1]
		*free = (*free)[:k-1]
		return slot
	}
	*slots++
	return int32(*slots - 1)
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func zigzag(x int64) uint64 { return uint64(x<<1) ^ uint64(x>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// interner keeps each distinct chunk and program once. It is shared by the
// recording goroutines.
type interner struct {
	mu       sync.Mutex
	chunkIDs map[string]int32
	chunks   []string
	groupIDs map[string]int32
	groups   [][]int
	progs    map[string]*program
	bytes    int64 // chunks and programs kept, roughly
}

func newInterner() *interner {
	return &interner{chunkIDs: map[string]int32{}, progs: map[string]*program{}, groupIDs: map[string]int32{}}
}

// group returns the id of a group of switch operations.
func (in *interner) group(g []int) int32 {
	key := make([]byte, 0, 4*len(g))
	for _, r := range g {
		key = binary.AppendUvarint(key, uint64(r))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if id, ok := in.groupIDs[string(key)]; ok {
		return id
	}
	id := int32(len(in.groups))
	in.groups = append(in.groups, slices.Clone(g))
	in.groupIDs[string(key)] = id
	in.bytes += int64(len(key)+8*len(g)) + 64
	return id
}

func (in *interner) chunk(code []byte) int32 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id, ok := in.chunkIDs[string(code)]; ok {
		return id
	}
	s := string(code)
	id := int32(len(in.chunks))
	in.chunks = append(in.chunks, s)
	in.chunkIDs[s] = id
	in.bytes += int64(len(s)) + 64
	return id
}

// program returns the program of n chunks and slots request slots; key
// is the ids of its chunks (little-endian int32s), then slots as a
// uvarint. A program met before costs no allocation.
func (in *interner) program(key []byte, n, slots int) *program {
	in.mu.Lock()
	defer in.mu.Unlock()
	if p, ok := in.progs[string(key)]; ok {
		return p
	}
	p := &program{chunks: make([]int32, n), slots: slots}
	for i := range p.chunks {
		p.chunks[i] = int32(binary.LittleEndian.Uint32(key[4*i:]))
	}
	in.progs[string(key)] = p
	in.bytes += 2*int64(4*n) + 96
	return p
}

// record records body on every rank of cfg.World, on as many goroutines
// as there are CPUs, and returns the programs, or why the body cannot be
// replayed (an errNotReplayable), or the error of cfg.Context if it is
// done first. The programs do not depend on how the ranks were spread
// over the goroutines.
func record(cfg Config, body Body, info *runInfo) (*programs, error) {
	world := cfg.World
	in := newInterner()
	progs := &programs{ranks: make([]*program, world)}
	var next atomic.Int64
	var ops atomic.Int64
	var failed atomic.Bool
	var recorded atomic.Int64
	var progressMu sync.Mutex
	errs := make([]error, world)
	workers := min(runtime.GOMAXPROCS(0), world)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &recorder{world: world, info: info}
			for !failed.Load() {
				r := int(next.Add(1) - 1)
				if r >= world {
					return
				}
				p, err := c.record(r, body, in)
				if err == nil && in.size() > maxProgramBytes {
					err = errNotReplayable{fmt.Sprintf("the programs need more than %d MiB", maxProgramBytes>>20)}
				}
				if err == nil && cfg.Context != nil && cfg.Context.Err() != nil {
					err = fmt.Errorf("sim: stopped while recording: %w", context.Cause(cfg.Context))
				}
				if err != nil {
					errs[r] = err
					failed.Store(true)
					return
				}
				progs.ranks[r] = p
				ops.Add(int64(c.nops))
				if n := recorded.Add(1); cfg.Progress != nil && n%recordReport == 0 {
					progressMu.Lock()
					cfg.Progress(Progress{Recorded: int(n)})
					progressMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		for _, err := range errs {
			var nr errNotReplayable
			if err != nil && !errors.As(err, &nr) {
				return nil, err // cancelled
			}
		}
		return nil, errors.Join(errs...)
	}
	progs.chunks, progs.groups = in.chunks, in.groups
	progs.ops = ops.Load()
	return progs, nil
}

func (in *interner) size() int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.bytes
}
