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
	// MinWorld is the fewest survivors a world is rebuilt with; with
	// fewer, every survivor is told to abort. Default 1.
	MinWorld int
	// MaxWorld, if positive, lets members join late (an elastic world):
	// while the world has fewer ranks, the running ranks are asked to
	// leave their world at a point boundary, and the next world takes in
	// the members waiting to join. 0: nobody joins late.
	MaxWorld int
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
}

// ServeMembership runs a membership coordinator on ln until ctx ends:
// members connect with JoinMembership, send heartbeats, report broken
// links, and get their rebuilt worlds from it (see membership.go).
func ServeMembership(ctx context.Context, ln net.Listener, cfg CoordinatorConfig) error {
	if cfg.Credentials == nil {
		return errors.New("realnet: membership: credentials required")
	}
	hb, err := cfg.Heartbeat.withDefaults()
	if err != nil {
		return err
	}
	cfg.MinWorld = max(cfg.MinWorld, 1)
	c := &coordinator{cfg: cfg, hb: hb, members: map[int]*coordMember{}}
	tl := tls.NewListener(ln, cfg.Credentials.serverTLS(alpnMembership))
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	wg.Go(func() { c.check(ctx) })
	for {
		conn, err := tl.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		wg.Go(func() {
			defer conn.Close()
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			c.serve(conn)
		})
	}
}

// check declares dead the members whose heartbeats stopped.
func (c *coordinator) check(ctx context.Context) {
	t := time.NewTicker(c.hb.Interval / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.mu.Lock()
			for _, m := range c.sortedLocked() {
				if (m.state == msRunning || m.state == msWaiting) && now.Sub(m.lastBeat) > c.hb.DeadAfter {
					c.deadLocked(m, fmt.Sprintf("no heartbeat for %v", c.hb.DeadAfter))
				}
			}
			c.mu.Unlock()
		}
	}
}

// serve reads one member's connection.
func (c *coordinator) serve(conn net.Conn) {
	conn.SetReadDeadline(time.Now().Add(c.hb.DeadAfter))
	tc := conn.(*tls.Conn)
	if err := tc.Handshake(); err != nil {
		return
	}
	sc := lineReader(bufio.NewReader(conn))
	if !sc.Scan() {
		return
	}
	hello, err := decodeMemberMsg(sc.Bytes())
	if err != nil || hello.Type != "hello" {
		return
	}
	host := ""
	if ta, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		host = ta.IP.String()
	}
	m := &coordMember{id: hello.Member, conn: conn, lastBeat: time.Now()}
	c.mu.Lock()
	if old := c.members[m.id]; old != nil {
		c.mu.Unlock()
		return // a second connection claiming a member id
	}
	c.members[m.id] = m
	c.mu.Unlock()
	for {
		conn.SetReadDeadline(time.Now().Add(2 * c.hb.DeadAfter))
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
			if m.state == msRunning {
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
	if m.state == msJoining {
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
	if c.firstSign.IsZero() {
		c.firstSign = time.Now()
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
	c.firstSign, c.stopSent = time.Time{}, false
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
