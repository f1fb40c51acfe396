package sim

import (
	"fmt"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
)

// In-network reduction on the flow model (see Flow). A switch operation
// is carried by the group's switch (switchFor) as two tree flows: the
// contributions up, as one flow over the union of the edges of the
// contributors' routes to the switch, and the result down, as one flow
// over the union of the edges of the switch's routes to the receivers.

// flowSwitch is a switch operation on the flow model: its switch, and
// the message-like record its flows carry (no rank sends it: Src and Dst
// are -1).
type flowSwitch struct {
	n    *flowNet
	op   *SwitchOp
	node int  // the reducing switch
	up   bool // the flow up (the contributions) rather than down
	m    Message
}

// switchChoice is a group's switch, cached.
type switchChoice struct {
	group []int
	node  int // -1: none
}

// CanSwitchReduce implements SwitchNetwork: a reducing switch that every
// member reaches and that reaches every member.
func (n *flowNet) CanSwitchReduce(group []int) bool { return n.switchFor(group) >= 0 }

// switchFor returns the switch that reduces for group, or -1 if none
// does: of the reducing switches (Node.Reduce > 0) that the device of
// every member reaches, and that reaches every member's device, over
// links that have not failed, the nearest: the one whose largest routing
// cost from a member's device to it and back is least, then whose sum of
// those costs is least, then of the lowest node index.
func (n *flowNet) switchFor(group []int) int {
	key := switchKey(group, 0)
	for _, c := range n.switches[key] {
		if slices.Equal(c.group, group) {
			return c.node
		}
	}
	best, bestMax, bestSum := -1, int64(0), int64(0)
	for id, nd := range n.topo.nodes {
		if !(nd.Reduce > 0) {
			continue
		}
		up := n.rt.distToNode(id)
		worst, sum := int64(0), int64(0)
		for _, r := range group {
			dev := n.dev[r]
			a, b := up[n.topo.devices[dev]], n.rt.distTo(dev).at(id)
			if a == unreachable || b == unreachable {
				worst = -1
				break
			}
			worst = max(worst, int64(a)+int64(b))
			sum += int64(a) + int64(b)
		}
		if worst >= 0 && (best < 0 || worst < bestMax || (worst == bestMax && sum < bestSum)) {
			best, bestMax, bestSum = id, worst, sum
		}
	}
	if n.switches == nil {
		n.switches = map[uint64][]switchChoice{}
	}
	n.switches[key] = append(n.switches[key], switchChoice{group: slices.Clone(group), node: best})
	return best
}

// PostSwitch implements SwitchNetwork: once every member has posted, the
// contributions go up as one flow.
func (n *flowNet) PostSwitch(op *SwitchOp, _ int) {
	if !op.Complete() {
		return
	}
	node := n.switchFor(op.Group)
	if node < 0 { // links failed since the members posted
		n.e.SwitchFailed(op, fmt.Errorf("sim: switch reduction among ranks %s (tag %d) at %v: %w", groupText(op.Group), op.Tag, n.e.Now(), ErrNoSwitch))
		return
	}
	n.startSwitch(&flowSwitch{n: n, op: op, node: node, up: true})
}

// startSwitch starts sw's flow, or fails its operation if a member can
// no longer reach the switch.
func (n *flowNet) startSwitch(sw *flowSwitch) {
	r := n.switchRoute(sw)
	if r == nil {
		n.e.SwitchFailed(sw.op, n.switchCut(sw, ""))
		return
	}
	now := n.e.Now()
	sw.m = Message{Src: -1, Dst: -1, Tag: sw.op.Tag, Bytes: sw.op.Bytes, ID: sw.op.ID, Posted: now, wire: sw.op.Bytes, latFac: 1, bwFac: 1}
	f := n.alloc()
	f.m, f.route, f.seq, f.sw = &sw.m, r, n.seq, sw
	n.seq++
	f.rem, f.rate, f.counted, f.since = sw.m.wireVolume(), 0, 0, now
	f.sending, f.dropped, f.latent = true, false, false
	f.lidx = len(n.live)
	n.live = append(n.live, f)
	if n.latencyFirst && r.latency > 0 {
		f.sending, f.latent = false, true
		n.e.At(now+r.latency, f)
		return
	}
	n.attach(f, nil)
}

