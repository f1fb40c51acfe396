package realnet

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/mesh"
)

// Endpoint is one process's presence on the network: a QUIC transport on
// a packet connection, listening for its peers (and, when it hosts the
// seed, for ranks joining), and a TCP listener for bulk connections. It
// becomes a Link with Join or Connect.
type Endpoint struct {
	cfg    Config
	pc     net.PacketConn
	ownPC  bool
	tr     *quic.Transport
	ln     *quic.Listener
	bulkLn net.Listener

	ctx    context.Context
	cancel context.CancelFunc
	// wg counts every goroutine of the endpoint and of its link.
	wg sync.WaitGroup
	// done is closed when shutdown has finished.
	done chan struct{}

	mu       sync.Mutex
	seed     *seed
	meshIn   []*meshIn // mesh connections that said hello, waiting for Connect
	bulkIn   []*bulkIn // bulk connections that said hello, waiting for Connect
	arrived  chan struct{}
	meshDone bool // Connect has finished (or failed): later connections are refused
	link     *Link
	closed   bool
	// bulkTokens are the tokens this rank issued to the ranks above it
	// whose bulk and eager connections it still awaits, by rank: a bulk
	// connection is taken only with a proof of its rank's token.
	bulkTokens map[int][16]byte

	// bulkAcc accepts bulk connections, maxHandshakes set up at once.
	bulkAcc *acceptor
	// localLn is the Unix socket beside bulkLn that ranks on this host
	// dial instead (localsock.go); nil where there is none.
	localLn  net.Listener
	localAcc *acceptor
	// hostIPs are this host's addresses, read once, the first time a
	// peer's bulk address is checked for being one of them.
	hostIPs localHost
	// membersLater: the certificates of the ranks that connect are
	// checked against the members Connect is given (a rebuilt world,
	// membership.go), not against the ranks, and not before it is.
	membersLater bool
}

// meshIn is an incoming mesh connection whose hello has been read.
type meshIn struct {
	conn  *quic.Conn
	ctrl  *quic.Stream
	ctrR  *bufio.Reader
	hello hello
	// unchecked, when not nil, is the identity of the peer's
	// certificate, which Connect checks against the member of the rank
	// its hello claims.
	unchecked *Identity
}

// bulkIn is an incoming bulk connection whose hello has been read.
type bulkIn struct {
	conn  *bulkConn
	hello bulkHello
}

// maxPendingIn bounds the connections an endpoint holds before Connect
// takes them.
const maxPendingIn = maxWorld

// maxHandshakes bounds the bulk connections being set up at once (each a
// goroutine and a descriptor, for up to the handshake timeout); beyond it
// the listener waits for one to finish before it accepts another.
const maxHandshakes = 64

// Listen starts an endpoint on pc, a real UDP socket or any other packet
// connection (an emulated network in tests). If pc is nil it listens on a
// UDP socket of its own on all interfaces. A bulk TCP listener is opened
// on pc's IP address when pc is a *net.UDPConn, unless cfg.NoBulk.
func Listen(pc net.PacketConn, cfg Config) (*Endpoint, error) {
	own := false
	if pc == nil {
		c, err := net.ListenUDP("udp", &net.UDPAddr{})
		if err != nil {
			return nil, fmt.Errorf("realnet: %w", err)
		}
		pc, own = c, true
	}
	ep, err := newEndpoint(pc, own, cfg)
	if err != nil && own {
		pc.Close()
	}
	return ep, err
}

// ListenAddr starts an endpoint on a UDP socket bound to addr
// ("host:port"; port 0 picks one).
func ListenAddr(addr string, cfg Config) (*Endpoint, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("realnet: %w", err)
	}
	c, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("realnet: %w", err)
	}
	ep, err := newEndpoint(c, true, cfg)
	if err != nil {
		c.Close()
	}
	return ep, err
}

