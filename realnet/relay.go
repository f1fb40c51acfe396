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
// routes (package mesh: shortest, and the same on every rank). Isend to a
// rank that is not a neighbour sends the message to the next hop as two
// ordinary messages of reserved tags: a header (origin, destination, tag,
// length) and the payload, copied so that the caller may reuse its buffer
// once the send completes. Every rank runs one relay loop per neighbour
// that receives those pairs in arrival order and either forwards them to
// the next hop or, at the destination, hands the message to the matching
// as if it had come from its origin. The two hops are ordinary messages,
// so a relayed message takes whatever path its size takes on each hop
// (QUIC, eager, or bulk with its rendezvous).
//
// Matching semantics are MPI's: the messages of one sender to one
// receiver all take the same route, every hop's pairs travel on one
// ordered channel per neighbour (the reserved tags), and each relay loop
// forwards in the order it receives, so a receiver matches a sender's
// messages of one tag first in first out, relayed or not.
//
// Costs: each hop is a full message (store and forward, as nexar's relay
// does), the origin copies the payload, and a relayed message that arrives
// before its receive is posted is held in link memory outside the
// MaxUnexpected budget (the relay cannot leave it unread in a sender's
// flow-control window: it has already been received from the previous
// hop).
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

// relayHdrLen is the size of a relayed message's header: origin and
// destination rank (4 bytes each), tag and payload length (8 each), flags.
const relayHdrLen = 4 + 4 + 8 + 8 + 1

// relayMarker in a header's flags: a farewell marker (no payload).
const relayMarker = 1

type relayHdr struct {
	origin, dest int
	tag          algos.Tag
	n            uint64
	marker       bool
}

func (h relayHdr) encode() []byte {
	b := make([]byte, 0, relayHdrLen)
	b = binary.BigEndian.AppendUint32(b, uint32(h.origin))
	b = binary.BigEndian.AppendUint32(b, uint32(h.dest))
	b = binary.BigEndian.AppendUint64(b, uint64(h.tag))
	b = binary.BigEndian.AppendUint64(b, h.n)
	var f byte
	if h.marker {
		f = relayMarker
	}
	return append(b, f)
}

// decodeRelayHdr parses a header that came from neighbour from, in a world
// of size ranks, on a link whose rank is self.
func decodeRelayHdr(b []byte, m *mesh.Mesh, self, from int, maxLen uint64) (relayHdr, error) {
	if len(b) != relayHdrLen {
		return relayHdr{}, fmt.Errorf("relay header of %d bytes", len(b))
	}
	h := relayHdr{
		origin: int(binary.BigEndian.Uint32(b)), dest: int(binary.BigEndian.Uint32(b[4:])),
		tag: algos.Tag(binary.BigEndian.Uint64(b[8:])), n: binary.BigEndian.Uint64(b[16:]),
		marker: b[24] == relayMarker,
	}
	size := m.World()
	switch {
	case b[24] > relayMarker:
		return h, fmt.Errorf("relay header flags %#x", b[24])
	case h.origin >= size || h.dest >= size || h.origin == h.dest || h.origin == self:
		return h, fmt.Errorf("relayed message from rank %d to rank %d", h.origin, h.dest)
	case m.Joined(h.origin, h.dest):
		return h, fmt.Errorf("relayed message between neighbours %d and %d", h.origin, h.dest)
	case h.n > maxLen || h.marker && h.n != 0:
		return h, fmt.Errorf("relayed message of %d bytes", h.n)
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
}

// newRelay returns the relay of a link of rank rank on mesh m, or nil if
// m joins every pair.
func newRelay(m *mesh.Mesh, rank int) *relay {
	for r := range m.World() {
		if r != rank && !m.Joined(rank, r) {
			return &relay{m: m}
		}
	}
	return nil
}

// joined says whether the link holds a connection to rank r.
func (l *Link) joined(r int) bool {
	return l.relay == nil || l.relay.m.Joined(l.rank, r)
}

// relaySend sends buf to dst, which is not a neighbour, by its next hop.
// The request completes when the next hop has the message.
func (l *Link) relaySend(dst int, tag algos.Tag, buf []byte) algos.Request {
	h := relayHdr{origin: l.rank, dest: dst, tag: tag, n: uint64(len(buf))}
	r1, r2 := l.relayPair(l.relay.m.NextHop(l.rank, dst), h.encode(), slices.Clone(buf))
	return l.Spawn(func(ctx context.Context) error { return l.Wait(ctx, r1, r2) })
}

// relayLoop receives the relayed messages that neighbour n sends, in
// order, and forwards or delivers each.
func (l *Link) relayLoop(n int) {
	for {
		hb := make(device.Host, relayHdrLen)
		if !l.relayRecv(n, relayHdrTag, hb) {
			return
		}
		h, err := decodeRelayHdr(hb, l.relay.m, l.rank, n, uint64(l.cfg.MaxMessage))
		if err != nil {
			l.peers[n].protocolError("relay header", err)
			return
		}
		data := make(device.Host, h.n)
		if !l.relayRecv(n, relayDataTag, data) {
			return
		}
		if h.dest == l.rank {
			if !h.marker {
				l.deliverRelayed(h.origin, h.tag, data)
			}
			continue
		}
		r1, r2 := l.relayPair(l.relay.m.NextHop(l.rank, h.dest), hb, data)
		l.mu.Lock()
		l.relay.forwards = append(l.relay.forwards, r1, r2)
		if h.marker {
			l.relay.markers++
		}
		l.relay.prune()
		l.wakeLocked()
		l.mu.Unlock()
	}
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

// prune drops the forwards that are done. One that failed is done too: a
// forward to a destination that has closed already (it left once it no
// longer needed anything, and no route passes through it any more) fails,
// and a lost relay breaks the link, which fails everything else.
func (rl *relay) prune() {
	rl.forwards = slices.DeleteFunc(rl.forwards, func(r *request) bool { return r.state == stDone })
}

// relayRecv receives one message of the relay's tags from n; false when
// the link is shutting down or broken (its error fails everything else),
// or when n sent a message of the wrong length (which breaks the
// protocol).
func (l *Link) relayRecv(n int, tag algos.Tag, buf device.Host) bool {
	r := l.Irecv(n, tag, buf).(*request)
	select {
	case <-r.done:
		var tl *TooLongError
		if errors.As(r.err, &tl) {
			l.peers[n].protocolError("relayed message", r.err)
		}
		return r.err == nil
	case <-l.ctx.Done():
		return false
	}
}

// deliverRelayed hands a message relayed from origin to the matching, as
// sendSelf does for a message to oneself.
func (l *Link) deliverRelayed(origin int, tag algos.Tag, data []byte) {
	key := matchKey{origin, tag}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil || l.closing {
		return
	}
	if q := l.posted[key]; q != nil && q.len() > 0 {
		rr := q.pop()
		if q.len() == 0 {
			delete(l.posted, key)
		}
		rr.loc = locNone
		if len(data) > len(rr.buf) {
			l.finishLocked(rr, l.tooLong(origin, tag, int64(len(data)), rr))
		} else {
			copy(rr.buf, data)
			l.finishLocked(rr, nil)
		}
		return
	}
	l.pushUnexpectedLocked(origin, &inbound{tag: tag, n: int64(len(data)), state: inBuffered, data: data, self: true})
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
			h := relayHdr{origin: l.rank, dest: d, marker: true}
			next := rl.m.NextHop(l.rank, d)
			r1, r2 := l.relayPair(next, h.encode(), nil)
			mine = append(mine, r1, r2)
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
