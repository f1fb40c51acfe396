package sim

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// In-network reduction. A switch operation (algos.SwitchReducer) is
// matched by the engine and carried by the network. The engine pairs the
// operations the members of a group post: the k-th operation a rank posts
// on (group, tag) is the k-th of every member, whenever each posts it. It
// tells the network of each member's part as the member posts it
// (SwitchNetwork.PostSwitch); the network says when each contribution
// reaches the switch (Engine.SwitchArrived) and, once every member has
// posted and every contribution has arrived, when the result reaches each
// receiving member (Engine.SwitchDelivered). With host data
// (Config.HostData) the engine copies each contribution when it is
// posted, reduces them in ascending rank order when the result is first
// delivered (device.ReduceHost: the same bytes whatever the timing), and
// copies the result into each receiver's buffer as it is delivered.
//
// A member that fails (a RankFailure) before it has posted, or before its
// contribution has reached the switch, fails the operation: every member's
// request that is not complete fails with its *RankFailedError, now or
// when it posts. A member that returns with an error without having
// posted fails it with a *PeerExitedError. A member that returns without
// error and without posting leaves the others waiting: the run ends in a
// *DeadlockError that names the operation and the ranks that did not
// post it.

// SwitchNetwork is implemented by networks whose switches reduce and
// multicast (algos.SwitchReducer): AlphaBeta with a SwitchBandwidth, Flow
// on a topology with reducing switches (Node.Reduce). Decorators forward
// it; a network without it has no such switch.
//
// The engine calls PostSwitch(op, i) as member i of op (rank op.Group[i])
// posts its part, in the order the members post, only for groups
// CanSwitchReduce accepts, and never once op has failed. The network
// must then call e.SwitchArrived(op, i) once for each contributing member
// i, when its contribution reaches the switch, and, once op.Ready(), call
// e.SwitchDelivered(op, j) once for each receiving member j, when the
// result reaches it; or e.SwitchFailed if it cannot carry op. It stops
// carrying an op that has Failed.
type SwitchNetwork interface {
	// CanSwitchReduce reports whether a switch reduces for the ranks of
	// group (ascending, in the world).
	CanSwitchReduce(group []int) bool
	// PostSwitch tells the network that member i of op has posted its
	// part, now.
	PostSwitch(op *SwitchOp, i int)
}

// ErrNoSwitch is what a switch operation fails with (wrapped, with the
// group) on a network that has no switch that reduces for its group.
var ErrNoSwitch = errors.New("the network has no switch that reduces for the group")

// SwitchOp is one in-network reduction among a group of ranks, as the
// engine matches it and a network carries it. Members are numbered by
// their place in Group.
type SwitchOp struct {
	// ID numbers the run's switch operations in the order their first
	// member posted them, from 0.
	ID int64
	// Group are the ranks of the operation, ascending. Networks must not
	// modify it.
	Group []int
	Tag   algos.Tag
	// Bytes is the size of each contribution and of the result.
	Bytes int

	e       *Engine
	dt      device.DType
	op      device.Op
	members []switchMember
	// posted, contributors, receivers, arrived count members; done the
	// members whose request completed.
	posted, contributors, receivers, arrived, done int
	err                                            error
	lidx                                           int // index in Engine.swLive, -1 once finished
	result                                         []byte
	reduced                                        bool
}

// switchMember is one member's part in a switch operation.
type switchMember struct {
	posted, send, recv bool
	arrived, done      bool
	data               []byte        // a private copy of a host contribution
	buf                device.Buffer // where the result goes
	req                *request
}

// Complete reports whether every member has posted its part.
func (o *SwitchOp) Complete() bool { return o.posted == len(o.members) }

// Failed reports whether the operation failed: the network stops
// carrying it.
func (o *SwitchOp) Failed() bool { return o.err != nil }

// Contributes reports whether member i contributes (it posted a send
// buffer).
func (o *SwitchOp) Contributes(i int) bool { return o.members[i].send }

// Receives reports whether member i receives the result (it posted a
// receive buffer).
func (o *SwitchOp) Receives(i int) bool { return o.members[i].recv }

// Contributors is the number of members that contributed so far: of all
// of them once the operation is Complete.
func (o *SwitchOp) Contributors() int { return o.contributors }

// Arrived is the number of contributions that have reached the switch.
func (o *SwitchOp) Arrived() int { return o.arrived }

// Ready reports whether the switch may reduce: every member has posted,
// every contribution has arrived, and the operation has not failed.
func (o *SwitchOp) Ready() bool {
	return o.Complete() && o.arrived == o.contributors && o.err == nil
}

