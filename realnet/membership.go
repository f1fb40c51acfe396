package realnet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Membership: the heartbeats, the agreement on who failed, and the
// rebuild of a world with contiguous ranks that nexar calls its recovery
// policy (Automatic there, "shrink" in nexar-live).
//
// A Link breaks for good when it loses a rank (failure.go): every
// operation fails with a *PeerError naming it. To go on without that rank
// the survivors need three things a broken link cannot give them:
//
//   - failure detection that does not depend on the link being busy: each
//     member sends a heartbeat to a coordinator every Heartbeat.Interval
//     over a TLS connection of its own, and the coordinator declares a
//     member dead when its connection closes (a killed process: its kernel
//     closes the socket, noticed at once) or when no heartbeat has come
//     for Heartbeat.DeadAfter (a hung process or a vanished host: noticed
//     within DeadAfter plus a check period of Interval/4);
//   - agreement on the failed set: the coordinator decides it. When a
//     member dies, or reports that its link broke, the coordinator tells
//     every member that the current epoch is over (each aborts its link,
//     so that a rank waiting on a rank that waits on the dead one does not
//     wait for its timeout), then waits until every member is either dead
//     or has reported its broken link, and announces the survivors; a
//     member that has not reported CoordinatorConfig.AgreeTimeout after
//     the stop (its heartbeats may go on while its main loop hangs) is
//     declared dead, so that no member holds the agreement up for ever;
//   - a rebuild: each survivor listens on a new endpoint and reports its
//     address with its broken link, and the coordinator answers each with
//     its new rank (the survivors keep their order and are renumbered
//     0..n-1), the new world's addresses, a fresh session, and the point
//     to resume at (the earliest any survivor had not finished); the
//     survivors then connect a new full mesh (Endpoint.Connect).
//
// The coordinator is a single process outside the ranks (nexar-live's
// launcher hosts it, as it hosts the seed): a rank that hosted it could
// not coordinate its own death. Its protocol is JSON lines over TLS 1.3
// with the cluster credentials, a member's lines at most maxMemberLine
// bytes, the coordinator's (a rebuild names every survivor's address) at
// most maxMembershipLine. Each side beats every Interval, and each
// declares the other lost after twice DeadAfter without a line (the
// coordinator declares a member dead after DeadAfter without a heartbeat
// already).
//
// Members are named by their certificates: the certificate of rank N of
// the job (Identity; nexar-live issues one per member) is member N's, its
// rank in the first world, and it keeps that name when the world is
// rebuilt: the coordinator maps members to the ranks of each new world
// (coordMsg.Members), and the ranks check each other's certificates
// against that map. So no member holds another's key, and none can
// speak, at the coordinator or in the mesh, for another.

// alpnMembership is the ALPN of a membership connection.
const alpnMembership = "nexar-membership/1"

// maxMembershipLine bounds one line from the coordinator: a rebuild
// names every survivor's address.
const maxMembershipLine = 64 + maxWorld*(64+maxAddrLen)

// maxMemberLine bounds one line from a member: its address and the cause
// of its broken link (at most maxCauseLen bytes, each escaped in at most
// six), with room to spare.
const maxMemberLine = 512 + 6*maxAddrLen + 6*maxCauseLen

// maxCauseLen bounds the cause a member reports; Member cuts a longer
// one.
const maxCauseLen = 1 << 10

// Heartbeat configures failure detection. nexar's defaults: a heartbeat
// every second, dead after five seconds without one.
type Heartbeat struct {
	// Interval between a member's heartbeats; default 1 s.
	Interval time.Duration
	// DeadAfter is how long a member may go without a heartbeat before it
	// is declared dead; default 5 s. At least twice Interval.
	DeadAfter time.Duration
}

// Defaults of Heartbeat.
const (
	DefaultHeartbeatInterval = time.Second
	DefaultDeadAfter         = 5 * time.Second
)

func (h Heartbeat) withDefaults() (Heartbeat, error) {
	if h.Interval <= 0 {
		h.Interval = DefaultHeartbeatInterval
	}
	if h.DeadAfter <= 0 {
		h.DeadAfter = max(DefaultDeadAfter, 2*h.Interval)
	}
	if h.DeadAfter < 2*h.Interval {
		return h, fmt.Errorf("realnet: heartbeat dead-after %v: want at least twice the interval %v", h.DeadAfter, h.Interval)
	}
	return h, nil
}

