package sim

import (
	"cmp"
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"time"
	"unsafe"
)

// Estimate is what a run will cost, judged before it runs (EstimateRun).
type Estimate struct {
	// Messages is the number of messages the run will send, as
	// Result.Messages counts them; Events the events it will process,
	// roughly (as Result.Events).
	Messages int64
	Events   int64
	// Memory is the memory the run will hold at its peak, in bytes,
	// roughly: the engine's and the network's state, the recorded
	// programs or the coroutines' stacks, the messages in flight, and
	// the garbage collector's headroom; not the flow model's routes that
	// a process keeps for its later runs on a topology (flowroutes.go:
	// at most 2^18 a topology, about 30 MiB, for three topologies).
	Memory int64
	// Seconds is the CPU time of one core the run would take, at costs
	// fitted on the project's machine and scaled by this machine's speed,
	// measured once per process (machineSpeed), so the same on every call
	// of a process: the events at a cost that grows with the world as its
	// state leaves the caches (eventSeconds), and on coroutines each
	// event's switches and each rank's coroutine (coroutineSeconds); on
	// the flow model, above 64 ranks, the run's messages and the work of
	// its max-min passes, counted on runs of smaller worlds
	// (flowSeconds). With host data,
	// whose copies and arithmetic the events do not show, it is instead
	// timed: the events at half the rate a run of the body at 64 ranks
	// reached (1 µs an event for worlds of 64 ranks or fewer), which
	// depends on the machine and its load.
	Seconds float64
	// Replay says whether the run would be replayed (Config.Replay).
	Replay bool
	// Sampled is how many ranks were recorded to make the estimate; the
	// message count is exact when it is the world.
	Sampled int
	// Symmetry names the group ("cyclic", "xor") under which every
	// sampled rank repeats rank 0, on a run that may take the shortcut
	// (Config.Symmetry): the run will then most likely simulate one rank
	// for all, and Seconds and Memory are that run's, mostly the
	// recording of every rank's program that proves it. Messages and
	// Events stay the whole world's, as Result counts them. "" when the
	// run will be simulated in full. (The sample suggests; only the run,
	// which checks every rank, proves.)
	Symmetry string
}

// estimateExact is the largest world whose estimate records every rank.
const estimateExact = 64

// estimateSample is how many ranks a larger world's estimate records.
const estimateSample = 64

