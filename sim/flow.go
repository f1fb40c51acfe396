package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Flow is the flow-level network model (model = "flow"): each message is a
// flow along its route through a Topology, and flows that cross the same
// edge share its bandwidth max-min fairly.
//
// Exactly:
//
//   - Slots. A rank sends at most SendSlots messages at a time and receives
//     at most RecvSlots (both 1 by default, as alpha-beta's single egress
//     and ingress ports). A message holds one slot at its sender and one
//     at its receiver from the moment it starts until it is delivered,
//     latency included. A sender's messages ask for their receiver's slot
//     in the order they were posted, as many at once as the sender has free
//     slots; a message starts as soon as it gets one. When several
//     messages ask for a receiver's free slot, the one that asked first
//     gets it, ties to the lower sender rank (alpha-beta's arbitration,
//     done once all events of an instant have run). A negative slot count
//     is unlimited: with RecvSlots < 0 messages never wait for their
//     receiver and concurrent arrivals share its ejection link instead.
//   - Route. A started message follows Topology's route from its sender's
//     device to its receiver's (see Topology); ranks map to devices by
//     Placement. If no route is left (failed links) the message fails with
//     a *PathCutError when it would start.
//   - Bandwidth phase. From its start the flow moves its bytes at a rate
//     that is recomputed whenever a flow starts or ends its bandwidth
//     phase (or a link changes), and only for the flows connected to it
//     through shared edges: the max-min fair share by progressive filling
//     over the finite-capacity edges of their paths (raise all rates
//     together; a flow stops rising when one of its edges is full; ties
//     between equally loaded edges go to the lower edge index). Endpoint
//     links (a device's NIC, a crossbar port) are edges like any other, so
//     they bound a flow's rate as alpha-beta's ports do.
//   - Delivery. When its last byte is sent, the flow leaves its edges and
//     the message is delivered after the sum of the latencies of the
//     path's edges; then its slots free.
//   - Time. Virtual time stays integer picoseconds. Each flow keeps its
//     remaining bytes as a float64; when its rate changes at time t the
//     bytes sent since the last change are subtracted, and its end is set
//     to t + round(remaining * 1e12 / rate) picoseconds (the rounding of
//     TransferTime). A flow whose rate does not change keeps its end, so a
//     flow that never shares finishes exactly TransferTime(bytes, rate)
//     after it started. Flows ending at the same picosecond end in the
//     order they started. Nothing depends on map order.
//   - Reductions take bytes/ReduceBandwidth of the rank's compute, as in
//     alpha-beta.
//   - In-network reduction (algos.SwitchReducer). The switch of a group
//     is, of the switches that reduce (Node.Reduce > 0, see
//     Topology.SetReduce) that every member's device reaches and that
//     reach every member's device over links that have not failed, the
//     nearest: the one whose largest routing cost from a member's device
//     to it and back is least, then whose sum of those costs is least,
//     then of the lowest node index. A group with none cannot reduce in
//     the network: CanSwitchReduce is false and requests fail with
//     ErrNoSwitch. An operation of s bytes with c contributors starts once
//     every member has posted (a switch cannot reduce before it has all
//     its operands): the contributions go up as one flow of s bytes over
//     the union of the edges of the contributors' routes to the switch,
//     each edge carrying s once (in-network aggregation), sharing links
//     max-min with the other flows as any flow does and holding no slot;
//     its latency is the longest of those routes'. Once it is delivered
//     every contribution has reached the switch, which reduces them in
//     (c-1)s/Reduce (rounded as TransferTime; 0 for Reduce = +Inf), then
//     sends the result down as one flow of s bytes over the union of the
//     edges of its routes to the receivers, whose latency is the longest
//     of those routes'; every receiver has the result when it is
//     delivered. Result.Links counts each tree flow as one message of s
//     bytes on every edge of its tree. Alone on the network an operation
//     so takes
//     L_up + s/B_up + (c-1)s/R + L_down + s/B_down, each B the narrowest
//     edge of its tree: on a Crossbar whose switch reduces (latency on the
//     uplinks), L + 2s/B + (c-1)s/R. A tree that a failed link crosses
//     moves to the routes left, or fails its operation with an error
//     naming the link.
//
// So on a Crossbar with the default slots every message holds its
// sender's uplink and its receiver's downlink alone, at the port
// bandwidth, for Latency + bytes/Bandwidth: the flow model gives
// alpha-beta's times for every algorithm (FlowCrossbar). Contention shows
// where routes share inner links (an oversubscribed fat tree, a torus),
// and at the endpoints once slots are raised: with RecvSlots = -1, an
// incast of p-1 messages of m bytes all arrive at L + (p-1)m/B instead of
// one every L + m/B.
type Flow struct {
	// Topology is the network (key "topology" and its keys).
	Topology TopologySpec
	// Placement maps rank r to device Placement[r] (key "placement");
	// nil puts rank r on device r.
	Placement Placement
	// ReduceBandwidth is 1/gamma in bytes per second (key
	// "reduce_bandwidth"); 0 or +Inf makes reductions free.
	ReduceBandwidth float64
	// SendSlots is how many messages a rank may send at once (key
	// "send_slots"); 0 means 1, as alpha-beta; negative is unlimited.
	SendSlots int
	// RecvSlots is how many messages a rank may receive at once (key
	// "recv_slots"); 0 means 1, as alpha-beta; negative is unlimited.
	RecvSlots int
	// Sharing is how flows share a link (key "sharing").
	Sharing Sharing

	// work, when not nil, is told the flows and edges each max-min pass
	// visits, and searches each search of the routes (a pass over the
	// topology, see router.distToNode), for the time estimate
	// (EstimateRun).
	work, searches *int64
}

// Sharing is how the flow model shares links between flows.
type Sharing uint8

const (
	// MaxMin is plain max-min fairness (sharing = "max_min", the
	// default): every flow on a full link gets the same share, and a
	// message pays its route's latency after its last byte is sent.
	MaxMin Sharing = iota
	// LatencyWeighted is SimGrid's CM02 model (sharing =
	// "latency_weighted"): a message first pays its route's latency,
	// then moves its bytes, and max-min shares are weighted by the
	// inverse of the route's latency, so a flow on a route of half the
	// latency gets twice the share (the throughput of TCP, whose window
	// grows once per round trip). A route of zero latency weighs as one
	// of a second, as in SimGrid. On routes of equal latency the times
	// are MaxMin's.
	LatencyWeighted
)