// DetectionBound is the longest a member that stopped sending heartbeats
// (hung, or its host gone) stays undetected: DeadAfter plus the
// coordinator's check period. A killed process is noticed sooner, when its
// kernel closes its connection.
func (h Heartbeat) DetectionBound() time.Duration {
	h, _ = h.withDefaults()
	return h.DeadAfter + h.Interval/4
}

// memberMsg is a line from a member to the coordinator.
type memberMsg struct {
	// Type: "hello" (Member is its id), "beat", "failed" (its link of
	// Epoch broke, or it left it to let a member join; Point is the first
	// point it had not finished, Addr where its new endpoint listens),
	// "join" (a member that joins late: Addr as for failed), "rebuilt"
	// (connected the world of Epoch), "done" (finished; its connection
	// closing is no death).
	Type   string   `json:"type"`
	Member int      `json:"member,omitempty"`
	Epoch  int      `json:"epoch,omitempty"`
	Point  int      `json:"point,omitempty"`
	Addr   joinAddr `json:"addr"`
	Cause  string   `json:"cause,omitempty"`
}

// coordMsg is a line from the coordinator to a member.
type coordMsg struct {
	// Type: "stop" (epoch Epoch is over: abort its link), "rebuild"
	// (connect world Epoch as Rank of len(Peers)), "abort" (too few
	// survivors; Reason says why), "grow" (a member waits to join: leave
	// world Epoch at a point boundary and report, as after a failure),
	// "beat" (the coordinator is there).
	Type  string `json:"type"`
	Epoch int    `json:"epoch"`
	Rank  int    `json:"rank,omitempty"`
	// Members are the member ids of the new world's ranks, in rank order.
	Members []int      `json:"members,omitempty"`
	Peers   []joinAddr `json:"peers,omitempty"`
	Session Session    `json:"session"`
	Point   int        `json:"point,omitempty"`
	// Failed are the members lost in the epoch that ended, with Causes;
	// Joined those that joined late.
	Failed []int    `json:"failed,omitempty"`
	Joined []int    `json:"joined,omitempty"`
	Causes []string `json:"causes,omitempty"`
	// Agreed is how long after the epoch's first sign of failure every
	// survivor had reported (the agreement's duration).
	Agreed time.Duration `json:"agreed_ns,omitempty"`
	Reason string        `json:"reason,omitempty"`
}

func decodeMemberMsg(b []byte) (memberMsg, error) {
	var m memberMsg
	if err := strictJSON(b, &m); err != nil {
		return m, fmt.Errorf("membership: %w", err)
	}
	switch m.Type {
	case "hello":
		if m.Member < 0 || m.Member >= maxWorld {
			return m, fmt.Errorf("membership: hello from member %d", m.Member)
		}
	case "beat", "done":
	case "failed", "rebuilt", "join":
		if m.Epoch < 0 || m.Point < 0 {
			return m, fmt.Errorf("membership: %s for epoch %d, point %d", m.Type, m.Epoch, m.Point)
		}
		if len(m.Addr.Host) > maxAddrLen || len(m.Cause) > maxCauseLen {
			return m, errors.New("membership: address or cause too long")
		}
	default:
		return m, fmt.Errorf("membership: unknown message %q", m.Type)
	}
	return m, nil
}

func decodeCoordMsg(b []byte) (coordMsg, error) {
	var m coordMsg
	if err := strictJSON(b, &m); err != nil {
		return m, fmt.Errorf("membership: %w", err)
	}
	switch m.Type {
	case "stop", "abort", "grow", "beat":
	case "rebuild":
		n := len(m.Peers)
		if n < 1 || n > maxWorld || m.Rank < 0 || m.Rank >= n || len(m.Members) != n || m.Point < 0 || m.Epoch < 1 {
			return m, fmt.Errorf("membership: rebuild as rank %d of %d peers, %d members, point %d", m.Rank, n, len(m.Members), m.Point)
		}
		if len(m.Causes) != len(m.Failed) {
			return m, errors.New("membership: rebuild: failed members and causes differ in number")
		}
	default:
		return m, fmt.Errorf("membership: unknown message %q", m.Type)
	}
	return m, nil
}

func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

// lineReader returns a scanner of membership lines of at most max bytes
// from r: a longer one ends the scan with bufio.ErrTooLong, having
// allocated no more than max.
func lineReader(r *bufio.Reader, max int) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(4096, max)), max)
	return sc
}
