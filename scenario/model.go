package scenario

import (
	"fmt"
	"math"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// ModelInfo describes a network model that a scenario's [network] table
// may name, for listings and help.
type ModelInfo struct {
	Name    string
	Summary string
	// Keys are the keys the model reads from [network], besides model.
	Keys []KeyInfo
}

// KeyInfo describes one key of a table.
type KeyInfo struct {
	Name     string
	Required bool
	// Doc says what the value is, with an example.
	Doc string
}

// modelSpec is a network model: what it reads from [network] and how it
// builds a sim.Model. To add a model, add an entry to models; build reads
// its keys from t (the [network] table; top is the file's top level),
// reports problems through t.errorf and returns nil if there were any.
type modelSpec struct {
	ModelInfo
	build func(t, top *table) *builtModel
}

// builtModel is what a model's build returns.
type builtModel struct {
	// seeded returns the model with its random draws seeded by seed.
	seeded func(seed uint64) sim.Model
	// random says whether the model draws random numbers at all.
	random bool
	// linkBandwidth is a rank's link bandwidth in B/s, 0 if not one figure.
	linkBandwidth float64
	// topology is the flow model's topology, nil on other models.
	topology sim.TopologySpec
	// placement is the flow model's placement key ("linear", ...).
	placement string
	// withThresholds, on a model of realnet's transport, builds the
	// model again with other thresholds; nil on other models.
	withThresholds func(algos.Thresholds) *builtModel
}

// withProtocol returns b with protocol p on top of its model.
func (b *builtModel) withProtocol(p sim.Protocol) *builtModel {
	out := *b
	out.seeded = func(seed uint64) sim.Model {
		q := p
		q.Model = b.seeded(seed)
		return q
	}
	if b.withThresholds != nil {
		out.withThresholds = func(t algos.Thresholds) *builtModel { return b.withThresholds(t).withProtocol(p) }
	}
	return &out
}

// fixed is a model that draws no random numbers.
func fixed(m sim.Model, linkBandwidth float64) *builtModel {
	return &builtModel{seeded: func(uint64) sim.Model { return m }, linkBandwidth: linkBandwidth}
}

// Keys shared by several models.
var (
	keyLatency         = KeyInfo{"latency", true, `alpha, the fixed cost of a message: "5us" (units ps, ns, us, ms, s)`}
	keyBandwidth       = KeyInfo{"bandwidth", true, `1/beta, per port: "12.5GB/s" (B/s, KB/s, MB/s, GB/s, TB/s are powers of 10; KiB/s, MiB/s, GiB/s, TiB/s powers of 2; Mbit/s, Gbit/s, Tbit/s bits)`}
	keyReduceBandwidth = KeyInfo{"reduce_bandwidth", false, `1/gamma, bytes of one operand reduced per second: "25GB/s"; "inf" or left out: reductions are free`}
	keyOverhead        = KeyInfo{"overhead", false, `LogGP's o: CPU time a rank spends sending, and receiving, each message: "1us" (default 0)`}
)

var models = []modelSpec{
	{
		ModelInfo: ModelInfo{
			Name: "alpha-beta",
			Summary: "contention-free Hockney model: a message of m bytes takes latency + m/bandwidth on its sender's egress and receiver's ingress port; reducing k bytes takes k/reduce_bandwidth; " +
				"with switch_reduce_bandwidth R, one switch reduces in the network: c contributions of s bytes each reach it in latency + s/bandwidth, it reduces them in (c-1)s/R, the result reaches each receiver latency + s/bandwidth later",
			Keys: []KeyInfo{keyLatency, keyBandwidth, keyReduceBandwidth, keyOverhead,
				{"switch_reduce_bandwidth", false, `R, the rate at which the network's one switch reduces in the network (NVLink SHARP, InfiniBand SHARP), bytes of one operand per second: "400GB/s"; "inf": for free; left out: no switch reduces`}},
		},
		build: func(t, _ *table) *builtModel {
			lat, ok1 := t.duration("latency", true)
			bw, ok2 := t.bandwidth("bandwidth", true, 0)
			rbw, ok3 := t.bandwidth("reduce_bandwidth", false, math.Inf(1))
			o, ok4 := t.duration("overhead", false)
			sbw, ok5 := t.bandwidth("switch_reduce_bandwidth", false, 0)
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
				return nil
			}
			m := sim.AlphaBeta{Latency: lat, Bandwidth: bw, ReduceBandwidth: rbw, SwitchBandwidth: sbw}
			if err := m.Validate(); err != nil {
				t.errorf(t.path, "alpha-beta parameters: %v", err)
				return nil
			}
			return fixed(withOverhead(m, o), bw)
		},
	},
	{
		ModelInfo: ModelInfo{
			Name: "flow",
			Summary: "flow-level model on a topology: each message is a flow along its route, flows sharing a link share its bandwidth max-min fairly, " +
				"latencies add along the route; with topology = \"crossbar\" and alpha-beta's keys it gives alpha-beta's times",
			Keys: []KeyInfo{
				{"topology", false, `the network's shape: "crossbar" (default), "ring", "torus", "fat_tree", "dragonfly", "hierarchical" or "gpu_cluster"; its keys follow (see Topologies)`},
				{"placement", false, `how ranks map to devices: "linear" (rank r on device r, default), "round_robin" (consecutive ranks in different groups of placement_group devices), "random" (seeded)`},
				{"placement_group", false, `devices per group for placement = "round_robin", such as the devices of a node: 8`},
				{"send_slots", false, "messages a rank may send at once (default 1, as alpha-beta's single port; -1 is unlimited)"},
				{"recv_slots", false, "messages a rank may receive at once (default 1; -1 is unlimited, arrivals then share the rank's link)"},
				{"sharing", false, `how flows share a link: "max_min" (default) or "latency_weighted" (SimGrid's CM02: a message pays its route's latency first, shares go by the inverse of the route's latency)`},
				keyReduceBandwidth, keyOverhead,
			},
		},
		build: buildFlow,
	},
	{
		ModelInfo: ModelInfo{
			Name: "loggp",
			Summary: "LogGP (Alexandrov et al.): contention-free, with CPU overhead o per message at sender and receiver, a gap g between message starts at a NIC, " +
				"G = 1/bandwidth per byte and latency L",
			Keys: []KeyInfo{
				{"latency", true, `L, the wire latency: "2us"`},
				{"overhead", false, `o, CPU time per message at the sender and at the receiver: "1us" (default 0)`},
				{"gap", false, `g, the least time between two message starts at a NIC: "500ns" (default 0)`},
				{"bandwidth", true, `1/G: "12.5GB/s"`},
				keyReduceBandwidth,
			},
		},
		build: func(t, _ *table) *builtModel {
			lat, ok1 := t.duration("latency", true)
			o, ok2 := t.duration("overhead", false)
			gap, ok3 := t.duration("gap", false)
			bw, ok4 := t.bandwidth("bandwidth", true, 0)
			rbw, ok5 := t.bandwidth("reduce_bandwidth", false, math.Inf(1))
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
				return nil
			}
			m := sim.LogGP{Latency: lat, Overhead: o, Gap: gap, Bandwidth: bw, ReduceBandwidth: rbw}
			if err := m.Validate(); err != nil {
				t.errorf(t.path, "%v", err)
				return nil
			}
			return fixed(m, bw)
		},
	},
	{
		ModelInfo: ModelInfo{
			Name: "realnet",
			Summary: "realnet's transport, path by path: messages below bulk_threshold on QUIC (eager), larger ones by rendezvous " +
				"(request on QUIC, clear to send on TCP) on the bulk TCP path; with eager_threshold every message on TCP; each path alpha-beta, from [network.transport]",
			Keys: []KeyInfo{
				{"bulk_threshold", false, `payload size from which messages take the bulk path, as the tuning table's [transport] bulk_threshold: "` +
					algos.FormatBulkThreshold(algos.DefaultBulkThreshold) + `" (default), or "never"`},
				{"eager_threshold", false, `realnet's eager mode, as the tuning table's [transport] eager_threshold: every message on TCP, eagerly below this size, by rendezvous from it: "64KiB" (default 0: off)`},
				keyReduceBandwidth,
			},
		},
		build: buildRealnet,
	},
}

