package scenario

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/sim"
)

// withNetwork returns good with its [network] table replaced by net, and
// extra appended.
func withNetwork(net, extra string) string {
	start := strings.Index(good, "[network]")
	end := strings.Index(good, "[[sweep]]")
	return good[:start] + "[network]\n" + net + "\n" + good[end:] + extra
}

func TestNetworks(t *testing.T) {
	tests := []struct {
		name   string
		net    string
		extra  string
		want   sim.Model
		random bool
		bw     float64
	}{
		{"alpha-beta with overhead", `model = "alpha-beta"
latency = "5us"
bandwidth = "10GB/s"
overhead = "1us"`, "", sim.Overhead{Model: sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e10, ReduceBandwidth: inf}, Send: sim.Microsecond, Recv: sim.Microsecond}, false, 1e10},
		{"alpha-beta with a reducing switch", `model = "alpha-beta"
latency = "5us"
bandwidth = "10GB/s"
switch_reduce_bandwidth = "400GB/s"`, "", sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e10, ReduceBandwidth: inf, SwitchBandwidth: 400e9}, false, 1e10},
		{"alpha-beta with a free reducing switch", `model = "alpha-beta"
latency = "5us"
bandwidth = "10GB/s"
switch_reduce_bandwidth = "inf"`, "", sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e10, ReduceBandwidth: inf, SwitchBandwidth: inf}, false, 1e10},
		{"loggp", `model = "loggp"
latency = "2us"
overhead = "500ns"
gap = "100ns"
bandwidth = "1GB/s"
reduce_bandwidth = "5GB/s"`, "", sim.LogGP{Latency: 2 * sim.Microsecond, Overhead: 500 * sim.Nanosecond, Gap: 100 * sim.Nanosecond, Bandwidth: 1e9, ReduceBandwidth: 5e9}, false, 1e9},
		{"flow crossbar", `model = "flow"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"`, "", sim.FlowCrossbar(sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 12.5e9, ReduceBandwidth: 25e9}), false, 12.5e9},
		{"crossbar with a backplane", `model = "flow"
latency = "40us"
bandwidth = "1GB/s"
backplane_bandwidth = "1.5GB/s"`, "", sim.Flow{Topology: sim.Crossbar{Bandwidth: 1e9, Latency: 40 * sim.Microsecond, Backplane: 1.5e9}, ReduceBandwidth: inf}, false, 1e9},
		{"fat tree", `model = "flow"
topology = "fat_tree"
radix = 8
oversubscription = 3
link_bandwidth = "100Gbit/s"
link_latency = "1us"
routing = "dmodk"
send_slots = -1`, "", sim.Flow{Topology: sim.FatTree{Tiers: 2, Radix: 8, Oversubscription: 3, Link: sim.LinkParams{Bandwidth: 12.5e9, Latency: sim.Microsecond}, Routing: sim.RouteDestMod},
			ReduceBandwidth: inf, SendSlots: -1}, false, 12.5e9},
		{"torus", `model = "flow"
topology = "torus"
dims = [4, 4, 2]
link_bandwidth = "50GB/s"
nic_bandwidth = "100GB/s"`, "", sim.Flow{Topology: sim.Torus{Dims: []int{4, 4, 2}, Link: sim.LinkParams{Bandwidth: 50e9}, NIC: sim.LinkParams{Bandwidth: 100e9}},
			ReduceBandwidth: inf}, false, 100e9},
		{"dragonfly", `model = "flow"
topology = "dragonfly"
groups = 5
routers = 4
global_links = 1
local_bandwidth = "25GB/s"
global_bandwidth = "12.5GB/s"
nic_bandwidth = "25GB/s"`, "", sim.Flow{Topology: sim.Dragonfly{Groups: 5, Routers: 4, Hosts: 1, GlobalLinks: 1, Local: sim.LinkParams{Bandwidth: 25e9},
			Global: sim.LinkParams{Bandwidth: 12.5e9}, NIC: sim.LinkParams{Bandwidth: 25e9}}, ReduceBandwidth: inf}, false, 25e9},
		{"hierarchical", `model = "flow"
topology = "hierarchical"
devices_per_node = 8
intra_bandwidth = "450GB/s"
intra_latency = "1us"
nics_per_node = 4
inter = "fat_tree"
inter_radix = 16
inter_link_bandwidth = "400Gbit/s"
inter_link_latency = "2us"`, "", sim.Flow{Topology: sim.Hierarchical{DevicesPerNode: 8, Intra: sim.LinkParams{Bandwidth: 450e9, Latency: sim.Microsecond}, NICs: 4,
			Inter: sim.FatTree{Tiers: 2, Radix: 16, Oversubscription: 1, Link: sim.LinkParams{Bandwidth: 50e9, Latency: 2 * sim.Microsecond}}},
			ReduceBandwidth: inf}, false, 0},
		{"jitter", `model = "alpha-beta"
latency = "5us"
bandwidth = "10GB/s"`, `
[[fault]]
kind = "jitter"
dist = "lognormal"
mean = "2us"
stddev = "1us"

[[fault]]
kind = "straggler"
rank = 1
factor = 2.5
`, sim.WithFaults(sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e10, ReduceBandwidth: inf}, 1,
			sim.Jitter{Dist: "lognormal", Mean: 2 * sim.Microsecond, Stddev: sim.Microsecond}, sim.Straggler{Rank: 1, Factor: 2.5}), true, 1e10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("n.toml", []byte(withNetwork(tt.net, tt.extra)))
			if err != nil {
				t.Fatal(err)
			}
			n := s.Network
			if !reflect.DeepEqual(n.Sim, tt.want) {
				t.Errorf("model\n%#v\nwant\n%#v", n.Sim, tt.want)
			}
			if n.Random != tt.random || n.LinkBandwidth != tt.bw {
				t.Errorf("random %t, link bandwidth %g; want %t, %g", n.Random, n.LinkBandwidth, tt.random, tt.bw)
			}
			for _, w := range []int{2, 8} {
				if err := n.Check(w); err != nil {
					t.Errorf("world %d: %v", w, err)
				}
			}
		})
	}
}