func newEndpoint(pc net.PacketConn, own bool, cfg Config) (*Endpoint, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ep := &Endpoint{cfg: cfg, pc: pc, ownPC: own, arrived: make(chan struct{}), done: make(chan struct{}),
		bulkTokens: map[int][16]byte{}}
	ep.ctx, ep.cancel = context.WithCancel(context.Background())
	ep.tr = &quic.Transport{Conn: pc}
	ep.ln, err = ep.tr.Listen(cfg.Credentials.serverTLS(alpnMesh, alpnJoin), ep.quicConfig())
	if err != nil {
		ep.tr.Close()
		return nil, fmt.Errorf("realnet: %w", err)
	}
	if ua, ok := pc.LocalAddr().(*net.UDPAddr); ok && !cfg.NoBulk {
		if _, isUDP := pc.(*net.UDPConn); isUDP {
			ep.bulkLn, err = net.ListenTCP("tcp", &net.TCPAddr{IP: ua.IP, Zone: ua.Zone})
			if err != nil {
				ep.ln.Close()
				ep.tr.Close()
				return nil, fmt.Errorf("realnet: bulk listener: %w", err)
			}
			ep.bulkAcc = newAcceptor(ep.bulkLn, maxHandshakes)
			ep.wg.Go(func() { ep.acceptBulk(ep.bulkAcc, false) })
			if !cfg.NoLocalSockets {
				ep.listenLocal()
			}
		}
	}
	ep.wg.Go(ep.acceptQUIC)
	return ep, nil
}

// Stream and window limits. A message that waits for its receive beyond
// the unexpected budget holds its stream's initial window of unread bytes
// (and its stream credit, so a peer holds at most maxStreams such
// messages); the connection window is large enough for every stream the
// peer may open to do that at once and still leave room for the messages
// that are being received, so a backlog of unexpected messages never
// starves the connection (see doc.go).
const (
	maxStreams = 256
	// The initial stream window is the budget's share of each stream
	// a peer may hold unread, between these bounds: 256 KiB for the
	// default 64 MiB budget, 16 KiB (a small message whole) for 4 MiB
	// and less.
	minStreamWindow     = inlineMax
	defaultStreamWindow = 256 << 10
	maxStreamWindow     = 16 << 20 // what quic-go's tuning may grow a stream's window to
	connWindowSlack     = 32 << 20
	maxIncomingBidis    = 4 // the control stream, or the join stream
)

// streamWindow is the initial receive window of a message stream on a
// link configured with cfg: what a message parked for lack of budget may
// hold in quic-go's buffers, so that a peer's maxStreams parked messages
// hold about MaxUnexpected (at least maxStreams*minStreamWindow), not a
// fixed 64 MiB whatever the budget.
func streamWindow(cfg Config) int64 {
	return min(max(cfg.MaxUnexpected/maxStreams, minStreamWindow), defaultStreamWindow)
}

// connWindow is the initial connection receive window: every stream's
// initial window at once, and room beside them.
func connWindow(cfg Config) int64 { return maxStreams*streamWindow(cfg) + connWindowSlack }

func (ep *Endpoint) quicConfig() *quic.Config { return quicConfig(ep.cfg) }

// quicConfig is the QUIC configuration of every connection of an endpoint
// configured with cfg.
func quicConfig(cfg Config) *quic.Config {
	return &quic.Config{
		HandshakeIdleTimeout:  cfg.HandshakeTimeout,
		MaxIdleTimeout:        cfg.PeerTimeout,
		KeepAlivePeriod:       cfg.PeerTimeout / 3,
		MaxIncomingStreams:    maxIncomingBidis,
		MaxIncomingUniStreams: maxStreams,
		// A peer's message stream counts against its maxStreams until
		// the message has left the unread state (match.go releases it):
		// a parked message, even one whose stream is complete, holds
		// the sender back.
		RequireStreamCreditRelease:     true,
		InitialStreamReceiveWindow:     uint64(streamWindow(cfg)),
		MaxStreamReceiveWindow:         maxStreamWindow,
		InitialConnectionReceiveWindow: uint64(connWindow(cfg)),
		MaxConnectionReceiveWindow:     uint64(4 * connWindow(cfg)),
	}
}

// Addr is the address of the endpoint's packet connection.
func (ep *Endpoint) Addr() net.Addr { return ep.pc.LocalAddr() }

// BulkAddr is the address of the bulk TCP listener, or nil if there is
// none.
func (ep *Endpoint) BulkAddr() net.Addr {
	if ep.bulkLn == nil {
		return nil
	}
	return ep.bulkLn.Addr()
}

func (ep *Endpoint) notifyLocked() {
	close(ep.arrived)
	ep.arrived = make(chan struct{})
}