// withOverhead wraps m in LogGP's per-message overhead o, if o is not 0.
func withOverhead(m sim.Model, o sim.Time) sim.Model {
	if o == 0 {
		return m
	}
	return sim.Overhead{Model: m, Send: o, Recv: o}
}

// Models lists the network models a scenario may name, in the order of the
// documentation.
func Models() []ModelInfo {
	out := make([]ModelInfo, len(models))
	for i, m := range models {
		out[i] = m.ModelInfo
	}
	return out
}

func modelNames() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	return names
}

func lookupModel(name string) *modelSpec {
	for i := range models {
		if models[i].Name == name {
			return &models[i]
		}
	}
	return nil
}

// buildFlow reads the flow model's keys.
func buildFlow(t, _ *table) *builtModel {
	var err error
	name, ok := t.str("topology", false, "crossbar", `a topology name such as "fat_tree"`)
	if !ok {
		return nil
	}
	ts := lookupTopology(name)
	if ts == nil {
		t.errorf(joinPath(t.path, "topology"), "unknown topology %q (want one of %s)", name, strings.Join(topologyNames(), ", "))
		t.known = append(t.known, keysOf(t.m)...)
		return nil
	}
	good := true
	topo, linkBW := ts.build(t, "")
	if topo == nil {
		good = false
	}
	rbw, ok := t.bandwidth("reduce_bandwidth", false, math.Inf(1))
	good = good && ok
	sendSlots, ok := t.integer("send_slots", 0, -1, 1<<20)
	good = good && ok
	recvSlots, ok := t.integer("recv_slots", 0, -1, 1<<20)
	good = good && ok
	o, ok := t.duration("overhead", false)
	good = good && ok
	var sharing sim.Sharing
	if sh, ok := t.str("sharing", false, "max_min", `"max_min" or "latency_weighted"`); !ok {
		good = false
	} else if sharing, err = sim.ParseSharing(sh); err != nil {
		t.errorf(joinPath(t.path, "sharing"), "%v", err)
		good = false
	}
	place, ok := t.str("placement", false, "linear", `"linear", "round_robin" or "random"`)
	good = good && ok
	group, groupOK := t.integer("placement_group", 0, 1, MaxWorld)
	good = good && groupOK
	switch place {
	case "linear", "random":
		if _, set := t.m["placement_group"]; set && groupOK {
			t.errorf(joinPath(t.path, "placement_group"), "placement_group is for placement = \"round_robin\"")
			good = false
		}
	case "round_robin":
		if _, set := t.m["placement_group"]; !set {
			t.errorf(joinPath(t.path, "placement"), `placement = "round_robin" needs placement_group, the devices per group (a node's, say)`)
			good = false
		}
	default:
		if ok {
			t.errorf(joinPath(t.path, "placement"), "unknown placement %q (want linear, round_robin or random)", place)
			good = false
		}
	}
	if !good {
		return nil
	}
	// 0 slots mean 1 to sim.Flow; -1 is unlimited.
	f := sim.Flow{Topology: topo, ReduceBandwidth: rbw, SendSlots: int(sendSlots), RecvSlots: int(recvSlots), Sharing: sharing}
	b := &builtModel{linkBandwidth: linkBW, random: place == "random", topology: topo, placement: place}
	b.seeded = func(seed uint64) sim.Model {
		var m sim.Model = f
		if place != "linear" {
			m = placed{flow: f, kind: place, group: int(group), seed: seed}
		}
		return withOverhead(m, o)
	}
	return b
}