var sharingNames = []string{"max_min", "latency_weighted"}

func (s Sharing) String() string {
	if int(s) < len(sharingNames) {
		return sharingNames[s]
	}
	return fmt.Sprintf("sharing(%d)", uint8(s))
}

// ParseSharing returns the Sharing named s.
func ParseSharing(s string) (Sharing, error) {
	for i, n := range sharingNames {
		if n == s {
			return Sharing(i), nil
		}
	}
	return 0, fmt.Errorf("unknown sharing %q (want max_min or latency_weighted)", s)
}

// FlowCrossbar is the flow model on a crossbar with alpha-beta's
// parameters: what a scenario with model = "flow", topology = "crossbar"
// and only latency, bandwidth and reduce_bandwidth describes.
func FlowCrossbar(a AlphaBeta) Flow {
	return Flow{Topology: Crossbar{Bandwidth: a.Bandwidth, Latency: a.Latency}, ReduceBandwidth: a.ReduceBandwidth}
}

// NewNetwork implements Model; it panics if the model does not fit the
// world (Run calls NewNetworkChecked instead).
func (f Flow) NewNetwork(e *Engine) Network {
	n, err := f.NewNetworkChecked(e)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements CheckedModel.
func (f Flow) NewNetworkChecked(e *Engine) (Network, error) {
	if f.Topology == nil {
		return nil, errors.New("flow model: no topology")
	}
	if f.ReduceBandwidth < 0 || math.IsNaN(f.ReduceBandwidth) {
		return nil, fmt.Errorf("flow model: reduce bandwidth %g B/s must be positive", f.ReduceBandwidth)
	}
	t, err := f.Topology.Build(e.World())
	if err != nil {
		return nil, fmt.Errorf("flow model: %w", err)
	}
	place := f.Placement
	if place == nil {
		place = LinearPlacement(e.World())
	}
	if err := place.check(e.World(), t.NumDevices()); err != nil {
		return nil, fmt.Errorf("flow model on %s: %w", t.Name, err)
	}
	slots, rslots := f.SendSlots, f.RecvSlots
	if slots == 0 {
		slots = 1
	}
	if rslots == 0 {
		rslots = 1
	}
	if f.Sharing > LatencyWeighted {
		return nil, fmt.Errorf("flow model: %v", f.Sharing)
	}
	ne := len(t.edges)
	n := &flowNet{
		e: e, topo: t, rt: newRouter(t), dev: place, slots: slots, rslots: rslots, reduceBW: f.ReduceBandwidth,
		latencyFirst: f.Sharing == LatencyWeighted, work: f.work,
		edge:    make([]flowEdge, ne),
		fill:    make([]edgeFill, ne),
		binds:   make([]bool, ne),
		senders: make([]flowSender, e.World()), recvs: make([]flowRecv, e.World()),
	}
	for i := range n.recvs {
		rv := &n.recvs[i]
		rv.askers = rv.one[:0]
	}
	n.rt.searchCount = f.searches
	n.clearRoutes()
	if f.searches == nil && f.work == nil {
		n.shared = sharedRoutesFor(t, n.latencyFirst)
	}
	for i, ed := range t.edges {
		n.fill[i].capacity = ed.Bandwidth
	}
	n.wake.n = n
	return n, nil
}

// flowNet is the state of the flow model for one run.
type flowNet struct {
	e        *Engine
	topo     *Topology
	rt       *router
	dev      Placement
	slots    int // send slots per rank, < 0 unlimited
	rslots   int // receive slots per rank, < 0 unlimited
	reduceBW float64
	// latencyFirst is LatencyWeighted sharing: latency before bytes,
	// shares weighted by the inverse of the route's latency.
	latencyFirst bool
	work         *int64 // see Flow.work

	edge []flowEdge // per edge: its flows, account and bandwidth
	fill []edgeFill // per edge: what the component search and filling read
	// binds is set, per edge, when the edge fixed a flow in the last
	// refill of its component, or its flows or capacity changed since
	// (see recompute); an array of its own, that fill's records be 32
	// bytes, two to a cache line, none across two.
	binds  []bool
	failed []bool // edges that failed, nil until one does

	senders    []flowSender
	recvs      []flowRecv
	dirtyPorts []int        // receivers whose slots freed or gained an asker
	live       []*flowState // started, not yet delivered
	// routes caches each (source rank, destination rank) route: in rows
	// per source for worlds up to denseRoutes ranks, else in the
	// senders' near lists and a map (cachedRoute).
	routes   [][]*flowRoute
	routeMap map[uint64]*flowRoute
	// routeSlab holds the routes not yet handed out; pathBuf is the
	// router's scratch for a path, copied into its route.
	routeSlab []flowRoute
	pathBuf   []int32
	// shared is the routes this run shares with the process's others on
	// its topology (see sharedRoutes); nil once a link fails, or when
	// the run counts its searches.
	shared *sharedRoutes
	// swRoutes keeps the routes of switch operations (switchRoute);
	// swMembers is its scratch.
	swRoutes  map[uint64][]swRoute
	swMembers []int
	// switches caches the switch of each group of switch operations, by
	// switchKey (see switchFor).
	switches map[uint64][]switchChoice
	free     []*flowState
	seq      uint64
	// slotSlab holds the edges' first flow lists not yet handed out
	// (see flowSlots).
	slotSlab []*flowState

	ends   flowEnds // flows in their bandwidth phase, by end
	dirty  []int32  // edges whose set of flows or capacity changed
	wake   flowWake
	wakeAt Time
	armed  bool

	// progressive filling scratch
	epoch     uint32
	stack     []int32
	compFlows []*flowState
	compEdges []int32
	shares    shareHeap
	solos     []soloItem
	redo      []int32 // the dirty edges, for a whole refill after a region's
	pending   []int32
	boundary  []int32
	evs       []fixEvent
	popSeq    uint64 // counts the pops that fix a flow
	// regions, retries and wholes count the recomputes that kept their
	// first region's refill, a later region's, and those that refilled
	// the whole component (for tests).
	regions, retries, wholes int
}

// flowRoute is a path with what the model needs of it. A short route's
// path and cons live in its own buf, and cons is path itself when every
// edge is finite, so that a flow's start reads one object, not three.
type flowRoute struct {
	path    []int32 // every edge
	buf     [10]int32
	cons    []int32 // the edges of finite bandwidth
	latency Time
	// weight is a flow's weight in LatencyWeighted sharing: the inverse
	// of latency in seconds (1 for a route of zero latency).
	weight float64
}

type flowSender struct {
	queue  fifo[*Message] // posted, not yet asking
	asking int            // messages waiting for a receive slot
	active int            // messages started, not yet delivered
	// last is the route cache's entry for lastDst, the destination this
	// rank asked a route to last (a ring sends to one neighbour only).
	last    *flowRoute
	lastDst int
	// near are the routes this rank asked for first, up to nearRoutes,
	// in worlds too large for rows of routes (flowroutes.go): a
	// collective's rank sends to a few peers (halving-doubling to one
	// per step), found in a line or two here rather than in a map.
	near []nearRoute
}

type nearRoute struct {
	dst int
	r   *flowRoute
}

// flowRecv is a rank's receive side: its busy slots and the messages
// asking for one.
type flowRecv struct {
	askers askers // in one, until a second message asks at once
	one    [1]asker
	active int32
	dirty  bool
	_      [19]byte // a record is a cache line
}

// flowEdge is what the model keeps of an edge as it runs, in one cache
// line: what attach and detach read and write (its flows and its
// account). A flow's start and end touch each edge of its route once, so
// the account sits beside the flows rather than in an array of its own
// (one miss an edge, not two, when the run is larger than the caches);
// the edge array, a large allocation, starts on a page, so every record
// is one whole line. Its bandwidth is its edgeFill's capacity, its
// nominal bandwidth the topology's.
type flowEdge struct {
	flows    []*flowState // the flows on it, if it has finite bandwidth
	since    Time         // account: start of the present busy period
	busy     Time         // and the busy time before it
	bytes    float64
	messages int64
	active   int32 // flows in their bandwidth phase on it
	peak     int32
}

// edgeFill is what the component search and progressive filling read and
// write of an edge, 32 bytes, in an array of its own: a recompute visits
// every edge of every flow of its component, and this array of a
// 4096-host fat tree (under a MiB) stays in the caches where the edge
// records (64 bytes each) do not.
type edgeFill struct {
	capacity float64 // current bandwidth
	remCap   float64 // progressive filling: capacity not yet given out
	wsum     float64 // and the weights of the flows not yet fixed
	nflows   int32   // len(flowEdge.flows)
	mark     uint32  // component search mark, by epoch
}

type flowState struct {
	// What the component search reads comes first, in the first 64
	// bytes (not aligned to a cache line: a flow is 200 bytes, so it
	// spans at most two).
	mark   uint32
	frozen uint32
	soloEp uint32
	// shared has bit i set when cons[i] is crossed by another flow of
	// the component (as component found it in epoch mark; cons beyond
	// 64 edges count as shared).
	shared uint64
	// popKey, popEdge and popSeq are the pop that fixed the flow in the
	// last refill of its component: its key and edge, and a count that
	// orders the flows one pop fixes (see idle).
	popKey  float64
	popEdge int32
	popSeq  uint64
	// solo is, in the recompute of epoch soloEp, the least share of the
	// edges only this flow crosses (see recompute).
	solo    shareItem
	cons    []int32 // route.cons and route.weight, kept by attach where
	weight  float64 // recompute reads them without going to the route
	newRate float64

	n       *flowNet
	m       *Message
	seq     uint64
	route   *flowRoute
	pos     []int32 // index of the flow in edge[route.cons[i]].flows
	posBuf  [8]int32
	rate    float64
	rem     float64 // bytes left to send
	counted float64 // bytes already accounted on the edges of an earlier route
	since   Time
	end     Time
	// batch and hidx are the flow's place in ends: its batch and its
	// index in the batch's entries (hidx -1 when it is in none).
	batch   *endBatch
	hidx    int
	sending bool
	dropped bool
	// latent is set while a LatencyWeighted flow pays its latency,
	// before its bytes move.
	latent bool
	lidx   int // index in live
	// sw is set on the flow of a switch operation (m is then its
	// flowSwitch's), which no rank sends or receives.
	sw *flowSwitch
}

// Fire ends the flow's latency: it delivers the message, or, with
// LatencyWeighted sharing, starts its bytes.
func (f *flowState) Fire() {
	if f.latent {
		f.n.endLatency(f)
		return
	}
	f.n.deliver(f)
}

type flowWake struct{ n *flowNet }

func (w *flowWake) Fire() { w.n.wakeUp() }

func (n *flowNet) Post(m *Message) {
	s := &n.senders[m.Src]
	if s.queue.len() == 0 && (n.slots < 0 || s.active+s.asking < n.slots) {
		// What queueing m and taking it out again in tryStart does,
		// without the queue (one cache miss less a message at scale).
		n.ask(s, m)
		return
	}
	s.queue.push(m)
	n.tryStart(m.Src)
}

// tryStart lets src's queued messages ask for their receivers while it has
// free send slots; with unlimited receive slots they start at once.
func (n *flowNet) tryStart(src int) {
	s := &n.senders[src]
	for s.queue.len() > 0 && (n.slots < 0 || s.active+s.asking < n.slots) {
		n.ask(s, s.queue.pop())
	}
}

// ask lets m, from sender s with a free send slot, ask for its receiver,
// or start at once with unlimited receive slots.
func (n *flowNet) ask(s *flowSender, m *Message) {
	if n.rslots < 0 {
		n.start(m)
		return
	}
	s.asking++
	rv := &n.recvs[m.Dst]
	rv.askers = append(rv.askers, asker{at: n.e.Now(), m: m})
	n.markPort(m.Dst)
}

func (n *flowNet) markPort(r int) {
	if !n.recvs[r].dirty {
		n.recvs[r].dirty = true
		n.dirtyPorts = append(n.dirtyPorts, r)
	}
}

// arbitrate gives free receive slots to the messages asking for them:
// first asked first, ties to the lower sender.
func (n *flowNet) arbitrate() {
	for i := 0; i < len(n.dirtyPorts); i++ { // start may append
		rv := &n.recvs[n.dirtyPorts[i]]
		rv.dirty = false
		for len(rv.askers) > 0 && int(rv.active) < n.rslots {
			m := rv.askers.take()
			n.senders[m.Src].asking--
			if !n.start(m) {
				n.tryStart(m.Src)
			}
		}
	}
	n.dirtyPorts = n.dirtyPorts[:0]
}

// start puts m on its route, holding a send and a receive slot; it
// reports false, having dropped m, if no route is left.
func (n *flowNet) start(m *Message) bool {
	r := n.route(m.Src, m.Dst)
	if r == nil {
		n.e.Drop(m, &PathCutError{Src: m.Src, Dst: m.Dst, At: n.e.Now()})
		return false
	}
	n.recvs[m.Dst].active++
	f := n.alloc()
	f.m, f.route, f.seq = m, r, n.seq
	n.seq++
	f.rem, f.rate, f.counted, f.since = m.wireVolume(), 0, 0, n.e.Now()
	f.sending, f.dropped, f.latent = true, false, false
	n.senders[m.Src].active++
	f.lidx = len(n.live)
	n.live = append(n.live, f)
	n.e.Started(m)
	if n.latencyFirst {
		if lat := m.latency(r.latency); lat > 0 {
			f.sending, f.latent = false, true
			n.e.At(n.e.Now()+lat, f)
			return true
		}
	}
	n.attach(f, nil)
	return true
}

// endLatency starts the bytes of a LatencyWeighted flow whose latency is
// paid, on its route as it now is (a link may have failed meanwhile).
func (n *flowNet) endLatency(f *flowState) {
	f.latent = false
	if f.dropped {
		n.release(f)
		return
	}
	r := f.route
	if n.failed != nil {
		for _, e := range r.path {
			if n.failed[e] {
				if f.sw != nil {
					r = n.switchRoute(f.sw)
				} else {
					r = n.route(f.m.Src, f.m.Dst)
				}
				break
			}
		}
	}
	if r == nil && f.sw != nil {
		sw := f.sw
		n.release(f)
		n.e.SwitchFailed(sw.op, n.switchCut(sw, ""))
		return
	}
	if r == nil {
		m := f.m
		n.freeSlots(m)
		n.release(f)
		n.e.Drop(m, &PathCutError{Src: m.Src, Dst: m.Dst, At: n.e.Now()})
		n.tryStart(m.Src)
		return
	}
	f.route, f.sending, f.since = r, true, n.e.Now()
	n.attach(f, nil)
}

// attach puts a sending flow on the edges of its route. old is the route
// it leaves, if it is being moved: its message counts once per edge.
func (n *flowNet) attach(f *flowState, old *flowRoute) {
	now := n.e.Now()
	for _, e := range f.route.path {
		u := &n.edge[e]
		if u.active == 0 {
			u.since = now
		}
		u.active++
		u.peak = max(u.peak, u.active)
		if old == nil || !slices.Contains(old.path, e) {
			u.messages++
		}
	}
	f.cons, f.weight = f.route.cons, f.route.weight
	f.pos = f.pos[:0]
	dirty, alone, unshared := len(n.dirty), true, unsharedForTest
	for _, e := range f.route.cons {
		f.pos = append(f.pos, int32(len(n.edge[e].flows)))
		u := &n.edge[e]
		if cap(u.flows) == 0 {
			u.flows = n.flowSlots()
		}
		u.flows = append(u.flows, f)
		n.fill[e].nflows++
		alone = alone && (n.fill[e].nflows == 1 || unshared)
		n.binds[e] = true
		n.dirty = append(n.dirty, e)
	}
	switch {
	case len(f.route.cons) == 0: // nothing limits it: all its bytes go at once
		f.rate = math.Inf(1)
		f.end = now
		n.ends.push(f)
	case alone && n.startAlone(f):
		n.dirty = n.dirty[:dirty]
	}
}

// startAlone gives f, which no other flow's edge crosses, its rate at
// once: its component is itself, so no other flow's rate moves, and the
// refill of it is the pop of its least lone edge (see refill), which
// this repeats, expression for expression, that the rate be the same to
// the bit. Most flows of a collective on a fat tree (a ring's within a
// leaf, every flow of a contention-free permutation) start so, sparing
// the component search, the filling and the dirty edges a recompute
// costs. It reports false, changing nothing, for a flow that would end
// at once (no bytes, or too few to take a picosecond): that one is left
// to Settle, which rates the flows of an instant after all its events,
// so that the flows due now end in seq order, as they always did, not
// this one before a lower seq still waiting for its rate.
func (n *flowNet) startAlone(f *flowState) bool {
	least := shareItem{share: math.Inf(1), edge: math.MaxInt32}
	for _, e := range f.cons {
		it := shareItem{n.fill[e].capacity, e}
		if f.weight != 1 {
			it.share /= f.weight
		}
		if it.less(least) {
			least = it
		}
	}
	rate := max(n.fill[least.edge].capacity, 0) / f.weight * f.weight
	now := n.e.Now()
	if !(rate > 0) || transfer(f.left(now), rate) == 0 {
		return false
	}
	f.newRate = rate
	f.popKey, f.popEdge, f.popSeq = least.share, least.edge, n.popSeq
	n.popSeq++
	n.applyRate(f, now)
	n.countAlone(2 * len(f.cons))
	return true
}

// detach takes a flow off its edges; sent is the bytes it carried over
// them, for accounting.
func (n *flowNet) detach(f *flowState, sent float64) {
	now := n.e.Now()
	for _, e := range f.route.path {
		u := &n.edge[e]
		u.bytes += sent
		u.active--
		if u.active == 0 {
			u.busy += now - u.since
		}
	}
	dirty, alone, unshared := len(n.dirty), true, unsharedForTest
	for i, e := range f.route.cons {
		list := n.edge[e].flows
		last := len(list) - 1
		p := f.pos[i]
		if int(p) != last {
			moved := list[last]
			list[p] = moved
			for j, me := range moved.cons {
				if me == e {
					moved.pos[j] = p
					break
				}
			}
		}
		list[last] = nil
		n.edge[e].flows = list[:last]
		n.fill[e].nflows--
		alone = alone && (n.fill[e].nflows == 0 || unshared)
		n.binds[e] = true
		n.dirty = append(n.dirty, e)
	}
	if alone {
		// No other flow crossed its edges: no rate moves. The work is
		// counted as the recompute's that the edges asked for until
		// this was spared, visiting them (see countAlone).
		n.dirty = n.dirty[:dirty]
		n.countAlone(len(f.route.cons))
	}
	if f.hidx >= 0 {
		n.ends.remove(f)
	}
}

// edgeSlots is how many flows an edge's first list holds, and
// slotSlab how many such lists are allocated at once: most edges carry
// a few flows at a time, and a list of its own for each, grown by
// append, was an allocation for the collector per edge and per growth.
const edgeSlots, slotSlab = 4, 1024

// flowSlots returns an empty list of edgeSlots flows for an edge's
// first flow, cut from a slab.
func (n *flowNet) flowSlots() []*flowState {
	if len(n.slotSlab) == 0 {
		n.slotSlab = make([]*flowState, edgeSlots*slotSlab)
	}
	s := n.slotSlab[:0:edgeSlots]
	n.slotSlab = n.slotSlab[edgeSlots:]
	return s
}

func (n *flowNet) alloc() *flowState {
	if k := len(n.free); k > 0 {
		f := n.free[k-1]
		n.free = n.free[:k-1]
		return f
	}
	f := &flowState{n: n, hidx: -1}
	f.pos = f.posBuf[:0]
	return f
}

func (n *flowNet) release(f *flowState) {
	last := len(n.live) - 1
	n.live[f.lidx] = n.live[last]
	n.live[f.lidx].lidx = f.lidx
	n.live[last] = nil
	n.live = n.live[:last]
	f.m, f.route, f.sw = nil, nil, nil
	n.free = append(n.free, f)
}

// wakeUp ends the bandwidth phase of every flow due now.
func (n *flowNet) wakeUp() {
	now := n.e.Now()
	if n.armed && n.wakeAt == now {
		n.armed = false
	}
	for n.ends.len() > 0 && n.ends.next() <= now {
		f := n.ends.pop()
		f.sending = false
		n.detach(f, f.m.wireVolume()-f.counted)
		if lat := f.m.latency(f.route.latency); lat == 0 || n.latencyFirst {
			n.deliver(f)
		} else {
			n.e.At(now+lat, f)
		}
	}
}

func (n *flowNet) deliver(f *flowState) {
	if f.dropped {
		n.release(f)
		return
	}
	if sw := f.sw; sw != nil {
		n.release(f)
		n.switchFlowDone(sw)
		return
	}
	m := f.m
	n.freeSlots(m)
	n.release(f)
	n.e.Deliver(m)
	n.tryStart(m.Src)
}

// freeSlots frees the send and receive slots m held.
func (n *flowNet) freeSlots(m *Message) {
	n.senders[m.Src].active--
	n.recvs[m.Dst].active--
	if n.rslots >= 0 {
		n.markPort(m.Dst)
	}
}

func (n *flowNet) Settle() {
	if len(n.dirtyPorts) > 0 {
		n.arbitrate()
	}
	if len(n.dirty) > 0 {
		if recomputeCheck != nil {
			dirty := slices.Clone(n.dirty)
			n.recompute()
			recomputeCheck(n, dirty)
		} else {
			n.recompute()
		}
	}
	if n.ends.len() > 0 {
		if t := n.ends.next(); !n.armed || t < n.wakeAt {
			n.armed, n.wakeAt = true, t
			n.e.At(t, &n.wake)
		}
	}
}

// component gathers, in epoch ep, the flows connected through shared
// edges to the dirty edges, and the edges that more than one of them
// crosses (with the dirty ones); it notes each flow's lone edges (those
// it alone crosses) as it meets the flow, in its solo (see recompute).
//
// With region set it crosses, past the dirty edges, only the shared
// edges that bind (flowNet.binds): of those that do not, the ones whose
// flows it all gathered join edges, and the others are returned in
// boundary (see recompute).
func (n *flowNet) component(ep uint32, region bool) (flows []*flowState, edges, boundary []int32) {
	flows, edges = n.compFlows[:0], n.compEdges[:0]
	stack := append(n.stack[:0], n.dirty...)
	n.dirty = n.dirty[:0]
	pending := n.pending[:0]
	fill := n.fill
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if fill[e].mark == ep {
			continue
		}
		fill[e].mark = ep
		edges = append(edges, e)
		if fill[e].nflows == 0 {
			continue
		}
		for _, f := range n.edge[e].flows {
			if f.mark == ep {
				continue
			}
			f.mark = ep
			flows = append(flows, f)
			var shared uint64
			for i, e2 := range f.cons {
				ed2 := &fill[e2]
				if ed2.nflows == 1 { // f's alone: see recompute
					it := shareItem{ed2.capacity, e2}
					if f.weight != 1 { // x/1 is x: spare the division
						it.share /= f.weight
					}
					if f.soloEp != ep || it.less(f.solo) {
						f.soloEp, f.solo = ep, it
					}
					continue
				}
				shared |= 1 << min(i, 63)
				if ed2.mark == ep {
					continue
				}
				if region && !n.binds[e2] {
					pending = append(pending, e2)
				} else {
					stack = append(stack, e2)
				}
			}
			f.shared = shared
		}
	}
	n.stack = stack
	boundary = n.boundary[:0]
	for _, e := range pending {
		if fill[e].mark == ep {
			continue // crossed, or seen already
		}
		fill[e].mark = ep
		inside := true
		for _, f := range n.edge[e].flows {
			if f.mark != ep {
				inside = false
				break
			}
		}
		if inside {
			edges = append(edges, e)
		} else {
			boundary = append(boundary, e)
		}
	}
	n.pending = pending[:0]
	return flows, edges, boundary
}

