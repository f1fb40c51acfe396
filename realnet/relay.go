package realnet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/mesh"
)

// Relaying. With a sparse mesh (Config.Mesh: nexar's hypercube and
// k-regular strategies) a rank holds connections only to its neighbours,
// and a message to any other rank travels along the mesh's next-hop
// routes (package mesh: shortest, and the same on every rank). Every hop
// is a relay header (relayHdr) and, for the kinds that carry data, a
// payload: ordinary messages of two reserved tags to the next hop. Every
// rank runs one relay loop per neighbour that receives those in arrival
// order and either forwards them to the next hop or, at the destination,
// hands the message to the matching as if it had come from its origin.
// Each hop takes whatever path its size takes (QUIC, eager, or bulk with
// its rendezvous).
//
// What a relay holds is charged against its MaxUnexpected budget, with
// the unexpected messages it buffers: a forward its payload and msgOverhead
// from the moment its loop takes it until the next hop has it, a message
// for this rank that arrived before its receive the same until it is
// received. A loop waits for budget before it takes the next piece
// (admitRelay), which leaves what follows in its neighbour's flow-control
// window, holding back the neighbour's forwards and so, hop by hop, the
// origin: a receiver that does not receive holds back its senders instead
// of filling its relays' memory. Only when this rank holds nothing relayed
// does one piece pass whatever the budget, so that a segment larger than a
// small budget still moves. Every length is bounded before anything is
// allocated for it: a header is fixed, a payload at most relaySegment.
//
// Two protocols, by size, as MPI's eager and rendezvous ones:
//
//   - a message of at most relayEagerMax bytes goes at once, header and
//     payload (relayEager), and waits at the destination for its receive
//     if it comes first;
//   - a larger one announces itself (relayRTS); the destination answers
//     along the reverse route (relayCTS) once its receive is posted, and
//     only then does the origin send the payload, in segments of at most
//     relaySegment bytes (relayData), which the destination copies
//     straight into the receive's buffer. So a large message never waits
//     in a relay for a receiver that is not ready, and a receiver that
//     posts its receives in another order than they were sent never
//     waits for a message stuck behind one it has not posted: what sits in
//     a relay's budget is always on its way to a receive that takes it.
//
// Matching semantics are MPI's: the messages of one sender to one
// receiver all take the same route, every hop's headers and payloads
// travel on one ordered channel per neighbour (the reserved tags), and each
// relay loop forwards in the order it receives, so a receiver matches a
// sender's messages of one tag first in first out, relayed or not.
//
// Costs: each hop is a full message (store and forward, segment by
// segment), the origin copies the payload (the send completes, and the
// caller may reuse its buffer, while relays still hold it), and a large
// message costs a round trip along the route before its data moves.
//
// Close with a sparse mesh first makes sure no rank still needs this one
// as a relay: every rank sends a farewell marker along the route to every
// rank it is not joined to, and a rank leaves only once it has forwarded
// every marker whose route passes through it (the pairs are known from
// the routes) and its forwards are complete. Since markers follow the
// data of their pair, everything relayed through a rank has passed it by
// then.

// The reserved tags of relayed messages: a communicator above those of
// the algorithms, their splits and nexar-live's harness.
const relayComm = 1<<algos.CommBits - 64

var (
	relayHdrTag  = algos.ScopeTag(relayComm, 0, 1)
	relayDataTag = algos.ScopeTag(relayComm, 0, 2)
)

// Size limits of relayed messages: the largest sent whole (the smallest
// initial stream window, so that a hop's send of one completes even when
// the next hop parks it), and the largest segment of a rendezvous
// transfer, which is all a relay ever allocates for one piece.
const (
	relayEagerMax = minStreamWindow
	relaySegment  = bulkChunk
)

// Kinds of relay headers.
const (
	relayEager  byte = 1 // a message whole: its payload follows
	relayRTS    byte = 2 // a large message's request to send
	relayCTS    byte = 3 // the destination's clear to send, back to the origin
	relayData   byte = 4 // a segment of a large message: its payload follows
	relayMarker byte = 5 // a farewell marker (Close)
)