// acceptQUIC accepts connections for as long as the endpoint lives: mesh
// connections from peers, joins when it hosts the seed. Every one has
// passed mutual TLS against the cluster CA before Accept returns it.
func (ep *Endpoint) acceptQUIC() {
	for {
		conn, err := ep.ln.Accept(ep.ctx)
		if err != nil {
			return
		}
		ep.wg.Go(func() { ep.handleConn(conn) })
	}
}

func (ep *Endpoint) handleConn(conn *quic.Conn) {
	switch conn.ConnectionState().TLS.NegotiatedProtocol {
	case alpnJoin:
		ep.mu.Lock()
		s := ep.seed
		ep.mu.Unlock()
		if s == nil {
			conn.CloseWithError(codeRefused, "no seed here")
			return
		}
		s.serve(ep.ctx, conn, ep.cfg.HandshakeTimeout)
	case alpnMesh:
		ctx, cancel := context.WithTimeout(ep.ctx, ep.cfg.HandshakeTimeout)
		defer cancel()
		ctrl, err := conn.AcceptStream(ctx)
		if err != nil {
			conn.CloseWithError(codeRefused, "no control stream")
			return
		}
		ctrl.SetPriority(urgencyControl, false)
		br := bufio.NewReaderSize(ctrl, 256)
		ctrl.SetReadDeadline(time.Now().Add(ep.cfg.HandshakeTimeout))
		t, body, err := readFrame(br, frameHello)
		ctrl.SetReadDeadline(time.Time{})
		var h hello
		if err == nil {
			h, err = decodeHello(body)
		}
		if err != nil || t != frameHello {
			conn.CloseWithError(codeProtocol, fmt.Sprintf("hello: %v", err))
			return
		}
		id, err := peerIdentity(conn.ConnectionState().TLS.PeerCertificates)
		if err != nil {
			conn.CloseWithError(codeRefused, err.Error())
			return
		}
		ep.mu.Lock()
		var unchecked *Identity
		if member, known := ep.memberLocked(h.Rank); !known {
			unchecked = &id
		} else if err := checkClaim(id, member); err != nil {
			ep.mu.Unlock()
			conn.CloseWithError(codeRefused, err.Error())
			return
		}
		if ep.meshDone || ep.closed || len(ep.meshIn) >= maxPendingIn {
			ep.mu.Unlock()
			conn.CloseWithError(codeRefused, "not accepting peers")
			return
		}
		if l := ep.link; l != nil && h.Rank <= l.rank {
			// Ranks below dial nobody here: only an impostor claims one.
			ep.mu.Unlock()
			conn.CloseWithError(codeRefused, fmt.Sprintf("rank %d not expected", h.Rank))
			return
		}
		// At most one pending per rank: a later one (a retry) replaces it.
		var old *meshIn
		for i, in := range ep.meshIn {
			if in.hello.Rank == h.Rank {
				old = in
				ep.meshIn = append(ep.meshIn[:i], ep.meshIn[i+1:]...)
				break
			}
		}
		ep.meshIn = append(ep.meshIn, &meshIn{conn: conn, ctrl: ctrl, ctrR: br, hello: h, unchecked: unchecked})
		ep.notifyLocked()
		ep.mu.Unlock()
		if old != nil {
			old.conn.CloseWithError(codeRefused, "superseded")
		}
	default:
		conn.CloseWithError(codeRefused, "unknown protocol")
	}
}

// acceptBulk accepts bulk TCP connections on a's listener, authenticates
// them (TLS unless the network is trusted), reads their hello and checks
// its proof of the token its rank was issued; at most maxHandshakes are
// set up at once, the oldest closed to make room for a new one (accept.go).
func (ep *Endpoint) acceptBulk(a *acceptor, local bool) {
	a.run(ep.ctx, &ep.wg, func(c net.Conn, settled func() bool) {
		c.SetDeadline(time.Now().Add(ep.cfg.HandshakeTimeout))
		b, err := ep.takeBulk(c, local)
		if !settled() || err != nil {
			c.Close()
			return
		}
		c.SetDeadline(time.Time{})
		ep.mu.Lock()
		if ep.meshDone || ep.closed {
			ep.mu.Unlock()
			c.Close()
			return
		}
		ep.bulkIn = append(ep.bulkIn, b)
		ep.notifyLocked()
		ep.mu.Unlock()
	})
}

