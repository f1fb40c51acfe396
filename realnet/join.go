package realnet

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
)

// The join protocol. Every rank dials the seed (the rendezvous address of
// the job) over QUIC with mutual TLS, so a process without a certificate
// of the cluster CA is refused by the handshake, before it can say
// anything. It then sends one join frame: the world size it expects, the
// rank it wants (or none, and the seed assigns one in order of arrival, as
// nexar does), and where its peers reach it (by default the address the
// seed sees it at, and the port of its bulk listener). When the world is
// complete the seed answers each with a welcome: its rank, a fresh session
// id, and every rank's address; or a reject frame saying why not. The
// ranks then connect the mesh among themselves (Endpoint.Connect).

// anyRank in a join request asks the seed to assign the rank.
const anyRank = -1

// joinAddr is where a rank is reached: a host and two ports.
type joinAddr struct {
	Host     string
	UDPPort  uint16
	BulkPort uint16 // 0: no bulk path
}

func (a joinAddr) peerAddr() (PeerAddr, error) {
	ua, err := net.ResolveUDPAddr("udp", net.JoinHostPort(a.Host, strconv.Itoa(int(a.UDPPort))))
	if err != nil {
		return PeerAddr{}, err
	}
	p := PeerAddr{Addr: ua}
	if a.BulkPort != 0 {
		p.Bulk = net.JoinHostPort(a.Host, strconv.Itoa(int(a.BulkPort)))
	}
	return p, nil
}

func appendJoinAddr(b []byte, a joinAddr) []byte {
	b = append(b, byte(len(a.Host)))
	b = append(b, a.Host...)
	b = binary.BigEndian.AppendUint16(b, a.UDPPort)
	return binary.BigEndian.AppendUint16(b, a.BulkPort)
}

func decodeJoinAddr(b []byte) (joinAddr, []byte, error) {
	if len(b) < 1 || len(b) < 1+int(b[0])+4 {
		return joinAddr{}, nil, errors.New("address truncated")
	}
	n := int(b[0])
	a := joinAddr{Host: string(b[1 : 1+n])}
	b = b[1+n:]
	a.UDPPort, a.BulkPort = binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	return a, b[4:], nil
}

// joinRequest is what a rank tells the seed.
type joinRequest struct {
	World int
	Rank  int // anyRank: assign one
	// Addr.Host empty or Addr.UDPPort 0: what the seed sees.
	Addr joinAddr
}

func (j joinRequest) body() []byte {
	b := []byte{wireVersion}
	b = binary.BigEndian.AppendUint32(b, uint32(j.World))
	b = binary.BigEndian.AppendUint32(b, uint32(int32(j.Rank)))
	return appendJoinAddr(b, j.Addr)
}

func decodeJoinRequest(b []byte) (joinRequest, error) {
	if len(b) < 9 || b[0] != wireVersion {
		return joinRequest{}, errors.New("join: bad version or length")
	}
	j := joinRequest{World: int(binary.BigEndian.Uint32(b[1:])), Rank: int(int32(binary.BigEndian.Uint32(b[5:])))}
	if j.World < 1 || j.World > maxWorld || j.Rank < anyRank || j.Rank >= j.World {
		return joinRequest{}, fmt.Errorf("join: rank %d of %d", j.Rank, j.World)
	}
	a, rest, err := decodeJoinAddr(b[9:])
	if err != nil {
		return joinRequest{}, fmt.Errorf("join: %w", err)
	}
	if len(rest) != 0 {
		return joinRequest{}, errors.New("join: trailing bytes")
	}
	j.Addr = a
	return j, nil
}

// welcome is the seed's answer once the world is complete.
type welcome struct {
	Rank    int
	Session Session
	Peers   []joinAddr // by rank
}

func (w welcome) body() []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(w.Rank))
	b = binary.BigEndian.AppendUint32(b, uint32(len(w.Peers)))
	b = append(b, w.Session[:]...)
	for _, a := range w.Peers {
		b = appendJoinAddr(b, a)
	}
	return b
}

func decodeWelcome(b []byte) (welcome, error) {
	if len(b) < 24 {
		return welcome{}, errors.New("welcome truncated")
	}
	rank, world := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if world < 1 || world > maxWorld || rank >= world {
		return welcome{}, fmt.Errorf("welcome: rank %d of %d", rank, world)
	}
	w := welcome{Rank: int(rank), Peers: make([]joinAddr, 0, min(world, 1024))}
	copy(w.Session[:], b[8:24])
	b = b[24:]
	for range world {
		a, rest, err := decodeJoinAddr(b)
		if err != nil {
			return welcome{}, fmt.Errorf("welcome: %w", err)
		}
		w.Peers = append(w.Peers, a)
		b = rest
	}
	if len(b) != 0 {
		return welcome{}, errors.New("welcome: trailing bytes")
	}
	return w, nil
}