// relayHdrLen is the size of a relay header: kind, origin and
// destination rank (4 bytes each), tag, length, transfer id and offset (8
// each).
const relayHdrLen = 1 + 4 + 4 + 8 + 8 + 8 + 8

type relayHdr struct {
	kind         byte
	origin, dest int
	tag          algos.Tag
	n            uint64 // the message's length (eager, rts, data)
	id           uint64 // the origin's transfer id (rts, cts, data)
	off          uint64 // data: where the segment starts
}

func (h relayHdr) encode() []byte {
	b := make([]byte, 0, relayHdrLen)
	b = append(b, h.kind)
	b = binary.BigEndian.AppendUint32(b, uint32(h.origin))
	b = binary.BigEndian.AppendUint32(b, uint32(h.dest))
	b = binary.BigEndian.AppendUint64(b, uint64(h.tag))
	b = binary.BigEndian.AppendUint64(b, h.n)
	b = binary.BigEndian.AppendUint64(b, h.id)
	return binary.BigEndian.AppendUint64(b, h.off)
}

// payload is the length of the payload that follows the header, -1 if
// none does.
func (h relayHdr) payload() int {
	switch h.kind {
	case relayEager:
		return int(h.n)
	case relayData:
		return int(min(h.n-h.off, relaySegment))
	}
	return -1
}

// decodeRelayHdr parses a header that came from neighbour from on a link
// of rank self, whose messages are at most maxLen bytes.
func decodeRelayHdr(b []byte, m *mesh.Mesh, self, from int, maxLen uint64) (relayHdr, error) {
	if len(b) != relayHdrLen {
		return relayHdr{}, fmt.Errorf("relay header of %d bytes", len(b))
	}
	h := relayHdr{
		kind:   b[0],
		origin: int(binary.BigEndian.Uint32(b[1:])), dest: int(binary.BigEndian.Uint32(b[5:])),
		tag: algos.Tag(binary.BigEndian.Uint64(b[9:])), n: binary.BigEndian.Uint64(b[17:]),
		id: binary.BigEndian.Uint64(b[25:]), off: binary.BigEndian.Uint64(b[33:]),
	}
	size := m.World()
	var ok bool
	switch h.kind {
	case relayEager:
		ok = h.n <= relayEagerMax && h.id == 0 && h.off == 0
	case relayRTS:
		ok = h.n > relayEagerMax && h.n <= maxLen && h.id != 0 && h.off == 0
	case relayCTS:
		ok = h.tag == 0 && h.n == 0 && h.id != 0 && h.off == 0
	case relayData:
		ok = h.tag == 0 && h.n > relayEagerMax && h.n <= maxLen && h.id != 0 && h.off < h.n && h.off%relaySegment == 0
	case relayMarker:
		ok = h.tag == 0 && h.n == 0 && h.id == 0 && h.off == 0
	}
	switch {
	case !ok:
		return h, fmt.Errorf("relay header of kind %d, tag %#x, %d bytes, id %d, offset %d", h.kind, h.tag, h.n, h.id, h.off)
	case h.origin >= size || h.dest >= size || h.origin == h.dest || h.origin == self:
		return h, fmt.Errorf("relayed message from rank %d to rank %d", h.origin, h.dest)
	case m.Joined(h.origin, h.dest):
		return h, fmt.Errorf("relayed message between neighbours %d and %d", h.origin, h.dest)
	}
	// It must come the way the routes say: from the previous hop.
	if prev := routePrev(m, h.origin, h.dest, self); prev != from {
		return h, fmt.Errorf("message from rank %d to rank %d relayed by rank %d, not on its route", h.origin, h.dest, from)
	}
	return h, nil
}

// routePrev is the rank before self on the route from origin to dest, or
// -1 if self is not on it.
func routePrev(m *mesh.Mesh, origin, dest, self int) int {
	prev := origin
	for _, r := range m.Route(origin, dest) {
		if r == self {
			return prev
		}
		prev = r
	}
	return -1
}