// switchQueue matches the operations of one (group, tag): ops[k-base] is
// the k-th; count[i] is how many member i posted.
type switchQueue struct {
	group []int
	tag   algos.Tag
	ops   []*SwitchOp
	base  int64
	count []int64
}

// switchKey hashes (group, tag) for the engine's queues: FNV-1a over
// whole words rather than bytes, one multiply a rank, since every member
// of every operation hashes its group (72 ranks for an NVLink domain of
// GB200 NVL72).
func switchKey(group []int, tag algos.Tag) uint64 {
	h := (uint64(14695981039346656037) ^ uint64(tag)) * 1099511628211
	for _, r := range group {
		h = (h ^ uint64(r)) * 1099511628211
		h ^= h >> 31
	}
	return h
}

// checkGroup reports a group that is not ranks of the world, ascending,
// with rank among them.
func checkGroup(rank, world int, group []int) error {
	for i, g := range group {
		switch {
		case g < 0 || g >= world:
			return fmt.Errorf("group %s names rank %d, outside the world of %d ranks", groupText(group), g, world)
		case i > 0 && g <= group[i-1]:
			return fmt.Errorf("group %s is not ascending", groupText(group))
		}
	}
	if _, ok := slices.BinarySearch(group, rank); !ok {
		return fmt.Errorf("group %s does not hold rank %d", groupText(group), rank)
	}
	return nil
}

