package sim

import (
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/nexar-go/nexar-go/algos"
)

// Symmetry. A replayed run (Config.Replay) whose ranks all run one
// program, up to a group acting on the ranks, and whose network treats
// every rank alike, has every rank's timeline equal to rank 0's carried
// over by the group; it is then enough to simulate rank 0 and scale the
// account (Config.Symmetry). The simulator proves it itself, from the
// recorded programs, or runs everything.
//
// The groups. Rank r's program, with each peer p written as g_r^-1(p),
// must equal rank 0's, for the group
//
//   - cyclic: g_r(x) = x + r mod World (rings, direct exchanges, Bruck),
//   - xor:    g_r(x) = x XOR r, World a power of two (recursive doubling,
//     halving-doubling, butterflies).
//
// Both act simply transitively: g_r is the one element that takes rank 0
// to rank r, so one class holds every rank, and a message from rank s to
// rank d is the image under g_d of the message from g_d^-1(s) to rank 0.
// Rank 0's send to d is, seen from rank 0's side, the receive of its
// mirror: the message from g_d^-1(0) (cyclic: World-d; xor: d) to 0,
// with the same tag and size, sent and delivered at the same instants.
//
// The model. Only AlphaBeta itself (no decorator: protocol, jitter,
// faults, skew or overheads would tell ranks apart) and no Observer. In
// a symmetric state every rank's egress asks for one receiver's ingress
// port, and each ingress port has exactly one asker, the image of rank
// 0's own head message; so the receive-port arbitration (first asked,
// ties to the lower sender) never meets a tie, and a rank's egress and
// ingress ports are held together, by its message and its mirror: rank
// 0's messages go one after the other, each as soon as it is posted and
// the previous one is done. The state stays symmetric from instant to
// instant (the engine settles every port of an instant together), which
// is the induction that makes the shortcut exact; TestSymmetryExact
// checks it against the full run on every catalogue algorithm.
//
// Anything else (switch operations, a message longer than its receive, a
// deadlock, another model) runs in full, as without the shortcut.

// Symmetry says whether a run may simulate one representative rank.
type Symmetry uint8

const (
	// SymmetryOff runs every rank (the zero value).
	SymmetryOff Symmetry = iota
	// SymmetryAuto simulates rank 0 alone where the simulator proves
	// that every rank's timeline is rank 0's moved by a group (see
	// above); Result.SymmetryGroup then names the group.
	SymmetryAuto
)

var symmetryNames = []string{"off", "auto"}

func (s Symmetry) String() string {
	if int(s) < len(symmetryNames) {
		return symmetryNames[s]
	}
	return fmt.Sprintf("symmetry(%d)", uint8(s))
}

// ParseSymmetry returns the Symmetry named s ("off" or "auto").
func ParseSymmetry(s string) (Symmetry, error) {
	for i, n := range symmetryNames {
		if n == s {
			return Symmetry(i), nil
		}
	}
	return 0, fmt.Errorf("unknown symmetry %q (want off or auto)", s)
}

// symGroup is a group acting on the ranks.
type symGroup uint8

const (
	symCyclic symGroup = iota + 1
	symXor
)

func (g symGroup) String() string {
	if g == symXor {
		return "xor"
	}
	return "cyclic"
}

// IsSymmetryGroup reports whether s names a group that
// Result.SymmetryGroup can hold ("cyclic", "xor"), for readers of a
// group saved beside a run's results.
func IsSymmetryGroup(s string) bool { return s == symCyclic.String() || s == symXor.String() }