// relay is a link's relaying state (nil with the full mesh).
type relay struct {
	m *mesh.Mesh
	// sendMu keeps each header and its payload adjacent on their tags:
	// the receiving relay loop pairs them by order, and several
	// goroutines (the caller's, the relay loops) send relayed messages.
	sendMu sync.Mutex
	// Under l.mu.
	forwards []*request // forwards not known to be done
	markers  int        // farewell markers forwarded
	nextID   uint64
	sends    map[uint64]*relayOut     // this rank's large sends waiting for their clear to send, by id
	grants   map[relayKey]*relayGrant // large messages to this rank cleared to be sent
	claims   map[int]int              // payloads claimed and not arrived yet, by neighbour
}

// relayOut is a large relayed send waiting for its clear to send.
type relayOut struct {
	dst int
	cts chan struct{}
}

// relayKey names a large relayed transfer: its origin and its id there.
type relayKey struct {
	origin int
	id     uint64
}

// relayGrant is a large relayed message this rank cleared to be sent:
// its segments are copied into dst, the buffer of receive r or of m,
// the message read into link memory before its receive was posted; none
// of them when the receive was abandoned or too short: the segments are
// then dropped.
type relayGrant struct {
	n, got int64
	dst    []byte
	r      *request
	m      *inbound
}

// newRelay returns the relay of a link of rank rank on mesh m, or nil if
// m joins every pair.
func newRelay(m *mesh.Mesh, rank int) *relay {
	for r := range m.World() {
		if r != rank && !m.Joined(rank, r) {
			return &relay{m: m, sends: map[uint64]*relayOut{}, grants: map[relayKey]*relayGrant{}, claims: map[int]int{}}
		}
	}
	return nil
}

// joined says whether the link holds a connection to rank r.
func (l *Link) joined(r int) bool {
	return l.relay == nil || l.relay.m.Joined(l.rank, r)
}

// relaySend sends buf to dst, which is not a neighbour, by its next hop.
// The request completes when the next hop has the message (a large one:
// its last segment).
func (l *Link) relaySend(dst int, tag algos.Tag, buf []byte) algos.Request {
	rl := l.relay
	next := rl.m.NextHop(l.rank, dst)
	data := slices.Clone(buf) // the caller may reuse buf once the request is done
	if len(buf) <= relayEagerMax {
		h := relayHdr{kind: relayEager, origin: l.rank, dest: dst, tag: tag, n: uint64(len(buf))}
		r1, r2 := l.relayPair(next, h.encode(), data)
		return l.Spawn(func(ctx context.Context) error { return waitDone(ctx, r1, r2) })
	}
	out := &relayOut{dst: dst, cts: make(chan struct{})}
	l.mu.Lock()
	rl.nextID++
	id := rl.nextID
	rl.sends[id] = out
	l.mu.Unlock()
	h := relayHdr{kind: relayRTS, origin: l.rank, dest: dst, tag: tag, n: uint64(len(buf)), id: id}
	rts := l.relayOne(next, h.encode())
	return l.Spawn(func(ctx context.Context) error {
		if err := waitDone(ctx, rts); err != nil {
			return err
		}
		select {
		case <-out.cts:
		case <-ctx.Done():
			return ErrClosed
		}
		var reqs []*request
		rl.sendMu.Lock()
		for off := 0; off < len(data); off += relaySegment {
			h := relayHdr{kind: relayData, origin: l.rank, dest: dst, n: uint64(len(data)), id: id, off: uint64(off)}
			reqs = append(reqs, l.Isend(next, relayHdrTag, device.Host(h.encode())).(*request),
				l.Isend(next, relayDataTag, device.Host(data[off:min(off+relaySegment, len(data))])).(*request))
		}
		rl.sendMu.Unlock()
		return waitDone(ctx, reqs...)
	})
}

// waitDone waits until every request is done, or one fails, or ctx ends.
// Unlike Wait it neither times out nor abandons: a relay's sends run to
// their end or to the link's.
func waitDone(ctx context.Context, reqs ...*request) error {
	for _, r := range reqs {
		select {
		case <-r.done:
			if r.err != nil {
				return r.err
			}
		case <-ctx.Done():
			return ErrClosed
		}
	}
	return nil
}