// groupText writes a group for messages, shortened when long.
func groupText(group []int) string {
	if len(group) > 16 {
		return fmt.Sprintf("[%d ranks from %d to %d]", len(group), group[0], group[len(group)-1])
	}
	s := make([]string, len(group))
	for i, g := range group {
		s[i] = strconv.Itoa(g)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// switchNet returns the network's SwitchNetwork if it reduces for group,
// and otherwise the error a request fails with.
func (e *Engine) switchNet(rank int, group []int) (SwitchNetwork, error) {
	if err := checkGroup(rank, e.ranks.len(), group); err != nil {
		return nil, fmt.Errorf("sim: rank %d: switch reduction: %w", rank, err)
	}
	if sn, ok := e.net.(SwitchNetwork); ok && sn.CanSwitchReduce(group) {
		return sn, nil
	}
	return nil, fmt.Errorf("sim: rank %d: switch reduction among ranks %s: %w", rank, groupText(group), ErrNoSwitch)
}

// switchBytes checks one member's buffers and returns the operation's
// size.
func switchBytes(rank int, send, recv device.Buffer, dt device.DType, op device.Op) (int, error) {
	if !slices.Contains(device.DTypes(), dt) || !slices.Contains(device.Ops(), op) {
		return 0, fmt.Errorf("sim: rank %d: switch reduction with dtype %v and op %v", rank, dt, op)
	}
	var n int
	switch {
	case send == nil && recv == nil:
		return 0, fmt.Errorf("sim: rank %d: switch reduction with neither a buffer to send nor one to receive", rank)
	case send != nil && recv != nil && send.Len() != recv.Len():
		return 0, fmt.Errorf("sim: rank %d: switch reduction sends %d bytes and receives %d", rank, send.Len(), recv.Len())
	case send != nil:
		n = send.Len()
	default:
		n = recv.Len()
	}
	if n%dt.Size() != 0 {
		return 0, fmt.Errorf("sim: rank %d: switch reduction of %d bytes is not a whole number of %v elements", rank, n, dt)
	}
	return n, nil
}

// postSwitch posts req, rank r's part in a switch operation among group
// (see algos.SwitchReducer): it fails at once if the network has no
// switch for group or the buffers are wrong, and otherwise joins the
// operation it matches.
func (r *rank) postSwitch(req *request, group []int, tag algos.Tag, send, recv device.Buffer, dt device.DType, op device.Op) {
	e := r.e
	if r.crashed {
		req.complete(errAborted)
		return
	}
	sn, err := e.switchNet(r.id(), group)
	if err == nil {
		req.bytes, err = switchBytes(r.id(), send, recv, dt, op)
	}
	if err != nil {
		req.complete(err)
		return
	}
	o, i := e.matchSwitch(group, tag, r.id())
	req.extra().sw = o
	m := &o.members[i]
	m.posted, m.req, m.send, m.recv = true, req, send != nil, recv != nil
	if o.posted == 0 {
		o.Bytes, o.dt, o.op = req.bytes, dt, op
	}
	o.posted++
	switch {
	case o.err != nil:
		o.finish(i, o.err)
		return
	case req.bytes != o.Bytes || dt != o.dt || op != o.op:
		o.fail(fmt.Errorf("sim: switch reduction among ranks %s (tag %d): rank %d posted %d bytes of %v by %v, rank %d %d bytes of %v by %v",
			groupText(o.Group), tag, o.Group[firstPosted(o, i)], o.Bytes, o.dt, o.op, r.id(), req.bytes, dt, op))
		return
	}
	if m.send {
		o.contributors++
		if h, ok := device.HostBytes(send); ok && e.hostData {
			m.data = append([]byte(nil), h...)
		}
	}
	if m.recv {
		o.receivers++
		m.buf = recv
	}
	if o.Complete() && o.contributors == 0 {
		o.fail(fmt.Errorf("sim: switch reduction among ranks %s (tag %d): no rank contributes", groupText(o.Group), tag))
		return
	}
	sn.PostSwitch(o, i)
}

// firstPosted is a member other than i that has posted, for an error
// message: o's figures are those of its first member to post.
func firstPosted(o *SwitchOp, i int) int {
	for j := range o.members {
		if j != i && o.members[j].posted {
			return j
		}
	}
	return i
}

// matchSwitch returns the operation that rank's next post on (group, tag)
// joins, and rank's place in it, creating it if rank is its first member
// to post.
func (e *Engine) matchSwitch(group []int, tag algos.Tag, rank int) (*SwitchOp, int) {
	if e.swQueues == nil {
		e.swQueues = map[uint64][]*switchQueue{}
	}
	key := switchKey(group, tag)
	var q *switchQueue
	for _, x := range e.swQueues[key] {
		if x.tag == tag && slices.Equal(x.group, group) {
			q = x
			break
		}
	}
	if q == nil {
		g := slices.Clone(group)
		q = &switchQueue{group: g, tag: tag, count: make([]int64, len(g))}
		e.swQueues[key] = append(e.swQueues[key], q)
	}
	i, _ := slices.BinarySearch(q.group, rank)
	k := q.count[i] - q.base
	q.count[i]++
	if int(k) == len(q.ops) {
		o := &SwitchOp{ID: e.swIDs, Group: q.group, Tag: tag, e: e, members: make([]switchMember, len(q.group)), lidx: len(e.swLive)}
		e.swIDs++
		e.swLive = append(e.swLive, o)
		q.ops = append(q.ops, o)
		// A member that is gone will never post.
		for j, g := range q.group {
			if err := e.gone(g); err != nil && j != i {
				o.err = err
				break
			}
		}
	}
	o := q.ops[k]
	if o.posted == len(o.members)-1 {
		// rank completes it: ops complete in order, so it is the first.
		q.ops[0] = nil
		q.ops = q.ops[1:]
		q.base++
		if len(q.ops) == 0 {
			e.forgetSwitchQueue(key, q)
		}
	}
	return o, i
}

// forgetSwitchQueue drops q, whose operations are all matched: every
// member posted as many as the others, so a new queue starting from 0
// matches the same.
func (e *Engine) forgetSwitchQueue(key uint64, q *switchQueue) {
	list := e.swQueues[key]
	i := slices.Index(list, q)
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		delete(e.swQueues, key)
		return
	}
	e.swQueues[key] = list
}

// gone returns the error of a rank that will post nothing more: it
// failed, or returned with an error; nil otherwise.
func (e *Engine) gone(rank int) error {
	r := e.ranks.at(rank)
	switch {
	case r.crashed:
		return r.rare.crashErr
	case r.exited && r.exitErr() != nil:
		return &PeerExitedError{Peer: rank, Err: rootCause(r.exitErr())}
	}
	return nil
}

// rootCause is the root cause of a rank's error: its own, or that of the
// PeerExitedError it returned.
func rootCause(err error) error {
	var pe *PeerExitedError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fail fails o with err: every member's request that is not complete
// fails, now or when the member posts; the network stops carrying it.
func (o *SwitchOp) fail(err error) {
	if o.err != nil {
		return
	}
	o.err = err
	for i := range o.members {
		if m := &o.members[i]; m.posted && !m.done {
			o.finish(i, err)
		}
	}
}

// finish completes member i's request with err.
func (o *SwitchOp) finish(i int, err error) {
	m := &o.members[i]
	if m.done {
		return
	}
	m.done = true
	o.done++
	if o.done == len(o.members) {
		o.e.dropSwitch(o)
	}
	m.req.complete(err)
}

// dropSwitch forgets o, whose members' requests all completed.
func (e *Engine) dropSwitch(o *SwitchOp) {
	last := len(e.swLive) - 1
	e.swLive[o.lidx] = e.swLive[last]
	e.swLive[o.lidx].lidx = o.lidx
	e.swLive[last] = nil
	e.swLive = e.swLive[:last]
	o.lidx = -1
	o.result = nil
	for i := range o.members {
		o.members[i].data, o.members[i].buf = nil, nil
	}
}

// failSwitchMember fails the live operations that rank, which will post
// nothing more, has not posted; and, if it failed (crashed), those whose
// contribution it has not delivered to the switch. They fail with err,
// in the order they were created.
func (e *Engine) failSwitchMember(rank int, err error, crashed bool) {
	var hit []*SwitchOp
	for _, o := range e.swLive {
		if o.err != nil {
			continue
		}
		i, ok := slices.BinarySearch(o.Group, rank)
		if !ok {
			continue
		}
		if m := &o.members[i]; !m.posted || (crashed && m.send && !m.arrived) {
			hit = append(hit, o)
		}
	}
	slices.SortFunc(hit, func(a, b *SwitchOp) int { return cmpInt64(a.ID, b.ID) })
	for _, o := range hit {
		o.fail(err)
	}
}

// SwitchArrived tells the engine that member i's contribution to op has
// reached the switch: a member that does not receive is done.
func (e *Engine) SwitchArrived(op *SwitchOp, i int) {
	m := &op.members[i]
	m.arrived = true
	op.arrived++
	if op.err == nil && !m.recv {
		op.finish(i, nil)
	}
}

// SwitchDelivered tells the engine that the result of op has reached
// member i: with host data it is copied into the member's buffer, and the
// member is done.
func (e *Engine) SwitchDelivered(op *SwitchOp, i int) {
	if op.err != nil {
		return
	}
	m := &op.members[i]
	if h, ok := device.HostBytes(m.buf); ok {
		if res := op.reduce(); res != nil {
			copy(h, res)
		}
	}
	op.finish(i, nil)
}

// SwitchFailed tells the engine that the network cannot carry op: it
// fails with err.
func (e *Engine) SwitchFailed(op *SwitchOp, err error) { op.fail(err) }

// reduce returns the reduction of the host contributions, in ascending
// rank order, computing it the first time; nil if a contribution has no
// bytes (phantom data).
func (o *SwitchOp) reduce() []byte {
	if o.reduced {
		return o.result
	}
	o.reduced = true
	var res []byte
	for i := range o.members {
		m := &o.members[i]
		if !m.send {
			continue
		}
		switch {
		case m.data == nil:
			return nil
		case res == nil:
			res = slices.Clone(m.data)
		default:
			device.ReduceHost(res, m.data, o.dt, o.op)
		}
	}
	o.result = res
	return res
}

// wait describes member i's wait for a deadlock report.
func (o *SwitchOp) wait(bytes int) Wait {
	w := Wait{Switch: true, Peer: -1, Group: o.Group, Tag: o.Tag, Bytes: bytes}
	for i := range o.members {
		if !o.members[i].posted {
			w.Missing = append(w.Missing, o.Group[i])
		}
	}
	return w
}

// switchWait is the text of a Wait on a switch operation.
func switchWait(w Wait) string {
	s := fmt.Sprintf("switch reduction among ranks %s (tag %d, %d bytes)", groupText(w.Group), w.Tag, w.Bytes)
	switch len(w.Missing) {
	case 0:
		return s + ", posted by every rank"
	case 1:
		return fmt.Sprintf("%s, which rank %d has not posted", s, w.Missing[0])
	}
	return fmt.Sprintf("%s, which ranks %s have not posted", s, groupText(w.Missing))
}

// CanSwitchReduce implements algos.SwitchReducer.
func (l *simLink) CanSwitchReduce(group []int) bool {
	_, err := l.r.e.switchNet(l.r.id(), group)
	return err == nil
}

// ISwitchReduce implements algos.SwitchReducer (see SwitchNetwork for
// what the networks make of it).
func (l *simLink) ISwitchReduce(group []int, tag algos.Tag, send, recv device.Buffer, dt device.DType, op device.Op) algos.Request {
	r := l.r
	req := r.e.newRequest(r, reqRecv, -1, tag, 0)
	r.postSwitch(&req.request, group, tag, send, recv, dt, op)
	return req
}