// runSymmetric tries the shortcut on the recorded programs: ok is false
// when the run is not provably symmetric, or rank 0's simulation stopped
// (then the run is simulated in full).
func runSymmetric(cfg Config, progs *programs) (*Result, bool) {
	ab, ok := symmetryMayApply(cfg, len(progs.groups))
	if !ok {
		return nil, false
	}
	for _, g := range symGroups {
		code, ok := symmetricUnder(progs, cfg.World, g, progs.ranks[0], func(yield func(int, *program) bool) {
			for r := 1; r < cfg.World; r++ {
				if !yield(r, progs.ranks[r]) {
					return
				}
			}
		})
		if !ok {
			continue
		}
		s := &symSim{ab: ab, world: cfg.World, group: g, code: code, match: map[symKey]*symQueue{}}
		if !s.run() {
			return nil, false
		}
		n := int64(cfg.World)
		res := &Result{Finish: make([]Time, cfg.World), End: s.finish, Messages: n * s.messages,
			Events: n * s.events, Replayed: true, SymmetryGroup: g.String()}
		for i := range res.Finish {
			res.Finish[i] = s.finish
		}
		if cfg.Progress != nil {
			cfg.Progress(Progress{Recorded: cfg.World, Now: s.now, Messages: res.Messages, Events: res.Events})
		}
		return res, true
	}
	return nil, false
}

// symGroups are the groups the shortcut tries, in order.
var symGroups = []symGroup{symCyclic, symXor}

// symmetryMayApply reports whether a run of cfg whose programs use
// switchGroups groups of switch operations may take the shortcut at all,
// and returns the model it would run on: Config.Symmetry asks for it, no
// observer watches every rank, no switch operation, plain alpha-beta.
func symmetryMayApply(cfg Config, switchGroups int) (AlphaBeta, bool) {
	if cfg.Symmetry != SymmetryAuto || cfg.Observer != nil || switchGroups > 0 {
		return AlphaBeta{}, false
	}
	return symmetricModel(cfg.Model)
}

// symmetricModel returns m as the plain AlphaBeta the shortcut runs on,
// or false for any other model (a decorated one included).
func symmetricModel(m Model) (AlphaBeta, bool) {
	switch m := m.(type) {
	case AlphaBeta:
		return m, true
	case *AlphaBeta:
		return *m, true
	}
	return AlphaBeta{}, false
}

// symmetricUnder returns rank 0's program p0 with peers normalised
// (written as g_r^-1(peer), tags absolute), if the program of every rank
// that ranks yields normalises to it under group g. Ranks that share a
// program are checked once for each value of the bits of the rank its
// normalised form depends on.
func symmetricUnder(progs *programs, world int, g symGroup, p0 *program, ranks iter.Seq2[int, *program]) (string, bool) {
	if g == symXor && world&(world-1) != 0 {
		return "", false
	}
	ref, _, ok := normalise(progs, p0, 0, world, g, nil)
	if !ok {
		return "", false
	}
	// same caches the programs found equal to rank 0's, with the bits of
	// the rank their normalised form depends on (see normalise).
	same := map[symSeen]bool{}
	masks := map[*program]int{}
	var buf []byte
	for r, p := range ranks {
		if m, ok := masks[p]; ok && same[symSeen{p, r & m}] {
			continue
		}
		var dep depends
		buf, dep, ok = normalise(progs, p, r, world, g, buf[:0])
		if !ok || string(buf) != string(ref) {
			return "", false
		}
		if !dep.all {
			masks[p] = dep.bits
			same[symSeen{p, r & dep.bits}] = true
		}
	}
	return string(ref), true
}

// symSeen is a program and the bits of a rank that its normalised form
// depends on.
type symSeen struct {
	p    *program
	bits int
}

// depends is what of the rank a normalised program depends on: under
// the cyclic group, a peer written as rank XOR 2^b becomes +2^b or -2^b
// as bit b of the rank is 0 or 1, and bits collects those bits; under
// the xor group a peer written as a difference depends on the whole rank
// (all).
type depends struct {
	all  bool
	bits int
}