// relayLoop receives the relayed messages that neighbour n sends, in
// order, and forwards or delivers each.
func (l *Link) relayLoop(n int) {
	rl := l.relay
	for {
		hb := make(device.Host, relayHdrLen)
		if !l.relayRecv(n, relayHdrTag, hb) {
			return
		}
		h, err := decodeRelayHdr(hb, rl.m, l.rank, n, uint64(l.cfg.MaxMessage))
		if err != nil {
			l.peers[n].protocolError("relay header", err)
			return
		}
		var ok bool
		switch {
		case h.dest != l.rank:
			ok = l.forward(n, h, hb)
		case h.kind == relayEager:
			ok = l.relayedEager(n, h)
		case h.kind == relayRTS:
			ok = l.relayedRTS(h)
		case h.kind == relayCTS:
			ok = l.relayedCTS(n, h)
		case h.kind == relayData:
			ok = l.relayedData(n, h)
		default: // a marker for this rank: nothing more from its origin
			ok = true
		}
		if !ok {
			return
		}
	}
}

// forward hands a piece on to the next hop once the budget takes it; the
// charge goes back when the next hop has it.
func (l *Link) forward(n int, h relayHdr, hb []byte) bool {
	c := cost(int64(max(h.payload(), 0)))
	if !l.admitRelay(c) {
		return false
	}
	next := l.relay.m.NextHop(l.rank, h.dest)
	var last *request
	reqs := make([]*request, 0, 2)
	if k := h.payload(); k >= 0 {
		data := make(device.Host, k)
		if !l.relayRecv(n, relayDataTag, data) {
			return false
		}
		r1, r2 := l.relayPair(next, hb, data)
		reqs, last = append(reqs, r1, r2), r2
	} else {
		last = l.relayOne(next, hb)
		reqs = append(reqs, last)
	}
	rl := l.relay
	l.mu.Lock()
	defer l.mu.Unlock()
	rl.forwards = append(rl.forwards, reqs...)
	if h.kind == relayMarker {
		rl.markers++
	}
	rl.prune()
	l.whenDoneLocked(last, func() { l.releaseRelayLocked(c) })
	l.wakeLocked()
	return true
}

// admitRelay waits until c more bytes of relayed data fit in the budget,
// or this rank holds none, and charges them; false if the link shuts down
// first.
func (l *Link) admitRelay(c int64) bool {
	for {
		l.mu.Lock()
		if l.relayHeld == 0 || l.heldLocked()+c <= l.quicBudget() {
			l.relayHeld += c
			l.mu.Unlock()
			return true
		}
		if !l.waitFreedLocked() {
			return false
		}
	}
}

// waitFreedLocked releases l.mu and waits until a charge against the
// budget or a relay claim is given back (freedLocked); false if the link
// ends first. l.mu is not held on return.
func (l *Link) waitFreedLocked() bool {
	if l.freed == nil {
		l.freed = make(chan struct{})
	}
	freed := l.freed
	l.mu.Unlock()
	select {
	case <-freed:
		return true
	case <-l.ctx.Done():
		return false
	}
}

// releaseRelayLocked gives back c bytes of relayHeld: unexpected messages
// parked for lack of budget may be read now.
func (l *Link) releaseRelayLocked(c int64) {
	l.relayHeld -= c
	l.freedLocked()
	l.unparkAsyncLocked()
}

// maxClaims bounds the payloads a relay loop has claimed from one
// neighbour and not yet seen arrive: each follows its header at once, so
// only a neighbour that sends headers without payloads fills them.
const maxClaims = 64

// relayClaim is what a relay loop knows of a relayed message for this
// rank whose payload it claims: where it comes from, its tag and length.
type relayClaim struct {
	origin int
	tag    algos.Tag
	n      int64
}

