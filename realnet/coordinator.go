package realnet

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// CoordinatorConfig configures ServeMembership.
type CoordinatorConfig struct {
	Credentials *Credentials
	Heartbeat   Heartbeat
	// World is the size of the first world: its members are 0 to
	// World-1, and any other member id may only join late (MaxWorld). 0
	// takes whoever says hello before the first rebuild as the first
	// world; a launcher that knows its world should say it, so that
	// nobody it did not start can enter it.
	World int
	// MinWorld is the fewest survivors a world is rebuilt with; with
	// fewer, every survivor is told to abort. Default 1.
	MinWorld int
	// MaxWorld, if positive, lets members join late (an elastic world):
	// while the world has fewer ranks, the running ranks are asked to
	// leave their world at a point boundary, and the next world takes in
	// the members waiting to join. 0: nobody joins late.
	MaxWorld int
	// AgreeTimeout bounds the survivors' agreement: a member still in the
	// world AgreeTimeout after the others were told to stop, that has not
	// reported, is declared dead, and the world is rebuilt without it.
	// Default Heartbeat.DeadAfter: told to stop, a member aborts its link
	// at once and reports as soon as it listens anew (milliseconds), so one
	// that has not after DeadAfter is as unresponsive as one whose
	// heartbeats stopped for as long, and gets the same verdict; the
	// agreement then ends within Heartbeat.DetectionBound of the stop.
	AgreeTimeout time.Duration
	// Events, if not nil, is told what happens, one event at a time.
	Events func(MembershipEvent)
}

// MembershipEvent is something the coordinator noticed or decided.
type MembershipEvent struct {
	// Kind: "dead" (Member declared dead for Cause), "rebuild" (the
	// survivors Members, by new rank, form world Epoch, resuming at
	// Point; Agreed is how long after the epoch's first sign of failure
	// the last survivor reported), "rebuilt" (every survivor of Epoch has
	// connected; Rebuild is how long after the epoch's first sign of
	// failure), "abort" (too few survivors).
	Kind    string
	Epoch   int
	Member  int
	Cause   string
	Members []int
	Failed  []int
	Joined  []int
	Point   int
	Agreed  time.Duration
	Rebuild time.Duration
	At      time.Time
}

type memberState uint8

const (
	msRunning memberState = iota // in the current epoch's world
	msWaiting                    // reported its link broken, waits for the rebuild
	msDead
	msDone    // finished the run
	msJoining // joined late, waits for a world to take it in
	msLate    // a member that may join late, connected, not asking yet
)

type coordMember struct {
	id       int
	conn     net.Conn
	wmu      sync.Mutex
	lastBeat time.Time
	state    memberState
	point    int
	addr     joinAddr
	rebuilt  bool
}

func (m *coordMember) send(msg coordMsg) {
	b, _ := json.Marshal(msg)
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	m.conn.Write(append(b, '\n')) // a failed write shows as the member's death
}

type coordinator struct {
	cfg CoordinatorConfig
	hb  Heartbeat

	mu      sync.Mutex
	members map[int]*coordMember
	epoch   int
	// The current epoch's failure: when it was first noticed (zero: none
	// yet), and the members lost in it.
	firstSign time.Time
	stopSent  bool // the running members were told to stop
	failed    []int
	causes    []string
	// pendingSign is the first sign of the failure the current epoch
	// was rebuilt after, for the rebuild's duration.
	pendingSign time.Time
	// stopAt is when the members still running were told to stop (zero:
	// they were not): the agreement's deadline runs from it.
	stopAt time.Time
	conns  int // member connections served (past their hello)
}

// maxMemberConns bounds the member connections a coordinator serves: one
// per member of the largest world, and as many again for members waiting
// to join or whose old connection is still being closed.
func (c *coordinator) maxMemberConns() int {
	if c.cfg.World <= 0 {
		return maxWorld
	}
	return 2*max(c.cfg.World, c.cfg.MaxWorld) + 16
}