// recomputeCheck, set by tests, is called after each recompute with the
// edges that were dirty, to check the rates against a reference.
var recomputeCheck func(n *flowNet, dirty []int32)

// recompute gives max-min fair rates to the flows connected, through
// shared edges, to the dirty edges: the rates progressive filling over
// all of them (their component) gives, bit for bit (refill).
//
// It first fills only a region of the component: the flows reached from
// the dirty edges through the edges that bind (see flowNet.binds), and
// the edges all of whose flows it holds. The flows outside keep their
// rates, and the region's boundary (the shared edges that do not bind,
// with flows on both sides) is checked (idle). This is exact:
//
//   - In a refill, an edge that never fixes a flow changes nothing: no
//     other edge reads its capacity or weights, and leaving its entry
//     out of the heap leaves the order of the others. So the refill of a
//     component is that of its parts apart once such edges are left out,
//     each part's pops being its own.
//   - Invariant: every flow's rate, and the pop that fixed it (popKey,
//     popEdge, popSeq), are those of the refill of its component, and an
//     edge binds if and only if it fixed a flow in that refill (attach,
//     detach and ScaleLink set binds on the edges they dirty, which this
//     recompute then fills).
//   - The flows outside the region reach it only through boundary edges,
//     which did not bind in the last refill, so by the first point their
//     rates and pops are those of their own parts' refills, which did
//     not change (an edge whose flows changed is dirty and so inside).
//   - A refill's pops come out in order of (key, edge), keys only
//     growing; so whether a boundary edge fixes a flow in the refill of
//     the whole component follows from the pops that fix its own flows
//     alone, merged in that order (idle replays them). If none does, the
//     whole refill is the region's and the outside's, as kept.
//
// If a boundary edge would fix a flow, the region grows across it and is
// filled again, and after regionTries regions the whole component is.
// TestFlowRatesExact checks every recompute against the whole refill.
func (n *flowNet) recompute() {
	n.redo = append(n.redo[:0], n.dirty...)
	for try := 0; ; try++ {
		n.epoch++
		ep := n.epoch
		region := try < regionTries
		flows, edges, boundary := n.component(ep, region)
		n.refill(ep, flows, edges)
		n.countWork(len(edges)+len(boundary), flows)
		kept := true
		for _, e := range boundary {
			if !n.idle(ep, e) {
				// Cross it next time: binds set on an edge that did
				// not fix a flow only widens the region.
				n.binds[e] = true
				kept = false
			}
		}
		if !kept {
			// The region's refill set binds on its edges as if it
			// stood alone: cross them all next time, so that the next
			// region holds this one and fills all its flows again.
			for _, e := range edges {
				n.binds[e] = true
			}
		}
		n.compFlows, n.compEdges, n.boundary = flows[:0], edges[:0], boundary[:0]
		if kept {
			switch {
			case !region:
				n.wholes++
			case try == 0:
				n.regions++
			default:
				n.retries++
			}
			n.apply(flows)
			return
		}
		n.dirty = append(n.dirty[:0], n.redo...)
	}
}