// normalise appends to out program p of rank r with every peer written
// relative to r under g, and every tag absolute, and says what of r the
// result depends on. It fails on a switch operation.
func normalise(progs *programs, p *program, r, world int, g symGroup, out []byte) ([]byte, depends, bool) {
	var dep depends
	for _, id := range p.chunks {
		code := progs.chunks[id]
		var tag algos.Tag
		for i := 0; i < len(code); {
			op := code[i]
			i++
			kind := op & opKindMask
			switch kind {
			case opSend, opRecv:
				var pv, dt uint64
				pv, i = uvarint(code, i)
				dt, i = uvarint(code, i)
				peer := r + int(unzigzag(pv))
				if op&opXorPeer != 0 {
					peer = r ^ 1<<pv
				}
				var rel int
				if g == symXor {
					rel = peer ^ r
					dep.all = dep.all || (op&opXorPeer == 0 && peer != r)
				} else {
					rel = ((peer-r)%world + world) % world
					if op&opXorPeer != 0 {
						dep.bits |= 1 << pv
					}
				}
				tag += algos.Tag(unzigzag(dt))
				out = append(out, kind)
				out = binary.AppendUvarint(out, uint64(rel))
				out = binary.AppendUvarint(out, zigzag(int64(tag)))
				j := skipUvarints(code, i, 2) // bytes, slot
				out, i = append(out, code[i:j]...), j
			case opWait:
				var n uint64
				n, i = uvarint(code, i)
				j := skipUvarints(code, i, int(n))
				out = append(out, opWait)
				out = binary.AppendUvarint(out, n)
				out, i = append(out, code[i:j]...), j
			case opReduce, opDelay:
				j := skipUvarints(code, i, 1)
				out = append(out, kind)
				out, i = append(out, code[i:j]...), j
			default:
				return out, dep, false
			}
		}
	}
	return out, dep, true
}

// skipUvarints returns where the n uvarints at s[i:] end.
func skipUvarints(s string, i, n int) int {
	for range n {
		for s[i] >= 0x80 {
			i++
		}
		i++
	}
	return i
}

// symSim simulates rank 0 of a symmetric run on alpha-beta: its program
// (normalised), its egress port, and the mirrors of its sends arriving at
// its ingress port.
type symSim struct {
	ab    AlphaBeta
	world int
	group symGroup
	code  string

	now      Time
	events   int64 // the events rank 0's run would fire (see count)
	messages int64
	finish   Time
	queue    []symEvent
	seq      int64

	off     int // the next operation in code
	slots   []symReq
	pending int  // requests the parked wait still needs
	parked  bool // waiting for requests
	busy    bool // computing or sleeping, until an event resumes it
	done    bool
	failed  bool // a message longer than its receive
	egress  Time // when rank 0's egress port is free
	match   map[symKey]*symQueue
}

// symReq is a request slot of rank 0.
type symReq struct {
	done   bool
	waited bool
	bytes  int
}

// symKey is a source and tag of messages to rank 0.
type symKey struct {
	src int
	tag algos.Tag
}

// symQueue pairs the messages from one source with one tag, delivered
// and not received (their sizes), with the receives posted and not
// matched (their slots), both in order.
type symQueue struct {
	arrived []int
	posted  []int
}

// symEvent is a send of rank 0 completing (slot >= 0, with its mirror
// arriving from src with tag) or rank 0 resuming (slot -1).
type symEvent struct {
	at    Time
	seq   int64
	slot  int
	src   int
	tag   algos.Tag
	bytes int
}

// less orders events by time, then by when they were scheduled.
func (a symEvent) less(b symEvent) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (s *symSim) at(ev symEvent) {
	ev.seq = s.seq
	s.seq++
	s.queue = heapPush(s.queue, ev)
}

// run simulates rank 0 to its end; false if it could not (a failed
// receive, or a deadlock), which the full run reports.
func (s *symSim) run() bool {
	s.events = 1 // the process's first resume
	s.step()
	for len(s.queue) > 0 && !s.failed {
		var ev symEvent
		ev, s.queue = heapPop(s.queue)
		s.now = ev.at
		s.events++
		if ev.slot < 0 {
			s.busy = false
		} else {
			s.complete(ev.slot)
			s.deliver(ev.src, ev.tag, ev.bytes)
		}
		if !s.busy && !s.parked {
			s.step()
		}
	}
	return s.done && !s.failed
}