// EstimateRun estimates what Run(cfg, body) will cost without running it:
// it records the body (as Config.Replay does) on every rank of a world
// of up to 64 ranks, which gives the messages exactly, and on about 64
// ranks of a larger one: 48 spread over the world, the first and the
// last, and the ranks most of those name as peers (a root, a leader),
// and sizes the engine's state from them. Messages are then the sampled
// ranks' own plus the world's other ranks at the mean of the spread ones
// (their sends or their receives, whichever vary less); events are
// calibrated by a run of the body at 64 ranks. The body must be
// recordable (see Config.Replay): its operations may not depend on data,
// since it runs on phantom buffers, nor on timing. cfg.Replay and
// cfg.HostData say how the run will be simulated, which changes its
// memory. Recording a rank costs about as much as the body's part of the
// run on that rank, so an estimate costs little beside the run.
func EstimateRun(cfg Config, body Body) (Estimate, error) {
	if cfg.World < 1 {
		return Estimate{}, errors.New("sim: world size below 1")
	}
	cfg = builtOnce(cfg)
	s, err := recordSample(cfg, body)
	if err != nil {
		return Estimate{}, err
	}
	w := float64(cfg.World)
	est := Estimate{Sampled: s.ranks, Replay: cfg.Replay && !cfg.HostData}
	est.Messages = int64(math.Round(s.messages))
	// An event per message (its end), per wait and reduction (the rank
	// resuming), and per rank (its start); models with a start event or
	// a delivery after the wire add up to one more per message, which a
	// run at a small world measures.
	//
	// The flow model has an event per message after its wire time too,
	// but ends the wire time of every flow due at one instant in one
	// event: lock-step ranks share those, and what is left is about one
	// per message of the busiest rank, whose messages end one after the
	// other (a root's incast, osu_bw's window).
	flow := netKind(cfg.Model) == "flow"
	events := func(s *sample) float64 {
		e := s.messages + s.estimate(func(n rankCounts) int64 { return n.waits + n.reduces }) + float64(s.world)
		if flow {
			e += float64(s.busiest)
		}
		return e
	}
	est.Events = int64(math.Round(events(s)))
	// Host data's runs are timed on a sample: their cost is the data's
	// copies and arithmetic, which the events do not show. Phantom data's
	// are priced (eventSeconds), which times nothing.
	hostPerEvent := 1e-6
	if cfg.World > estimateExact {
		small := cfg
		small.World, small.Observer, small.Progress, small.Replay = estimateExact, nil, nil, true
		start := time.Now()
		if res, err := Run(small, body); err == nil {
			if res.Events > 0 {
				hostPerEvent = time.Since(start).Seconds() / float64(res.Events)
			}
			if ss, err := recordSample(small, body); err == nil && events(ss) > 0 {
				est.Events = int64(math.Round(events(s) * float64(res.Events) / events(ss)))
			}
		}
		// Events cost more in larger worlds, whose state no longer fits
		// in the caches: about twice up to 2^16 ranks (a run of 64 ranks
		// also pays for its setup, which a larger one spreads), and past
		// that about 16% more each time the world doubles.
		hostPerEvent *= 2 * math.Pow(cacheGrowth, max(math.Log2(w)-16, 0))
	}
	if cfg.HostData {
		est.Seconds = float64(est.Events) * hostPerEvent
	} else {
		est.Seconds = float64(est.Events) * eventSeconds(cfg.World)
		if !est.Replay {
			est.Seconds += coroutineSeconds(cfg.World, float64(est.Events))
		}
	}
	topoNodes, topoEdges := topologySize(cfg.Model, cfg.World)
	var routeSearches float64
	if flow && cfg.World > estimateExact {
		if sec, searches, ok := flowSeconds(cfg, body, est.Messages, topoNodes+topoEdges); ok {
			routeSearches = searches
			est.Seconds = sec
			if !est.Replay {
				// The flow costs are a replay's; on coroutines an
				// event costs flowCoroutineEvents times alpha-beta's.
				est.Seconds += coroutineSeconds(cfg.World, flowCoroutineEvents*float64(est.Events))
			}
		}
	}

	est.Memory = s.memory(cfg, est.Replay, topoNodes, topoEdges, routeSearches)
	if g, ok := s.symmetric(cfg); ok {
		est.Symmetry = g.String()
		est.Seconds, est.Memory = s.symmetricCost()
	}
	return est, nil
}