// unsharedForTest, set only by benchmarks, starts and ends every flow as
// if it were alone on its edges (startAlone, detach): no flow's rate
// moves for another's, so no recompute runs. The rates are then wrong
// wherever flows share an edge; the run's point is its cost without the
// max-min work, beside the true run's (BenchmarkScaleFlow's "unshared").
var unsharedForTest bool

// regionTries is how many regions recompute fills, each crossing the
// boundary edges that failed their check in the last, before it fills
// the whole component (a variable for tests).
var regionTries = 3

// countAlone tells Flow.work the visits a recompute would have made for
// a flow that started or ended alone (startAlone, detach): its edges,
// and its edges again from the flow when it starts. The time estimate's
// work is so the same as before those recomputes were spared, and its
// calibration stands; its price per unit is what moved (estimate_time.go).
func (n *flowNet) countAlone(visits int) {
	if n.work != nil {
		*n.work += int64(visits)
	}
}

// countWork tells Flow.work the edges and flows' edges a pass visited.
func (n *flowNet) countWork(edges int, flows []*flowState) {
	if n.work == nil {
		return
	}
	for _, f := range flows {
		edges += len(f.cons)
	}
	*n.work += int64(edges)
}

// refill gives flows, the flows of edges found by component in epoch
// ep, their max-min fair rates in newRate, noting the pop that fixed
// each and which of edges fixed a flow (binds).
func (n *flowNet) refill(ep uint32, flows []*flowState, edges []int32) {
	// Progressive filling. An edge's fair share is its capacity left over
	// the flows on it not yet fixed; the edge with the least share fixes
	// all its flows at that share. Shares only grow as flows are fixed,
	// so the heap keeps each edge under the share it had when pushed and
	// an edge popped under an old share goes back under its current one:
	// the least current share always comes out first.
	//
	// With weights (LatencyWeighted) a share is per unit of weight: an
	// edge's is its capacity left over the weights of its flows not yet
	// fixed, and a flow fixed at share s gets s times its weight. Plain
	// max-min is every weight 1.
	//
	// An edge that only one flow crosses keeps its share (its capacity
	// over the flow's weight) until that flow is fixed, so it comes out
	// at its first pop and fixes the flow at exactly that share. Of such
	// edges only a flow's least (share, index) one can fix it: the others
	// come out after it with the flow fixed, doing nothing. They are left
	// out (component does not even visit them).
	//
	// The filling subtracts a fixed flow's rate and weight only on its
	// shared edges (f.shared): a lone edge is read only when it comes out
	// as its flow's least, and then, if the flow is already fixed, the
	// share it gives equals its key (capacity over the flow's weight), so
	// that it fixes nothing, as the emptied edge (wsum 0) it would have
	// been did not either.
	fill := n.fill
	h := n.shares[:0]
	for _, e := range edges {
		ed := &fill[e]
		if ed.nflows < 2 {
			continue // a flow's alone, or none
		}
		ed.remCap, ed.wsum = ed.capacity, n.weights(e)
		n.binds[e] = false
		h = append(h, shareItem{ed.capacity / ed.wsum, e})
	}
	// The lone edges' shares never move (see soloItem): they are kept
	// apart, sorted only if one of them may come out before the shared
	// edges are done, and merged with the shared ones by (share, edge).
	solos := n.solos[:0]
	lo := shareItem{share: math.Inf(1), edge: math.MaxInt32} // at most the least live one's
	for _, f := range flows {
		if f.soloEp == ep {
			solos = append(solos, soloItem{f.solo, f})
			if f.solo.less(lo) {
				lo = f.solo
			}
		}
	}
	sorted, si := false, 0
	// A few shares are kept unordered and the least found by a scan,
	// which costs less than a heap's branches; the same share comes out
	// either way, (share, edge) being a total order. Past scanShares
	// they are a heap until they are few again.
	heap := len(h) > scanShares
	if heap {
		h.init()
	}
	left := len(flows)
	for left > 0 {
		i := 0
		if heap = heap && len(h) > scanShares; !heap && len(h) > 0 {
			i = h.least()
		}
		if si < len(solos) && (len(h) == 0 || !h[i].less(lo)) {
			if !sorted {
				sortSolos(solos)
				sorted = true
			}
			for si < len(solos) && solos[si].f.frozen == ep {
				si++
			}
			if si < len(solos) {
				lo = solos[si].it
				if len(h) == 0 || lo.less(h[i]) {
					x := solos[si]
					n.fix(x.f, ep, x.it, max(fill[x.it.edge].capacity, 0)/x.f.weight)
					si++
					left--
					continue
				}
			}
		}
		if len(h) == 0 {
			break
		}
		it := h[i]
		ed := &fill[it.edge]
		if !(ed.wsum > 0) {
			h.removeAt(i, heap)
			continue
		}
		s := max(ed.remCap, 0) / ed.wsum
		if s > it.share { // back under its current share
			h[i].share = s
			if heap {
				h.down(0)
			}
			continue
		}
		h.removeAt(i, heap)
		for _, f := range n.edge[it.edge].flows {
			if f.frozen != ep {
				n.fix(f, ep, it, s)
				n.binds[it.edge] = true
				left--
			}
		}
	}
	n.shares = h[:0]
	clear(solos)
	n.solos = solos[:0]
}