// ServeMembership runs a membership coordinator on ln until ctx ends:
// members connect with JoinMembership, send heartbeats, report broken
// links, and get their rebuilt worlds from it (see membership.go).
//
// A member proves its id by its certificate: one for rank N of the job
// (Identity) speaks only for member N, one for any rank of it for any
// member. Before that, a connection holds one of maxHandshakes slots
// for at most Heartbeat.DeadAfter (the oldest is closed to make room,
// accept.go), and a line from a member is at most maxMemberLine bytes.
// A failed Accept is retried; ServeMembership returns only when ctx
// ends or ln is closed.
func ServeMembership(ctx context.Context, ln net.Listener, cfg CoordinatorConfig) error {
	if cfg.Credentials == nil {
		return errors.New("realnet: membership: credentials required")
	}
	hb, err := cfg.Heartbeat.withDefaults()
	if err != nil {
		return err
	}
	cfg.MinWorld = max(cfg.MinWorld, 1)
	if cfg.World < 0 || cfg.World > maxWorld || cfg.MaxWorld < 0 || cfg.MaxWorld > maxWorld {
		return fmt.Errorf("realnet: membership: world of %d ranks, at most %d", cfg.World, cfg.MaxWorld)
	}
	if cfg.AgreeTimeout <= 0 {
		cfg.AgreeTimeout = hb.DeadAfter
	}
	c := &coordinator{cfg: cfg, hb: hb, members: map[int]*coordMember{}}
	tlsCfg := cfg.Credentials.serverTLS(alpnMembership)
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	wg.Go(func() { c.check(ctx) })
	newAcceptor(ln, maxHandshakes).run(ctx, &wg, func(conn net.Conn, settled func() bool) {
		defer conn.Close()
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		defer stop()
		c.serve(tls.Server(conn, tlsCfg), settled)
	})
	return nil
}

// check declares dead the members whose heartbeats stopped, and those
// still in the world AgreeTimeout after the others were told to stop.
func (c *coordinator) check(ctx context.Context) {
	t := time.NewTicker(c.hb.Interval / 4)
	defer t.Stop()
	beats := 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.mu.Lock()
			late := !c.stopAt.IsZero() && now.Sub(c.stopAt) > c.cfg.AgreeTimeout
			for _, m := range c.sortedLocked() {
				switch {
				case (m.state == msRunning || m.state == msWaiting) && now.Sub(m.lastBeat) > c.hb.DeadAfter:
					c.deadLocked(m, fmt.Sprintf("no heartbeat for %v", c.hb.DeadAfter))
				case m.state == msRunning && late:
					c.deadLocked(m, fmt.Sprintf("did not report its broken link within %v of the stop (its heartbeats go on)", c.cfg.AgreeTimeout))
				}
			}
			// The coordinator beats too, every Interval, so that a member
			// waiting for it learns within DeadAfter that it is gone.
			if beats++; beats%4 == 0 {
				for _, m := range c.members {
					if m.state != msDead && m.state != msDone {
						go m.send(coordMsg{Type: "beat", Epoch: c.epoch})
					}
				}
			}
			c.mu.Unlock()
		}
	}
}