// relayedEager claims the payload of a whole message relayed from
// h.origin to this rank, which follows its header from neighbour n: when
// it arrives it goes on as a message from h.origin, read straight into
// its receive if one is posted, else charged against the budget like any
// unexpected message (read into link memory, or parked in n's
// flow-control window). The loop goes on to the next header at once, so
// that a message nobody receives yet never holds back the messages behind
// it.
func (l *Link) relayedEager(n int, h relayHdr) bool {
	r := l.newRequest(reqRecv, n, relayDataTag)
	r.claim = &relayClaim{origin: h.origin, tag: h.tag, n: int64(h.n)}
	key := matchKey{n, relayDataTag}
	for {
		l.mu.Lock()
		if l.broken != nil || l.closing {
			l.mu.Unlock()
			return false
		}
		if l.relay.claims[n] < maxClaims {
			break
		}
		if !l.waitFreedLocked() {
			return false
		}
	}
	l.relay.claims[n]++
	if q := l.unexpected[key]; q != nil && q.len() > 0 {
		// Here already, and accounted for as an unexpected message.
		m := q.pop()
		if q.len() == 0 {
			dropQueue(l.unexpected, key, q, &l.spareUnexpected)
		}
		after := l.claimLocked(m, r, false)
		l.mu.Unlock()
		after()
		return true
	}
	l.postLocked(key, r)
	l.mu.Unlock()
	return true
}

// claimLocked hands payload m, which a relay loop claimed with r, on as
// the message from r's claim: to a receive posted for it, or queued
// unexpected; fresh says that m has just arrived and is not accounted for
// yet (neither read into link memory nor parked).
func (l *Link) claimLocked(m *inbound, r *request, fresh bool) func() {
	c := r.claim
	r.loc = locNone
	l.relay.claims[m.p.rank]--
	l.freedLocked()
	l.finishLocked(r, nil)
	if m.n != c.n {
		p := m.p
		return func() {
			p.protocolError("relayed message", fmt.Errorf("payload of %d bytes, its header announced %d", m.n, c.n))
		}
	}
	m.tag = c.tag
	key := matchKey{c.origin, c.tag}
	if rr := l.popPostedLocked(key); rr != nil {
		rr.loc = locNone
		return l.matchLocked(m, rr, false)
	}
	l.pushUnexpectedLocked(c.origin, m)
	if fresh {
		return l.unexpectedLocked(m, false)
	}
	return nop
}

// relayedRTS matches a large message's request to send: to a posted
// receive, which clears it; else it is cleared into link memory if the
// budget allows, or held (charged msgOverhead) until the budget or a
// receive does.
func (l *Link) relayedRTS(h relayHdr) bool {
	key := matchKey{h.origin, h.tag}
	l.mu.Lock()
	posted := l.posted[key] != nil
	if posted {
		// Matched at once, unless its receive is abandoned meanwhile:
		// then held over the budget.
		l.relayHeld += msgOverhead
	}
	l.mu.Unlock()
	if !posted && !l.admitRelay(msgOverhead) {
		return false
	}
	m := &inbound{tag: h.tag, n: int64(h.n), kind: kindRelayRTS, id: h.id, origin: h.origin, relayed: true, relayCharge: msgOverhead, state: inParked}
	l.mu.Lock()
	if l.broken != nil || l.closing {
		l.relayHeld -= msgOverhead
		l.mu.Unlock()
		return true
	}
	var after func()
	if r := l.popPostedLocked(key); r != nil {
		r.loc = locNone
		after = l.matchLocked(m, r, false)
	} else {
		l.pushUnexpectedLocked(h.origin, m)
		if l.heldLocked()-m.relayCharge+cost(m.n) <= l.quicBudget() {
			after = l.startTempLocked(m, false)
		} else {
			l.parked = append(l.parked, m)
			after = nop
		}
	}
	l.mu.Unlock()
	after()
	return true
}

// relayMatchLocked hands a large relayed message's request to send m,
// parked, to receive r (long enough): its segments will go into r's
// buffer, and the origin is cleared to send them.
func (l *Link) relayMatchLocked(m *inbound, r *request) func() {
	unpark := l.releaseHeldLocked(m)
	m.state = inMatched
	g := &relayGrant{n: m.n, dst: r.buf[:m.n], r: r}
	r.loc, r.rgrant = locRelayGrant, g
	l.relay.grants[relayKey{m.origin, m.id}] = g
	clear := l.relayClearFunc(m.origin, m.id)
	return func() {
		unpark()
		clear()
	}
}