// switchRoute is the tree of sw's flow: the union of the edges of the
// routes between the switch and the members it goes to or from, each
// edge once, in index order; its latency is the longest of those
// routes'. nil if a route is missing.
func (n *flowNet) switchRoute(sw *flowSwitch) *flowRoute {
	// Operations of one group at one switch go the same ways again and
	// again (a chunk after another): their routes are kept, by the ranks
	// at the far end, until a link fails (clearRoutes).
	op := sw.op
	n.swMembers = n.swMembers[:0]
	for i, rank := range op.Group {
		if (sw.up && op.Contributes(i)) || (!sw.up && op.Receives(i)) {
			n.swMembers = append(n.swMembers, rank)
		}
	}
	key := switchKey(n.swMembers, algos.Tag(sw.node)<<1|algos.Tag(b2u(sw.up)))
	for _, c := range n.swRoutes[key] {
		if c.node == sw.node && c.up == sw.up && slices.Equal(c.members, n.swMembers) {
			return c.route
		}
	}
	r := n.buildSwitchRoute(sw)
	if r != nil {
		if n.swRoutes == nil {
			n.swRoutes = map[uint64][]swRoute{}
		}
		n.swRoutes[key] = append(n.swRoutes[key], swRoute{node: sw.node, up: sw.up, members: slices.Clone(n.swMembers), route: r})
	}
	return r
}

// swRoute is a kept route of switch operations: to or from switch node
// (up: to it) for members.
type swRoute struct {
	node    int
	up      bool
	members []int
	route   *flowRoute
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// buildSwitchRoute computes switchRoute's route.
func (n *flowNet) buildSwitchRoute(sw *flowSwitch) *flowRoute {
	op := sw.op
	r := &flowRoute{}
	var path []int32
	for i, rank := range op.Group {
		var p []int32
		switch {
		case sw.up && op.Contributes(i):
			p = n.rt.routeToNode(n.dev[rank], sw.node)
		case !sw.up && op.Receives(i):
			p = n.rt.routeFromNode(sw.node, n.dev[rank])
		default:
			continue
		}
		if p == nil {
			return nil
		}
		var lat Time
		for _, e := range p {
			lat += n.topo.edges[e].Latency
		}
		r.latency = max(r.latency, lat)
		path = append(path, p...)
	}
	slices.Sort(path)
	r.path = slices.Compact(path)
	r.cons = n.finite(r.cons, r.path)
	r.weight = n.weight(r.latency)
	return r
}

// switchCut is the error of sw's operation when a member lost its route
// to or from the switch (link names the failed link, if it was under
// way).
func (n *flowNet) switchCut(sw *flowSwitch, link string) error {
	dir := "from the contributors to"
	if !sw.up {
		dir = "to the receivers from"
	}
	s := fmt.Sprintf("sim: switch reduction among ranks %s (tag %d) lost at %v: no path left %s switch %s",
		groupText(sw.op.Group), sw.op.Tag, n.e.Now(), dir, n.topo.nodes[sw.node].Name)
	if link != "" {
		s += " (link " + link + " failed)"
	}
	return fmt.Errorf("%s", s)
}

// switchFlowDone takes sw's flow, delivered: the contributions have all
// reached the switch, which reduces them and sends the result down; or
// the result has reached every receiver.
func (n *flowNet) switchFlowDone(sw *flowSwitch) {
	op := sw.op
	if !sw.up {
		for i := range op.Group {
			if op.Receives(i) {
				n.e.SwitchDelivered(op, i)
			}
		}
		return
	}
	for i := range op.Group {
		if op.Contributes(i) {
			n.e.SwitchArrived(op, i)
		}
	}
	if !op.Ready() {
		return
	}
	down := &flowSwitch{n: n, op: op, node: sw.node}
	d := TransferTime((op.Contributors()-1)*op.Bytes, n.topo.nodes[sw.node].Reduce)
	if d == 0 {
		down.Fire()
		return
	}
	n.e.At(n.e.Now()+d, down)
}

// Fire starts the flow down, the switch having reduced.
func (sw *flowSwitch) Fire() {
	if sw.op.Failed() {
		return
	}
	for i := range sw.op.Group {
		if sw.op.Receives(i) {
			sw.n.startSwitch(sw)
			return
		}
	}
}