// serve reads one member's connection: its handshake and hello within
// DeadAfter (settled then frees its handshake slot), then its lines.
func (c *coordinator) serve(tc *tls.Conn, settled func() bool) {
	tc.SetDeadline(time.Now().Add(c.hb.DeadAfter))
	if err := tc.Handshake(); err != nil {
		return
	}
	id, err := peerIdentity(tc.ConnectionState().PeerCertificates)
	if err != nil {
		return
	}
	sc := lineReader(bufio.NewReader(tc), maxMemberLine)
	if !sc.Scan() {
		return
	}
	hello, err := decodeMemberMsg(sc.Bytes())
	if err != nil || hello.Type != "hello" || checkClaim(id, hello.Member) != nil || !settled() {
		return // an impostor's claim, or a connection closed to make room
	}
	tc.SetDeadline(time.Time{})
	host := ""
	if ta, ok := tc.RemoteAddr().(*net.TCPAddr); ok {
		host = ta.IP.String()
	}
	m := &coordMember{id: hello.Member, conn: tc, lastBeat: time.Now()}
	c.mu.Lock()
	switch {
	case c.members[m.id] != nil, c.conns >= c.maxMemberConns():
		c.mu.Unlock()
		return // a second connection claiming a member id, or too many
	case c.cfg.World > 0 && m.id >= c.cfg.World:
		if c.cfg.MaxWorld <= 0 {
			c.mu.Unlock()
			return // nobody joins late
		}
		m.state = msLate
	case c.cfg.World > 0 && c.epoch > 0:
		c.mu.Unlock()
		return // a member of the first world, which is over
	}
	c.members[m.id] = m
	c.conns++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.conns--
		c.mu.Unlock()
	}()
	for {
		tc.SetReadDeadline(time.Now().Add(2 * c.hb.DeadAfter))
		if !sc.Scan() {
			break
		}
		msg, err := decodeMemberMsg(sc.Bytes())
		if err != nil {
			c.mu.Lock()
			c.deadLocked(m, err.Error())
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		m.lastBeat = time.Now()
		switch msg.Type {
		case "failed":
			if m.state == msRunning && msg.Epoch == c.epoch {
				m.state, m.point, m.addr = msWaiting, msg.Point, msg.Addr
				if m.addr.Host == "" {
					m.addr.Host = host
				}
				c.noticeLocked()
				c.tryRebuildLocked()
			}
		case "join":
			if m.state == msLate || c.cfg.World <= 0 && m.state == msRunning && c.cfg.MaxWorld > 0 {
				m.state, m.addr = msJoining, msg.Addr
				if m.addr.Host == "" {
					m.addr.Host = host
				}
				c.growLocked()
			}
		case "rebuilt":
			if msg.Epoch == c.epoch && m.state == msRunning && !m.rebuilt {
				m.rebuilt = true
				c.checkRebuiltLocked()
			}
		case "done":
			if m.state != msDead {
				m.state = msDone
				c.tryRebuildLocked()
				c.endJoinersLocked()
			}
		}
		c.mu.Unlock()
	}
	cause := "its connection closed"
	if err := sc.Err(); err != nil {
		cause = fmt.Sprintf("its connection failed: %v", err)
	}
	c.mu.Lock()
	c.deadLocked(m, cause)
	c.mu.Unlock()
}

func (c *coordinator) sortedLocked() []*coordMember {
	ms := make([]*coordMember, 0, len(c.members))
	for _, m := range c.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *coordMember) int { return a.id - b.id })
	return ms
}

func (c *coordinator) event(e MembershipEvent) {
	if c.cfg.Events != nil {
		e.At = time.Now()
		c.cfg.Events(e)
	}
}

// deadLocked declares m dead, unless it is dead or done already.
func (c *coordinator) deadLocked(m *coordMember, cause string) {
	if m.state == msDead || m.state == msDone {
		return
	}
	if m.state == msJoining || m.state == msLate {
		m.state = msDead
		m.conn.Close()
		return // it was in no world
	}
	m.state = msDead
	m.conn.Close()
	c.failed = append(c.failed, m.id)
	c.causes = append(c.causes, cause)
	c.event(MembershipEvent{Kind: "dead", Epoch: c.epoch, Member: m.id, Cause: cause})
	c.noticeLocked()
	c.tryRebuildLocked()
}

// growLocked asks the running members to leave their world at their next
// point boundary, so that the members waiting to join can, while the
// world is below MaxWorld.
func (c *coordinator) growLocked() {
	if !c.firstSign.IsZero() || c.cfg.MaxWorld <= 0 {
		return
	}
	running := 0
	for _, m := range c.members {
		if m.state == msRunning {
			running++
		}
	}
	if running >= c.cfg.MaxWorld {
		return
	}
	c.firstSign = time.Now()
	for _, m := range c.sortedLocked() {
		if m.state == msRunning {
			go m.send(coordMsg{Type: "grow", Epoch: c.epoch})
		}
	}
}