// memory estimates the peak memory of a run of cfg (see Estimate.Memory)
// on a topology of nodes and edges (flow model) where the run makes
// routeSearches route searches.
func (s *sample) memory(cfg Config, replay bool, topoNodes, topoEdges int, routeSearches float64) int64 {
	w := float64(cfg.World)
	// The engine's state per rank: the rank and its process (side by
	// side, no pointer to them), its finish time in the result, and 32
	// bytes for its share of the rest.
	perRank := float64(unsafe.Sizeof(rank{})+unsafe.Sizeof(proc{})) + 8 + 32
	perRank += s.estimate(func(n rankCounts) int64 { return n.slots }) / w * float64(unsafe.Sizeof(request{}))
	if replay {
		perRank += s.programBytes() / w
	} else {
		perRank += coroutineBytes
	}
	perRank += netBytesPerRank(cfg.Model, s.peers/float64(len(s.recorded)))
	// Messages in flight: at most those a rank sends without waiting;
	// each with the event that ends it. (The slot that pairs it with its
	// receive is its match queue's first, in the queue, for most.)
	perMessage := unsafe.Sizeof(Message{}) + 16 + 16
	perRank += s.estimate(func(n rankCounts) int64 { return n.inFlight }) / w * float64(perMessage)
	// The network's state that does not grow with ranks sending: a
	// topology's nodes and edges, with their per-edge accounts.
	live := perRank*w + float64(topoEdges*edgeBytes+topoNodes*nodeBytes)
	// The collector lets the heap grow past what is live before it
	// collects (GOGC=100) while the run allocates: the recording's
	// garbage, then little for a replay (its queues grow in shared
	// blocks and free lists, not by doubling). (Fitted to the peak
	// resident memory of halving-doubling replays of 2^16 and 2^20
	// ranks, whose match slots sit in their queues and whose second
	// queues are linked.) Runs on coroutines were given 1.6, fitted to
	// runs of 64 to 2^20 ranks on an earlier machine and Go; on this
	// round's (an AMD EPYC, Go's newer collector) that read 1.63x the
	// peak of halving-doubling at 4096 and 65536 ranks, and 1.05 reads
	// 1.07x at 65536, 1.10x at 2^18 and 1.02x for the flow model at
	// 4096 (BenchmarkScale, BenchmarkScaleFlow, each point a process of
	// its own). Small runs read higher (2.0x a ring of 1024 ranks, 14
	// MiB), where baseMemory is most of the estimate.
	const headroom = 1.05
	// The flow model's route searches each keep their distances and tie
	// masks, a word each per node, for the whole run (one search serves a
	// destination switch, so there are at most as many as nodes). They
	// are outside the headroom: it was fitted to runs whose peaks held
	// them and whose estimates did not count them. Counted, the 4096-rank
	// fat tree's flow runs (BenchmarkScaleFlow) read 0.85 (the ring) and
	// 1.09 (halving-doubling) of their peaks replayed, where they read
	// 0.60 and 0.79 without, and 1.50 on coroutines (1.38); the 16384-GPU
	// ring on the dgx-h100 preset 217 MiB against 241 MiB (79 without).
	routes := min(routeSearches, float64(topoNodes)) * float64(topoNodes) * routeBytesPerNode
	return int64(live*headroom+routes) + baseMemory
}

// symmetric reports whether a run of cfg may take the symmetry shortcut
// and every sampled rank's program is rank 0's under one group.
func (s *sample) symmetric(cfg Config) (symGroup, bool) {
	if !cfg.Replay || cfg.HostData {
		return 0, false
	}
	if _, ok := symmetryMayApply(cfg, len(s.in.groups)); !ok {
		return 0, false
	}
	progs := &programs{chunks: s.in.chunks}
	ranks := slices.Sorted(maps.Keys(s.progs))
	for _, g := range symGroups {
		_, ok := symmetricUnder(progs, s.world, g, s.progs[0], func(yield func(int, *program) bool) {
			for _, r := range ranks {
				if !yield(r, s.progs[r]) {
					return
				}
			}
		})
		if ok {
			return g, true
		}
	}
	return 0, false
}

// symmetricCost is the time and memory of a run that simulates one rank
// for all: recording every rank, on every CPU, each at a price for each
// operation of the sample's median rank (priced, not timed, so that the
// estimate is the same on every call: the sample's own recordings take a
// few milliseconds, at the mercy of one collection or page fault), and
// holding every rank's program (shared but for a pointer), with the
// recording's garbage.
func (s *sample) symmetricCost() (seconds float64, memory int64) {
	w := float64(s.world)
	workers := float64(min(runtime.GOMAXPROCS(0), s.world))
	ops := 0
	if n := len(s.recordOps); n > 0 {
		t := slices.Clone(s.recordOps)
		slices.Sort(t)
		ops = t[n/2]
	}
	heap, _ := machineSpeed()
	seconds = symOpSeconds * heap * float64(ops) * w / workers
	memory = int64(w*symBytesPerRank+s.programBytes()) + baseMemory
	return seconds, memory
}

// cacheGrowth is how much more an event of a run with host data costs
// each time a world past 2^16 ranks doubles.
const cacheGrowth = 1.16