var inf = func() float64 { f, _ := ParseBandwidth("inf"); return f }()

// randomPlacement is a flow network of 16 devices whose ranks are placed
// at random.
const randomPlacement = `model = "flow"
topology = "hierarchical"
devices_per_node = 4
nodes = 4
intra_bandwidth = "100GB/s"
inter = "crossbar"
inter_bandwidth = "10GB/s"
inter_latency = "2us"
placement = "random"`

func TestSeededAndPlacement(t *testing.T) {
	src := withNetwork(randomPlacement, "repeat = 3\n")
	s, err := Parse("p.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	n := &s.Network
	if !n.Random || s.Sweeps[0].Repeat != 3 {
		t.Errorf("random %t, repeat %d", n.Random, s.Sweeps[0].Repeat)
	}
	a, b := n.Seeded(1), n.Seeded(2)
	if reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, n.Seeded(1)) || !reflect.DeepEqual(a, n.Sim) {
		t.Errorf("seeded models: %v, %v", a, b)
	}
	if err := n.Check(16); err != nil {
		t.Error(err)
	}
	if err := n.Check(17); err == nil || !strings.Contains(err.Error(), "17") {
		t.Errorf("17 ranks on 16 devices: %v", err)
	}
	if _, err := Parse("p.toml", []byte(strings.Replace(src, `placement = "random"`, "placement = \"round_robin\"\nplacement_group = 4", 1))); err == nil {
		t.Errorf("round robin without randomness accepted repeat = 3")
	}
	rr, err := Parse("p.toml", []byte(strings.Replace(strings.Replace(src, `placement = "random"`, "placement = \"round_robin\"\nplacement_group = 4", 1), "repeat = 3\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if rr.Network.Random {
		t.Error("round robin is random")
	}
	if err := rr.Network.Check(16); err != nil {
		t.Error(err)
	}
}

func TestBadNetworks(t *testing.T) {
	tests := []struct {
		net, extra string
		want       []string
	}{
		{`model = "flow"
topology = "mesh"`, "", []string{`n.toml:6: network.topology: unknown topology "mesh" (want one of crossbar, ring, torus, fat_tree, dragonfly, hierarchical, gpu_cluster)`}},
		{`model = "flow"
topology = "fat_tree"
link_bandwidth = "10GB/s"
radiks = 8`, "", []string{`n.toml:4: network.radix: missing required key`, `n.toml:8: network.radiks: unknown key in [network] of model flow; did you mean "radix"?`}},
		{`model = "flow"
topology = "fat_tree"
radix = 8
tiers = 4
oversubscription = "lots"
routing = "random"
link_bandwidth = "10GB/s"`, "", []string{"network.tiers: 4 is out of range", "network.oversubscription: want a number", `network.routing: unknown routing "random"`}},
		{`model = "flow"
latency = "1us"
bandwidth = "1GB/s"
backplane_bandwidth = "fast"`, "", []string{`n.toml:8: network.backplane_bandwidth: `}},
		{`model = "flow"
topology = "torus"
dims = [4]
link_bandwidth = "10GB/s"`, "", []string{"network.dims: a torus has 2 or 3 dimensions, not 1"}},
		{`model = "flow"
topology = "hierarchical"
devices_per_node = 8
inter = "hierarchical"`, "", []string{`network.inter: unknown inter-node topology "hierarchical"`}},
		{`model = "flow"
topology = "hierarchical"
devices_per_node = 8
inter = "crossbar"
inter_bandwidth = "10GB/s"`, "", []string{`network.inter_latency: missing required key`}},
		{`model = "flow"
latency = "1us"
bandwidth = "1GB/s"
placement = "round_robin"`, "", []string{`network.placement: placement = "round_robin" needs placement_group`}},
		{`model = "flow"
latency = "1us"
bandwidth = "1GB/s"
placement = "spiral"`, "", []string{`network.placement: unknown placement "spiral"`}},
		{`model = "loggp"
latency = "1us"`, "", []string{"network.bandwidth: missing required key"}},
		{`model = "alpha-beta"
latency = "1us"
bandwidth = "1GB/s"
switch_reduce_bandwidth = "quick"`, "", []string{`n.toml:8: network.switch_reduce_bandwidth: `}},
		{`model = "loggp"
latency = "1us"
bandwidth = "1GB/s"
switch_reduce_bandwidth = "1GB/s"`, "", []string{`n.toml:8: network.switch_reduce_bandwidth: unknown key in [network] of model loggp`}},
		{`model = "alpha-beta"
latency = "1us"
bandwidth = "1GB/s"`, `
[[fault]]
kind = "earthquake"

[[fault]]
kind = "jitter"
dist = "normal"
men = "1us"

[[fault]]
kind = "straggler"
rank = 1
factor = -2
`, []string{`n.toml:18: fault[0].kind: unknown kind of fault "earthquake"`, `n.toml:20: fault[1].mean: missing required key in [[fault]] 2 of kind jitter`,
			`n.toml:23: fault[1].men: unknown key in [[fault]] 2 of kind jitter; did you mean "mean"?`, `n.toml:28: fault[2].factor: -2 is out of range`}},
		{`model = "alpha-beta"
latency = "1us"
bandwidth = "1GB/s"`, "TOP:fault = 3\n", []string{"n.toml:3: fault: want an array of tables"}},
	}
	for _, tt := range tests {
		src := withNetwork(tt.net, tt.extra)
		if top, ok := strings.CutPrefix(tt.extra, "TOP:"); ok {
			src = strings.Replace(withNetwork(tt.net, ""), "seed = 1\n", "seed = 1\n"+top, 1)
		}
		_, err := Parse("n.toml", []byte(src))
		if err == nil {
			t.Errorf("%s: no error", tt.net)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error\n%v\ndoes not say %q", err, w)
			}
		}
	}
}

// TestPlacedRewrap rebuilds a placed flow model around another flow model
// (what the simulator's time estimate does to count the flow model's
// work), keeping its placement, and refuses any other model.
func TestPlacedRewrap(t *testing.T) {
	s, err := Parse("p.toml", []byte(withNetwork(randomPlacement, "")))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Network.Seeded(7)
	for m != nil {
		if _, ok := m.(placed); ok {
			break
		}
		u, ok := m.(sim.Unwrapper)
		if !ok {
			t.Fatalf("no placed model under %T", m)
		}
		m = u.Unwrap()
	}
	p := m.(placed)
	other := sim.Flow{Topology: sim.Crossbar{Bandwidth: 1e9}}
	got, ok := p.Rewrap(other).(placed)
	if !ok || !reflect.DeepEqual(got.flow, other) || got.seed != p.seed || got.kind != p.kind {
		t.Errorf("Rewrap(flow) = %#v", got)
	}
	if r := p.Rewrap(sim.AlphaBeta{Latency: 1, Bandwidth: 1}); r != nil {
		t.Errorf("Rewrap(alpha-beta) = %v, want nil", r)
	}
}