// noticeLocked starts the end of the current epoch, once: every member
// still running is told to abort its link.
func (c *coordinator) noticeLocked() {
	if c.stopSent {
		return
	}
	c.stopSent = true
	c.stopAt = time.Now()
	if c.firstSign.IsZero() {
		c.firstSign = c.stopAt
	}
	for _, m := range c.sortedLocked() {
		if m.state == msRunning {
			go m.send(coordMsg{Type: "stop", Epoch: c.epoch})
		}
	}
}

// tryRebuildLocked announces the next world once every member of the
// current one is dead, done, or waiting for it.
func (c *coordinator) tryRebuildLocked() {
	if c.firstSign.IsZero() {
		return
	}
	var survivors []*coordMember
	for _, m := range c.sortedLocked() {
		switch m.state {
		case msRunning:
			return
		case msWaiting:
			survivors = append(survivors, m)
		}
	}
	if len(survivors) == 0 {
		return
	}
	var joined []int
	for _, m := range c.sortedLocked() {
		if m.state == msJoining && (c.cfg.MaxWorld <= 0 || len(survivors) < c.cfg.MaxWorld) {
			survivors = append(survivors, m)
			joined = append(joined, m.id)
		}
	}
	agreed := time.Since(c.firstSign)
	if len(survivors) < c.cfg.MinWorld {
		reason := fmt.Sprintf("%d survivors, fewer than the minimum world of %d", len(survivors), c.cfg.MinWorld)
		for _, m := range survivors {
			go m.send(coordMsg{Type: "abort", Epoch: c.epoch, Reason: reason})
			m.state = msDone
		}
		c.event(MembershipEvent{Kind: "abort", Epoch: c.epoch, Failed: c.failed, Cause: reason})
		return
	}
	c.epoch++
	msg := coordMsg{Type: "rebuild", Epoch: c.epoch, Point: survivors[0].point, Failed: c.failed, Causes: c.causes, Joined: joined, Agreed: agreed}
	rand.Read(msg.Session[:])
	for _, m := range survivors {
		msg.Members = append(msg.Members, m.id)
		msg.Peers = append(msg.Peers, m.addr)
		if m.state == msWaiting {
			msg.Point = min(msg.Point, m.point)
		}
	}
	for i, m := range survivors {
		m.state, m.rebuilt = msRunning, false
		mm := msg
		mm.Rank = i
		go m.send(mm)
	}
	c.event(MembershipEvent{Kind: "rebuild", Epoch: c.epoch, Members: msg.Members, Failed: c.failed, Joined: joined, Point: msg.Point, Agreed: agreed,
		Cause: strings.Join(c.causes, "; ")})
	c.failed, c.causes = nil, nil
	c.pendingSign = c.firstSign
	c.firstSign, c.stopSent, c.stopAt = time.Time{}, false, time.Time{}
}

// endJoinersLocked turns away the members waiting to join once no world
// is left to take them in.
func (c *coordinator) endJoinersLocked() {
	for _, m := range c.members {
		if m.state == msRunning || m.state == msWaiting {
			return
		}
	}
	for _, m := range c.sortedLocked() {
		if m.state == msJoining {
			m.state = msDone
			go m.send(coordMsg{Type: "abort", Epoch: c.epoch, Reason: "the run ended before a point boundary let it in"})
		}
	}
}

// checkRebuiltLocked reports the rebuild once every member of the epoch
// has connected.
func (c *coordinator) checkRebuiltLocked() {
	var members []int
	for _, m := range c.sortedLocked() {
		if m.state == msRunning {
			if !m.rebuilt {
				return
			}
			members = append(members, m.id)
		}
	}
	c.event(MembershipEvent{Kind: "rebuilt", Epoch: c.epoch, Members: members, Rebuild: time.Since(c.pendingSign)})
}