// weights is the sum of the weights of the flows on edge e, added in
// their order: under MaxMin, where every weight is 1, exactly their
// count.
func (n *flowNet) weights(e int32) float64 {
	if !n.latencyFirst {
		return float64(n.fill[e].nflows)
	}
	w := 0.0
	for _, f := range n.edge[e].flows {
		w += f.weight
	}
	return w
}

// fix fixes flow f at share s, popped from it, in the refill of epoch ep.
func (n *flowNet) fix(f *flowState, ep uint32, it shareItem, s float64) {
	rate := s * f.weight
	f.frozen, f.newRate = ep, rate
	f.popKey, f.popEdge, f.popSeq = it.share, it.edge, n.popSeq
	n.popSeq++
	for k, e2 := range f.cons {
		if f.shared&(1<<min(k, 63)) == 0 {
			continue
		}
		ed2 := &n.fill[e2]
		ed2.remCap -= rate
		ed2.wsum -= f.weight
	}
}

// fixEvent is a pop that fixed a flow of an edge: its key, and the rate
// and weight it took from the edge.
type fixEvent struct {
	key     float64
	edge    int32
	seq     uint64
	rate, w float64
}

func (a *fixEvent) before(b *fixEvent) bool {
	return a.key < b.key || (a.key == b.key && (a.edge < b.edge || (a.edge == b.edge && a.seq < b.seq)))
}