func rejectBody(reason string) []byte {
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen]
	}
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(reason))), reason...)
}

func decodeReject(b []byte) (string, error) {
	if len(b) < 2 || int(binary.BigEndian.Uint16(b))+2 != len(b) {
		return "", errors.New("reject: bad length")
	}
	return string(b[2:]), nil
}

// JoinRejectedError reports that the seed refused a join.
type JoinRejectedError struct{ Reason string }

func (e *JoinRejectedError) Error() string { return "realnet: join rejected by the seed: " + e.Reason }

// seed assembles one world.
type seed struct {
	world     int
	advertise joinAddr // the hosting endpoint's own address, for its local join

	mu      sync.Mutex
	active  int           // serve calls in progress
	idle    chan struct{} // closed (and replaced) when active drops to 0
	joiners []*joiner
	done    chan struct{} // closed when the world is assembled
	closed  chan struct{} // closed when the seed shuts down
	isDone  bool
	isShut  bool
	table   []joinAddr
	session Session
}

type joiner struct {
	req  joinRequest
	addr joinAddr
	rank int
}

func newSeed(world int, advertise joinAddr) *seed {
	return &seed{world: world, advertise: advertise, done: make(chan struct{}), closed: make(chan struct{}), idle: make(chan struct{})}
}

func (s *seed) enter() {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
}

func (s *seed) leave() {
	s.mu.Lock()
	s.active--
	if s.active == 0 {
		close(s.idle)
		s.idle = make(chan struct{})
	}
	s.mu.Unlock()
}

// waitIdle waits until no join is being served, or timeout.
func (s *seed) waitIdle(timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		n, idle := s.active, s.idle
		s.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-idle:
		case <-t.C:
			return
		}
	}
}

func (s *seed) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isShut {
		s.isShut = true
		close(s.closed)
	}
}

// register adds j to the world being assembled.
func (s *seed) register(j *joiner) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.isDone:
		return errors.New("the world is complete")
	case s.isShut:
		return errors.New("the seed is closing")
	case j.req.World != s.world:
		return fmt.Errorf("world of %d ranks, the seed assembles %d", j.req.World, s.world)
	}
	if j.req.Rank != anyRank {
		for _, o := range s.joiners {
			if o.req.Rank == j.req.Rank {
				return fmt.Errorf("rank %d is taken", j.req.Rank)
			}
		}
	}
	s.joiners = append(s.joiners, j)
	if len(s.joiners) < s.world {
		return nil
	}
	// Complete: ranks asked for are kept, the others assigned in order of
	// arrival.
	taken := make([]bool, s.world)
	for _, o := range s.joiners {
		if o.req.Rank != anyRank {
			o.rank, taken[o.req.Rank] = o.req.Rank, true
		}
	}
	next := 0
	s.table = make([]joinAddr, s.world)
	for _, o := range s.joiners {
		if o.req.Rank == anyRank {
			for taken[next] {
				next++
			}
			o.rank, taken[next] = next, true
		}
		s.table[o.rank] = o.addr
	}
	rand.Read(s.session[:])
	s.isDone = true
	close(s.done)
	return nil
}

// unregister removes j, which left before the world was complete.
func (s *seed) unregister(j *joiner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isDone {
		return
	}
	for i, o := range s.joiners {
		if o == j {
			s.joiners = append(s.joiners[:i], s.joiners[i+1:]...)
			return
		}
	}
}

// wait blocks until the world is complete and returns j's welcome.
func (s *seed) wait(ctx context.Context, j *joiner, gone <-chan struct{}) (welcome, error) {
	select {
	case <-s.done:
		return welcome{Rank: j.rank, Session: s.session, Peers: s.table}, nil
	case <-s.closed:
		s.unregister(j)
		return welcome{}, errors.New("the seed closed")
	case <-gone:
		s.unregister(j)
		return welcome{}, errors.New("left")
	case <-ctx.Done():
		s.unregister(j)
		return welcome{}, context.Cause(ctx)
	}
}