// eventSeconds is the CPU time on one core that an event of a replayed
// run with phantom data takes in a world of world ranks: 250 ns at 1024
// ranks and 10 % more each time the world doubles, as the ranks' state
// leaves the caches and then the page tables' reach. Fitted to
// halving-doubling and ring allreduce on alpha-beta (BenchmarkScale,
// BenchmarkScaleFlow) on the 2.5 GHz Xeon the project measures on, in
// two quiet sittings a day apart between which that machine (a virtual
// one) slowed by 1.75x, the heap-and-switch floor with it; the costs sit
// between the two, so that both fall within 1.5x. Per event: at 1024
// ranks 178 and 351 ns, at 2^16 371 and 626, at 2^20 544 and 810, and
// at 2^24 911 (CPU, the first sitting's machine, niced beside other
// work). Other networks' events (LogGP's, two paths', a protocol's) are
// priced alike. A run on coroutines adds coroutineSeconds.
//
// Those are the reference machine's prices; this machine's scale them by
// its speed at a heap operation (machineSpeed, speed.go).
func eventSeconds(world int) float64 {
	doublings := math.Log2(float64(max(world, 1))) - 10
	heap, _ := machineSpeed()
	return 250e-9 * math.Pow(1.10, doublings) * heap
}

// coroutineSeconds is the CPU time on one core that running a world of
// world ranks, with events events, on coroutines adds to its replay:
// per event, 191 ns at 1024 ranks and 8 % more a doubling (a rank parks
// and is resumed); per rank, 25.5 µs at 1024 ranks and 30 % more a
// doubling (its coroutine: a goroutine and a stack grown to a
// collective's depth, and at scale what they take from the caches).
// Priced per event alone, as before (fitted to halving-doubling, 50
// events a rank, whose coroutines' own cost is most of its time), a
// ring allreduce (2500 events a rank at 1024 ranks) was estimated at
// 2.2x what it costs.
//
// Fitted on an AMD EPYC (2 vCPU), each point a process of its own and a
// run of its own (BenchmarkScale's worlds; a later run in one process
// reuses the first's stacks and costs less): coroutine CPU less the
// replay's, halving-doubling of 1 MiB at 256 to 65536 ranks (2.7, 5.8,
// 20.6, 39.8, 157, 956 and 5880 ms at 256, 512, 1024, 2048, 4096,
// 16384 and 65536 ranks) and the ring of 64 MiB at 256 to 2048 (29.6,
// 88, 567, 2589 ms): the model gives 0.82-1.34x of each but the ring of
// 512 (1.5x). The EPYC's prices (105 ns and 14 µs) are divided by its
// speed at a coroutine switch against the Xeon's (0.55), and this
// machine's are those scaled by its own.
func coroutineSeconds(world int, events float64) float64 {
	doublings := math.Log2(float64(max(world, 1))) - 10
	_, coroutine := machineSpeed()
	return (events*191e-9*math.Pow(1.08, doublings) + float64(world)*25.5e-6*math.Pow(1.3, doublings)) * coroutine
}

// flowCoroutineEvents is what an event of a flow-model run on coroutines
// costs beyond its replay, in alpha-beta's (coroutineSeconds): the flow
// model's state and the coroutines' stacks share the caches. A ring
// allreduce of 64 MiB at 4096 ranks of BenchmarkScaleFlow's fat tree,
// one run each on an AMD EPYC: alpha-beta 722 ns of CPU a message on
// coroutines against 270 replayed, the flow model 1450 against 500, both
// at 2.5-2.8 events a message; priced as alpha-beta's, the flow run's
// estimate read 0.60x its time. (A second flow run of that ring took
// 1.65x the first's time, the estimate so 0.57x with this factor: such
// runs vary that much from process to process, the collector not the
// cause; halving-doubling's estimates read 0.73-0.93x with it.)
const flowCoroutineEvents = 2

// coroutineBytes is what a rank's coroutine holds: its goroutine, a stack
// grown to the depth of a collective, and the closures that drive it.
const coroutineBytes = 12 << 10

// baseMemory is what the process holds before a run.
const baseMemory = 16 << 20