// idle reports whether boundary edge e would fix no flow in the refill
// of the whole component: it replays e's entry of that refill against
// the pops that fix its flows (the region's, of epoch ep, just made;
// the others' kept), in the order the refill makes them.
func (n *flowNet) idle(ep uint32, e int32) bool {
	ed := &n.fill[e]
	evs := n.evs[:0]
	for _, f := range n.edge[e].flows {
		rate := f.rate
		if f.mark == ep {
			rate = f.newRate
		}
		ev := fixEvent{f.popKey, f.popEdge, f.popSeq, rate, f.weight}
		k := len(evs)
		evs = append(evs, ev)
		for ; k > 0 && ev.before(&evs[k-1]); k-- { // few: insertion sort
			evs[k] = evs[k-1]
		}
		evs[k] = ev
	}
	n.evs = evs[:0]
	wsum := n.weights(e)
	remCap, key := ed.capacity, ed.capacity/wsum
	for i := range evs {
		ev := &evs[i]
		for key < ev.key || (key == ev.key && e < ev.edge) { // e pops first
			if !(wsum > 0) {
				return true // out of the heap
			}
			s := max(remCap, 0) / wsum
			if !(s > key) {
				return false // it would fix its flows not yet fixed
			}
			key = s
		}
		remCap -= ev.rate
		wsum -= ev.w
	}
	return true
}

