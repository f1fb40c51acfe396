package realnet

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Member is a rank's side of the membership protocol (membership.go): it
// sends heartbeats to the coordinator, learns from it when the current
// world is over, and rebuilds the next one.
type Member struct {
	id   int
	conn *tls.Conn
	hb   Heartbeat
	wmu  sync.Mutex

	mu    sync.Mutex
	epoch int
	stop  chan struct{} // closed when the coordinator ends the current epoch
	grow  chan struct{} // closed when the coordinator asks to leave the current epoch at a point boundary
	next  chan coordMsg // rebuild or abort
	err   error         // the connection's failure
	gone  chan struct{} // closed when the connection to the coordinator is lost

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Rebuild is what a member learns when its world is rebuilt.
type Rebuild struct {
	Epoch int
	// Rank and World are the member's place in the new world; Members
	// are the member ids (the ranks of the first world) of its ranks.
	Rank, World int
	Members     []int
	// Failed are the members lost since the previous world, with Causes
	// (how the coordinator noticed: "its connection closed", "no
	// heartbeat for 5s", ...).
	Failed []int
	Causes []string
	// Joined are the members that joined late (an elastic world).
	Joined []int
	// Point is where the survivors resume.
	Point int
	// Agreed is how long the survivors took, from the first sign of the
	// failure at the coordinator, to all report their broken links.
	Agreed time.Duration
}

// JoinMembership connects to the coordinator at addr ("host:port") as
// member id (the rank it has in the first world) and starts its
// heartbeats.
func JoinMembership(ctx context.Context, addr string, creds *Credentials, id int, hb Heartbeat) (*Member, error) {
	hb, err := hb.withDefaults()
	if err != nil {
		return nil, err
	}
	d := tls.Dialer{Config: creds.clientTLS(alpnMembership)}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("realnet: membership coordinator at %s: %w", addr, err)
	}
	m := &Member{id: id, conn: c.(*tls.Conn), hb: hb, stop: make(chan struct{}), grow: make(chan struct{}), next: make(chan coordMsg, 1), gone: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if err := m.write(memberMsg{Type: "hello", Member: id}); err != nil {
		c.Close()
		return nil, fmt.Errorf("realnet: membership coordinator at %s: %w", addr, err)
	}
	m.wg.Go(m.beat)
	m.wg.Go(m.read)
	return m, nil
}

func (m *Member) write(msg memberMsg) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	m.conn.SetWriteDeadline(time.Now().Add(m.hb.DeadAfter))
	_, err = m.conn.Write(append(b, '\n'))
	return err
}

func (m *Member) beat() {
	t := time.NewTicker(m.hb.Interval)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
			if m.write(memberMsg{Type: "beat"}) != nil {
				return // the reader reports the connection's end
			}
		}
	}
}

// read reads the coordinator's lines. The coordinator beats every
// Interval: after twice DeadAfter without a line it is lost (the bound the
// coordinator keeps for a member's lines), and so is a member waiting for
// its rebuild.
func (m *Member) read() {
	sc := lineReader(bufio.NewReader(m.conn), maxMembershipLine)
	var err error
	for {
		m.conn.SetReadDeadline(time.Now().Add(2 * m.hb.DeadAfter))
		if !sc.Scan() {
			break
		}
		var msg coordMsg
		if msg, err = decodeCoordMsg(sc.Bytes()); err != nil {
			break
		}
		m.mu.Lock()
		switch msg.Type {
		case "beat":
		case "stop":
			if msg.Epoch == m.epoch {
				closeOnce(m.stop)
			}
		case "grow":
			if msg.Epoch == m.epoch {
				closeOnce(m.grow)
			}
		default:
			if msg.Type == "rebuild" {
				// The next epoch starts here, so that a stop for it that
				// follows at once is not taken for a stale one.
				m.epoch, m.stop, m.grow = msg.Epoch, make(chan struct{}), make(chan struct{})
			}
			select {
			case m.next <- msg:
			default:
				err = errors.New("membership: a second rebuild before the first was taken")
			}
		}
		m.mu.Unlock()
		if err != nil {
			break
		}
	}
	if err == nil {
		err = sc.Err()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("no word from the coordinator for %v", 2*m.hb.DeadAfter)
	}
	if err == nil {
		err = errors.New("the coordinator closed the connection")
	}
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
	close(m.gone)
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// Grow is closed when a member waits to join (an elastic world): the
// ranks should leave the current world together at a point boundary, and
// call Rebuild.
func (m *Member) Grow() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.grow
}

// JoinLate enters a running world as a member that was not in the first
// one: it listens on a new endpoint configured with cfg, tells the
// coordinator, and connects the world that takes it in (once the running
// ranks reach a point boundary).
func (m *Member) JoinLate(ctx context.Context, cfg Config) (*Link, Rebuild, error) {
	return m.rebuild(ctx, "join", 0, nil, cfg)
}