// placed is a flow model whose placement is made for each run's world
// size: a scenario's sweeps run many world sizes on one network.
type placed struct {
	flow  sim.Flow
	kind  string // "round_robin" or "random"
	group int
	seed  uint64
}

func (p placed) String() string {
	if p.kind == "random" {
		return fmt.Sprintf("flow model with a random placement (seed %d)", p.seed)
	}
	return fmt.Sprintf("flow model with a round-robin placement over groups of %d", p.group)
}

// Unwrap implements sim.Unwrapper: the flow model p places its ranks on,
// without a placement (what the simulator's estimates count: its
// topology and its per-rank state, which a placement does not change).
func (p placed) Unwrap() sim.Model { return p.flow }

// Rewrap implements sim.Rewrapper: p placing its ranks on inner, which
// must be a flow model (the simulator's estimate rebuilds p around its
// flow model counting its work); nil for any other model.
func (p placed) Rewrap(inner sim.Model) sim.Model {
	f, ok := inner.(sim.Flow)
	if !ok {
		return nil
	}
	p.flow = f
	return p
}

// NewNetwork implements sim.Model; it panics where NewNetworkChecked fails.
func (p placed) NewNetwork(e *sim.Engine) sim.Network {
	n, err := p.NewNetworkChecked(e)
	if err != nil {
		panic("scenario: " + err.Error())
	}
	return n
}