// apply starts the new rates of flows: each flow whose rate changed
// takes the bytes it sent since its last change off its remainder and
// moves its end.
func (n *flowNet) apply(flows []*flowState) {
	now := n.e.Now()
	for _, f := range flows {
		if f.newRate == f.rate && f.hidx >= 0 {
			continue
		}
		n.applyRate(f, now)
	}
}

// left is the bytes f has left to send at now, at the (finite) rate it
// has sent at since f.since.
func (f *flowState) left(now Time) float64 {
	if f.rate > 0 && now > f.since {
		return max(f.rem-f.rate*float64(now-f.since)/float64(Second), 0)
	}
	return f.rem
}

// applyRate starts f's new rate at now.
func (n *flowNet) applyRate(f *flowState, now Time) {
	f.rem = f.left(now)
	if !(f.newRate > 0) { // max-min gives every flow a positive share
		panic(fmt.Sprintf("sim: flow model: message %d from rank %d to %d got rate %g", f.m.ID, f.m.Src, f.m.Dst, f.newRate))
	}
	f.since, f.rate = now, f.newRate
	f.end = now + transfer(f.rem, f.rate)
	if f.hidx >= 0 {
		n.ends.fix(f)
	} else {
		n.ends.push(f)
	}
}

// soloItem is a flow's least lone edge (see component) in progressive
// filling. Until the flow is fixed, nothing is taken from the edge, so
// its share stays its capacity over the flow's weight, its key: when it
// comes out it fixes the flow at that share, and once the flow is fixed
// it fixes nothing.
type soloItem struct {
	it shareItem
	f  *flowState
}

// sortSolos sorts s by (share, edge), a total order on them (each lone
// edge is one flow's): a few by insertion, without the call a
// comparison costs slices.SortFunc.
func sortSolos(s []soloItem) {
	if len(s) > 16 {
		slices.SortFunc(s, func(a, b soloItem) int { return a.it.cmp(b.it) })
		return
	}
	for i := 1; i < len(s); i++ {
		x, j := s[i], i
		for ; j > 0 && x.it.less(s[j-1].it); j-- {
			s[j] = s[j-1]
		}
		s[j] = x
	}
}

// transfer is the time to send rem bytes at rate, rounded as TransferTime.
func transfer(rem, rate float64) Time {
	if rem == 0 || math.IsInf(rate, 1) {
		return 0
	}
	return Time(math.Round(rem * float64(Second) / rate))
}

// ControlTime implements ControlTimer: the route's latency and the bytes
// at its narrowest edge's bandwidth, as if alone on it.
func (n *flowNet) ControlTime(m *Message) Time {
	r := n.route(m.Src, m.Dst)
	if r == nil {
		return 0
	}
	bw := math.Inf(1)
	for _, e := range r.cons {
		bw = min(bw, n.fill[e].capacity)
	}
	return m.latency(r.latency) + transfer(m.wireVolume(), bw)
}

func (n *flowNet) ReduceTime(_, bytes int) Time {
	if n.reduceBW == 0 {
		return 0
	}
	return TransferTime(bytes, n.reduceBW)
}