// complete completes request slot i, and resumes rank 0 if its wait is
// over; the resume is an event of the engine's, counted here.
func (s *symSim) complete(i int) {
	q := &s.slots[i]
	q.done = true
	if s.parked && q.waited {
		s.pending--
		if s.pending == 0 {
			s.parked = false
			s.events++
		}
	}
}

// deliver hands rank 0 a message from src with tag.
func (s *symSim) deliver(src int, tag algos.Tag, bytes int) {
	q := s.queueOf(src, tag)
	if len(q.posted) == 0 {
		q.arrived = append(q.arrived, bytes)
		return
	}
	i := q.posted[0]
	q.posted = q.posted[1:]
	s.fill(i, bytes)
}

func (s *symSim) fill(i, bytes int) {
	if bytes > s.slots[i].bytes {
		s.failed = true
		return
	}
	s.complete(i)
}

func (s *symSim) queueOf(src int, tag algos.Tag) *symQueue {
	k := symKey{src, tag}
	q := s.match[k]
	if q == nil {
		q = &symQueue{}
		s.match[k] = q
	}
	return q
}

// mirror is the rank whose message to rank 0 mirrors rank 0's to rel.
func (s *symSim) mirror(rel int) int {
	if s.group == symXor || rel == 0 {
		return rel
	}
	return s.world - rel
}

// step runs rank 0's program until it blocks or ends.
func (s *symSim) step() {
	code := s.code
	for s.off < len(code) && !s.failed {
		i := s.off
		op := code[i]
		i++
		switch op {
		case opSend, opRecv:
			var rel, tag, bytes, slot uint64
			rel, i = uvarint(code, i)
			tag, i = uvarint(code, i)
			bytes, i = uvarint(code, i)
			slot, i = uvarint(code, i)
			s.off = i
			s.post(op == opSend, int(rel), algos.Tag(unzigzag(tag)), int(bytes), int(slot))
		case opWait:
			var n, slot uint64
			n, i = uvarint(code, i)
			for range n {
				slot, i = uvarint(code, i)
				if q := &s.slots[slot]; !q.done {
					q.waited = true
					s.pending++
				}
			}
			s.off = i
			if s.pending > 0 {
				s.parked = true
				return
			}
		case opReduce, opDelay:
			var x uint64
			x, i = uvarint(code, i)
			s.off = i
			d := Time(x)
			if op == opReduce {
				d = 0
				if s.ab.ReduceBandwidth != 0 {
					d = TransferTime(int(x), s.ab.ReduceBandwidth)
				}
			}
			if d > 0 {
				s.busy = true
				s.at(symEvent{at: s.now + d, slot: -1})
				return
			}
		}
	}
	if !s.done && !s.failed {
		s.done, s.finish = true, s.now
	}
}

// post posts a send to, or a receive from, the rank rel (rank 0's peer
// itself) into slot.
func (s *symSim) post(send bool, rel int, tag algos.Tag, bytes, slot int) {
	for slot >= len(s.slots) {
		s.slots = append(s.slots, symReq{})
	}
	s.slots[slot] = symReq{bytes: bytes}
	if !send {
		q := s.queueOf(rel, tag)
		if len(q.arrived) > 0 {
			b := q.arrived[0]
			q.arrived = q.arrived[1:]
			s.fill(slot, b)
			return
		}
		q.posted = append(q.posted, slot)
		return
	}
	s.messages++
	if rel == 0 {
		// To itself: delivered at once, off the network.
		s.complete(slot)
		s.deliver(0, tag, bytes)
		return
	}
	start := max(s.now, s.egress)
	s.egress = start + s.ab.MessageTime(bytes)
	s.at(symEvent{at: s.egress, slot: slot, src: s.mirror(rel), tag: tag, bytes: bytes})
}