// Stopped is closed when the coordinator ends the current world (a
// member died, or reported its link broken): the member should abort its
// link, and call Rebuild.
func (m *Member) Stopped() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stop
}

// Rebuild reports that this member's link broke (cause is its error)
// while it had not finished point point, and waits for the next world:
// it listens on a new endpoint configured with cfg, reports its address,
// and connects the world the coordinator announces. When another member
// fails during the rebuild, it reports again and connects the world after.
// It returns the new link and what the coordinator said; a
// *JoinRejectedError when the coordinator gave up (fewer survivors than
// the minimum).
func (m *Member) Rebuild(ctx context.Context, point int, cause error, cfg Config) (*Link, Rebuild, error) {
	return m.rebuild(ctx, "failed", point, cause, cfg)
}

func (m *Member) rebuild(ctx context.Context, kind string, point int, cause error, cfg Config) (*Link, Rebuild, error) {
	var failed []int
	var causes []string
	for {
		l, rb, err := m.rebuildOnce(ctx, kind, point, cause, cfg)
		failed, causes = append(failed, rb.Failed...), append(causes, rb.Causes...)
		if errors.Is(err, errRebuildStopped) {
			cause, kind = err, "failed"
			continue
		}
		rb.Failed, rb.Causes = failed, causes
		return l, rb, err
	}
}

// errRebuildStopped: the world being connected failed in turn.
var errRebuildStopped = errors.New("realnet: another member failed during the rebuild")

func (m *Member) rebuildOnce(ctx context.Context, kind string, point int, cause error, cfg Config) (*Link, Rebuild, error) {
	ep, err := Listen(nil, cfg)
	if err != nil {
		return nil, Rebuild{}, err
	}
	ep.awaitMembers() // peers learn its address only once it is reported
	fail := func(err error) (*Link, Rebuild, error) {
		ep.Close()
		return nil, Rebuild{}, err
	}
	self := joinAddr{}
	if ua, ok := ep.Addr().(*net.UDPAddr); ok {
		self.UDPPort = uint16(ua.Port)
	}
	if ba, ok := ep.BulkAddr().(*net.TCPAddr); ok {
		self.BulkPort = uint16(ba.Port)
	}
	m.mu.Lock()
	epoch := m.epoch
	m.mu.Unlock()
	why := ""
	if cause != nil {
		why = cause.Error()
		if len(why) > maxCauseLen {
			why = why[:maxCauseLen-3] + "..."
		}
	}
	if err := m.write(memberMsg{Type: kind, Epoch: epoch, Point: point, Addr: self, Cause: why}); err != nil {
		return fail(fmt.Errorf("realnet: reporting to the membership coordinator: %w", err))
	}
	var msg coordMsg
	select {
	case msg = <-m.next:
	case <-m.gone:
		m.mu.Lock()
		err := m.err
		m.mu.Unlock()
		return fail(fmt.Errorf("realnet: membership coordinator lost: %w", err))
	case <-ctx.Done():
		return fail(fmt.Errorf("realnet: waiting for the survivors to agree: %w", context.Cause(ctx)))
	}
	if msg.Type == "abort" {
		return fail(&JoinRejectedError{Reason: msg.Reason})
	}
	rb := Rebuild{Epoch: msg.Epoch, Rank: msg.Rank, World: len(msg.Peers), Members: msg.Members,
		Failed: msg.Failed, Causes: msg.Causes, Joined: msg.Joined, Point: msg.Point, Agreed: msg.Agreed}
	peers := make([]PeerAddr, len(msg.Peers))
	for i, a := range msg.Peers {
		if peers[i], err = a.peerAddr(); err != nil {
			return fail(fmt.Errorf("realnet: address of rank %d: %w", i, err))
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := m.Stopped()
	go func() {
		select {
		case <-stopped:
			cancel()
		case <-cctx.Done():
		}
	}()
	l, err := ep.connectMembers(cctx, msg.Rank, peers, msg.Session, msg.Members)
	if err != nil {
		select {
		case <-stopped:
			ep.Close()
			return nil, rb, errRebuildStopped
		default:
		}
		return fail(err)
	}
	if err := m.write(memberMsg{Type: "rebuilt", Epoch: msg.Epoch}); err != nil {
		l.Abort()
		return nil, Rebuild{}, fmt.Errorf("realnet: reporting to the membership coordinator: %w", err)
	}
	return l, rb, nil
}

// Done tells the coordinator that this member finished (so that its
// leaving is no failure) and closes the connection.
func (m *Member) Done() error {
	err := m.write(memberMsg{Type: "done"})
	m.Close()
	return err
}

// Close stops the heartbeats and closes the connection; the coordinator
// counts a member that closes without Done as dead.
func (m *Member) Close() {
	m.cancel()
	m.conn.Close()
	m.wg.Wait()
}