// releaseHeldLocked takes relayed message m's charge off the budget and
// returns the reads of the parked messages that now fit.
func (l *Link) releaseHeldLocked(m *inbound) func() {
	l.releaseLocked(m)
	if l.broken != nil || l.closing {
		return nop
	}
	return l.unparkLocked()
}

// relayDiscardLocked throws away large relayed message m, parked, whose
// receive was too short: its segments are cleared to come, and dropped.
func (l *Link) relayDiscardLocked(m *inbound) func() {
	unpark := l.releaseHeldLocked(m)
	m.state = inMatched
	l.relay.grants[relayKey{m.origin, m.id}] = &relayGrant{n: m.n}
	clear := l.relayClearFunc(m.origin, m.id)
	return func() {
		unpark()
		clear()
	}
}

// relayTempLocked clears large relayed message m, whose receive is not
// posted, into link memory: it is charged its whole length from now on.
func (l *Link) relayTempLocked(m *inbound) func() {
	c := cost(m.n)
	l.relayHeld += c - m.relayCharge
	m.relayCharge = c
	m.state = inTemp
	m.data = make([]byte, m.n)
	l.relay.grants[relayKey{m.origin, m.id}] = &relayGrant{n: m.n, dst: m.data, m: m}
	return l.relayClearFunc(m.origin, m.id)
}

// relayDoneLocked completes large relayed message m, read into link
// memory: into the receive matched to it meanwhile, if any.
func (l *Link) relayDoneLocked(m *inbound) {
	r := m.recv
	switch {
	case m.discard:
		m.state = inMatched
		l.releaseLocked(m)
		m.data = nil
		l.unparkAsyncLocked()
	case r == nil:
		m.state = inBuffered
	default:
		m.state, m.recv = inMatched, nil
		r.loc, r.msg = locNone, nil
		copy(r.buf, m.data)
		l.releaseLocked(m)
		m.data = nil
		l.finishLocked(r, nil)
		l.unparkAsyncLocked()
	}
}

// relayClearFunc returns the send of a clear to send for transfer id of
// origin, back along the route.
func (l *Link) relayClearFunc(origin int, id uint64) func() {
	return func() {
		h := relayHdr{kind: relayCTS, origin: l.rank, dest: origin, id: id}
		l.relayOne(l.relay.m.NextHop(l.rank, origin), h.encode())
	}
}

// relayedCTS starts the large send that h clears.
func (l *Link) relayedCTS(n int, h relayHdr) bool {
	l.mu.Lock()
	out := l.relay.sends[h.id]
	if out == nil || out.dst != h.origin {
		l.mu.Unlock()
		l.peers[n].protocolError("relay header", fmt.Errorf("clear to send transfer %d from rank %d, which this rank did not ask", h.id, h.origin))
		return false
	}
	delete(l.relay.sends, h.id)
	l.mu.Unlock()
	close(out.cts)
	return true
}

// relayedData receives a segment of a large message this rank cleared,
// and copies it into its receive's buffer. A cleared segment is taken
// whatever the budget (it is on its way to a receive, and holds the
// loop only while it is copied).
func (l *Link) relayedData(n int, h relayHdr) bool {
	key := relayKey{h.origin, h.id}
	l.mu.Lock()
	g := l.relay.grants[key]
	l.mu.Unlock()
	if g == nil || uint64(g.n) != h.n || uint64(g.got) != h.off {
		l.peers[n].protocolError("relay header", fmt.Errorf("segment at %d of transfer %d from rank %d, not the one expected", h.off, h.id, h.origin))
		return false
	}
	data := make(device.Host, h.payload())
	if !l.relayRecv(n, relayDataTag, data) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if g.dst != nil {
		copy(g.dst[g.got:], data)
	}
	g.got += int64(len(data))
	if g.got == g.n {
		delete(l.relay.grants, key)
		switch {
		case g.r != nil:
			l.finishLocked(g.r, nil)
		case g.m != nil:
			l.relayDoneLocked(g.m)
		}
	}
	return true
}