// takeBulk sets up an accepted bulk connection: authenticated, its hello
// read, and proof given both ways that each end knows the token this rank
// issued to the dialer's rank over QUIC. A connection from a rank that was
// issued no token (one claiming this rank or a lower one, or one that
// never said hello over QUIC) is refused. A connection accepted on the
// local socket is plaintext, as one on a trusted network (localsock.go).
func (ep *Endpoint) takeBulk(c net.Conn, local bool) (*bulkIn, error) {
	b, h, err := acceptBulkConn(c, ep.cfg.Credentials, ep.cfg.TrustedNetwork || local)
	if err != nil {
		return nil, err
	}
	ep.mu.Lock()
	token, ok := ep.bulkTokens[h.Rank]
	var session Session
	member := -1
	if ep.link != nil {
		session, member = ep.link.session, ep.link.memberOf(h.Rank)
	}
	ep.mu.Unlock()
	if !ok || h.Session != session {
		return nil, fmt.Errorf("bulk hello from rank %d, which was issued no token", h.Rank)
	}
	if b.sealed() {
		if err := checkClaim(b.peer, member); err != nil {
			return nil, err
		}
	}
	if err := b.answerBulk(h, token); err != nil {
		return nil, err
	}
	return &bulkIn{conn: b, hello: h}, nil
}

// PeerAddr is where a rank is reached.
type PeerAddr struct {
	// Addr is its QUIC (UDP) address.
	Addr net.Addr
	// Bulk is its bulk TCP address, "host:port"; empty if it has none.
	Bulk string
}

// Connect makes the endpoint rank rank of a world whose ranks are reached
// at peers (peers[rank] is this endpoint), all of which call Connect with
// the same session. Each rank dials the ranks below it and accepts the
// ranks above: a full mesh. Connect returns when every connection is up,
// or fails when ctx ends first.
func (ep *Endpoint) Connect(ctx context.Context, rank int, peers []PeerAddr, session Session) (*Link, error) {
	return ep.connectMembers(ctx, rank, peers, session, nil)
}

// awaitMembers makes the endpoint check the certificates of the ranks that
// connect to it against the members connectMembers will be given.
func (ep *Endpoint) awaitMembers() {
	ep.mu.Lock()
	ep.membersLater = true
	ep.mu.Unlock()
}

// memberLocked returns the member a certificate must name to act as rank
// of the world this endpoint connects, and false while that is not known
// yet.
func (ep *Endpoint) memberLocked(rank int) (int, bool) {
	switch {
	case ep.link != nil:
		return ep.link.memberOf(rank), true
	case ep.membersLater:
		return 0, false
	}
	return rank, true
}

// connectMembers is Connect for a world whose rank r is member members[r]
// (nil: member r), whose certificate each rank must hold.
func (ep *Endpoint) connectMembers(ctx context.Context, rank int, peers []PeerAddr, session Session, members []int) (*Link, error) {
	size := len(peers)
	if size < 1 || size > maxWorld || rank < 0 || rank >= size {
		return nil, fmt.Errorf("realnet: rank %d of a world of %d", rank, size)
	}
	if members != nil && len(members) != size {
		return nil, fmt.Errorf("realnet: %d members for a world of %d", len(members), size)
	}
	self := rank
	if members != nil {
		self = members[rank]
	}
	if id, err := ep.cfg.Credentials.Identity(); err != nil {
		return nil, fmt.Errorf("realnet: own certificate: %w", err)
	} else if err := checkClaim(id, self); err != nil {
		return nil, fmt.Errorf("realnet: own %w", err)
	}
	ep.mu.Lock()
	if ep.link != nil || ep.closed {
		ep.mu.Unlock()
		return nil, errors.New("realnet: endpoint already connected or closed")
	}
	l := &Link{
		ep: ep, cfg: ep.cfg, rank: rank, size: size, session: session, members: members,
		peers:      make([]*peer, size),
		posted:     map[matchKey]*fifo[*request]{},
		unexpected: map[matchKey]*fifo[*inbound]{},
		live:       map[*request]struct{}{},
		wake:       make(chan struct{}),
	}
	l.ctx, l.cancel = context.WithCancel(ep.ctx)
	if ep.cfg.Mesh.Kind != mesh.Full {
		m, err := mesh.New(ep.cfg.Mesh, size)
		if err != nil {
			ep.mu.Unlock()
			return nil, fmt.Errorf("realnet: %w", err)
		}
		l.relay = newRelay(m, rank)
	}
	ep.link = l
	ep.mu.Unlock()

	if err := ep.connect(ctx, l, peers); err != nil {
		// Shut down at once: no peer of a mesh that never formed waits
		// for a bye, and Close must not wait for one either.
		l.mu.Lock()
		l.closing = true
		l.mu.Unlock()
		l.teardown(codeRefused, "mesh failed")
		return nil, err
	}
	l.start = time.Now()
	for _, p := range l.peers {
		if p != nil {
			p.start()
		}
	}
	l.startRelay()
	return l, nil
}