// serve handles one joining rank's connection.
func (s *seed) serve(ctx context.Context, conn *quic.Conn, hsTimeout time.Duration) {
	s.enter()
	defer s.leave()
	defer conn.CloseWithError(0, "")
	actx, cancel := context.WithTimeout(ctx, hsTimeout)
	str, err := conn.AcceptStream(actx)
	cancel()
	if err != nil {
		return
	}
	str.SetReadDeadline(time.Now().Add(hsTimeout))
	_, body, err := readFrame(bufio.NewReaderSize(str, 512), frameJoin)
	str.SetReadDeadline(time.Time{})
	var req joinRequest
	if err == nil {
		req, err = decodeJoinRequest(body)
	}
	if err != nil {
		conn.CloseWithError(codeProtocol, err.Error())
		return
	}
	id, claimErr := peerIdentity(conn.ConnectionState().TLS.PeerCertificates)
	if claimErr == nil {
		req.Rank, claimErr = claimRank(id, req.Rank, req.World)
	}
	j := &joiner{req: req, addr: req.Addr}
	if ua, ok := conn.RemoteAddr().(*net.UDPAddr); ok {
		if j.addr.Host == "" {
			j.addr.Host = ua.IP.String()
		}
		if j.addr.UDPPort == 0 {
			j.addr.UDPPort = uint16(ua.Port)
		}
	}
	var reply []byte
	if claimErr != nil {
		reply = appendFrame(nil, frameReject, rejectBody(claimErr.Error()))
	} else if err := s.register(j); err != nil {
		reply = appendFrame(nil, frameReject, rejectBody(err.Error()))
	} else if w, err := s.wait(ctx, j, conn.Context().Done()); err != nil {
		reply = appendFrame(nil, frameReject, rejectBody(err.Error()))
	} else {
		reply = appendFrame(nil, frameWelcome, w.body())
	}
	if _, err := str.Write(reply); err != nil {
		return
	}
	str.Close()
	// The joiner closes the connection once it has read the answer.
	select {
	case <-conn.Context().Done():
	case <-time.After(hsTimeout):
	case <-ctx.Done():
	}
}

// claimRank returns the rank a process whose certificate names id may ask
// for when it asks for rank of a world of world ranks: its certificate's
// rank if it asks for any, or an error if it asks for another or its
// certificate's rank is outside the world.
func claimRank(id Identity, rank, world int) (int, error) {
	switch {
	case id.Rank == AnyRank:
		return rank, nil
	case id.Rank >= world:
		return 0, fmt.Errorf("certificate of rank %d joins a world of %d ranks", id.Rank, world)
	case rank == anyRank:
		return id.Rank, nil
	}
	return rank, checkClaim(id, rank)
}