// relayPair sends a relayed message's header and payload to next, one
// right after the other.
func (l *Link) relayPair(next int, hdr, payload []byte) (*request, *request) {
	l.relay.sendMu.Lock()
	defer l.relay.sendMu.Unlock()
	r1 := l.Isend(next, relayHdrTag, device.Host(hdr)).(*request)
	r2 := l.Isend(next, relayDataTag, device.Host(payload)).(*request)
	return r1, r2
}

// relayOne sends a header that no payload follows to next.
func (l *Link) relayOne(next int, hdr []byte) *request {
	l.relay.sendMu.Lock()
	defer l.relay.sendMu.Unlock()
	return l.Isend(next, relayHdrTag, device.Host(hdr)).(*request)
}

// prune drops the forwards that are done. One that failed is done too: a
// forward to a destination that has closed already (it left once it no
// longer needed anything, and no route passes through it any more) fails,
// and a lost relay breaks the link, which fails everything else.
func (rl *relay) prune() {
	rl.forwards = slices.DeleteFunc(rl.forwards, func(r *request) bool { return r.state == stDone })
}

// relayRecv receives one message of the relay's tags from n, exactly
// len(buf) bytes; false when the link is shutting down or broken (its
// error fails everything else), or when n sent a message of another
// length (which breaks the protocol).
func (l *Link) relayRecv(n int, tag algos.Tag, buf device.Host) bool {
	r := l.Irecv(n, tag, buf).(*request)
	select {
	case <-r.done:
		var tl *TooLongError
		switch {
		case errors.As(r.err, &tl):
			l.peers[n].protocolError("relayed message", r.err)
		case r.err == nil && r.got != int64(len(buf)):
			l.peers[n].protocolError("relayed message", fmt.Errorf("%d bytes, want %d", r.got, len(buf)))
			return false
		}
		return r.err == nil
	case <-l.ctx.Done():
		return false
	}
}

// relayFarewell runs before Close's bye: it sends a marker to every rank
// this one is not joined to, and waits until it has forwarded the marker
// of every pair whose route passes through it and every forward is done,
// the link breaks, or deadline.
func (l *Link) relayFarewell(deadline time.Time) {
	rl := l.relay
	var mine []*request
	for d := range l.size {
		if d != l.rank && !l.joined(d) {
			h := relayHdr{kind: relayMarker, origin: l.rank, dest: d}
			mine = append(mine, l.relayOne(rl.m.NextHop(l.rank, d), h.encode()))
		}
	}
	expect := 0
	for s := range l.size {
		for d := range l.size {
			if s != d && s != l.rank && d != l.rank && !rl.m.Joined(s, d) && routePrev(rl.m, s, d, l.rank) >= 0 {
				expect++
			}
		}
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	// A forward that completes does not wake the link: poll as well.
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for {
		l.mu.Lock()
		rl.prune()
		done := rl.markers >= expect && len(rl.forwards) == 0
		for _, r := range mine {
			done = done && r.state == stDone
		}
		broken := l.broken != nil
		wake := l.wake
		l.mu.Unlock()
		if done || broken {
			return
		}
		select {
		case <-wake:
		case <-poll.C:
		case <-t.C:
			return
		}
	}
}

// neighbourCounts returns how many ranks below and above this one it is
// joined to: those it dials and those it accepts.
func (l *Link) neighbourCounts() (below, above int) {
	for r := range l.size {
		switch {
		case r == l.rank || !l.joined(r):
		case r < l.rank:
			below++
		default:
			above++
		}
	}
	return below, above
}

// startRelay starts a relay loop per neighbour, with a sparse mesh.
func (l *Link) startRelay() {
	if l.relay == nil {
		return
	}
	for n, p := range l.peers {
		if p != nil {
			l.ep.wg.Go(func() { l.relayLoop(n) })
		}
	}
}