// NewNetworkChecked implements sim.CheckedModel.
func (p placed) NewNetworkChecked(e *sim.Engine) (sim.Network, error) {
	topo, err := p.flow.Topology.Build(e.World())
	if err != nil {
		return nil, fmt.Errorf("flow model: %w", err)
	}
	n := topo.NumDevices()
	f := p.flow
	f.Topology = topo
	switch p.kind {
	case "random":
		f.Placement, err = sim.RandomPlacement(e.World(), n, p.seed)
	default:
		f.Placement, err = sim.RoundRobinPlacement(e.World(), n/p.group, p.group)
	}
	if err != nil {
		return nil, fmt.Errorf("flow model on %s: %w", topo.Name, err)
	}
	return f.NewNetworkChecked(e)
}

// buildRealnet reads the realnet model: its paths from
// [network.transport], read before the model. Without bulk_threshold the
// model takes the one default, algos.DefaultBulkThreshold.
func buildRealnet(t, _ *table) *builtModel {
	rbw, ok := t.bandwidth("reduce_bandwidth", false, math.Inf(1))
	threshold := int64(algos.DefaultBulkThreshold)
	if v, present := t.m["bulk_threshold"]; present && v == "never" {
		t.known = append(t.known, "bulk_threshold")
		threshold = algos.BulkNever
	} else if v, good := t.size("bulk_threshold"); !good {
		ok = false
	} else if v >= 0 {
		threshold = v
	}
	eager, good := t.size("eager_threshold")
	ok = ok && good
	if t.c.paths == nil {
		if _, present := t.m["transport"]; !present {
			t.errorf(joinPath(t.path, "model"), `model = "realnet" runs on realnet's two paths: add a [network.transport] table (quic_latency, quic_bandwidth, bulk_latency, bulk_bandwidth)`)
		}
		return nil
	}
	if !ok {
		return nil
	}
	tr := t.c.paths
	var build func(th algos.Thresholds) *builtModel
	build = func(th algos.Thresholds) *builtModel {
		b := fixed(sim.TwoPaths{QUIC: tr.QUIC(), Bulk: tr.Bulk(), Thresholds: th, ReduceBandwidth: rbw}, tr.BulkBandwidth)
		b.withThresholds = build
		return b
	}
	return build(algos.Thresholds{Bulk: int(threshold), Eager: int(max(eager, 0))})
}