// DropRank implements RankDropper: messages from or to a failed rank,
// started, asking or queued, are removed.
func (n *flowNet) DropRank(rank int) []*Message {
	var out []*Message
	var freed []int
	involved := func(m *Message) bool { return m.Src == rank || m.Dst == rank }
	for _, f := range slices.Clone(n.live) {
		if f.dropped || !involved(f.m) {
			continue
		}
		out = append(out, f.m)
		n.freeSlots(f.m)
		freed = append(freed, f.m.Src)
		n.cancel(f)
	}
	for r := range n.recvs {
		rv := &n.recvs[r]
		keep := rv.askers[:0]
		for _, a := range rv.askers {
			if involved(a.m) {
				out = append(out, a.m)
				n.senders[a.m.Src].asking--
				freed = append(freed, a.m.Src)
			} else {
				keep = append(keep, a)
			}
		}
		clear(rv.askers[len(keep):])
		rv.askers = keep
	}
	for src := range n.senders {
		q := &n.senders[src].queue
		var keep []*Message
		for q.len() > 0 {
			m := q.pop()
			if involved(m) {
				out = append(out, m)
			} else {
				keep = append(keep, m)
			}
		}
		for _, m := range keep {
			q.push(m)
		}
	}
	slices.SortFunc(out, func(a, b *Message) int { return cmpInt64(a.ID, b.ID) })
	slices.Sort(freed)
	for _, src := range slices.Compact(freed) {
		if src != rank {
			n.tryStart(src)
		}
	}
	return out
}

// cancel removes a started flow whose message will not be delivered.
func (n *flowNet) cancel(f *flowState) {
	if f.sending {
		f.sending = false
		n.detach(f, n.sentSince(f))
		n.release(f)
		return
	}
	// Its delivery is scheduled: let the event find it dropped.
	f.dropped = true
}

// sentSince is the bytes f sent on its current route so far.
func (n *flowNet) sentSince(f *flowState) float64 {
	rem := 0.0 // all of it at once, at an infinite rate
	if !math.IsInf(f.rate, 1) {
		rem = f.left(n.e.Now())
	}
	return f.m.wireVolume() - f.counted - rem
}

// FailLink implements LinkFaulter: the edge carries nothing more. Flows in
// their bandwidth phase that cross it move, with the bytes they have left,
// to a new route if one is left, and fail with a *PathCutError if not.
// Flows past their bandwidth phase are delivered as planned.
func (n *flowNet) FailLink(edge int) {
	if n.failed == nil {
		n.failed = make([]bool, len(n.topo.edges))
	}
	if n.failed[edge] {
		return
	}
	n.failed[edge] = true
	n.rt.fail(edge)
	n.clearRoutes()
	n.switches = nil
	now := n.e.Now()
	affected := []*flowState{}
	for _, f := range n.live {
		if f.sending && slices.Contains(f.route.path, int32(edge)) {
			affected = append(affected, f)
		}
	}
	slices.SortFunc(affected, func(a, b *flowState) int { return cmpInt64(int64(a.seq), int64(b.seq)) })
	for _, f := range affected {
		sent := n.sentSince(f)
		n.detach(f, sent)
		f.counted += sent
		f.rem = f.m.wireVolume() - f.counted
		if sw := f.sw; sw != nil {
			r := n.switchRoute(sw)
			if r == nil {
				f.sending = false
				n.release(f)
				n.e.SwitchFailed(sw.op, n.switchCut(sw, n.topo.edges[edge].Name))
				continue
			}
			old := f.route
			f.route, f.rate, f.since = r, 0, now
			n.attach(f, old)
			continue
		}
		r := n.route(f.m.Src, f.m.Dst)
		if r == nil {
			m := f.m
			f.sending = false
			n.freeSlots(m)
			n.release(f)
			n.e.Drop(m, &PathCutError{Src: m.Src, Dst: m.Dst, Link: n.topo.edges[edge].Name, At: now})
			n.tryStart(m.Src)
			continue
		}
		old := f.route
		f.route, f.rate, f.since = r, 0, now
		n.attach(f, old)
	}
}

// ScaleLink implements LinkFaulter: the edge's bandwidth becomes factor
// times its nominal bandwidth from now on.
func (n *flowNet) ScaleLink(edge int, factor float64) {
	n.fill[edge].capacity = n.topo.edges[edge].Bandwidth * factor
	n.binds[edge] = true
	n.dirty = append(n.dirty, int32(edge))
}

// Topology implements LinkFaulter.
func (n *flowNet) Topology() *Topology { return n.topo }

// LinkUsage implements LinkReporter.
func (n *flowNet) LinkUsage(end Time) []LinkUsage {
	out := make([]LinkUsage, len(n.topo.edges))
	for i, ed := range n.topo.edges {
		u := &n.edge[i]
		busy := u.busy
		if u.active > 0 {
			busy += end - u.since
		}
		out[i] = LinkUsage{
			Link: ed.Name, From: n.topo.nodes[ed.From].Name, To: n.topo.nodes[ed.To].Name,
			Bandwidth: n.fill[i].capacity, Latency: ed.Latency,
			Bytes: int64(math.Round(u.bytes)), Messages: u.messages, Busy: busy, PeakFlows: int(u.peak),
			Failed: n.failed != nil && n.failed[i],
		}
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// shareItem is an edge's fair share in progressive filling.
type shareItem struct {
	share float64
	edge  int32
}

func (a shareItem) less(b shareItem) bool {
	return a.share < b.share || (a.share == b.share && a.edge < b.edge)
}

func (a shareItem) cmp(b shareItem) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// shareHeap is a min-heap of shares, by (share, edge).
type shareHeap []shareItem

func (h shareHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// scanShares is the most shares recompute finds the least of by a scan.
const scanShares = 8

// least is the index of the least share, h being in any order.
func (h shareHeap) least() int {
	k := 0
	for i := 1; i < len(h); i++ {
		if h[i].less(h[k]) {
			k = i
		}
	}
	return k
}

// removeAt removes h[i]: the root of a heap, or any share of an
// unordered h.
func (h *shareHeap) removeAt(i int, heap bool) {
	if heap {
		h.pop()
		return
	}
	q := *h
	n := len(q) - 1
	q[i] = q[n]
	*h = q[:n]
}

// pop removes the least share.
func (h *shareHeap) pop() {
	q := *h
	n := len(q) - 1
	q[0] = q[n]
	*h = q[:n]
	h.down(0)
}

func (h shareHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && (h[r].share < h[l].share || (h[r].share == h[l].share && h[r].edge < h[l].edge)) {
			c = r
		}
		if !(h[c].share < h[i].share || (h[c].share == h[i].share && h[c].edge < h[i].edge)) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