// HostSeed makes the endpoint serve the join protocol for a world of
// world ranks, as rank 0 does under torchrun (MASTER_ADDR:MASTER_PORT is
// its address). advertise is the address ("host:port") other ranks reach
// this endpoint at; empty means Addr(), which must then not be a wildcard
// address.
func (ep *Endpoint) HostSeed(world int, advertise string) error {
	if world < 1 || world > maxWorld {
		return fmt.Errorf("realnet: world of %d ranks", world)
	}
	a, err := ep.ownJoinAddr(advertise)
	if err != nil {
		return err
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.seed != nil {
		return errors.New("realnet: endpoint hosts a seed already")
	}
	ep.seed = newSeed(world, a)
	return nil
}

func (ep *Endpoint) ownJoinAddr(advertise string) (joinAddr, error) {
	if advertise == "" {
		advertise = ep.Addr().String()
	}
	host, port, err := net.SplitHostPort(advertise)
	if err != nil {
		return joinAddr{}, fmt.Errorf("realnet: advertised address: %w", err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return joinAddr{}, fmt.Errorf("realnet: advertised address %q: peers cannot reach a wildcard address", advertise)
	}
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return joinAddr{}, fmt.Errorf("realnet: advertised address %q: %w", advertise, err)
	}
	a := joinAddr{Host: host, UDPPort: uint16(pn)}
	if ba, ok := ep.BulkAddr().(*net.TCPAddr); ok {
		a.BulkPort = uint16(ba.Port)
	}
	return a, nil
}

// Join takes part in assembling a world of world ranks through the seed
// at seedAddr ("host:port"; ignored when this endpoint hosts the seed),
// as rank rank, or as whatever rank the seed assigns if rank is negative,
// and connects the mesh. It retries reaching the seed until ctx ends.
func (ep *Endpoint) Join(ctx context.Context, seedAddr string, rank, world int) (*Link, error) {
	if rank < 0 {
		rank = anyRank
	}
	if world < 1 || world > maxWorld || rank >= world {
		return nil, fmt.Errorf("realnet: rank %d of a world of %d", rank, world)
	}
	id, err := ep.cfg.Credentials.Identity()
	if err != nil {
		return nil, fmt.Errorf("realnet: own certificate: %w", err)
	}
	if rank, err = claimRank(id, rank, world); err != nil {
		return nil, fmt.Errorf("realnet: own %w", err)
	}
	ep.mu.Lock()
	s := ep.seed
	ep.mu.Unlock()
	var w welcome
	if s != nil {
		j := &joiner{req: joinRequest{World: world, Rank: rank}, addr: s.advertise}
		if err = s.register(j); err != nil {
			return nil, &JoinRejectedError{Reason: err.Error()}
		}
		w, err = s.wait(ctx, j, nil)
	} else {
		w, err = ep.joinRemote(ctx, seedAddr, rank, world)
	}
	if err != nil {
		return nil, err
	}
	peers := make([]PeerAddr, len(w.Peers))
	for i, a := range w.Peers {
		if peers[i], err = a.peerAddr(); err != nil {
			return nil, fmt.Errorf("realnet: address of rank %d: %w", i, err)
		}
	}
	return ep.Connect(ctx, w.Rank, peers, w.Session)
}

func (ep *Endpoint) joinRemote(ctx context.Context, seedAddr string, rank, world int) (welcome, error) {
	addr, err := net.ResolveUDPAddr("udp", seedAddr)
	if err != nil {
		return welcome{}, fmt.Errorf("realnet: seed address: %w", err)
	}
	req := joinRequest{World: world, Rank: rank}
	if ba, ok := ep.BulkAddr().(*net.TCPAddr); ok {
		req.Addr.BulkPort = uint16(ba.Port)
	}
	backoff := 20 * time.Millisecond
	for {
		w, err := ep.tryJoin(ctx, addr, req)
		if err == nil {
			return w, nil
		}
		var rej *JoinRejectedError
		if errors.As(err, &rej) {
			return welcome{}, err
		}
		select {
		case <-ctx.Done():
			return welcome{}, fmt.Errorf("realnet: joining through the seed at %s: %w (last error: %v)", seedAddr, context.Cause(ctx), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (ep *Endpoint) tryJoin(ctx context.Context, addr net.Addr, req joinRequest) (welcome, error) {
	hctx, cancel := context.WithTimeout(ctx, ep.cfg.HandshakeTimeout)
	defer cancel()
	conn, err := ep.tr.Dial(hctx, addr, ep.cfg.Credentials.clientTLS(alpnJoin), ep.quicConfig())
	if err != nil {
		return welcome{}, err
	}
	defer conn.CloseWithError(0, "")
	str, err := conn.OpenStreamSync(hctx)
	if err != nil {
		return welcome{}, err
	}
	if _, err := str.Write(appendFrame(nil, frameJoin, req.body())); err != nil {
		return welcome{}, err
	}
	// The answer comes when the world is complete: wait as long as ctx.
	stop := context.AfterFunc(ctx, func() { str.CancelRead(codeCancelled) })
	defer stop()
	t, body, err := readFrame(bufio.NewReaderSize(str, 64<<10), frameWelcome, frameReject)
	if err != nil {
		if c := context.Cause(conn.Context()); c != nil {
			return welcome{}, c
		}
		return welcome{}, err
	}
	if t == frameReject {
		reason, err := decodeReject(body)
		if err != nil {
			return welcome{}, err
		}
		return welcome{}, &JoinRejectedError{Reason: reason}
	}
	w, err := decodeWelcome(body)
	if err != nil {
		return welcome{}, err
	}
	if len(w.Peers) != req.World || req.Rank != anyRank && w.Rank != req.Rank {
		return welcome{}, fmt.Errorf("realnet: seed answered rank %d of %d, asked for %d of %d", w.Rank, len(w.Peers), req.Rank, req.World)
	}
	return w, nil
}

// ServeSeed runs a seed that is not a rank: it serves the join protocol on
// pc until a world of world ranks is assembled and every rank has its
// answer, or ctx ends. It is how a launcher hosts the rendezvous when the
// ranks do not know their own ranks (as nexar's seed does).
func ServeSeed(ctx context.Context, pc net.PacketConn, creds *Credentials, world int) error {
	ep, err := Listen(pc, Config{Credentials: creds, NoBulk: true})
	if err != nil {
		return err
	}
	defer ep.shutdown()
	ep.mu.Lock()
	ep.seed = newSeed(world, joinAddr{})
	s := ep.seed
	ep.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	// Let every joiner read its welcome: each handler returns when its
	// joiner has closed the connection, or after the handshake timeout.
	s.waitIdle(2 * ep.cfg.HandshakeTimeout)
	return nil
}