// connect forms the mesh: it dials the ranks below this one and accepts
// those above, with the bulk and eager connections of each peer that has
// a bulk path, until every rank it is joined to is connected or ctx ends.
func (ep *Endpoint) connect(ctx context.Context, l *Link, peers []PeerAddr) error {
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	below, above := l.neighbourCounts()
	res, dials := ep.dialBelow(dctx, l, peers)
	defer dials.Wait()

	// Accept the ranks above.
	need := above
	needBulk := 0
	pending := below
	for need > 0 || needBulk > 0 || pending > 0 {
		ep.mu.Lock()
		ins, bulks, arrived := ep.meshIn, ep.bulkIn, ep.arrived
		ep.meshIn, ep.bulkIn = nil, nil
		ep.mu.Unlock()
		for _, in := range ins {
			if bulk, ok := ep.acceptPeer(l, peers, in); ok {
				need--
				needBulk += bulk
			}
		}
		for _, b := range bulks {
			if ep.attachBulk(l, b) {
				needBulk--
			}
		}
		if need == 0 && needBulk == 0 && pending == 0 {
			break
		}
		select {
		case r := <-res:
			pending--
			if r.err != nil {
				return r.err
			}
			l.peers[r.p.rank] = r.p
		case <-arrived:
		case <-ctx.Done():
			return fmt.Errorf("realnet: rank %d: connecting the mesh: %w (waiting for %d peers, %d bulk connections, %d dials)",
				l.rank, context.Cause(ctx), need, needBulk, pending)
		}
	}
	ep.closeMesh()
	return nil
}

// dialed is what dialing a peer came to.
type dialed struct {
	p   *peer
	err error
}

// dialBelow dials each rank below this one that it is joined to, each in
// a goroutine of dials; what each came to arrives on res.
func (ep *Endpoint) dialBelow(ctx context.Context, l *Link, peers []PeerAddr) (res chan dialed, dials *sync.WaitGroup) {
	res = make(chan dialed, l.rank)
	dials = new(sync.WaitGroup)
	for j := 0; j < l.rank; j++ {
		if !l.joined(j) {
			continue // a sparse mesh: reached through relays
		}
		dials.Go(func() {
			p, err := ep.dialPeer(ctx, l, j, peers[l.rank], peers[j])
			res <- dialed{p, err}
		})
	}
	return res, dials
}

// acceptPeer answers the hello of a mesh connection from a rank above
// this one, and takes it as that rank's peer unless it is of another
// session, a rank not expected, or holds another member's certificate
// (then it is refused). bulk is the number of connections the peer will
// open to the bulk listener: 2 (the bulk one and the eager one) if both
// ranks have a bulk path, else 0.
func (ep *Endpoint) acceptPeer(l *Link, peers []PeerAddr, in *meshIn) (bulk int, ok bool) {
	h := in.hello
	switch {
	case h.Session != l.session || h.World != l.size:
		in.conn.CloseWithError(codeRefused, "another session")
		return 0, false
	case h.Rank <= l.rank || l.peers[h.Rank] != nil || !l.joined(h.Rank):
		in.conn.CloseWithError(codeRefused, fmt.Sprintf("rank %d not expected", h.Rank))
		return 0, false
	}
	if in.unchecked != nil {
		if err := checkClaim(*in.unchecked, l.memberOf(h.Rank)); err != nil {
			in.conn.CloseWithError(codeRefused, err.Error())
			return 0, false
		}
	}
	withBulk := peers[h.Rank].Bulk != "" && peers[l.rank].Bulk != "" && ep.bulkLn != nil
	reply := hello{Rank: l.rank, World: l.size, Session: l.session}
	if withBulk {
		// Issued before the peer can use it.
		rand.Read(reply.Token[:])
		ep.mu.Lock()
		ep.bulkTokens[h.Rank] = reply.Token
		ep.mu.Unlock()
	}
	if _, err := in.ctrl.Write(appendFrame(nil, frameHello, reply.body())); err != nil {
		in.conn.CloseWithError(codeRefused, "hello failed")
		return 0, false
	}
	l.peers[h.Rank] = newPeer(l, h.Rank, in.conn, in.ctrl, in.ctrR, nil, nil)
	if withBulk {
		bulk = 2 // the bulk connection and the eager one
	}
	return bulk, true
}