// spreadRanks returns estimateSample ranks spread over the world at
// pseudo-random offsets (from seed) within equal strata, so that a
// power-of-two stride does not pick only the roots of a tree.
func spreadRanks(world int, seed uint64) []int {
	out := make([]int, 0, estimateSample)
	x := seed
	for i := range estimateSample {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		lo := i * world / estimateSample
		hi := (i + 1) * world / estimateSample
		out = append(out, lo+int(x%uint64(max(hi-lo, 1))))
	}
	return out
}

// bitReversed returns 0..n-1 in the order of their bit-reversed indexes
// (0, n/2, n/4, 3n/4, ... for n a power of two).
func bitReversed(n int) []int {
	bits := 0
	for 1<<bits < n {
		bits++
	}
	out := make([]int, 0, n)
	for i := range 1 << bits {
		r := 0
		for b := range bits {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		if r < n {
			out = append(out, r)
		}
	}
	return out
}

// uniform reports whether the ranks recorded so far all sent, and all
// received, as many messages.
func (s *sample) uniform() bool {
	var first rankCounts
	n := 0
	for _, c := range s.recorded {
		if n == 0 {
			first = c
		} else if c.sends != first.sends || c.recvs != first.recvs {
			return false
		}
		n++
	}
	return true
}

// heavyRanks is how many of the ranks most named as peers an estimate
// records besides the spread ones.
const heavyRanks = 14

// rankCounts are one rank's recorded operations, the request slots its
// program needs, and the most messages it sends without waiting.
type rankCounts struct {
	sends, recvs, waits, reduces int64
	slots, inFlight              int64
}

// sample is what recording some ranks of a world found, and what it
// makes of the whole world.
type sample struct {
	world int
	// recorded are the ranks recorded; special those counted as
	// themselves (all of them in a small world), the rest standing for
	// the ranks not recorded.
	recorded map[int]rankCounts
	special  map[int]bool
	ranks    int
	// messages is the estimated number of messages of the world.
	messages float64
	// busiest is the most messages a recorded rank sends or receives.
	busiest int64

	ops      int64
	peers    float64 // distinct peers sent to, summed over the recorded ranks
	chunkUse map[string]int
	progUse  map[*program]int
	// progs are the recorded ranks' programs, in the interner in;
	// recordOps the operations each rank's recording recorded.
	progs     map[int]*program
	in        *interner
	recordOps []int
}

// recordSample records body on every rank of a small world, or on a
// sample of a large one (see EstimateRun).
func recordSample(cfg Config, body Body) (*sample, error) {
	world := cfg.World
	in := newInterner()
	s := &sample{world: world, recorded: map[int]rankCounts{}, special: map[int]bool{}, chunkUse: map[string]int{}, progUse: map[*program]int{},
		progs: map[int]*program{}, in: in}
	c := &recorder{world: world, info: newRunInfo(cfg)}
	named := map[int]int{}
	rec := func(r int) error {
		if _, done := s.recorded[r]; done {
			return nil
		}
		p, err := c.record(r, body, in)
		if err != nil {
			return err
		}
		s.recordOps = append(s.recordOps, c.nops)
		s.progs[r] = p
		s.ops += int64(c.nops)
		n, peers := countOps(c.recorded(), named)
		n.slots = int64(p.slots)
		s.recorded[r] = n
		s.busiest = max(s.busiest, n.sends, n.recvs)
		s.peers += float64(peers)
		seen := map[int32]bool{}
		for _, id := range p.chunks {
			if !seen[id] {
				seen[id] = true
				s.chunkUse[in.chunks[id]]++
			}
		}
		s.progUse[p]++
		return nil
	}
	if world <= estimateExact {
		for r := range world {
			if err := rec(r); err != nil {
				return nil, err
			}
			s.special[r] = true
		}
	} else {
		// The strata in an order that spreads any prefix of them over
		// the world (bit-reversed), so that recording can stop early
		// once many ranks have sent and received exactly as many
		// messages: a symmetric algorithm (a ring) needs a third of the
		// sample. (Ranks that merely agree closely may hide a minority
		// that does not, such as the ranks that fold in halving-doubling
		// on a world that is not a power of two.)
		spread := spreadRanks(world, 0x9E3779B97F4A7C15)
		for i, k := range bitReversed(len(spread)) {
			if err := rec(spread[k]); err != nil {
				return nil, err
			}
			if i+1 >= estimateSample*3/8 && s.uniform() {
				break
			}
		}
		// Counts that vary much from rank to rank (a tree's) take a
		// second sample, at other offsets in the same strata.
		sends := func(n rankCounts) int64 { return n.sends }
		recvs := func(n rankCounts) int64 { return n.recvs }
		if min(s.spreadOf(sends), s.spreadOf(recvs)) > 0.3 {
			for _, r := range spreadRanks(world, 0xD1B54A32D192ED03) {
				if err := rec(r); err != nil {
					return nil, err
				}
			}
		}
		// The first and last ranks, and those most named as peers,
		// count as themselves: a root sends to everybody, and must
		// not stand for anybody else.
		// Ranks 0 and 1 too: the point-to-point benchmarks (sendrecv)
		// run between them alone, as OSU's do.
		heavy := []int{0, 1, world - 1}
		type namedRank struct{ rank, n int }
		var byNamed []namedRank
		for r, n := range named {
			byNamed = append(byNamed, namedRank{r, n})
		}
		slices.SortFunc(byNamed, func(a, b namedRank) int { return cmp.Or(b.n-a.n, a.rank-b.rank) })
		for _, x := range byNamed[:min(heavyRanks, len(byNamed))] {
			if x.n >= estimateSample/4 {
				heavy = append(heavy, x.rank)
			}
		}
		for _, r := range heavy {
			if err := rec(r); err != nil {
				return nil, err
			}
			s.special[r] = true
		}
	}
	s.ranks = len(s.recorded)
	s.messages = s.estimate(func(n rankCounts) int64 { return n.sends })
	if recvs := s.estimate(func(n rankCounts) int64 { return n.recvs }); s.spreadOf(func(n rankCounts) int64 { return n.recvs }) < s.spreadOf(func(n rankCounts) int64 { return n.sends }) {
		s.messages = recvs
	}
	return s, nil
}

// countOps counts a rank's recorded operations, the most messages it has
// in flight between two waits, and the distinct peers it sends to; it
// adds each peer it sends to or receives from to named.
func countOps(ops []recOp, named map[int]int) (n rankCounts, peers int) {
	sentTo := map[int]bool{}
	outstanding := 0
	for _, op := range ops {
		switch op.kind {
		case opSend:
			n.sends++
			outstanding++
			n.inFlight = max(n.inFlight, int64(outstanding))
			sentTo[op.peer] = true
		case opRecv:
			n.recvs++
		case opWait:
			n.waits++
			outstanding = 0
		case opReduce:
			n.reduces++
		}
		if op.kind == opSend || op.kind == opRecv {
			named[op.peer]++
		}
	}
	return n, len(sentTo)
}

// others returns the recorded ranks that stand for the ranks not recorded.
func (s *sample) others() []rankCounts {
	var out []rankCounts
	for r, n := range s.recorded {
		if !s.special[r] {
			out = append(out, n)
		}
	}
	return out
}

// estimate is the world's total of count: the special ranks' own, and the
// mean of the others' for every other rank.
func (s *sample) estimate(count func(rankCounts) int64) float64 {
	var total float64
	for r := range s.special {
		total += float64(count(s.recorded[r]))
	}
	others := s.others()
	if len(others) == 0 {
		return total
	}
	var sum float64
	for _, n := range others {
		sum += float64(count(n))
	}
	return total + sum/float64(len(others))*float64(s.world-len(s.special))
}

// spreadOf is the coefficient of variation of count over the ranks that
// stand for others: how much the estimate may be off.
func (s *sample) spreadOf(count func(rankCounts) int64) float64 {
	others := s.others()
	if len(others) < 2 {
		return 0
	}
	var sum, sq float64
	for _, n := range others {
		x := float64(count(n))
		sum += x
		sq += x * x
	}
	k := float64(len(others))
	mean := sum / k
	if mean == 0 {
		return 0 // every count is 0
	}
	return math.Sqrt(max(sq/k-mean*mean, 0)) / mean
}

// programBytes extrapolates the memory the programs of a whole world of
// ranks take: what the sampled ranks share is kept once, and what only one
// of them used is taken to be as rare in the world.
func (s *sample) programBytes() float64 {
	world := s.world
	scale := float64(world) / float64(s.ranks)
	var shared, unique float64
	for ch, n := range s.chunkUse {
		b := float64(len(ch)) + 80 // the string, its map entry and index
		if n > 1 || s.ranks == world {
			shared += b
		} else {
			unique += b
		}
	}
	for p, n := range s.progUse {
		b := float64(8*len(p.chunks)) + 150
		if n > 1 || s.ranks == world {
			shared += b
		} else {
			unique += b
		}
	}
	return shared + unique*scale
}

// netKind names the model under any wrappers.
func netKind(m Model) string {
	switch m.(type) {
	case AlphaBeta:
		return "alpha-beta"
	case Flow:
		return "flow"
	case LogGP:
		return "loggp"
	case TwoPaths:
		return "two-paths"
	}
	if inner, ok := beneath(m); ok {
		return netKind(inner)
	}
	return ""
}

// netBytesPerRank is the network's state per rank, given how many peers
// a rank sends to.
func netBytesPerRank(m Model, peers float64) float64 {
	switch netKind(m) {
	case "alpha-beta":
		// A port and its place in the dirty list (its queues are linked
		// through the messages).
		return float64(unsafe.Sizeof(abPort{})) + 8
	case "flow":
		// Senders, receivers, and a cached route per (sender, peer):
		// its path, the row of the route cache and the sender's near
		// list (flowroutes.go).
		return 184 + peers*(48+8*12+8+16)
	case "loggp":
		return 8
	case "two-paths":
		return 3 * (float64(unsafe.Sizeof(abPort{})) + 24) // QUIC, bulk and eager paths
	}
	return 128
}

// topologySize is the nodes and edges of the flow model's topology in m
// (under any decorators) for world ranks; 0, 0 for other models.
func topologySize(m Model, world int) (nodes, edges int) {
	if x, ok := m.(Flow); ok {
		if x.Topology == nil {
			return 0, 0
		}
		t, err := x.Topology.Build(world)
		if err != nil {
			return 0, 0
		}
		return len(t.nodes), len(t.edges)
	}
	if inner, ok := beneath(m); ok {
		return topologySize(inner, world)
	}
	return 0, 0
}

// routeBytesPerNode is what a route search keeps per node of the topology:
// its distance and its tie mask (route.go).
const routeBytesPerNode = 8

// edgeBytes and nodeBytes are what the flow model keeps per edge and per
// node of its topology, names and routing tables included.
const (
	edgeBytes = 256
	nodeBytes = 128
)

// symOpSeconds and symBytesPerRank size a run that takes the symmetry
// shortcut. Recording costs about symOpSeconds an operation of one
// core's CPU, the same for a ring of 1024 or 4096 ranks (7k and 29k
// operations a rank) and halving-doubling of 2^16 to 2^20 (112 to 140),
// with no cost of its own per rank beside: 60 to 63 ns in a quiet sitting
// (the run's CPU over its operations), 59 to 72 under other work. The
// run records on every CPU, and its wall time was half its CPU on two.
// The price sits above the quiet figure as the other costs sit between a
// fast day's and a slow one's (see eventSeconds). Scaled, as the others
// are, by this machine's speed at a heap operation (speed.go), it read
// 0.54 to 0.84 of the runs on the EPYC the probe was fitted on, where
// recording follows that speed less than events do; 105 ns instead of 75
// leaves BenchmarkSymmetry's points there at 0.8 to 1.2. A rank holds the
// pointer to its program, the recorder's per-rank state and the garbage
// the collector lets grow: symBytesPerRank, from BenchmarkSymmetry's and
// scenarios/scale/sixteen-million.toml's peak memory.
const (
	symOpSeconds    = 105e-9
	symBytesPerRank = 100
)