// attachBulk gives a peer accepted before its bulk or eager connection
// (takeBulk checked its proof of the token issued to its rank); it
// returns false, and closes the connection, for one of no peer or a
// second one of its kind. The token is dropped once the peer has both.
func (ep *Endpoint) attachBulk(l *Link, b *bulkIn) bool {
	p := l.peers[b.hello.Rank]
	if p == nil {
		b.conn.Close()
		return false
	}
	slot := &p.bulk
	if b.hello.Eager {
		slot = &p.eager
	}
	if *slot != nil {
		b.conn.Close() // a second one of its kind
		return false
	}
	*slot = b.conn
	if p.bulk != nil && p.eager != nil {
		ep.mu.Lock()
		delete(ep.bulkTokens, b.hello.Rank)
		ep.mu.Unlock()
	}
	return true
}

// closeMesh marks the mesh formed, refuses the mesh connections that
// came too late, and drops the bulk tokens left.
func (ep *Endpoint) closeMesh() {
	ep.mu.Lock()
	ep.meshDone = true
	late := ep.meshIn
	ep.meshIn = nil
	clear(ep.bulkTokens)
	ep.mu.Unlock()
	for _, in := range late {
		in.conn.CloseWithError(codeRefused, "mesh complete")
	}
}

// dialPeer connects to rank j, lower than this rank, retrying until ctx
// ends: j may not be listening yet.
func (ep *Endpoint) dialPeer(ctx context.Context, l *Link, j int, self, to PeerAddr) (*peer, error) {
	backoff := 20 * time.Millisecond
	for {
		p, err := ep.tryDialPeer(ctx, l, j, self, to)
		if err == nil {
			return p, nil
		}
		var refused *quic.ApplicationError
		var wrong *errWrongPeer
		if errors.As(err, &wrong) {
			return nil, fmt.Errorf("realnet: rank %d: rank %d at %v: %w", l.rank, j, to.Addr, err)
		}
		if errors.As(err, &refused) && refused.Remote {
			return nil, fmt.Errorf("realnet: rank %d: rank %d at %v refused the connection: %w", l.rank, j, to.Addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("realnet: rank %d: dialing rank %d at %v: %w (last error: %v)", l.rank, j, to.Addr, context.Cause(ctx), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (ep *Endpoint) tryDialPeer(ctx context.Context, l *Link, j int, self, to PeerAddr) (*peer, error) {
	hctx, cancel := context.WithTimeout(ctx, ep.cfg.HandshakeTimeout)
	defer cancel()
	conn, err := ep.tr.Dial(hctx, to.Addr, ep.cfg.Credentials.clientTLS(alpnMesh), ep.quicConfig())
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*peer, error) {
		conn.CloseWithError(codeRefused, "mesh hello failed")
		return nil, err
	}
	// The process at rank j's address must hold rank j's certificate (or
	// one for any rank of the job) before it learns anything.
	if id, err := peerIdentity(conn.ConnectionState().TLS.PeerCertificates); err != nil {
		return fail(&errWrongPeer{err})
	} else if err := checkClaim(id, l.memberOf(j)); err != nil {
		return fail(&errWrongPeer{err})
	}
	ctrl, err := conn.OpenStreamSync(hctx)
	if err != nil {
		return fail(err)
	}
	ctrl.SetPriority(urgencyControl, false)
	h := hello{Rank: l.rank, World: l.size, Session: l.session}
	if _, err := ctrl.Write(appendFrame(nil, frameHello, h.body())); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(ctrl, 256)
	if dl, ok := hctx.Deadline(); ok {
		ctrl.SetReadDeadline(dl)
	}
	_, body, err := readFrame(br, frameHello)
	ctrl.SetReadDeadline(time.Time{})
	if err != nil {
		if ae := (*quic.ApplicationError)(nil); errors.As(context.Cause(conn.Context()), &ae) {
			return nil, ae
		}
		return fail(err)
	}
	reply, err := decodeHello(body)
	if err != nil {
		return fail(err)
	}
	if reply.Rank != j || reply.World != l.size || reply.Session != l.session {
		return fail(fmt.Errorf("realnet: rank %d: %v answered as rank %d of %d", l.rank, to.Addr, reply.Rank, reply.World))
	}
	var bulk, eager *bulkConn
	if reply.Token != ([16]byte{}) && self.Bulk != "" && to.Bulk != "" && ep.bulkLn != nil {
		// The bulk connection, and the eager one beside it (eager.go),
		// over the peer's local socket if it runs on this host.
		h := bulkHello{Rank: l.rank, Session: l.session}
		local := ep.localLn != nil && ep.hostIPs.holds(hctx, to.Bulk)
		bulk, err = ep.dialBulk(hctx, to.Bulk, local, l.memberOf(j), h, reply.Token)
		if err == nil {
			h.Eager = true
			if eager, err = ep.dialBulk(hctx, to.Bulk, local, l.memberOf(j), h, reply.Token); err != nil {
				bulk.Close()
			}
		}
		if err != nil {
			return fail(fmt.Errorf("realnet: rank %d: bulk connection to rank %d: %w", l.rank, j, err))
		}
	}
	return newPeer(l, j, conn, ctrl, br, bulk, eager), nil
}

// dialBulk opens a bulk or eager connection to the rank whose bulk
// listener is at addr: over its local socket if local (it runs on this
// host, and so does a local socket of this rank's: localsock.go), else,
// or if that fails, over TCP.
func (ep *Endpoint) dialBulk(ctx context.Context, addr string, local bool, to int, h bulkHello, token [16]byte) (*bulkConn, error) {
	if local {
		if b, err := ep.dialBulkOn(ctx, "unix", localName(addr), true, to, h, token); err == nil {
			return b, nil
		}
	}
	return ep.dialBulkOn(ctx, "tcp", addr, ep.cfg.TrustedNetwork, to, h, token)
}

func (ep *Endpoint) dialBulkOn(ctx context.Context, network, addr string, plain bool, to int, h bulkHello, token [16]byte) (*bulkConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	b, err := dialBulkConn(c, ep.cfg.Credentials, plain, to, h, token)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return b, nil
}

// Close shuts the endpoint down: its link, if it has one, as Link.Close
// does, then the listeners and the transport (and the packet connection
// if the endpoint opened it).
func (ep *Endpoint) Close() error {
	ep.mu.Lock()
	l := ep.link
	ep.mu.Unlock()
	if l != nil {
		return l.Close()
	}
	return ep.shutdown()
}

// shutdown closes everything the endpoint owns and waits for its
// goroutines.
func (ep *Endpoint) shutdown() error {
	ep.mu.Lock()
	if ep.closed {
		ep.mu.Unlock()
		<-ep.done
		return nil
	}
	ep.closed = true
	ins, bulks := ep.meshIn, ep.bulkIn
	ep.meshIn, ep.bulkIn = nil, nil
	s := ep.seed
	ep.mu.Unlock()
	for _, in := range ins {
		in.conn.CloseWithError(codeRefused, "closing")
	}
	for _, b := range bulks {
		b.conn.Close()
	}
	if s != nil {
		s.close()
	}
	ep.cancel()
	ep.ln.Close()
	if ep.bulkLn != nil {
		ep.bulkLn.Close()
	}
	if ep.localLn != nil {
		ep.localLn.Close()
	}
	err := ep.tr.Close()
	if ep.ownPC {
		if e := ep.pc.Close(); err == nil {
			err = e
		}
	}
	ep.wg.Wait()
	close(ep.done)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
